"""`published_scores`: the scores a release publishes, written by `dreval import` and read by
`dreval verify` and the agreement figures. Re-importing a file replaces that (benchmark, file)'s rows."""
from __future__ import annotations

from typing import Sequence

import polars as pl

from .db import Store

COLUMNS = {"benchmark": pl.String, "system": pl.String, "task": pl.String, "metric": pl.String,
           "value": pl.Float64, "scale": pl.String, "published_metric": pl.String, "published_value": pl.Float64,
           "file": pl.String, "line": pl.Int32, "import_id": pl.String}


def write_published(store: Store, benchmark: str, rows: Sequence[dict], replace_files: Sequence[str] = ()) -> None:
    """Insert a batch of the benchmark's rows in one transaction; first drop the earlier rows of
    `replace_files` (files this import has not written yet), so a re-import replaces, never duplicates."""
    if not rows and not replace_files:
        return
    batch = pl.DataFrame([{**{c: r.get(c) for c in COLUMNS}, "benchmark": benchmark} for r in rows], schema=COLUMNS)

    def work(con):
        if replace_files:
            con.executemany("DELETE FROM published_scores WHERE benchmark = ? AND file = ?",
                            [(benchmark, f) for f in replace_files])
        if batch.height:
            con.register("_dreval_published", batch)
            con.execute("INSERT INTO published_scores BY NAME SELECT * FROM _dreval_published")
            con.unregister("_dreval_published")
    store.write(work)


def load_published(store: Store, benchmark: str | None = None) -> pl.DataFrame:
    """Every published score (of one benchmark when given), in file and line order."""
    where, params = ("WHERE benchmark = ?", [benchmark]) if benchmark else ("", [])
    return store.query(f"SELECT * FROM published_scores {where} ORDER BY benchmark, file, line, system, task, metric",
                       params)


def published_benchmarks(store: Store) -> dict[str, int]:
    """benchmark -> how many published scores it has."""
    return dict(store.query("SELECT benchmark, count(*) AS n FROM published_scores GROUP BY benchmark "
                            "ORDER BY benchmark").iter_rows())


def published_fingerprints(store: Store, benchmark: str) -> dict[str, str]:
    """file -> a hash of its scores (not of the import that wrote them): re-importing the same file
    gives the same hash, so it changes nothing downstream."""
    return dict(store.query(
        "SELECT file, md5(string_agg(concat_ws('|', system, task, metric, coalesce(CAST(value AS VARCHAR), 'null'), "
        "published_metric, coalesce(CAST(line AS VARCHAR), '')), chr(10) "
        "ORDER BY system, task, metric, published_metric, line)) AS fingerprint "
        "FROM published_scores WHERE benchmark = ? GROUP BY file", [benchmark]).iter_rows())


def last_published_import(store: Store):
    """When the newest import that changed published scores started (None: none did): the agreement
    figures are rebuilt after it."""
    return store.query("SELECT max(started_at) FROM imports "
                       "WHERE coalesce(CAST(json_extract(summary, '$.published_changed') AS INTEGER), 0) > 0").item()
