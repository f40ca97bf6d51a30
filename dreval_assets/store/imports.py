"""What `dreval import` writes: imported reports (upserted by content hash), and each import's
summary and problems. Writes are batched by the caller; each batch is one transaction."""
from __future__ import annotations

import json
from datetime import datetime
from typing import Iterable, Mapping, Sequence

import polars as pl

from .db import Store

REPORT_COLUMNS = ("system", "task", "original_id", "text", "content_hash", "trace", "source", "base_dir", "import_id",
                  "cleaned_text", "release_statements")


def imported_report_hashes(store: Store) -> dict[tuple[str, str], str]:
    """(system, task) -> content hash of every imported report: one small entry per report."""
    return {(s, t): h for s, t, h in store.query(
        "SELECT system, task, content_hash FROM imported_reports").iter_rows()}


def imported_benchmarks(store: Store) -> dict[str, set[str]]:
    """system -> the benchmarks it has imported reports for: an imported system is evaluated on
    those benchmarks' tasks only (a missing report there is the system's; elsewhere it is not)."""
    scope: dict[str, set[str]] = {}
    for system, benchmark in store.query(
            "SELECT DISTINCT r.system, t.benchmark FROM imported_reports r "
            "JOIN registered_tasks t USING (task)").iter_rows():
        scope.setdefault(system, set()).add(benchmark)
    return scope


def tasks_in_scope(entry, task_keys: Sequence[str], benchmark_of: Mapping[str, str],
                   scope: Mapping[str, set[str]]) -> list[str]:
    """The tasks a system is evaluated on: all of them for a folder or endpoint system, those of the
    benchmarks it has imported reports for (`imported_benchmarks`) when it is an imported one."""
    if entry.kind != "imported":
        return list(task_keys)
    return [t for t in task_keys if benchmark_of.get(t) in scope.get(entry.system, set())]


def write_imported_reports(store: Store, rows: Sequence[dict]) -> None:
    """Insert or replace a batch of imported reports in one transaction."""
    if not rows:
        return
    batch = pl.DataFrame([{c: r.get(c) for c in REPORT_COLUMNS} for r in rows],
                         schema={c: pl.String for c in REPORT_COLUMNS})

    def work(con):
        con.register("_dreval_imported", batch)
        con.execute("DELETE FROM imported_reports WHERE (system, task) IN (SELECT system, task FROM _dreval_imported)")
        con.execute("INSERT INTO imported_reports BY NAME SELECT * FROM _dreval_imported")
        con.unregister("_dreval_imported")
    store.write(work)


def imported_reports(store: Store, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], dict]:
    """The imported reports of these (system, task) partitions, with their research traces."""
    wanted = pl.DataFrame([{"system": s, "task": t} for s, t in keys], schema={"system": pl.String, "task": pl.String})
    if wanted.height == 0:
        return {}
    with store.connect(read_only=False) as con:
        con.register("_dreval_wanted", wanted)
        found = con.execute("SELECT r.system, r.task, r.text, r.content_hash, r.source, r.trace, r.cleaned_text, "
                            "r.release_statements FROM imported_reports r JOIN _dreval_wanted USING (system, task)"
                            ).fetchall()
    return {(s, t): {"text": text, "content_hash": h, "source": source, "trace": trace, "cleaned_text": cleaned,
                     "release_statements": statements}
            for s, t, text, h, source, trace, cleaned, statements in found}


def record_import(store: Store, import_id: str, benchmark: str, source: str, started_at: datetime,
                  summary: dict, problems: Sequence[tuple[str, str, int | None, str]]) -> None:
    """The import's counts and every problem (kind, file, line, reason), in one transaction."""
    def work(con):
        con.execute("INSERT INTO imports VALUES (?, ?, ?, ?, ?)",
                    [import_id, benchmark, source, started_at, json.dumps(summary)])
        if problems:
            con.executemany("INSERT INTO import_problems VALUES (?, ?, ?, ?, ?)",
                            [(import_id, *p) for p in problems])
    store.write(work)
