"""Registered tasks and systems: the source of truth behind the dynamic partitions."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from ..core.keys import slugify, validate_key
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


# ------------------------------------------------------------------- task versions (live sources)

@dataclass(frozen=True)
class TaskVersion:
    """A task as a live source found it now. `task.key` is its lineage: the key of its first version."""

    task: Task
    revision: str  # the upstream version it was taken from (a MediaWiki revid); names later versions


@dataclass
class VersionOutcome:
    new: list[str]  # first versions
    new_versions: list[tuple[str, str]]  # (key, the key it supersedes)
    unchanged: list[str]  # already registered with this content: the key that has it
    keys: dict[str, str] = field(default_factory=dict)  # lineage -> the key that holds the content given


def register_task_versions(store: Store, versions: Sequence[TaskVersion], source: str) -> VersionOutcome:
    """Register each task unless one version of its lineage already has the same content. A changed
    task is a new version `<lineage>-r<revision>` (a digest is added if that key is taken) that
    names the one it supersedes; nothing is replaced, so the old version keeps its results."""
    outcome = VersionOutcome([], [], [])
    rows, version_rows = [], []
    for item in versions:
        lineage = validate_key(item.task.key)
        stored = _lineage_versions(store, lineage)  # [(key, version, content digest with the lineage key)]
        digest = task_hash(item.task)
        same = [key for key, _, content in stored if content == digest]
        if same:
            outcome.unchanged.append(same[-1])
            outcome.keys[lineage] = same[-1]
            continue
        if not stored:
            key, version, supersedes = lineage, 1, None
            outcome.new.append(key)
        else:
            taken = {key for key, _, _ in stored}
            key = validate_key(f"{lineage}-{slugify('r' + item.revision, 24)}")
            key = key if key not in taken else validate_key(f"{key}-{digest[:8]}")
            supersedes, last = max(stored, key=lambda s: s[1])[0], max(s[1] for s in stored)
            version = last + 1
            outcome.new_versions.append((key, supersedes))
        outcome.keys[lineage] = key
        task = item.task.model_copy(update={"key": key})
        rows.append((key, task.benchmark, task.original_id, task.model_dump_json(), task_hash(task), source))
        version_rows.append((key, lineage, version, supersedes, item.revision))
    if rows:
        def work(con):
            con.executemany(  # INSERT, never REPLACE: a version, once registered, stays as it was
                "INSERT INTO registered_tasks (task, benchmark, original_id, payload, content_hash, source, "
                "changed_at) VALUES (?, ?, ?, ?, ?, ?, current_timestamp)", rows)
            con.executemany("INSERT INTO task_versions (task, lineage, version, supersedes, source_revision) "
                            "VALUES (?, ?, ?, ?, ?)", version_rows)
        store.write(work)
    return outcome


def _lineage_versions(store: Store, lineage: str) -> list[tuple[str, int, str]]:
    """Every registered version of a lineage (a task registered before versions existed is version 1)."""
    frame = store.query(
        "SELECT r.task, coalesce(v.version, 1) AS version, r.payload FROM registered_tasks r "
        "LEFT JOIN task_versions v USING (task) WHERE coalesce(v.lineage, r.task) = ? ORDER BY version", [lineage])
    return [(key, version, task_hash(Task.model_validate_json(payload).model_copy(update={"key": lineage})))
            for key, version, payload in frame.iter_rows()]


def lineage_heads(store: Store, prefix: str) -> dict[str, str]:
    """lineage -> the key of its latest version, for the lineages whose key starts with `prefix`."""
    frame = store.query(
        "SELECT coalesce(v.lineage, r.task) AS lineage, r.task, coalesce(v.version, 1) AS version "
        "FROM registered_tasks r LEFT JOIN task_versions v USING (task) "
        "WHERE starts_with(coalesce(v.lineage, r.task), ?) ORDER BY lineage, version", [prefix])
    return {lineage: key for lineage, key, _ in frame.iter_rows()}  # ordered by version: the last one wins
