"""The toy's live refresh: new queries from its feed (set by the test; a real benchmark would ask its
source through `api`), registered as tasks, the last one taken kept as the next refresh's start."""
from dreval_assets.core.models import Task
from dreval_assets.live.summary import RefreshSummary
from dreval_assets.store.refresh import cursor, save_refresh
from dreval_assets.store.registry import register_tasks

FEED: list[tuple[str, str]] = []  # (id, query), oldest first


def refresh(store, judge, config, api) -> RefreshSummary:
    ids = [entry_id for entry_id, _ in FEED]
    last = cursor(store, "toy")
    fresh = FEED[ids.index(last) + 1:] if last in ids else FEED
    tasks = [Task(key=f"toy.live-{entry_id}", benchmark="toy", original_id=entry_id, query=query)
             for entry_id, query in fresh]
    new, changed = register_tasks(store, tasks, source="refresh:toy")
    next_cursor = fresh[-1][0] if fresh else last
    save_refresh(store, "toy", next_cursor, {"taken": len(fresh)})
    return RefreshSummary("toy", new, changed, {"taken": len(fresh)}, cursor=next_cursor)
