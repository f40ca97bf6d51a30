"""MiroEval's live refresh (its `Benchmark.live`, run by `live/refresh.py`): queries generated from recent
headlines, every candidate stored, the chosen ones registered as tasks."""
from __future__ import annotations

import uuid

from ....fetch.api import JsonApi
from ....judges.base import Judge
from ....live.config import LiveConfig
from ....live.summary import RefreshFailed, RefreshSummary
from ....store.db import Store
from ....store.refresh import decided_candidates, save_refresh, write_candidates
from ....store.registry import register_tasks
from .query_generation import ApiKey, generate_queries


def refresh(store: Store, judge: Judge, config: LiveConfig, api: JsonApi) -> RefreshSummary:
    if not config.news_url or not config.search_url:
        raise RefreshFailed("MiroEval-style generation needs DREVAL_NEWS_URL (a NewsAPI-compatible endpoint) "
                            "and DREVAL_SEARCH_URL (a SearXNG-compatible JSON search endpoint)")
    news_key = ApiKey(config.news_key_param, config.news_key) if config.news_key else None
    # known: registered tasks, and queries an earlier refresh decided (kept or not), so a re-run
    # registers nothing twice and sends nothing to the filters again
    known = {**decided_candidates(store),
             **dict.fromkeys(_known_keys(store, "miroeval.live-"), "an earlier refresh registered this task")}
    result = generate_queries(api, config.news_url, api, config.search_url, judge, config.topics,
                              config.headlines_per_subtopic, config.queries_per_headline, known_keys=known,
                              keep=config.keep, choose=config.choose, news_key=news_key,
                              labels={"asset": "miroeval_refresh"})
    refresh_id = uuid.uuid4().hex[:12]
    write_candidates(store, refresh_id, [c.as_row() for c in result.candidates])
    new, changed = register_tasks(store, result.tasks, source="refresh:miroeval")
    problems = [f"{p.topic}/{p.subtopic} ({p.stage}): {p.detail}" for p in result.problems]
    rates = {rate.name: rate.as_dict() for rate in result.filter_rates()}
    summary = RefreshSummary("miroeval", new, changed, result.counts(), problems, filter_rates=rates,
                             no_call_answered=no_call_answered(result.counts()))
    save_refresh(store, "miroeval", None, {"refresh_id": refresh_id, **result.counts(), "filter_rates": rates})
    return summary


def _known_keys(store: Store, prefix: str) -> set[str]:
    return set(store.query("SELECT task FROM registered_tasks WHERE starts_with(task, ?)", [prefix])["task"])


def no_call_answered(counts: dict) -> bool:
    """Every news or persona call failed, or every candidate asked failed at an endpoint or the judge."""
    if counts.get("candidates", 0) == 0:
        return counts.get("problems", 0) > 0
    asked = counts["candidates"] - counts.get("rejected_known", 0) - counts.get("rejected_duplicate", 0)
    failed = counts.get("rejected_endpoint_failure", 0) + counts.get("rejected_judge_failure", 0)
    return asked > 0 and failed == asked
