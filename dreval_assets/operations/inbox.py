"""What the registry sensor acts on, without Dagster: folders dropped into `<home>/inbox/`, and tasks
and systems registered since the sensor last looked (by `dreval import`, `dreval refresh`, a refresh
job or the inbox itself).

Inbox folders: a folder with a `tasks.jsonl` is imported as our generic layout (tasks, and systems'
reports under `systems/<name>/`); a folder of `*.md` files only is registered as a folder system
named after it. A folder is taken again when its signature (names, sizes and times of its files)
changes; the import is by content hash, so taking it again changes only what changed.

Every query here is bounded by what changed: the registry rows newer than the cursor, the
materialisation rows of the pending partitions. Nothing scans all partitions on an idle tick.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..core.keys import slugify, validate_key
from ..store.db import Store
from ..store.imports import imported_benchmarks, tasks_in_scope
from ..store.registry import SystemEntry, load_systems, register_system


@dataclass
class RegistryChanges:
    tasks: list[str] = field(default_factory=list)  # new or changed since the cursor, in registration order
    systems: list[str] = field(default_factory=list)
    newest: str | None = None  # the cursor to keep


def folder_signature(folder: Path) -> str:
    """Names, sizes and modification times of every file below the folder."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        stat = path.stat()
        digest.update(f"{path.relative_to(folder)}|{stat.st_size}|{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def edited_report_folders(store: Store, seen: dict[str, str] | None) -> tuple[dict[str, str], list[str]]:
    """The folder systems whose report folder changed since `seen` (their signatures); the first look
    (`seen` None) only records them. Returns the signatures now and the systems to look at again."""
    now = {system: folder_signature(Path(entry.reports_dir)) for system, entry in load_systems(store).items()
           if entry.kind == "folder" and entry.reports_dir and Path(entry.reports_dir).is_dir()}
    if seen is None:
        return now, []
    return now, [system for system, signature in now.items() if system in seen and seen[system] != signature]


def ingest_inbox(store: Store, inbox: Path, seen: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """Import new or changed inbox folders; returns the updated signatures and one message each."""
    from .importer import ImportFailed, import_release

    if not inbox.is_dir():
        return seen, []
    seen, messages = dict(seen), []
    for folder in sorted(p for p in inbox.iterdir() if p.is_dir() and not p.name.startswith(".")):
        signature = folder_signature(folder)
        if seen.get(folder.name) == signature:
            continue
        try:
            if (folder / "tasks.jsonl").is_file():
                summary = import_release(store, "generic", folder)
                messages.append(f"inbox {folder.name}: " + "; ".join(summary.lines()[1:4]))
            elif any(folder.glob("*.md")):
                key = register_folder_system(store, folder.name, folder)
                messages.append(f"inbox {folder.name}: system {key} registered")
            else:
                messages.append(f"inbox {folder.name}: neither tasks.jsonl nor *.md reports; left alone")
        except (ImportFailed, ValueError, OSError) as exc:
            messages.append(f"inbox {folder.name}: not imported: {exc}")
        seen[folder.name] = signature
    return seen, messages


def register_folder_system(store: Store, name: str, folder: Path, description: str = "") -> str:
    """A folder of `<task>.md` reports as a system; `system.json` may give a name and description
    (read as the generic layout reads it; a malformed one is an error)."""
    from ..releases.generic_layout import system_info
    from ..releases.records import ImportLog

    log = ImportLog()
    info = system_info(folder, name, folder, log)  # read inside the folder only
    if log.skipped or log.missing:
        raise ValueError(f"{folder.name}/system.json: {(log.skipped or log.missing)[0].reason}")
    key = validate_key(slugify(name))
    register_system(store, SystemEntry(key, info.display_name or name, "folder", str(folder.resolve()),
                                       description or info.description))
    return key


def registry_changes(store: Store, since: str | None) -> RegistryChanges:
    """Tasks and systems registered (or re-registered with new content) after `since`."""
    at = "coalesce(changed_at, registered_at)"
    where = f"WHERE {at} > CAST(? AS TIMESTAMP)" if since else ""
    params = [since] if since else None
    tasks = store.query(f"SELECT task, {at}::VARCHAR AS at FROM registered_tasks {where} ORDER BY {at}, task", params)
    systems = store.query(f"SELECT system, {at}::VARCHAR AS at FROM registered_systems {where} "
                          f"ORDER BY {at}, system", params)
    stamps = [*tasks["at"].to_list(), *systems["at"].to_list()]
    return RegistryChanges(tasks["task"].to_list(), systems["system"].to_list(), max(stamps) if stamps else since)


def tasks_ready(store: Store, keys: Iterable[str]) -> list[str]:
    """The pending tasks whose current version is materialised (tasks and task_rubrics)."""
    keys = list(keys)
    if not keys:
        return []
    marks = ", ".join("?" for _ in keys)
    ready = store.query(
        f"SELECT r.task FROM registered_tasks r JOIN tasks t USING (task) WHERE r.task IN ({marks}) "
        "AND t.content_hash = r.content_hash AND EXISTS (SELECT 1 FROM materialized_partitions m "
        "WHERE m.asset = 'task_rubrics' AND m.system = '' AND m.task = r.task)", keys)
    found = set(ready["task"].to_list())
    return [k for k in keys if k in found]


def evaluation_targets(store: Store, ready_tasks: list[str], new_systems: list[str]) -> dict[str, list[str]]:
    """system -> tasks to evaluate: every system on the newly ready tasks, and each new system on
    all materialised tasks; an imported system only on its benchmarks' tasks."""
    systems = load_systems(store)
    scope = imported_benchmarks(store)
    benchmark = dict(store.query("SELECT task, benchmark FROM registered_tasks").iter_rows()) \
        if any(s.kind == "imported" for s in systems.values()) else {}
    all_tasks = store.query("SELECT task FROM materialized_partitions WHERE asset = 'tasks' AND system = '' "
                            "ORDER BY task")["task"].to_list() if new_systems else []
    targets: dict[str, list[str]] = {}
    for system, entry in systems.items():
        candidates = list(dict.fromkeys([*ready_tasks, *(all_tasks if system in new_systems else [])]))
        wanted = tasks_in_scope(entry, candidates, benchmark, scope)
        if wanted:
            targets[system] = wanted
    return targets


def evaluated(store: Store, pairs: Iterable[tuple[str, str]], since: str | None = None) -> bool:
    """Whether every (system, task) pair has metric_scores materialised (at or after `since`, the time
    its evaluation was requested: an older materialisation is the one being replaced)."""
    pairs = list(pairs)
    if not pairs:
        return True
    after = "AND m.materialized_at >= CAST(? AS TIMESTAMP)" if since else ""
    done = store.query(
        "SELECT count(*) FROM materialized_partitions m JOIN (SELECT unnest(?) AS system, unnest(?) AS task) p "
        f"USING (system, task) WHERE m.asset = 'metric_scores' {after}",
        [[s for s, _ in pairs], [t for _, t in pairs], *([since] if since else [])]).item()
    return done == len(set(pairs))
