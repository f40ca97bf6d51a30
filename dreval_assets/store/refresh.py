"""Live refresh state: each source's cursor and last summary, and generated query candidates."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Sequence

import polars as pl

from .db import Store

CANDIDATE_COLUMNS = {
    "refresh_id": pl.String, "generated_at": pl.Datetime, "topic": pl.String, "subtopic": pl.String,
    "headline": pl.String, "headline_url": pl.String, "headline_description": pl.String,
    "published_at": pl.String, "persona": pl.String, "query": pl.String, "task_key": pl.String,
    "search_results": pl.String, "n_search_results": pl.Int32, "distinct_domains": pl.Int32,
    "passed_search": pl.Boolean, "needs_external": pl.Boolean, "necessity_reason": pl.String,
    "closed_book_answer": pl.String, "adequate": pl.Boolean, "adequacy_reason": pl.String,
    "accepted": pl.Boolean, "rejected_by": pl.String, "rejection_detail": pl.String,
}


def cursor(store: Store, source: str) -> str | None:
    found = store.query("SELECT cursor FROM refresh_state WHERE source = ?", [source])
    return found.item() if found.height else None


def save_refresh(store: Store, source: str, new_cursor: str | None, summary: dict) -> None:
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    store.execute("INSERT OR REPLACE INTO refresh_state VALUES (?, ?, ?, ?)",
                  [source, new_cursor, now, json.dumps(summary)])


def write_candidates(store: Store, refresh_id: str, rows: Sequence[dict]) -> None:
    if not rows:
        return
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    records = [{**{c: r.get(c) for c in CANDIDATE_COLUMNS}, "refresh_id": refresh_id, "generated_at": now,
                "search_results": json.dumps(r.get("search_results") or [])} for r in rows]
    frame = pl.DataFrame(records, schema=CANDIDATE_COLUMNS)

    def work(con):
        Store.insert_by_name(con, "generated_candidates", frame)
    store.write(work)
