"""Wiki Live candidates: every article a refresh looked at (`wlc_candidates`, migration 025), and the
ones the next refresh must try again."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Sequence

import polars as pl

from .db import Store

COLUMNS = {
    "refresh_id": pl.String, "refreshed_at": pl.Datetime, "window_after": pl.Datetime, "window_before": pl.Datetime,
    "pageid": pl.Int64, "title": pl.String, "created_at": pl.Datetime, "ga_at": pl.Datetime, "in_window": pl.Boolean,
    "bytes": pl.Int64, "views": pl.Int64, "external_links": pl.Int32, "reference_urls": pl.Int32,
    "sections": pl.Int32, "subsections": pl.Int32, "topic": pl.String, "category": pl.String,
    "list_like": pl.Boolean, "rank": pl.Int32, "kept": pl.Boolean, "outcome": pl.String, "reason": pl.String,
    "na_reason": pl.String, "task_key": pl.String, "supersedes": pl.String, "revid": pl.Int64,
    "n_statements": pl.Int32, "gold_chunks": pl.Int32, "content_hash": pl.String,
}
MAX_ATTEMPTS = 3  # refreshes that may try a failed candidate before it is left alone


def _naive_utc(value):
    aware = isinstance(value, datetime) and value.tzinfo is not None
    return value.astimezone(timezone.utc).replace(tzinfo=None) if aware else value


def write_wlc_candidates(store: Store, refresh_id: str, rows: Sequence[dict]) -> None:
    if not rows:
        return
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    records = [{**{c: _naive_utc(r.get(c)) for c in COLUMNS}, "refresh_id": refresh_id, "refreshed_at": now}
               for r in rows]
    frame = pl.DataFrame(records, schema=COLUMNS)

    def work(con):
        Store.insert_by_name(con, "wlc_candidates", frame)
    store.write(work)


def candidates_to_retry(store: Store, max_attempts: int = MAX_ATTEMPTS) -> list[dict]:
    """The latest row of each article whose latest outcome is `retry`, unless it was tried
    `max_attempts` times (timestamps as aware UTC datetimes)."""
    frame = store.query(
        "WITH latest AS (SELECT *, row_number() OVER (PARTITION BY pageid ORDER BY refreshed_at DESC) AS n, "
        "count(*) FILTER (WHERE outcome = 'retry') OVER (PARTITION BY pageid) AS attempts FROM wlc_candidates) "
        "SELECT * EXCLUDE (n, attempts) FROM latest WHERE n = 1 AND outcome = 'retry' AND attempts < ? "
        "ORDER BY pageid", [max_attempts])
    return [{k: (v.replace(tzinfo=timezone.utc) if isinstance(v, datetime) else v) for k, v in row.items()}
            for row in frame.iter_rows(named=True)]


def candidate_rows(store: Store, refresh_id: str | None = None) -> pl.DataFrame:
    """One refresh's rows (the latest refresh's by default), best rank first."""
    where = "refresh_id = ?" if refresh_id else \
        "refresh_id = (SELECT refresh_id FROM wlc_candidates ORDER BY refreshed_at DESC LIMIT 1)"
    return store.query(f"SELECT * FROM wlc_candidates WHERE {where} ORDER BY rank NULLS LAST, pageid",
                       [refresh_id] if refresh_id else [])
