"""MiroEval release loader: the layout of the public MiroEval repository (methods/formats.md).

  data/input_queries/mirobench_text.json, mirobench_multimodal.json   tasks (JSON arrays)
  data/input_queries/multimodal-attachments/<id>/...                  attachments, named by files[].dir
  data/method_results/<model>_text.json                               reports + traces, text split
  data/method_multimodal_results/<model>_multimodal.json              reports + traces, multimodal split

  data/detail_results/{report,factuality,process}/*.json              published scores (published.py)

A folder holding only the published scores imports those.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ...core.keys import InvalidKeyError, task_key
from ...core.models import Task
from ...releases.records import (
    ImportedReport,
    ImportLog,
    SystemInfo,
    first_of,
    is_inside,
    labels,
    layout_check,
    make_key,
    object_field,
    relative,
    text_of,
    unknown_fields,
)
from ...releases.attachment_images import attachment_images
from ...releases.attachments import attachment_texts
from ...releases.json_readers import iter_records
from ...releases.reports import embedded_reports
from . import published

BENCHMARK = "miroeval"
QUERIES = Path("data/input_queries")
TASK_FIELDS = {"id", "chat_id", "query", "rewritten_query", "annotation", "files"}
REPORT_FIELDS = TASK_FIELDS | {"response", "process"}
ANNOTATION_TASK_FIELDS = {"language", "domain"}  # go to Task fields; the other labels go to attributes


@dataclass(frozen=True)
class Split:
    modality: str  # text | multimodal
    tasks: str  # file name under data/input_queries/
    results: Path  # folder of <model><suffix> files
    suffix: str


SPLITS = (
    Split("text", "mirobench_text.json", Path("data/method_results"), "_text.json"),
    Split("multimodal", "mirobench_multimodal.json", Path("data/method_multimodal_results"), "_multimodal.json"),
)


def layout_problem(root: Path) -> str | None:
    names = " or ".join(split.tasks for split in SPLITS)
    return layout_check(root, lambda r: has_tasks(r) or has_published(r), f"{QUERIES.as_posix()}/{names}",
                        "a MiroEval release")


def has_tasks(root: Path) -> bool:
    return any((Path(root) / QUERIES / split.tasks).is_file() for split in SPLITS)


def has_published(root: Path) -> bool:
    return published.has_published(root)


def iter_published(root: Path, log: ImportLog) -> Iterator[list[published.PublishedScore]]:
    """The release's published scores, one list per cell, keyed like its tasks."""
    return published.iter_published(root, log, _resolve)


# --- tasks ------------------------------------------------------------------------------

def iter_tasks(root: Path, log: ImportLog) -> Iterator[Task]:
    """Text tasks, then multimodal ones. The release numbers text tasks from 1 and multimodal ones
    from 101, so ids are unique across both files and a repeated id in either is a duplicate."""
    root = Path(root)
    seen: dict[str, str] = {}
    for split in SPLITS:
        path = root / QUERIES / split.tasks
        if not path.is_file():
            log.note(relative(root, path), None, "file not in the release; split not loaded")
            continue
        name = relative(root, path)
        for number, record in iter_records(path, root, log):
            task = _task(root, split, record, name, number, log, seen)
            if task is not None:
                yield task


