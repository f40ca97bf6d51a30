"""What every release loader shares: the import log, report records, and streaming readers.

A loader reads one benchmark's official layout (../shared/methods/formats.md) as published and
yields `Task` objects and `ImportedReport` records one at a time, so a release of any size is read
in bounded memory. Everything it cannot use goes to the `ImportLog` with file, line and reason; a
record is either yielded whole or skipped whole (never half a task).
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from ..core.keys import InvalidKeyError, task_key

READ_CHUNK = 1 << 16
REMOTE = ("http://", "https://", "data:", "//")  # image sources that are not files of the release
MARKDOWN_IMAGE = re.compile(r"!\[[^\]]*\]\(\s*(<[^>]*>|[^)\s]+)")
HTML_IMAGE = re.compile(r"""<img\b[^>]*?\bsrc\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.IGNORECASE)
FILE_URL = re.compile(r"^file:(//)?(localhost(?=/))?", re.IGNORECASE)  # file:///abs -> /abs, file://a/b -> a/b


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
    """Skipped records and missing files, reported to the user after an import.

    The rule every loader follows for a task skipped because files it names are not there: one
    `miss` per missing file and one `skip` for the task (`skip_for_missing` logs both at the task's
    record). A missing file that does not cost the task (a side file, a report's image) is a `miss`
    alone.
    """

    skipped: list[Problem] = field(default_factory=list)  # records not imported
    missing: list[Problem] = field(default_factory=list)  # files a record names that are not there
    notes: list[Problem] = field(default_factory=list)  # imported, but something was off (unknown fields, ...)

    def skip(self, file: str, line: int | None, reason: str) -> None:
        self.skipped.append(Problem(file, line, reason))

    def miss(self, file: str, line: int | None, reason: str) -> None:
        self.missing.append(Problem(file, line, reason))

    def note(self, file: str, line: int | None, reason: str) -> None:
        self.notes.append(Problem(file, line, reason))

    def skip_for_missing(self, file: str, line: int | None, task: str, missing: list[str], what: str) -> None:
        """Task `task` (its id as given) is skipped because the `what` files named in `missing` are not there."""
        for name in missing:
            self.miss(file, line, f"task {task}: {what} not found: {name}")
        self.skip(file, line, f"task {task} skipped: {len(missing)} {what}(s) missing")


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
    """What a release says about a system (Wiki Live's agencies.json, our system.json; others only name them)."""

    name: str  # as the release spells it (the caller slugifies)
    description: str = ""
    has_citations: bool | None = None
    display_name: str = ""  # a friendlier name, when the release gives one
    enabled: bool | None = None  # None: the release does not say


@dataclass(frozen=True)
class Entry:
    """A task record that passed the id checks: where it is, the key it gets, its id as given."""

    file: str
    number: int
    key: str
    original_id: str
    record: dict


