"""Our own generic layout (formats.md, "Generic (ours)"), which the bundled demo uses. Paths relative to the root:

  tasks.jsonl                     {id, benchmark?, query, language?, domain?, modality?, checklist?, attachments?,
                                   reference_article? (the text, or a .md/.txt path), gold_facts?,
                                   gold_insights? (from the task's own files), gold_insights_sandbox? (from its sandbox),
                                   visual_ground_truth?, visual_ground_truth_version?, race_criteria?, attributes?}
  sandbox.jsonl                   optional offline corpus, pages {task_id, url, title?, role?, text}
  systems/<system>/<task id>.md   one report per task (+ <task id>.trace.json); figures beside it or at the root
  systems/<system>/system.json    optional {display_name? (or name), description?}
  systems/<system>.jsonl          or one file per system, {task_id, report, trace?}

A record's `benchmark` (default generic) picks its key prefix and the suite that scores it, so one
folder may hold tasks in the style of several benchmarks (the demo does). `iter_report_folder`
reads one system's reports from any folder, for `dreval import BENCHMARK PATH --reports FOLDER`.
"""
from __future__ import annotations

import mimetypes
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from ..core.models import SandboxPage, Task
from .records import (
    Entry,
    ImportedReport,
    ImportLog,
    SystemInfo,
    as_list,
    first_of,
    id_and_query,
    is_inside,
    labels,
    layout_check,
    make_key,
    object_field,
    relative,
    subfolders,
    text_of,
    unknown_fields,
)
from .attachment_images import attachment_images
from .attachments import attachment_texts
from .json_readers import JsonlIndex, iter_jsonl, read_json, read_text
from .reports import FirstReports, check_images, embedded_reports, read_report

BENCHMARK = "generic"
TASKS = "tasks.jsonl"
SANDBOX = "sandbox.jsonl"
SYSTEMS = "systems"
TASK_FIELDS = {"id", "benchmark", "query", "language", "domain", "modality", "checklist", "attachments",
               "reference_article", "gold_facts", "gold_insights", "gold_insights_sandbox", "visual_ground_truth",
               "visual_ground_truth_version", "race_criteria", "attributes"}
PAGE_FIELDS = ("url", "title", "role", "text")
SANDBOX_FIELDS = {"task_id", *PAGE_FIELDS}
REPORT_FIELDS = {"task_id", "report", "trace"}
SYSTEM_FIELDS = {"display_name", "name", "description"}
REFERENCE_FILES = {".md", ".txt"}
MAX_PATH_CHARS = 255  # a longer reference_article is the article itself, whatever it ends with
WEB = ("http://", "https://")

Resolve = Callable[[str], str | None]  # file stem or task_id -> task key; None: no such task


class UnusableRecord(Exception):
    """A field of a task record that cannot be used: the task is skipped, with this reason."""


@dataclass(frozen=True)
class GenericEntry(Entry):
    benchmark: str  # as the record names it (default generic)


def layout_problem(root: Path) -> str | None:
    return layout_check(root, lambda r: (r / TASKS).is_file(), TASKS, "a folder in our generic layout")


# --- tasks -----------------------------------------------------------------------------------

def iter_entries(root: Path, log: ImportLog) -> Iterator[GenericEntry]:
    """The tasks.jsonl records that pass the id, query and benchmark checks, with their keys."""
    root = Path(root)
    seen: dict[str, str] = {}
    for number, record in iter_jsonl(root / TASKS, root, log):
        given = id_and_query(record, ("id",), TASKS, number, log)
        if given is None:
            continue
        benchmark = record.get("benchmark")
        if benchmark is not None and not isinstance(benchmark, str):
            log.skip(TASKS, number, f"benchmark is a {type(benchmark).__name__}, expected a name")
            continue
        benchmark = (benchmark or "").strip() or BENCHMARK
        key = make_key(benchmark, given[0], TASKS, number, log, seen)
        if key is not None:
            yield GenericEntry(TASKS, number, key, given[0], record, benchmark)


def iter_tasks(root: Path, log: ImportLog) -> Iterator[Task]:
    root = Path(root)
    sandbox = sandbox_index(root, log)
    for entry in iter_entries(root, log):
        if sandbox is not None:
            sandbox.claim(entry.original_id)
        task = build_task(root, entry, sandbox, log)
        if task is not None:
            yield task
    for task_id, line in sandbox.unclaimed() if sandbox is not None else ():
        log.note(SANDBOX, line, f"sandbox page(s) for task {task_id!r} not used: no task in {TASKS} has this id")


