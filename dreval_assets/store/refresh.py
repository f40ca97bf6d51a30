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
    "kept": pl.Boolean, "chosen": pl.Boolean, "selection_reason": pl.String,  # migration 026
}
# Outcomes a later refresh keeps: the filters' verdicts and the selection. Failures are retried.
DECIDED = ("search", "necessity", "inverse_quality")


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


def decided_candidates(store: Store) -> dict[str, str]:
    """Task key -> what an earlier refresh decided about that generated query (its latest decision),
    for candidates accepted or rejected by a filter; judge and endpoint failures are not decisions."""
    found = store.query(
        "SELECT task_key, refresh_id, coalesce(selection_reason, CASE WHEN accepted THEN 'accepted' "
        "ELSE 'rejected by ' || rejected_by END) AS outcome FROM generated_candidates "
        "WHERE accepted OR rejected_by IN (SELECT unnest(?)) "
        "QUALIFY row_number() OVER (PARTITION BY task_key ORDER BY generated_at DESC) = 1", [list(DECIDED)])
    return {key: f"decided by refresh {refresh}: {outcome}"
            for key, refresh, outcome in found.select("task_key", "refresh_id", "outcome").iter_rows()}
