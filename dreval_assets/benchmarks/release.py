"""What every release loader shares: the import log, report records, and streaming readers.

A loader reads one benchmark's official layout (../shared/methods/formats.md) as published and
yields `Task` objects and `ImportedReport` records one at a time, so a release of any size is read
in bounded memory. Everything it cannot use goes to the `ImportLog` with file, line and reason; a
record is either yielded whole or skipped whole (never half a task).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..core.keys import InvalidKeyError, task_key

READ_CHUNK = 1 << 16


@dataclass(frozen=True)
class Problem:
    """One thing the import could not use: where it is and why."""

    file: str  # path relative to the release root
    line: int | None  # 1-based line (JSONL) or record number (JSON array); None for whole files
    reason: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.reason}"


@dataclass
class ImportLog:
    """Skipped records and missing files, reported to the user after an import."""

    skipped: list[Problem] = field(default_factory=list)  # records not imported
    missing: list[Problem] = field(default_factory=list)  # files a record names that are not there
    notes: list[Problem] = field(default_factory=list)  # imported, but something was off (unknown fields, ...)

    def skip(self, file: str, line: int | None, reason: str) -> None:
        self.skipped.append(Problem(file, line, reason))

    def miss(self, file: str, line: int | None, reason: str) -> None:
        self.missing.append(Problem(file, line, reason))

    def note(self, file: str, line: int | None, reason: str) -> None:
        self.notes.append(Problem(file, line, reason))


@dataclass(frozen=True)
class ImportedReport:
    """One system's report for one task, as the release holds it.

    Exactly one of `text` (reports embedded in JSON/JSONL) and `path` (one file per report) is set;
    likewise `trace` (embedded research trace, structured ones dumped as JSON text) and `trace_path`,
    both None when the release has no trace. `base_dir` is where the report's relative image paths
    resolve.
    """

    system: str  # the system's name as the release spells it
    task: str  # the task's partition key, resolved by the loader with the same rule as its tasks
    task_id: str  # the task's original id as the release gives it
    where: str  # file[:line] it came from, for messages
    text: str | None = None
    path: Path | None = None
    trace: str | None = None
    trace_path: Path | None = None
    base_dir: Path | None = None


@dataclass(frozen=True)
class SystemInfo:
    """What a release says about a system (Wiki Live's agencies.json; others only name them)."""

    name: str
    description: str = ""
    has_citations: bool | None = None


def relative(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.name


def iter_jsonl(path: Path, root: Path, log: ImportLog) -> Iterator[tuple[int, dict]]:
    """(line number, object) per JSONL line, streamed; bad lines (encoding, JSON, non-objects) are
    logged and skipped, the rest of the file still loads."""
    name = relative(root, path)
    try:
        handle = path.open("rb")
    except OSError as exc:
        log.miss(name, None, f"cannot open: {exc.strerror}")
        return
    with handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                log.skip(name, number, f"not UTF-8 ({exc.reason} at byte {exc.start})")
                continue
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                log.skip(name, number, f"malformed JSON ({exc.msg} at column {exc.colno})")
                continue
            if not isinstance(record, dict):
                log.skip(name, number, f"expected a JSON object, found {type(record).__name__}")
                continue
            yield number, record


def iter_json_array(path: Path, root: Path, log: ImportLog) -> Iterator[tuple[int, dict]]:
    """(record number, object) per element of a top-level JSON array, decoded element by element
    from fixed-size chunks, so a large array is never held whole. A malformed element ends the
    file (JSON has no line boundaries to resynchronise on) and is logged with its record number."""
    name = relative(root, path)
    decoder = json.JSONDecoder()
    try:
        handle = path.open(encoding="utf-8-sig", errors="strict")
    except OSError as exc:
        log.miss(name, None, f"cannot open: {exc.strerror}")
        return
    with handle:
        buffer, pos, number, eof = "", 0, 0, False

        def fill() -> bool:
            nonlocal buffer, pos, eof
            chunk = handle.read(READ_CHUNK)
            buffer, pos = buffer[pos:] + chunk, 0
            eof = not chunk
            return bool(chunk)

        def skip_space() -> None:
            nonlocal pos
            while True:
                while pos < len(buffer) and buffer[pos] in " \t\r\n":
                    pos += 1
                if pos < len(buffer) or not fill():
                    return

        try:
            fill()
            skip_space()
            if buffer[pos:pos + 1] != "[":
                log.skip(name, None, "expected a JSON array at the top level")
                return
            pos += 1
            while True:
                skip_space()
                if buffer[pos:pos + 1] == "]":
                    return
                if number and buffer[pos:pos + 1] == ",":
                    pos += 1
                    skip_space()
                elif number:
                    log.skip(name, number + 1, "malformed JSON array (missing comma); rest of file skipped")
                    return
                while True:
                    try:
                        record, end = decoder.raw_decode(buffer, pos)
                        if end == len(buffer) and not eof and isinstance(record, (int, float)):
                            raise json.JSONDecodeError("number may continue", buffer, end)
                        break
                    except json.JSONDecodeError as exc:
                        if eof or not fill():
                            log.skip(name, number + 1, f"malformed JSON ({exc.msg}); rest of file skipped")
                            return
                number += 1
                pos = end
                if not isinstance(record, dict):
                    log.skip(name, number, f"expected a JSON object, found {type(record).__name__}")
                    continue
                yield number, record
        except UnicodeDecodeError as exc:
            log.skip(name, number + 1, f"not UTF-8 ({exc.reason}); the rest of the file is unreadable")


def iter_records(path: Path, root: Path, log: ImportLog) -> Iterator[tuple[int, dict]]:
    """JSONL or a JSON array, whichever the file holds (releases name both `.json`)."""
    name = relative(root, path)
    try:
        with path.open("rb") as handle:
            head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError as exc:
        log.miss(name, None, f"cannot open: {exc.strerror}")
        return
    yield from (iter_json_array if head.startswith(b"[") else iter_jsonl)(path, root, log)


def first_of(record: dict, *names: str) -> Any:
    """The value of the first field name present and non-empty (releases spell fields differently)."""
    for name in names:
        value = record.get(name)
        if value not in (None, "", [], {}):
            return value
    return None


def as_list(value: Any) -> list:
    """A field given either as one value or a list of values, as a list."""
    if value in (None, "", [], {}):
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def make_key(benchmark: str, original_id: str, file: str, line: int | None, log: ImportLog,
             seen: dict[str, str]) -> str | None:
    """The task's partition key, or None (logged) when the id is unusable or already imported."""
    if not original_id:
        log.skip(file, line, "record has no id")
        return None
    try:
        key = task_key(benchmark, original_id)
    except InvalidKeyError as exc:
        log.skip(file, line, str(exc))
        return None
    if key in seen:
        log.skip(file, line, f"duplicate task id {original_id!r} (first seen at {seen[key]})")
        return None
    seen[key] = f"{file}:{line}" if line is not None else file
    return key


def unknown_fields(record: dict, known: set[str], file: str, line: int | None, log: ImportLog) -> None:
    extra = sorted(set(record) - known)
    if extra:
        log.note(file, line, f"unknown field(s) kept out: {', '.join(extra[:8])}")