def build_task(root: Path, entry: GenericEntry, sandbox: JsonlIndex | None, log: ImportLog) -> Task | None:
    """The task, whole, or None (logged): files it names must be there and its fields valid."""
    record, file, number, task_id = entry.record, entry.file, entry.number, entry.original_id
    unknown_fields(record, TASK_FIELDS, file, number, log)
    try:
        attachments, missing = _attachments(root, record)
        reference, missing_reference = _reference_article(root, record, file, number, log)
    except UnusableRecord as exc:
        log.skip(file, number, f"task {task_id}: {exc}")
        return None
    if missing or missing_reference:
        log.skip_for_missing(file, number, task_id, missing + missing_reference, "file")
        return None
    try:
        task = Task(
            key=entry.key, benchmark=entry.benchmark, original_id=task_id, query=record["query"].strip(),
            language=record.get("language") or "en", domain=record.get("domain") or "",
            modality=record.get("modality") or _modality(attachments), attachments=attachments,
            checklist=as_list(record.get("checklist")), reference_article=reference,
            gold_facts=as_list(record.get("gold_facts")), gold_insights=as_list(record.get("gold_insights")),
            gold_insights_sandbox=as_list(record.get("gold_insights_sandbox")),
            visual_ground_truth=record.get("visual_ground_truth"),
            visual_ground_truth_version=record.get("visual_ground_truth_version"),
            race_criteria=record.get("race_criteria"),
            attributes=labels(object_field(record, "attributes", file, number, log), file, number, log),
            sandbox=_pages(sandbox, task_id))
    except ValidationError as exc:
        log.skip(file, number, f"task {task_id}: invalid {_first_error(exc)}")
        return None
    local = [name for name in attachments if not name.lower().startswith(WEB)]
    task.attachment_texts = attachment_texts(root, local, file, number, task_id, log)  # costly: only for a valid task
    task.attachment_images = attachment_images(root, local, file, number, task_id, log)
    return task


def _attachments(root: Path, record: dict) -> tuple[list[str], list[str]]:
    """(attachments as the task keeps them: root-relative paths, image URLs as given; paths not found)."""
    found, missing = [], []
    for value in as_list(record.get("attachments")):
        if not isinstance(value, str) or not value.strip():
            raise UnusableRecord(f"attachment entry {value!r} is not a path or URL")
        value = value.strip()
        if value.lower().startswith(WEB):
            found.append(value)
        elif not is_inside(root, root / value):
            raise UnusableRecord(f"attachment {value!r} points outside the folder")
        elif (root / value).is_file():
            found.append(relative(root, root / value))
        else:
            missing.append(value)
    return found, missing


def _reference_article(root: Path, record: dict, file: str, number: int,
                       log: ImportLog) -> tuple[str | None, list[str]]:
    """(the reference article's text, [its path] when that file is not there)."""
    value = record.get("reference_article")
    if value in (None, ""):
        return None, []
    if not isinstance(value, str):
        raise UnusableRecord(f"reference_article is a {type(value).__name__}, expected its text or a path")
    if not _names_a_file(value):
        return value, []
    path = root / value.strip()
    if not is_inside(root, path):
        raise UnusableRecord(f"reference article {value.strip()!r} points outside the folder")
    if not path.is_file():
        return None, [value.strip()]
    text = read_text(path, root, log)
    if text is None:
        raise UnusableRecord(f"reference article {value.strip()} is unreadable")
    if not text.strip():
        log.note(file, number, f"reference article {value.strip()} is empty: the task has none")
        return None, []
    return text, []


def _names_a_file(value: str) -> bool:
    """A short one-line value ending in .md or .txt names a file; anything else is the article itself."""
    value = value.strip()
    return len(value) <= MAX_PATH_CHARS and "\n" not in value and Path(value).suffix.lower() in REFERENCE_FILES


def _modality(attachments: list[str]) -> str:
    images = [a for a in attachments if (mimetypes.guess_type(a)[0] or "").startswith("image/")]
    return "multimodal" if images else "text"


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where} ({error['msg']})" + (f" and {exc.error_count() - 1} more" if exc.error_count() > 1 else "")


# --- sandbox ---------------------------------------------------------------------------------

def sandbox_index(root: Path, log: ImportLog) -> JsonlIndex | None:
    """sandbox.jsonl by task id: lines and offsets only, the pages are read back when their task is
    built. Pages are checked here, so a bad one is reported once, not per task."""
    if not (root / SANDBOX).is_file():
        return None
    return JsonlIndex(root / SANDBOX, root, log, lambda record: text_of(record.get("task_id")),
                      label="task_id", problem=_page_problem, known=SANDBOX_FIELDS, repeated=True)


def _page(record: dict) -> SandboxPage:
    return SandboxPage(**{name: record[name] for name in PAGE_FIELDS if record.get(name) is not None})


def _page_problem(task_id: str, record: dict) -> str | None:
    try:
        _page(record)
    except ValidationError as exc:
        return f"invalid sandbox page: {_first_error(exc)}"
    return None


def _pages(sandbox: JsonlIndex | None, task_id: str) -> list[SandboxPage]:
    return [_page(record) for _, record in sandbox.read_all(task_id)] if sandbox is not None else []


