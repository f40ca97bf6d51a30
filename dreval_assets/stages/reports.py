"""reports: read each system's report for each task, with a status that says what went wrong."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import polars as pl

from ..benchmarks.generic import find_report_file
from ..store.registry import SystemEntry
from .frames import frame, text_hash

MAX_REPORT_BYTES = 5_000_000


def read_reports(
    keys: Sequence[tuple[str, str]],
    systems: Mapping[str, SystemEntry],
    original_ids: Mapping[str, str],
    imported: Mapping[tuple[str, str], dict] | None = None,
    written: Mapping[tuple[str, str], dict] | None = None,
) -> pl.DataFrame:
    """Folder systems are read from their folder; imported systems from `imported` (rows of
    `imported_reports` for these keys, already decoded and checked by the import); endpoint systems
    from `written` (rows `stages/report_writing.write_reports` made)."""
    written = written or {}
    return frame("reports", [written.get((system, task)) or _read_one(system, task, systems, original_ids, imported or {})
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
                "source_path": found["source"]}
    if not entry.reports_dir:
        return {**row, "status": "missing", "na_reason": "pipeline_failure",
                "detail": f"system {system!r} has no reports folder"}
    path = find_report_file(Path(entry.reports_dir), task, original_ids.get(task, task))
    if path is None:
        return {**row, "status": "missing", "na_reason": "model_failure",
                "detail": f"no report for task {task!r} ({original_ids.get(task, task)!r}) in the system's folder"}
    row["source_path"] = str(path)
    status, text, detail = decode_report(path.read_bytes()[: MAX_REPORT_BYTES + 1])
    if status != "ok":
        return {**row, "status": status, "na_reason": "model_failure", "detail": detail}
    return {**row, "text": text, "n_chars": len(text), "content_hash": text_hash(text)}


def decode_report(data: bytes) -> tuple[str, str | None, str]:
    """(status, text, detail): refuses binary files and over-long reports instead of parsing garbage."""
    if len(data) > MAX_REPORT_BYTES:
        return "unreadable", None, f"report is larger than {MAX_REPORT_BYTES} bytes"
    if b"\x00" in data[:8192]:
        return "binary", None, "report file is binary (NUL bytes), not text"
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return "binary", None, f"report is not UTF-8 text ({exc.reason} at byte {exc.start})"
    if not text.strip():
        return "empty", None, "report is empty"
    return "ok", text, ""


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
    status, text, _ = decode_report(path.read_bytes()[: MAX_REPORT_BYTES + 1])
    return text_hash(text) if status == "ok" else None
