"""A Wiki Live refresh into the store: the window from the last refresh (or the environment), the
candidates and tasks from `wikilive.refresh_wikilive`, every candidate stored (`wlc_candidates`), the
tasks registered as versions (`store.registry.register_task_versions`), and the window end kept as
the next refresh's start."""
from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Callable

from ....config import ConfigError
from ....fetch.api import JsonApi
from ....judges.base import Judge
from ....store.db import Store
from ....store.refresh import cursor, save_refresh
from ....store.registry import TaskVersion, lineage_heads, load_tasks, register_task_versions, task_hash
from ....store.wlc_candidates import candidates_to_retry, write_wlc_candidates
from ....live.config import LiveConfig
from .wikilive import Known, Window, refresh_wikilive
from .wikilive_discovery import format_timestamp, parse_timestamp
from .wikilive_selection import Candidate

LINEAGE_PREFIX = "wlc.live-"


def window_for(store: Store, config: LiveConfig, now: datetime) -> Window:
    """(after, before]: before = DREVAL_WLC_CREATED_BEFORE or now; after = DREVAL_WLC_CREATED_AFTER, else
    the last refresh's window end, else (a first refresh) `wlc_window_days` before the end: a first
    refresh takes a quarter's new Good Articles, as the first release took nine months'."""
    try:
        before = parse_timestamp(config.wlc_created_before) if config.wlc_created_before else now
        last = cursor(store, "wlc")
        after = (parse_timestamp(config.wlc_created_after) if config.wlc_created_after
                 else parse_timestamp(last) if last else before - timedelta(days=config.wlc_window_days))
    except ValueError as exc:
        raise ConfigError(f"Wiki Live window: {exc} (DREVAL_WLC_CREATED_AFTER/_BEFORE take ISO dates)") from exc
    if after >= before:
        raise ConfigError(f"Wiki Live window: it starts after {format_timestamp(after)} and ends "
                          f"{format_timestamp(before)}: nothing can be created inside it")
    return Window(after, before)


def known_articles(store: Store) -> dict[int, Known]:
    """pageid -> the latest registered version of its task."""
    heads = lineage_heads(store, LINEAGE_PREFIX)
    tasks = load_tasks(store, list(heads.values()))
    known = {}
    for key, task in tasks.items():
        attrs = task.attributes
        if not str(attrs.get("pageid", "")).isdigit():
            continue
        revid = int(attrs["revid"]) if str(attrs.get("revid", "")).isdigit() else None
        created = parse_timestamp(attrs["created_at"]) if attrs.get("created_at") else None
        known[int(attrs["pageid"])] = Known(key, revid, created)
    return known


def refresh_wikilive_into(store: Store, judge: Judge, config: LiveConfig, api: JsonApi,
                          now: Callable[[], datetime] = lambda: datetime.now(timezone.utc)):
    """Returns (new keys, new version keys, counts, notes, skipped lines, window end)."""
    window = window_for(store, config, now())
    retry = [_candidate(row) for row in candidates_to_retry(store)]
    result = refresh_wikilive(api, config.wlc_api, judge, window, limit=config.wlc_limit,
                              known=known_articles(store), retry=retry,
                              chunk_chars=config.wlc_gold_chunk_chars, labels={"asset": "wlc_refresh"})
    outcome = register_task_versions(store, [TaskVersion(task, str(c.revid)) for task, c in result.tasks],
                                     source="refresh:wlc")
    superseded = dict(outcome.new_versions)
    for task, c in result.tasks:
        c.task_key = outcome.keys[task.key]
        c.content_hash = task_hash(task.model_copy(update={"key": c.task_key}))
        if c.task_key in superseded:
            c.outcome, c.supersedes = "new_version", superseded[c.task_key]
        elif c.task_key not in outcome.new:
            c.outcome, c.reason = "unchanged", c.reason + "; the same task is registered already"
    refresh_id = uuid.uuid4().hex[:12]
    write_wlc_candidates(store, refresh_id, [c.as_row() for c in result.candidates])
    counts = {**result.counts(), "tasks": len(outcome.new), "new_versions": len(outcome.new_versions)}
    notes = [f"window: created after {format_timestamp(window.after)}, up to {format_timestamp(window.before)}"]
    notes += [f"1 new version of {old}: {key}" for key, old in outcome.new_versions]
    skipped = [f"{c.label}: {c.outcome}: {c.reason}" for c in result.candidates if c.outcome in ("retry", "failed")]
    skipped += result.problems
    save_refresh(store, "wlc", format_timestamp(window.before), {"refresh_id": refresh_id, **counts})
    return (outcome.new, [key for key, _ in outcome.new_versions], counts, notes, skipped,
            format_timestamp(window.before))


def _candidate(row: dict) -> Candidate:
    """A stored `retry` row as a candidate of this refresh: kept ones skip the selection."""
    c = Candidate(row["pageid"], row["title"], row["ga_at"], row["window_after"], row["window_before"],
                  created_at=row["created_at"], in_window=row["in_window"])
    c.retried = bool(row["kept"])
    return c