# --- systems and reports ---------------------------------------------------------------------

def iter_systems(root: Path, log: ImportLog) -> Iterator[SystemInfo]:
    root = Path(root)
    for name, folder, _ in _systems(root):
        yield system_info(root, name, folder, log)


def iter_reports(root: Path, log: ImportLog) -> Iterator[ImportedReport]:
    root = Path(root)
    resolve = task_resolver(root)
    for name, folder, jsonl in _systems(root):
        first = FirstReports()  # one system may have both a folder and a JSONL file
        if folder is not None:
            yield from folder_reports(root, folder, name, resolve, log, first, [folder, root])
        if jsonl is not None:
            yield from _jsonl_reports(root, jsonl, name, resolve, log, first)


def iter_report_folder(folder: Path, system: str, resolve: Resolve, log: ImportLog) -> Iterator[ImportedReport]:
    """The reports of one system named by the user, from any folder of `<task id>.md` files (+
    `<task id>.trace.json`; any `*.jsonl` in it is read too) or from one JSONL file {task_id,
    report, trace?}. `resolve` maps a file stem or task_id to its task key (None: no such task).
    Messages name files relative to the folder's parent."""
    folder = Path(folder)
    root, first = folder.parent, FirstReports()
    if folder.is_file():
        yield from _jsonl_reports(root, folder, system, resolve, log, first)
        return
    if not folder.is_dir():
        log.miss(folder.name, None, "no such folder or file")
        return
    yield from folder_reports(root, folder, system, resolve, log, first, [folder], within=folder)
    for path in sorted(folder.glob("*.jsonl")):
        yield from _jsonl_reports(root, path, system, resolve, log, first)


def task_resolver(root: Path) -> Resolve:
    """File stem or task_id -> task key: the id as given (when only one task has it) or the key itself.
    Same checks as iter_tasks up to the key (its log discarded); bounded: one id and key per task."""
    by_id: dict[str, str | None] = {}  # None: several benchmarks use this id, the report must name the key
    keys: set[str] = set()
    for entry in iter_entries(root, ImportLog()):
        by_id[entry.original_id] = None if entry.original_id in by_id else entry.key
        keys.add(entry.key)
    return lambda name: by_id.get(name) or (name if name in keys else None)


def folder_reports(root: Path, folder: Path, system: str, resolve: Resolve, log: ImportLog, first: FirstReports,
                   image_folders: list[Path], within: Path | None = None) -> Iterator[ImportedReport]:
    """`<task id>.md` files of one system's folder; `image_folders` are where their figures may be.
    A file is read only inside `within` (default the release root), links followed."""
    for path in sorted(folder.glob("*.md")):  # file names only: bounded by the number of tasks
        where, task_id = relative(root, path), path.stem
        key = resolve(task_id)
        if key is None:
            log.skip(where, None, f"no task with id {task_id!r}")
            continue
        if first.is_second(system, key, task_id, where, None, log):
            continue
        text = read_report(path, where, log, root=within or root)
        if text is None:
            continue
        trace = path.with_name(f"{task_id}.trace.json")
        yield ImportedReport(system=system, task=key, task_id=task_id, where=where, path=path,
                             base_dir=check_images(text, image_folders, where, log),
                             trace_path=trace if trace.is_file() else None)


def _jsonl_reports(root: Path, path: Path, system: str, resolve: Resolve, log: ImportLog,
                   first: FirstReports) -> Iterator[ImportedReport]:
    return embedded_reports(path, root, system, resolve, log, id_fields=("task_id",), text_fields=("report",),
                            trace_fields=("trace",), known=REPORT_FIELDS, first=first)


def _systems(root: Path) -> Iterator[tuple[str, Path | None, Path | None]]:
    """(name, report folder, JSONL file) per system under systems/, in name order."""
    base = root / SYSTEMS
    if not base.is_dir():
        return
    folders = {path.name: path for path in subfolders(base)}
    files = {path.stem: path for path in base.glob("*.jsonl") if path.is_file()}
    for name in sorted(folders.keys() | files.keys()):
        yield name, folders.get(name), files.get(name)


def system_info(root: Path, name: str, folder: Path | None, log: ImportLog) -> SystemInfo:
    """What `<folder>/system.json` says about a system (its name alone when there is none)."""
    path = folder / "system.json" if folder is not None else None
    if path is None or not path.is_file():
        return SystemInfo(name=name)
    meta = read_json(path, root, log)
    if not isinstance(meta, dict):
        if meta is not None:
            log.skip(relative(root, path), None, "expected a JSON object {display_name?, description?}")
        return SystemInfo(name=name)
    unknown_fields(meta, SYSTEM_FIELDS, relative(root, path), None, log)
    return SystemInfo(name=name, description=text_of(meta.get("description")),
                      display_name=text_of(first_of(meta, "display_name", "name")))
