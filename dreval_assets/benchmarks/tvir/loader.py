"""TVIR-Bench release loader (formats.md, "TVIR-Bench"). Paths relative to the release root:

  benchmark/data/query.json                          [{id, query, checklist: {section: [item, ...]}}]
  benchmark/reports/<system>/<task_id>/report.md     with images/ and charts/ beside it

Ids `0000xx` are Chinese tasks and `1000xx` English ones. Reports keep their figures as files; an
image a report names that is not there is logged as missing, and the report is still imported.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from ...core.keys import task_key
from ...core.models import Task
from ...releases.records import (
    ImportedReport,
    ImportLog,
    SystemInfo,
    canonical_id,
    first_of,
    id_and_query,
    layout_check,
    make_key,
    relative,
    subfolders,
    unknown_fields,
)
from ...releases.json_readers import iter_records
from ...releases.reports import FirstReports, check_images, read_report

BENCHMARK = "tvir"
QUERY_FILE = "benchmark/data/query.json"
REPORTS_FOLDER = "benchmark/reports"
TASK_FIELDS = {"id", "query", "checklist"}
FIRST_ENGLISH_ID = 100000  # ids below are the zh set (0000xx), from here the en set (1000xx)
ITEM_FIELDS = ("item", "text", "requirement")
CJK = re.compile(r"[\u3400-\u9fff]")


def layout_problem(root: Path) -> str | None:
    return layout_check(root, lambda r: (r / QUERY_FILE).is_file(), QUERY_FILE, "a TVIR-Bench release")


# --- tasks -----------------------------------------------------------------------------------

def iter_tasks(root: Path, log: ImportLog) -> Iterator[Task]:
    root = Path(root)
    seen: dict[str, str] = {}
    for number, record in iter_records(root / QUERY_FILE, root, log):
        task = _task(record, QUERY_FILE, number, log, seen)
        if task is not None:
            yield task


def _task(record: dict, file: str, number: int, log: ImportLog, seen: dict[str, str]) -> Task | None:
    unknown_fields(record, TASK_FIELDS, file, number, log)
    given = id_and_query(record, ("id",), file, number, log)
    if given is None:
        return None
    original_id, query = given
    checklist = _checklist(record.get("checklist"))
    if checklist is None:
        log.skip(file, number, f"checklist is a {type(record.get('checklist')).__name__}, "
                               "expected {section: [item, ...]} or a list of items")
        return None
    key = make_key(BENCHMARK, original_id, file, number, log, seen)
    if key is None:
        return None
    items, sections = checklist
    if not items:
        log.note(file, number, f"task {original_id} has no checklist items (instruction alignment will be N/A)")
    attributes = {"checklist_sections": " | ".join(sections)} if sections else {}
    return Task(key=key, benchmark=BENCHMARK, original_id=original_id, query=query,
                language=_language(original_id, query, file, number, log), checklist=items,
                attributes=attributes)


def _checklist(value: object) -> tuple[list[str], list[str]] | None:
    """(items in order, section names in order), or None when the field has an unusable shape."""
    if value is None:
        return [], []
    if isinstance(value, list):
        return _items(value), []
    if not isinstance(value, dict):
        return None
    items: list[str] = []
    for section_items in value.values():
        items.extend(_items(section_items if isinstance(section_items, list) else [section_items]))
    return items, [str(name) for name in value]


def _items(values: list) -> list[str]:
    texts = []
    for value in values:
        text = first_of(value, *ITEM_FIELDS) if isinstance(value, dict) else value
        if isinstance(text, str) and text.strip():
            texts.append(text.strip())
    return texts


def _language(original_id: str, query: str, file: str, number: int, log: ImportLog) -> str:
    ident = canonical_id(original_id)
    if ident.isascii() and ident.isdigit():
        return "en" if int(ident) >= FIRST_ENGLISH_ID else "zh"
    language = "zh" if CJK.search(query) else "en"
    log.note(file, number, f"id {original_id!r} is not a TVIR number; language {language} guessed from the query")
    return language


# --- reports and systems ---------------------------------------------------------------------

def iter_reports(root: Path, log: ImportLog) -> Iterator[ImportedReport]:
    root = Path(root)
    ids: dict[str, str] | None = None
    first = FirstReports()
    for system, folder in _report_folders(root):
        report = folder / "report.md"
        where = relative(root, report)
        if not report.is_file():
            log.skip(relative(root, folder), None, "no report.md")
            continue
        if ids is None:
            ids = _task_ids(root)
        original_id = ids.get(canonical_id(folder.name))
        if original_id is None:
            log.skip(where, None, f"no task with id {folder.name!r}")
            continue
        key = task_key(BENCHMARK, original_id)
        if first.is_second(system.name, key, original_id, where, None, log):
            continue
        text = read_report(report, where, log, root=root)
        if text is None:
            continue
        yield ImportedReport(system=system.name, task=key, task_id=original_id, where=where, path=report,
                             base_dir=check_images(text, [folder], where, log))


def iter_systems(root: Path, log: ImportLog) -> Iterator[SystemInfo]:
    for system in subfolders(Path(root) / REPORTS_FOLDER):
        yield SystemInfo(name=system.name)


def _report_folders(root: Path) -> Iterator[tuple[Path, Path]]:
    for system in subfolders(root / REPORTS_FOLDER):
        for folder in subfolders(system):
            yield system, folder


def _task_ids(root: Path) -> dict[str, str]:
    """Canonical id -> id as given, read once. Bounded by the number of tasks (short strings only)."""
    quiet = ImportLog()  # iter_tasks reports this file's problems; don't repeat them
    ids: dict[str, str] = {}
    for _, record in iter_records(root / QUERY_FILE, root, quiet):
        raw = first_of(record, "id")
        if isinstance(raw, (str, int)) and str(raw).strip():
            ids.setdefault(canonical_id(raw), str(raw).strip())
    return ids
