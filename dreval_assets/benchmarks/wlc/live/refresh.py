"""Wiki Live's live refresh (its `Benchmark.live`, run by `live/refresh.py`): new Good Articles and new
versions of edited ones registered as tasks, the window end kept for the next refresh."""
from __future__ import annotations

from ....errors import ConfigError
from ....fetch.api import ApiError, JsonApi
from ....judges.base import Judge
from ....live.config import LiveConfig
from ....live.summary import RefreshFailed, RefreshSummary
from ....store.db import Store
from .wikilive_refresh import refresh_wikilive_into


def refresh(store: Store, judge: Judge, config: LiveConfig, api: JsonApi) -> RefreshSummary:
    try:  # changed_tasks: new versions of tasks whose article was edited upstream (new keys, lineage kept)
        new, versions, counts, notes, skipped, window_end = refresh_wikilive_into(store, judge, config, api)
    except (ApiError, ConfigError) as exc:
        raise RefreshFailed(f"Wiki Live refresh: {exc}") from exc
    return RefreshSummary("wlc", new, versions, counts, skipped, window_end, notes=notes,
                          no_call_answered=no_call_answered(counts))


def no_call_answered(counts: dict) -> bool:
    """Every article chosen failed (a retry or a failure each)."""
    return counts.get("kept", 0) > 0 and counts.get("retry", 0) + counts.get("failed", 0) >= counts.get("kept", 0)
