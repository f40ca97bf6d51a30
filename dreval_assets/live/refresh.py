"""Live refresh into the registry: each registered benchmark that declares a `live` refresh (its
folder's `live/`) registers its new tasks (the partitions a following run materialises) and remembers
where it stopped. Used by `dreval refresh` and by the refresh jobs; no Dagster here."""
from __future__ import annotations

import importlib

from ..benchmarks.registry import BENCHMARKS
from ..fetch.api import JsonApi
from ..judges.base import Judge
from ..store.db import Store
from .config import LiveConfig
from .summary import RefreshFailed, RefreshSummary

# the live sources and their cron schedules (UTC) when the refresh jobs are built; `refresh` also
# takes one registered later (a plugin, a test's toy benchmark)
SOURCES = tuple(name for name, b in BENCHMARKS.items() if b.live)
SCHEDULES = {name: b.live.schedule for name, b in BENCHMARKS.items() if b.live}


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
    benchmark = BENCHMARKS.get(source)
    if benchmark is None or benchmark.live is None:
        known = [name for name, b in BENCHMARKS.items() if b.live]
        raise RefreshFailed(f"unknown live source {source!r}; choose one of {', '.join(known)}")
    config = config or LiveConfig.from_env()
    api = api or make_api()
    return importlib.import_module(benchmark.live.module).refresh(store, judge, config, api)
