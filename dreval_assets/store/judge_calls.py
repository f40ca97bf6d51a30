"""Judge call cache and ledger in DuckDB (tables of sql/migrations/002_judge_calls.sql)."""
from __future__ import annotations

from dataclasses import astuple, dataclass, fields
from datetime import datetime
from typing import Sequence

import polars as pl

from .db import Store


@dataclass(frozen=True)
class CachedAnswer:
    answer_json: str
    tokens_in: int
    tokens_out: int


@dataclass(frozen=True)
class CacheEntry:
    cache_key: str
    judge_id: str
    model: str
    template: str
    template_hash: str
    answer_json: str
    tokens_in: int
    tokens_out: int


@dataclass(frozen=True)
class LedgerRow:
    call_id: str
    called_at: datetime
    run_id: str | None
    asset: str | None
    system: str | None
    task: str | None
    judge_id: str
    model: str
    template: str
    template_hash: str
    cache_key: str
    cache_hit: bool
    outcome: str
    attempts: int
    validation_retries: int
    tokens_in: int
    tokens_out: int
    cost: float | None
    latency_s: float
    error: str
    image_bytes: int = 0  # bytes of images sent to the endpoint (every HTTP request of the call)
    image_tokens: int | None = None  # image tokens as the endpoint reported them (None: not reported)


class JudgeCallStore:
    def __init__(self, store: Store):
        self.store = store

    def cached(self, keys: Sequence[str]) -> dict[str, CachedAnswer]:
        rows = self.store.rows_for_keys("SELECT cache_key, answer, tokens_in, tokens_out FROM judge_cache "
                                        "WHERE cache_key IN (SELECT unnest(?))", keys)
        return {key: CachedAnswer(answer, tin, tout) for key, answer, tin, tout in rows}

    def remember(self, entry: CacheEntry) -> None:
        """Store a validated answer at once, so an interrupted run resumes from here."""
        with self.store.connect() as con:
            con.execute(
                "INSERT INTO judge_cache (cache_key, judge_id, model, template, template_hash, answer, "
                "tokens_in, tokens_out) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                list(astuple(entry)))

    def record(self, rows: Sequence[LedgerRow]) -> None:
        if not rows:
            return
        frame = pl.DataFrame([astuple(r) for r in rows], schema=[f.name for f in fields(LedgerRow)], orient="row")
        with self.store.connect() as con:
            Store.insert_by_name(con, "judge_ledger", frame)
