"""Registered tasks and systems: the source of truth behind the dynamic partitions."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..core.keys import validate_key
from ..core.models import Task
from .db import Store


@dataclass(frozen=True)
class SystemEntry:
    system: str
    display_name: str
    kind: str
    reports_dir: str | None
    description: str = ""
    endpoint: str | None = None  # kind "endpoint": the OpenAI-compatible base URL that writes the reports
    model: str | None = None
    api_key_env: str | None = None  # the environment variable holding its API key (the key is never stored)
    has_citations: bool | None = None  # False: the release says it writes without citations; None: not said


def task_hash(task: Task) -> str:
    # defaults left out, so adding a field to Task does not make every stored task look changed
    canonical = json.dumps(task.model_dump(mode="json", exclude_defaults=True), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def register_tasks(store: Store, tasks: Sequence[Task], source: str,
                   known: dict[str, str] | None = None) -> tuple[list[str], list[str]]:
    """Insert new tasks and update changed ones; returns (new keys, changed keys). `known` (task ->
    hash, kept up to date here) spares a registry scan per batch when importing in batches."""
    existing = known if known is not None else task_hashes(store)
    new, changed, rows = [], [], []
    for task in tasks:
        validate_key(task.key)
        digest = task_hash(task)
        if existing.get(task.key) == digest:
            continue
        (changed if task.key in existing else new).append(task.key)
        existing[task.key] = digest
        rows.append((task.key, task.benchmark, task.original_id, task.model_dump_json(), digest, source))
    if rows:
        def work(con):
            con.executemany(
                "INSERT OR REPLACE INTO registered_tasks (task, benchmark, original_id, payload, content_hash, source, "
                "changed_at) VALUES (?, ?, ?, ?, ?, ?, current_timestamp)", rows)
        store.write(work)
    return new, changed


def register_system(store: Store, entry: SystemEntry) -> bool:
    """Register or update a system; returns True when it is new."""
    validate_key(entry.system)
    before = load_systems(store).get(entry.system)
    known = before is not None
    if before == entry:
        return False  # unchanged: no write, so its changed_at (what the registry sensor follows) stays
    store.execute(
        "INSERT OR REPLACE INTO registered_systems (system, display_name, kind, reports_dir, description, endpoint, "
        "model, api_key_env, has_citations, changed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, current_timestamp)",
        [entry.system, entry.display_name, entry.kind, entry.reports_dir, entry.description, entry.endpoint,
         entry.model, entry.api_key_env, entry.has_citations],
    )
    return not known


def load_tasks(store: Store, keys: Sequence[str] | None = None) -> dict[str, Task]:
    frame = store.query("SELECT task, payload FROM registered_tasks ORDER BY registered_at, task")
    wanted = set(keys) if keys is not None else None
    return {
        key: Task.model_validate_json(payload)
        for key, payload in frame.iter_rows()
        if wanted is None or key in wanted
    }


def task_hashes(store: Store) -> dict[str, str]:
    return dict(store.query("SELECT task, content_hash FROM registered_tasks").iter_rows())


def load_systems(store: Store) -> dict[str, SystemEntry]:
    frame = store.query(
        "SELECT system, display_name, kind, reports_dir, description, endpoint, model, api_key_env, has_citations "
        "FROM registered_systems ORDER BY registered_at, system"
    )
    return {row[0]: SystemEntry(*row) for row in frame.iter_rows()}


def system_reports_dir(entry: SystemEntry) -> Path | None:
    return Path(entry.reports_dir) if entry.reports_dir else None


def systems_without_citations(store: Store) -> frozenset[str]:
    """Systems a release marks as writing without citations (Wiki Live agencies.json has_citations: false)."""
    return frozenset(store.query("SELECT system FROM registered_systems WHERE has_citations = false")
                     .get_column("system").to_list())
