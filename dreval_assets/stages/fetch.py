"""fetched_references: one row per distinct cited URL of each report."""
from __future__ import annotations

from typing import Mapping, Sequence

import polars as pl

from ..core.models import FetchResult, SandboxPage
from ..fetch.base import Fetcher
from ..fetch.urls import url_key
from .frames import frame, text_hash
from .tasks import pages_of_run


def fetch_references(
    claims: pl.DataFrame, sandbox_by_task: Mapping[str, Sequence[SandboxPage]], fetcher: Fetcher,
    keys: Sequence[tuple[str, str]],
) -> dict[str, pl.DataFrame]:
    return fetched_frames_of(keys, fetch_outcomes(claims, sandbox_by_task, fetcher, keys))


def fetch_outcomes(claims: pl.DataFrame, sandbox_by_task: Mapping[str, Sequence[SandboxPage]], fetcher: Fetcher,
                   keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], list[FetchResult]]:
    """What fetching each report's cited URLs gave, by (system, task)."""
    by_report = cited_urls(claims)
    cited = [by_report.get(key, []) for key in keys]
    # each run is served from the corpus it searched (DR³: its sandbox size), never another run's
    outcomes = fetcher.fetch_groups([(urls, pages_of_run(system, sandbox_by_task.get(task, [])))
                                     for urls, (system, task) in zip(cited, keys)])
    return dict(zip(keys, outcomes))


def fetched_frames_of(keys: Sequence[tuple[str, str]],
                      outcomes: Mapping[tuple[str, str], Sequence[FetchResult]]) -> dict[str, pl.DataFrame]:
    """The fetched_references frames of `keys` (in their order) from what fetching gave, however the
    reports were fetched (all at once, or in parts as their claims came)."""
    rows, texts = [], {}
    for system, task in keys:
        for result in outcomes.get((system, task), ()):
            page_hash = None
            if result.status == "ok" and result.text:
                page_hash = text_hash(result.text)
                texts[page_hash] = {"text_hash": page_hash, "text": result.text, "n_chars": len(result.text)}
            rows.append({
                "system": system, "task": task, "url": result.url, "url_norm": url_key(result.url),
                "status": result.status, "backend": result.backend, "final_url": result.final_url,
                "title": result.title, "content_type": result.content_type, "page_hash": page_hash,
                "sandbox_role": result.role, "na_reason": result.na_reason, "detail": result.detail,
                "http_status": result.http_status, "charset": result.charset, "blocked": result.blocked,
                "truncated": result.truncated,
            })
    return {"fetched_references": frame("fetched_references", rows), "page_texts": frame("page_texts", texts.values())}


def cited_urls(claims: pl.DataFrame) -> dict[tuple[str, str], list[str]]:
    """Each report's distinct cited URLs, in order of first citation (one pass over all claims)."""
    seen: dict[tuple[str, str], dict[str, None]] = {}
    for system, task, urls in claims.select("system", "task", "urls").iter_rows():
        for url in urls or []:
            seen.setdefault((system, task), {}).setdefault(url, None)
    return {key: list(urls) for key, urls in seen.items()}