def relative(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.name


def is_inside(root: Path, path: Path) -> bool:
    """Whether `path` (links followed) stays inside the release: names like `../x` are not followed."""
    return path.resolve().is_relative_to(Path(root).resolve())


def subfolders(folder: Path) -> Iterator[Path]:
    """The visible sub-folders of `folder` in name order (none when it is not a folder)."""
    if folder.is_dir():
        for name in sorted(entry.name for entry in os.scandir(folder)
                           if entry.is_dir() and not entry.name.startswith(".")):
            yield folder / name


def layout_check(root: Path, found: Callable[[Path], bool], expected: str, release: str) -> str | None:
    """`layout_problem` of a loader: None when `found(root)`, else what is missing (`expected`)
    and what the folder is then not (`release`, e.g. "a DeepResearch Bench release")."""
    root = Path(root)
    if not root.is_dir():
        return f"{root} is not a folder"
    return None if found(root) else f"no {expected}: not {release}"


# --- JSON and JSONL --------------------------------------------------------------------------

def iter_jsonl(path: Path, root: Path, log: ImportLog) -> Iterator[tuple[int, dict]]:
    """(line number, object) per JSONL line, streamed; bad lines (encoding, JSON, non-objects) are
    logged and skipped, the rest of the file still loads."""
    for number, _, record in iter_jsonl_offsets(path, root, log):
        yield number, record


def iter_jsonl_offsets(path: Path, root: Path, log: ImportLog) -> Iterator[tuple[int, int, dict]]:
    """(line number, byte offset of the line, object) per JSONL line: `iter_jsonl` for indexes."""
    name = relative(root, path)
    try:
        handle = path.open("rb")
    except OSError as exc:
        log.miss(name, None, f"cannot open: {exc.strerror}")
        return
    with handle:
        offset = 0
        for number, raw in enumerate(handle, start=1):
            start, offset = offset, offset + len(raw)
            record = _decode_line(raw, number, name, log)
            if record is not None:
                yield number, start, record


def _decode_line(raw: bytes, number: int, name: str, log: ImportLog) -> dict | None:
    """One JSONL line's object; None for a blank line or one that is logged as unusable."""
    try:
        line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        log.skip(name, number, f"not UTF-8 ({exc.reason} at byte {exc.start})")
        return None
    if not line.strip():
        return None
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        log.skip(name, number, f"malformed JSON ({exc.msg} at column {exc.colno})")
        return None
    if not isinstance(record, dict):
        log.skip(name, number, f"expected a JSON object, found {type(record).__name__}")
        return None
    return record


class JsonlIndex:
    """A JSONL side file indexed by id in one streaming pass; a record is decoded again, by seeking
    to its line, only when asked for. Bounded: an id and (line, byte offset) pairs per record, never
    the records, which may be long (reference articles, criteria, sandbox pages).

    Records without an id, with a `problem` (a reason to refuse them), or, unless `repeated`, with an
    id already indexed are logged as skips; `known` fields, when given, are checked on the records
    kept. `claim` marks the ids the loader used, so that `unclaimed` can say which were not.
    """

    def __init__(self, path: Path, root: Path, log: ImportLog, id_of: Callable[[dict], str], *,
                 label: str = "id", problem: Callable[[str, dict], str | None] | None = None,
                 known: set[str] | None = None, repeated: bool = False):
        self.path, self.log, self.label, self.repeated = path, log, label, repeated
        self.file = relative(root, path)
        self.entries: dict[str, list[tuple[int, int]]] = {}  # id -> [(line, byte offset)]
        self.claimed: set[str] = set()  # bounded by the ids indexed
        for number, offset, record in iter_jsonl_offsets(path, root, log):
            record_id = id_of(record)
            reason = self._refusal(record_id, record, problem)
            if reason:
                log.skip(self.file, number, reason)
                continue
            if known is not None:
                unknown_fields(record, known, self.file, number, log)
            self.entries.setdefault(record_id, []).append((number, offset))

    def _refusal(self, record_id: str, record: dict, problem: Callable[[str, dict], str | None] | None) -> str | None:
        if not record_id:
            return f"record has no {self.label}"
        reason = problem(record_id, record) if problem else None
        if reason:
            return reason
        if not self.repeated and record_id in self.entries:
            return f"duplicate {self.label} {record_id!r} (first seen at {self.file}:{self.line(record_id)})"
        return None

    def line(self, record_id: str) -> int | None:
        """Line of the (first) record with this id."""
        found = self.entries.get(record_id)
        return found[0][0] if found else None

    def read(self, record_id: str) -> dict | None:
        """The (first) record with this id; None when there is none or it no longer decodes (logged)."""
        records = self._records(self.entries.get(record_id, [])[:1])
        return records[0][1] if records else None

    def read_all(self, record_id: str) -> list[tuple[int, dict]]:
        """(line, record) of every record with this id, in file order (one task's few pages, say)."""
        return self._records(self.entries.get(record_id, []))

    def _records(self, positions: list[tuple[int, int]]) -> list[tuple[int, dict]]:
        if not positions:
            return []
        records = []
        with self.path.open("rb") as handle:
            for number, offset in positions:
                handle.seek(offset)
                record = _decode_line(handle.readline(), number, self.file, self.log)
                if record is not None:
                    records.append((number, record))
        return records

    def claim(self, record_id: str) -> None:
        if record_id in self.entries:
            self.claimed.add(record_id)

    def unclaimed(self) -> Iterator[tuple[str, int]]:
        """(id, line) of the ids no `claim` named, in file order."""
        for record_id, found in self.entries.items():
            if record_id not in self.claimed:
                yield record_id, found[0][0]


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


def read_json(path: Path, root: Path, log: ImportLog) -> Any:
    """A small side file (one task's or one report's), whole; None (logged) when unreadable."""
    text = read_text(path, root, log)
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        log.skip(relative(root, path), exc.lineno, f"malformed JSON ({exc.msg} at column {exc.colno})")
    return None


def read_text(path: Path, root: Path, log: ImportLog) -> str | None:
    """A small text file, whole; None (logged) when it cannot be opened or is not UTF-8."""
    try:
        return path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        log.miss(relative(root, path), None, f"cannot open: {exc.strerror}")
    except UnicodeDecodeError as exc:
        log.skip(relative(root, path), None, f"not UTF-8 ({exc.reason} at byte {exc.start})")
    return None


# --- fields and keys -------------------------------------------------------------------------

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


def text_of(value: Any) -> str:
    """A scalar field as stripped text; "" for a missing or structured (object, list) value."""
    return "" if value is None or isinstance(value, (dict, list)) else str(value).strip()


def id_and_query(record: dict, id_fields: tuple[str, ...], file: str, line: int,
                 log: ImportLog) -> tuple[str, str] | None:
    """(id as given, query) of a task record; the id is "" when the record has none (`make_key`
    says so). None (logged) when the id is neither a string nor a number or the query is empty."""
    raw = first_of(record, *id_fields)
    if raw is not None and (isinstance(raw, bool) or not isinstance(raw, (str, int))):
        log.skip(file, line, f"task id is a {type(raw).__name__}, expected a string or number")
        return None
    original_id = "" if raw is None else str(raw).strip()
    query = record.get("query")
    if original_id and not (isinstance(query, str) and query.strip()):
        log.skip(file, line, "empty query")
        return None
    return original_id, query if isinstance(query, str) else ""


def canonical_id(raw: object) -> str:
    """Ids compared across files: digits without leading zeros (a JSON number loses the padding of
    `000012`, folders may be zero-padded)."""
    text = str(raw).strip()
    return str(int(text)) if text.isascii() and text.isdigit() else text


def make_key(benchmark: str, original_id: str, file: str, line: int | None, log: ImportLog,
             seen: dict[str, str], shown_id: str | None = None) -> str | None:
    """The task's partition key, or None (logged) when the id is unusable or already imported.
    `shown_id` is the id messages name when the key is built from more than it (release + id)."""
    if not original_id:
        log.skip(file, line, "record has no id")
        return None
    try:
        key = task_key(benchmark, original_id)
    except InvalidKeyError as exc:
        log.skip(file, line, str(exc))
        return None
    if key in seen:
        log.skip(file, line, f"duplicate task id {shown_id or original_id!r} (first seen at {seen[key]})")
        return None
    seen[key] = f"{file}:{line}" if line is not None else file
    return key


def object_field(record: dict, name: str, file: str, line: int | None, log: ImportLog) -> dict:
    """An object field of the record; {} when absent, or (with a note) when it is not an object."""
    value = record.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        log.note(file, line, f"{name} is not an object; its labels are kept out")
        return {}
    return value


def labels(values: dict, file: str, line: int | None, log: ImportLog, taken: set[str] = frozenset()) -> dict[str, str]:
    """Release labels (category, pattern, topic, ...) as strings for `Task.attributes`, except those
    `taken` for Task fields; nested values are not labels and are left out, with a note."""
    kept, nested = {}, []
    for name, value in values.items():
        if name in taken or value is None:
            continue
        if isinstance(value, (dict, list)):
            nested.append(str(name))
        elif isinstance(value, bool):
            kept[str(name)] = "true" if value else "false"
        else:
            kept[str(name)] = str(value)
    if nested:
        log.note(file, line, f"label(s) not scalar, kept out: {', '.join(sorted(nested))}")
    return kept


def unknown_fields(record: dict, known: set[str], file: str, line: int | None, log: ImportLog) -> None:
    extra = sorted(set(record) - known)
    if extra:
        log.note(file, line, f"unknown field(s) kept out: {', '.join(extra[:8])}")


def trace_text(value: Any) -> str | None:
    """An embedded research trace as the vendor wrote it; structured ones (JSON steps) dumped."""
    if value is None or value in ([], {}):
        return None
    if isinstance(value, str):
        return value if value.strip() else None
    return json.dumps(value, ensure_ascii=False)


# --- attachments -----------------------------------------------------------------------------

def attachment_texts(root: Path, names: list[str], file: str, line: int | None, task: str,
                     log: ImportLog) -> dict[str, str]:
    """The text of the task's readable attachments (root-relative names); one note per attachment
    that could not be read, so a task's evidence never shrinks silently."""
    from .generic import (
        read_attachments,  # not at the top: generic.py imports a loader built on this module
    )

    texts, unreadable = read_attachments(root, names)
    for name, reason in unreadable.items():
        log.note(file, line, f"task {task}: attachment {name} left out of the evidence ({reason})")
    return texts


# --- reports ---------------------------------------------------------------------------------

class FirstReports:
    """Where each system's report for each task was found first, so that a second one is skipped.
    Bounded by systems x tasks, short strings only."""

    def __init__(self) -> None:
        self.where: dict[tuple[str, str], str] = {}

    def is_second(self, system: str, key: str, task: str, file: str, line: int | None, log: ImportLog) -> bool:
        """True (logged as a skip) when `system` already has a report for task key `key`; `task`
        names the task in the message."""
        where = f"{file}:{line}" if line is not None else file
        first = self.where.setdefault((system, key), where)
        if first != where:
            log.skip(file, line, f"second report of {system} for task {task} (first: {first})")
        return first != where


def embedded_reports(path: Path, root: Path, system: str, resolve: Callable[[str], str | None], log: ImportLog,
                     *, id_fields: tuple[str, ...], text_fields: tuple[str, ...], trace_fields: tuple[str, ...] = (),
                     known: set[str], first: FirstReports | None = None) -> Iterator[ImportedReport]:
    """One system's reports embedded in a JSONL file or JSON array, one per record: the task's id
    (first of `id_fields`, mapped to its key by `resolve`, None = no such task), the report text and
    the trace. Unknown fields are noted once per file, not per record (a file holds thousands);
    `first` is shared when the system's reports come from several files."""
    file = relative(root, path)
    first = first or FirstReports()
    noted: set[str] = set()
    for number, record in iter_records(path, root, log):
        if set(record) - known - noted:
            unknown_fields(record, known | noted, file, number, log)
            noted |= set(record) - known
        original_id = text_of(first_of(record, *id_fields))
        key = resolve(original_id) if original_id else None
        text = first_of(record, *text_fields)
        if not original_id:
            log.skip(file, number, "record has no id")
        elif key is None:
            log.skip(file, number, f"no task with id {original_id!r}")
        elif not isinstance(text, str) or not text.strip():
            log.skip(file, number, "empty report")
        elif not first.is_second(system, key, original_id, file, number, log):
            yield ImportedReport(system=system, task=key, task_id=original_id, where=f"{file}:{number}", text=text,
                                 trace=trace_text(first_of(record, *trace_fields)) if trace_fields else None)


# --- one-file reports ------------------------------------------------------------------------

def is_blank(path: Path) -> bool:
    """True when the file holds only whitespace; reads no further than the first non-blank chunk."""
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(READ_CHUNK), b""):
            if chunk.strip():
                return False
    return True


