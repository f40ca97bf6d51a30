"""Live refresh into the registry: the Wiki Live and MiroEval-style sources, each registering its
new tasks (the partitions a following run materialises) and remembering where it stopped. Used by
`dreval refresh` and by the refresh jobs; no Dagster here."""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from ..fetch.api import JsonApi
from ..judges.base import Judge
from ..store.db import Store
from ..store.refresh import decided_candidates, save_refresh, write_candidates
from ..store.registry import register_tasks
from .config import LiveConfig

SOURCES = ("wlc", "miroeval")
SCHEDULES = {"wlc": "0 5 * * 1", "miroeval": "0 5 * * 3"}  # cron: weekly, early morning (UTC)


class RefreshFailed(RuntimeError):
    """The refresh could not run at all (configuration, the source's API); the cursor is kept."""


@dataclass
class RefreshSummary:
    source: str
    new_tasks: list[str] = field(default_factory=list)
    changed_tasks: list[str] = field(default_factory=list)
    counts: dict = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    cursor: str | None = None
    filter_rates: dict = field(default_factory=dict)  # generation: filter -> entered, passed, rate, not_judged, paper
    notes: list[str] = field(default_factory=list)  # Wiki Live: the window, new versions with their lineage

    def lines(self, shown: int = 20) -> list[str]:
        out = [f"refresh {self.source}: {len(self.new_tasks)} new task(s)"
               + (f", {len(self.changed_tasks)} changed" if self.changed_tasks else "")]
        out += [f"  {key}" for key in self.new_tasks[:shown]]
        out += [f"  {name}: {value}" for name, value in self.counts.items()]
        out += self.notes
        if self.filter_rates:
            out.append("filter pass rates (passed/decided; N/A judgments and answers are not in the rate):")
            out += [f"  {line}" for line in _rate_lines(self.filter_rates)]
        if self.skipped:
            out.append(f"skipped: {len(self.skipped)}")
            out += [f"  {reason}" for reason in self.skipped[:shown]]
        if self.cursor:
            out.append(f"next refresh starts after {self.cursor}")
        return out


    def every_call_failed(self) -> bool:
        """Nothing registered, and the stage the refresh stopped at got no answer at all (every news
        or persona call failed, every search failed, or every article chosen failed): the user's
        endpoint or judge is down, which is an error, not "0 new tasks"."""
        if self.new_tasks or self.changed_tasks:
            return False
        c = self.counts
        if self.source == "wlc":
            return c.get("kept", 0) > 0 and c.get("retry", 0) + c.get("failed", 0) >= c.get("kept", 0)
        if c.get("candidates", 0) == 0:
            return c.get("problems", 0) > 0
        asked = c["candidates"] - c.get("rejected_known", 0) - c.get("rejected_duplicate", 0)
        failed = c.get("rejected_endpoint_failure", 0) + c.get("rejected_judge_failure", 0)
        return asked > 0 and failed == asked

    def metadata(self) -> dict:
        """Numbers for the refresh op's metadata: counts, and each filter's pass rate and its parts."""
        found = {k: v for k, v in self.counts.items() if isinstance(v, int)}
        for name, rate in self.filter_rates.items():
            found.update({f"{name}_{part}": value for part, value in rate.items() if value is not None})
        return found


def _rate_lines(rates: dict) -> list[str]:
    lines = []
    for name, r in rates.items():
        shown = "n/a" if r["rate"] is None else f"{r['rate']:.1f} %"
        na = f"; {r['not_judged']} N/A" if r["not_judged"] else ""
        lines.append(f"{name}: {r['passed']}/{r['entered']} = {shown} (paper {r['paper']:.1f} %){na}")
    return lines


def make_api(config: LiveConfig | None = None) -> JsonApi:
    """The live fetcher behind the refreshes: the same safety and politeness as cited pages, except
    that the endpoints the user configured may be local services (a SearXNG on 127.0.0.1)."""
    from ..fetch.live import LiveFetchConfig, LiveFetcher
    from ..fetch.safety import AllowList

    config = config or LiveConfig.from_env()
    allow = AllowList.for_endpoints(config.wlc_api, config.news_url, config.search_url)
    return JsonApi(LiveFetcher(LiveFetchConfig.from_env(), allow=allow))


def refresh(source: str, store: Store, judge: Judge, config: LiveConfig | None = None,
            api: JsonApi | None = None) -> RefreshSummary:
    if source not in SOURCES:
        raise RefreshFailed(f"unknown live source {source!r}; choose one of {', '.join(SOURCES)}")
    config = config or LiveConfig.from_env()
    api = api or make_api()
    return (_wikilive if source == "wlc" else _generated)(store, judge, config, api)


def _known_keys(store: Store, prefix: str) -> set[str]:
    return set(store.query("SELECT task FROM registered_tasks WHERE starts_with(task, ?)", [prefix])["task"])


def _wikilive(store: Store, judge: Judge, config: LiveConfig, api: JsonApi) -> RefreshSummary:
    from ..config import ConfigError
    from ..fetch.api import ApiError
    from ..benchmarks.wlc.live.wikilive_refresh import refresh_wikilive_into

    try:  # changed_tasks: new versions of tasks whose article was edited upstream (new keys, lineage kept)
        new, versions, counts, notes, skipped, window_end = refresh_wikilive_into(store, judge, config, api)
    except (ApiError, ConfigError) as exc:
        raise RefreshFailed(f"Wiki Live refresh: {exc}") from exc
    return RefreshSummary("wlc", new, versions, counts, skipped, window_end, notes=notes)


def _generated(store: Store, judge: Judge, config: LiveConfig, api: JsonApi) -> RefreshSummary:
    from ..benchmarks.miroeval.live.query_generation import ApiKey, generate_queries

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
    summary = RefreshSummary("miroeval", new, changed, result.counts(), problems, filter_rates=rates)
    save_refresh(store, "miroeval", None, {"refresh_id": refresh_id, **result.counts(), "filter_rates": rates})
    return summary
