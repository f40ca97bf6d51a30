"""reports: read each system's report for each task, with a status that says what went wrong."""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Mapping, Sequence

import polars as pl

from ..releases.generic import find_report_file
from ..releases.records import open_release_file
from ..releases.report_text import read_report_file
from ..store.registry import SystemEntry
from .frames import frame, text_hash


def read_reports(
    keys: Sequence[tuple[str, str]],
    systems: Mapping[str, SystemEntry],
    original_ids: Mapping[str, str],
    imported: Mapping[tuple[str, str], dict] | None = None,
    written: Mapping[tuple[str, str], dict] | None = None,
) -> pl.DataFrame:
    """Folder systems are read from their folder; imported systems from `imported` (rows of
    `imported_reports` for these keys, already decoded and checked by the import); endpoint systems
    from `written` (rows `stages/report_writing.write_reports` made). Each row carries the report's
    research trace (`trace`, as the system wrote it; None when there is none): a folder system's
    `<report stem>.trace.json` beside the report, an imported report's trace from the import; and
    `cleaned_text`, the benchmark's own citation-free rewrite an import found (None: none), and
    `release_statements`, the benchmark's own statements of the report an import found (None: none)."""
    written = written or {}
    # a row without trace, cleaned_text or release_statements gets None from frames.DEFAULTS
    return frame("reports", [written.get((system, task)) or _read_one(system, task, systems, original_ids,
                                                                      imported or {})
                             for system, task in keys])


def _read_one(system: str, task: str, systems: Mapping[str, SystemEntry], original_ids: Mapping[str, str],
              imported: Mapping[tuple[str, str], dict]) -> dict:
    row = {"system": system, "task": task, "status": "ok", "text": None, "n_chars": 0,
           "content_hash": None, "source_path": None, "na_reason": None, "detail": ""}
    entry = systems.get(system)
    if entry is None:
        return {**row, "status": "missing", "na_reason": "pipeline_failure",
                "detail": f"system {system!r} is not registered"}
    if entry.kind == "endpoint":
        return {**row, "status": "missing", "na_reason": "pipeline_failure",
                "detail": f"task {task!r} is unknown, so endpoint system {system!r} was not asked to write it"}
    if entry.kind == "imported":
        found = imported.get((system, task))
        if found is None:
            return {**row, "status": "missing", "na_reason": "model_failure",
                    "detail": f"the import has no report of system {system!r} for task {task!r}"}
        return {**row, "text": found["text"], "n_chars": len(found["text"]), "content_hash": found["content_hash"],
                "source_path": found["source"], "trace": found.get("trace"),
                "cleaned_text": found.get("cleaned_text"), "release_statements": found.get("release_statements")}
    if not entry.reports_dir:
        return {**row, "status": "missing", "na_reason": "pipeline_failure",
                "detail": f"system {system!r} has no reports folder"}
    path = find_report_file(Path(entry.reports_dir), task, original_ids.get(task, task))
    if path is None:
        return {**row, "status": "missing", "na_reason": "model_failure",
                "detail": f"no report for task {task!r} ({original_ids.get(task, task)!r}) in the system's folder"}
    row["source_path"] = str(path)
    # binary, over the size limit, empty, a link out of the folder or no regular file: refused;
    # other encodings: detail warns
    got = read_report_file(path, root=Path(entry.reports_dir), what="the system's folder")
    if got.status != "ok":
        return {**row, "status": got.status, "na_reason": got.na_reason, "detail": got.detail}
    trace, trace_note = read_trace_file(path)
    detail = "; ".join(d for d in (got.detail, trace_note) if d)
    return {**row, "text": got.text, "n_chars": len(got.text), "content_hash": text_hash(got.text),
            "detail": detail, "trace": trace}


MAX_TRACE_BYTES = 5_000_000  # as the importer


def trace_source_hash(entry: SystemEntry | None, task: str, original_id: str) -> str | None:
    """sha256 of the trace a folder system's report has beside it now (None: none, or not a folder
    system); the stored `reports.trace` hashed the same way tells the planner the trace changed."""
    if entry is None or entry.kind != "folder" or not entry.reports_dir:
        return None
    path = find_report_file(Path(entry.reports_dir), task, original_id)
    trace = read_trace_file(path)[0] if path is not None else None
    return hashlib.sha256(trace.encode("utf-8")).hexdigest() if trace is not None else None


def read_trace_file(report_path: Path) -> tuple[str | None, str]:
    """(the research trace beside a report, `<stem>.trace.json`, or None; a note when unreadable or
    refused: a link out of the report's folder, no regular file)."""
    path = report_path.with_name(f"{report_path.stem}.trace.json")
    if not path.is_file():
        return None, ""
    try:
        with open_release_file(report_path.parent, path, "the report's folder") as handle:
            data = handle.read(MAX_TRACE_BYTES)
    except OSError as exc:
        return None, f"trace {path.name} unreadable: {exc.strerror}"
    return data.decode("utf-8", errors="replace"), ""


def report_input_version(entry: SystemEntry | None, task: str, original_id: str,
                         imported_hashes: Mapping[tuple[str, str], str] | None = None) -> str | None:
    """The data version of what the reports stage would read now: the report's and its trace's
    hashes together (None: nothing to read yet, e.g. a system that writes its reports in the run)."""
    report = report_source_hash(entry, task, original_id, imported_hashes)
    trace = trace_source_hash(entry, task, original_id)
    if report is None and trace is None:
        return None
    return hashlib.sha256(f"{report or ''}\n{trace or ''}".encode()).hexdigest()[:24]


def report_source_hash(entry: SystemEntry | None, task: str, original_id: str,
                       imported_hashes: Mapping[tuple[str, str], str] | None = None) -> str | None:
    """Hash of what the reports stage would read now (None when there is nothing to read)."""
    if entry is not None and entry.kind == "imported":
        return (imported_hashes or {}).get((entry.system, task))
    if entry is None or not entry.reports_dir:
        return None
    path = find_report_file(Path(entry.reports_dir), task, original_id)
    if path is None:
        return None
    got = read_report_file(path, root=Path(entry.reports_dir), what="the system's folder")
    return text_hash(got.text) if got.status == "ok" else None
