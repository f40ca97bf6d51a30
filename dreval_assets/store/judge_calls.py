"""Judge call cache and ledger in DuckDB (tables of sql/migrations/002_judge_calls.sql)."""
from __future__ import annotations

from dataclasses import astuple, dataclass
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
    wait_s: float | None = None  # waiting for a concurrency slot or the rate limiter, apart from latency_s


# The ledger table's column types: a batch is never typed from its first rows (an unpriced model's
# NULL costs before a cache hit's 0.0 would make `cost` a column of nulls).
LEDGER_SCHEMA: dict[str, pl.DataType] = {
    "call_id": pl.String, "called_at": pl.Datetime("us"), "run_id": pl.String, "asset": pl.String,
    "system": pl.String, "task": pl.String, "judge_id": pl.String, "model": pl.String, "template": pl.String,
    "template_hash": pl.String, "cache_key": pl.String, "cache_hit": pl.Boolean, "outcome": pl.String,
    "attempts": pl.Int32, "validation_retries": pl.Int32, "tokens_in": pl.Int64, "tokens_out": pl.Int64,
    "cost": pl.Float64, "latency_s": pl.Float64, "error": pl.String, "image_bytes": pl.Int64,
    "image_tokens": pl.Int64, "wait_s": pl.Float64}


CACHE_SCHEMA: dict[str, pl.DataType] = {
    "cache_key": pl.String, "judge_id": pl.String, "model": pl.String, "template": pl.String,
    "template_hash": pl.String, "answer": pl.String, "tokens_in": pl.Int64, "tokens_out": pl.Int64}


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

    def remember_many(self, entries: Sequence[CacheEntry]) -> None:
        """Store validated answers in one statement (the judge writes them as they arrive, batched by time)."""
        unique = list({entry.cache_key: entry for entry in entries}.values())
        if not unique:
            return
        _dreval_answers = pl.DataFrame([astuple(e) for e in unique], schema=CACHE_SCHEMA, orient="row")  # noqa: F841
        with self.store.connect() as con:
            con.execute("INSERT INTO judge_cache (cache_key, judge_id, model, template, template_hash, answer, "
                        "tokens_in, tokens_out) SELECT * FROM _dreval_answers ON CONFLICT DO NOTHING")

    def record(self, rows: Sequence[LedgerRow]) -> None:
        if not rows:
            return
        frame = pl.DataFrame([astuple(r) for r in rows], schema=LEDGER_SCHEMA, orient="row")
        with self.store.connect() as con:
            Store.insert_by_name(con, "judge_ledger", frame)
