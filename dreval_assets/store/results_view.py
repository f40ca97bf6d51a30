"""What the results view reads from the published copy (`results.duckdb`), read-only: one query per
piece of a page, filtered by the page's system and task, so a page never loads the whole home."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

import duckdb
import polars as pl

from .db import Store, _frame


class Results:
    """One read-only connection to the published copy, for the reads of a page (or of an export):
    opening one costs ~40 ms, a query on an open one about 1 ms."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con

    def query(self, sql: str, params: Sequence | None = None) -> pl.DataFrame:
        return _frame(self.con, sql, params)


@contextmanager
def opened(path: Path) -> Iterator[Results]:
    with Store(path).connect(read_only=True) as con:
        yield Results(con)


def leaderboard(store: Results) -> pl.DataFrame:
    return store.query("SELECT * FROM leaderboard")


def partitions(store: Results) -> pl.DataFrame:
    """system, task, benchmark of every report, in order."""
    return store.query("SELECT r.system, r.task, t.benchmark FROM reports r LEFT JOIN tasks t USING (task) "
                       "ORDER BY r.system, r.task")


def task(store: Results, task_key: str) -> dict | None:
    rows = store.query("SELECT task, benchmark, original_id, query, language, modality FROM tasks WHERE task = ?",
                       [task_key])
    return rows.row(0, named=True) if rows.height else None


def report(store: Results, system: str, task_key: str) -> dict | None:
    rows = store.query("SELECT system, task, status, text, n_chars, na_reason, detail FROM reports "
                       "WHERE system = ? AND task = ?", [system, task_key])
    return rows.row(0, named=True) if rows.height else None


def claims(store: Results, system: str, task_key: str) -> pl.DataFrame:
    return store.query("SELECT claim_id, kind, text, section, citation_indices, urls FROM report_claims "
                       "WHERE system = ? AND task = ? ORDER BY claim_id", [system, task_key])


def verdicts(store: Results, system: str, task_key: str) -> pl.DataFrame:
    """Each claim x source verdict with the passage the judge saw, the source page's title and the
    judge's provenance."""
    return store.query(
        "SELECT v.claim_id, v.source, v.verdict, v.score, v.evidence, v.reason, v.na_reason, v.judge, v.template, "
        "v.template_hash, v.model, v.origin, v.search_query, v.source_truncated, f.title, f.sandbox_role, f.backend "
        "FROM claim_verdicts v LEFT JOIN (SELECT DISTINCT ON (url) url, title, sandbox_role, backend FROM fetched_references "
        "WHERE system = ? AND task = ?) f ON f.url = v.source "
        "WHERE v.system = ? AND v.task = ? ORDER BY v.claim_id, v.source",
        [system, task_key, system, task_key])


def metric_rows(store: Results, system: str, task_key: str | None = None) -> pl.DataFrame:
    where, params = ("system = ? AND task = ?", [system, task_key]) if task_key else ("system = ?", [system])
    return store.query(f"SELECT task, suite, metric, value, scale, n_items, na_reason, detail, policy, judge, "
                       f"judged_share FROM metric_scores WHERE {where} ORDER BY suite, metric, task",
                       params)


def judgments(store: Results, system: str, task_key: str) -> pl.DataFrame:
    return store.query("SELECT kind, item_id, item, credit, score, reason, na_reason, judge, template "
                       "FROM report_judgments WHERE system = ? AND task = ? ORDER BY kind, item_id",
                       [system, task_key])


def figures(store: Results, system: str, task_key: str) -> pl.DataFrame:
    return store.query("SELECT i.figure, i.src, i.caption, i.kind, i.status, i.invalid_reason, i.na_reason, i.origin, "
                       "i.image_hash, i.width, i.height, i.sharpness, i.contrast, i.duplicate_of, b.mime "
                       "FROM report_images i LEFT JOIN (SELECT image_hash, mime FROM image_blobs) b USING (image_hash) "
                       "WHERE i.system = ? AND i.task = ? ORDER BY i.figure", [system, task_key])


def image(store: Results, image_hash: str) -> tuple[str, bytes] | None:
    rows = store.query("SELECT mime, data FROM image_blobs WHERE image_hash = ?", [image_hash])
    return (rows.item(0, "mime"), bytes(rows.item(0, "data"))) if rows.height else None


def spend(store: Results, system: str, task_key: str) -> pl.DataFrame:
    """The judge's calls on this report by template: calls, cache hits, tokens, cost."""
    return store.query("SELECT template, count(*) AS calls, count(*) FILTER (WHERE cache_hit) AS cache_hits, "
                       "sum(tokens_in) AS tokens_in, sum(tokens_out) AS tokens_out, sum(cost) AS cost "
                       "FROM judge_ledger WHERE system = ? AND task = ? GROUP BY template ORDER BY template",
                       [system, task_key])


def image_kinds(store: Results) -> pl.DataFrame:
    """image_hash, mime of every image a report shows, once each."""
    return store.query("SELECT DISTINCT i.image_hash, b.mime FROM report_images i JOIN image_blobs b "
                       "USING (image_hash) ORDER BY 1")