def _task(root: Path, split: Split, record: dict, file: str, number: int, log: ImportLog,
          seen: dict[str, str]) -> Task | None:
    original_id = text_of(record.get("id"))
    query = first_of(record, "rewritten_query", "query")
    if not isinstance(query, str) or not query.strip():
        log.skip(file, number, f"task {original_id or '?'}: empty query (no rewritten_query or query)")
        return None
    attachments = _attachments(root, record, original_id, file, number, log)
    if attachments is None:
        return None
    key = make_key(BENCHMARK, original_id, file, number, log, seen)
    if key is None:
        return None
    if not isinstance(record.get("rewritten_query"), str) or not record["rewritten_query"].strip():
        log.note(file, number, f"task {original_id}: no rewritten_query; the original query is used")
    unknown_fields(record, TASK_FIELDS, file, number, log)
    annotation = object_field(record, "annotation", file, number, log)
    return Task(
        key=key, benchmark=BENCHMARK, original_id=original_id, query=query.strip(),
        language=str(annotation.get("language") or "en"), domain=str(annotation.get("domain") or ""),
        modality="multimodal" if split.modality == "multimodal" or attachments else "text",
        attachments=attachments,
        attributes=labels(annotation, file, number, log, taken=ANNOTATION_TASK_FIELDS),
        attachment_texts=attachment_texts(root, attachments, file, number, original_id, log),
        attachment_images=attachment_images(root, attachments, file, number, original_id, log),
    )


def _attachments(root: Path, record: dict, original_id: str, file: str, number: int,
                 log: ImportLog) -> list[str] | None:
    """Root-relative paths of the task's files, or None (logged) when one is unusable or missing:
    a task is imported with all its attachments or not at all."""
    files = record.get("files") or []
    if not isinstance(files, list):
        log.skip(file, number, f"task {original_id}: files is not a list")
        return None
    paths, missing = [], []
    for index, entry in enumerate(files, start=1):
        where = _attachment_path(entry, original_id)
        if where is None:
            log.skip(file, number, f"task {original_id}: files[{index}] has no dir or filename")
            return None
        path = root / QUERIES / where
        if not is_inside(root, path):
            log.skip(file, number, f"task {original_id}: attachment {where!r} points outside the release")
            return None
        if not path.is_file():
            missing.append(relative(root, path))
            continue
        paths.append(relative(root, path))
    if missing:
        log.skip_for_missing(file, number, original_id, missing, "attachment")
        return None
    return paths


def _attachment_path(entry: object, original_id: str) -> str | None:
    """`dir` is the path relative to data/input_queries/; without it, the release's own folder
    convention multimodal-attachments/<id>/<filename>."""
    if not isinstance(entry, dict):
        return None
    directory, filename = entry.get("dir"), entry.get("filename")
    if isinstance(directory, str) and directory.strip():
        return directory.strip()
    if isinstance(filename, str) and filename.strip():
        return f"multimodal-attachments/{original_id}/{filename.strip()}"
    return None


# --- reports and systems -----------------------------------------------------------------

def iter_reports(root: Path, log: ImportLog) -> Iterator[ImportedReport]:
    root = Path(root)
    for split in SPLITS:
        for system, path in _result_files(root, split, log):
            yield from embedded_reports(path, root, system, _resolve, log, id_fields=("id",),
                                        text_fields=("response",), trace_fields=("process",), known=REPORT_FIELDS)


def iter_systems(root: Path, log: ImportLog) -> Iterator[SystemInfo]:
    """Every model that has a results file in either split, once."""
    root = Path(root)
    named: set[str] = set()  # one name per results file: bounded by the number of files
    for split in SPLITS:
        for system, _ in _result_files(root, split, ImportLog()):  # file notes come from iter_reports
            if system not in named:
                named.add(system)
                yield SystemInfo(name=system)


def _result_files(root: Path, split: Split, log: ImportLog) -> Iterator[tuple[str, Path]]:
    """(model, file) per `<model>_text.json` / `<model>_multimodal.json`; other files are noted."""
    folder = root / split.results
    if not folder.is_dir():
        return
    for path in sorted(folder.iterdir()):
        if not path.is_file():
            continue
        system = path.name[: -len(split.suffix)] if path.name.endswith(split.suffix) else ""
        if not system:
            log.note(relative(root, path), None, f"not a <model>{split.suffix} results file; not read")
            continue
        yield system, path


def _resolve(original_id: str) -> str | None:
    """A report's task key: MiroEval ids are unique across splits, so the key needs no task index."""
    try:
        return task_key(BENCHMARK, original_id)
    except InvalidKeyError:
        return None
