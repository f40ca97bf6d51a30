"""The streaming JSON and JSONL readers of the release loaders: one record at a time, in bounded
memory; what cannot be read is logged to the `ImportLog` and skipped, the rest still loads.

Every file is opened by `records.open_release_file` (inside the release, a regular file), and every
JSON value is decoded by `decode_json`: nesting deeper than MAX_JSON_DEPTH is refused as that record's
problem, so a hostile file cannot exhaust the stack of the import (or of a later stage that walks it).
"""
from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .records import ImportLog, open_release_file, relative, unknown_fields
from .report_text import decode_text

READ_CHUNK = 1 << 16
# The deepest nesting of objects and arrays a release's JSON may have. The releases nest a few levels
# (traces with tool-call arguments: ~10); Python's own recursion limit (~1,000) is the ceiling that
# decoding, dumping and validating share, so a value we accept must stay well under it.
MAX_JSON_DEPTH = 100


class TooDeep(json.JSONDecodeError):
    """JSON nested deeper than MAX_JSON_DEPTH; a JSONDecodeError, so a reader that knows only that still
    refuses the record (its `msg` says why)."""

    def __init__(self, doc: str, pos: int = 0):
        super().__init__(f"nested deeper than {MAX_JSON_DEPTH} levels, the limit for release files", doc, pos)


def decode_json(text: str | bytes) -> Any:
    """`json.loads` with the depth limit: TooDeep rather than a RecursionError or a value too deep to use."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep(text if isinstance(text, str) else "") from None
    if _brackets(text) > MAX_JSON_DEPTH:
        check_depth(value)
    return value


def _brackets(text: str | bytes, start: int = 0, end: int | None = None) -> int:
    """Opening brackets in text[start:end]: a value with no more of them than the limit cannot nest
    deeper, so only a suspicious one is walked."""
    opening = ("[", "{") if isinstance(text, str) else (b"[", b"{")
    return sum(text.count(o, start, len(text) if end is None else end) for o in opening)


def check_depth(value: Any) -> None:
    """TooDeep when `value` nests deeper than MAX_JSON_DEPTH (walked iteratively: the walk must not recurse)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth >= MAX_JSON_DEPTH:
                    raise TooDeep("")
                stack.append((child, depth + 1))


def iter_jsonl(path: Path, root: Path, log: ImportLog) -> Iterator[tuple[int, dict]]:
    """(line number, object) per JSONL line, streamed; bad lines (encoding, JSON, non-objects) are
    logged and skipped, the rest of the file still loads."""
    for number, _, record in iter_jsonl_offsets(path, root, log):
        yield number, record


def iter_jsonl_offsets(path: Path, root: Path, log: ImportLog) -> Iterator[tuple[int, int, dict]]:
    """(line number, byte offset of the line, object) per JSONL line: `iter_jsonl` for indexes."""
    name = relative(root, path)
    try:
        handle = open_release_file(root, path)
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
        record = decode_json(line)
    except TooDeep as exc:
        log.skip(name, number, f"refused: JSON {exc.msg}")
        return None
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
        self.path, self.root, self.log, self.label, self.repeated = path, root, log, label, repeated
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
        with open_release_file(self.root, self.path) as handle:
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
        handle = io.TextIOWrapper(open_release_file(root, path), encoding="utf-8-sig", errors="strict")
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
                    except RecursionError:  # where the element ends is unknown, as for malformed JSON
                        log.skip(name, number + 1, f"refused: JSON nested deeper than {MAX_JSON_DEPTH} levels, "
                                                   f"the limit for release files; rest of file skipped")
                        return
                    except json.JSONDecodeError as exc:
                        if eof or not fill():
                            log.skip(name, number + 1, f"malformed JSON ({exc.msg}); rest of file skipped")
                            return
                number += 1
                try:
                    if _brackets(buffer, pos, end) > MAX_JSON_DEPTH:
                        check_depth(record)
                except TooDeep as exc:
                    pos = end
                    log.skip(name, number, f"refused: JSON {exc.msg}")
                    continue
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
        with open_release_file(root, path) as handle:
            head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError as exc:
        log.miss(name, None, f"cannot open: {exc.strerror}")
        return
    yield from (iter_json_array if head.startswith(b"[") else iter_jsonl)(path, root, log)


def read_json(path: Path, root: Path, log: ImportLog) -> Any:
    """A small side file (one task's or one report's), whole; None (logged) when unreadable. JSON
    is UTF-8 by its standard, so another encoding is an error here, not a guess."""
    text = read_text(path, root, log, detect=False)
    if text is None:
        return None
    try:
        return decode_json(text)
    except TooDeep as exc:
        log.skip(relative(root, path), None, f"refused: JSON {exc.msg}")
    except json.JSONDecodeError as exc:
        log.skip(relative(root, path), exc.lineno, f"malformed JSON ({exc.msg} at column {exc.colno})")
    return None


def read_json_object(path: Path, root: Path, log: ImportLog, expected: str = "a JSON object") -> dict | None:
    """A small JSON file that must hold an object; None (logged, the file skipped whole) otherwise."""
    data = read_json(path, root, log)
    if data is not None and not isinstance(data, dict):
        log.skip(relative(root, path), None, f"expected {expected}, found a {type(data).__name__}")
        return None
    return data


def read_text(path: Path, root: Path, log: ImportLog, detect: bool = True) -> str | None:
    """A small text file (a Markdown report or article), whole; None (logged) when it cannot be
    opened. Text that is not UTF-8 is decoded with detection and noted (`detect=False`: refused)."""
    try:
        with open_release_file(root, path) as handle:
            data = handle.read()
    except OSError as exc:
        log.miss(relative(root, path), None, f"cannot open: {exc.strerror}")
        return None
    if not detect:
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            log.skip(relative(root, path), None, f"not UTF-8 ({exc.reason} at byte {exc.start})")
            return None
    text, warning = decode_text(data)
    if warning:
        log.note(relative(root, path), None, warning)
    return text