def read_report(path: Path, where: str, log: ImportLog) -> str | None:
    """A one-file report's text, to check what it embeds (one report at a time); None (logged) when
    it cannot be read, is not UTF-8 (the import would refuse it) or is empty."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        log.skip(where, None, f"cannot read: {exc.strerror}")
        return None
    except UnicodeDecodeError as exc:
        log.skip(where, None, f"not UTF-8 ({exc.reason} at byte {exc.start})")
        return None
    if not text.strip():
        log.skip(where, None, "empty report")
        return None
    return text


def local_images(text: str) -> Iterator[tuple[int, str]]:
    """(line, src) of every image a report shows (Markdown `![](...)` or HTML `<img src>`) that is
    not on the web, in text order."""
    found = [(m.start(), next(g for g in m.groups() if g is not None)) for m in HTML_IMAGE.finditer(text)]
    found += [(m.start(), m.group(1).strip("<>")) for m in MARKDOWN_IMAGE.finditer(text)]
    line, counted = 1, 0
    for start, src in sorted(found):
        line, counted = line + text.count("\n", counted, start), start
        src = src.strip()
        if src and not src.lower().startswith(REMOTE):
            yield line, src


def image_file(src: str, folders: Iterable[Path]) -> Path | None:
    """The file an image source names (a `file://` URL or a path, escaped or not) in the first of
    `folders` that has it; an absolute path is taken as it is."""
    path = FILE_URL.sub("", src).split("#", 1)[0].split("?", 1)[0]
    candidates = [c for c in dict.fromkeys((path, unquote(path))) if c]
    for folder in folders:
        for candidate in candidates:
            if (folder / candidate).is_file():
                return folder / candidate
    return None


def check_images(text: str, folders: list[Path], where: str, log: ImportLog) -> Path:
    """The report's `base_dir`: the first of `folders` that holds all its local images (else the
    first). Every image found in none of them is logged as missing and the report is kept: a method
    that judges figures sees the gap."""
    images = list(local_images(text))  # a few per report
    for line, src in images:
        if image_file(src, folders) is None:
            log.miss(where, line, f"image not found: {src}")
    return next((f for f in folders if all(image_file(src, [f]) for _, src in images)), folders[0])
