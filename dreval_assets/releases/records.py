"""What every release loader shares: the import log and its records, paths, fields and keys, attachments.

A loader reads one benchmark's official layout (../shared/methods/formats.md) as published and
yields `Task` objects and `ImportedReport` records one at a time, so a release of any size is read
in bounded memory. Everything it cannot use goes to the `ImportLog` with file, line and reason; a
record is either yielded whole or skipped whole (never half a task).
"""
from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from ..core.keys import InvalidKeyError, task_key


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
    _noted: set[Problem] = field(default_factory=set, repr=False, compare=False)

    def skip(self, file: str, line: int | None, reason: str) -> None:
        self.skipped.append(Problem(file, line, reason))

    def miss(self, file: str, line: int | None, reason: str) -> None:
        self.missing.append(Problem(file, line, reason))

    def note(self, file: str, line: int | None, reason: str) -> None:
        """Once per file, line and reason: a file read twice (checked by its loader, then stored by
        the import) is noted once."""
        problem = Problem(file, line, reason)
        if problem not in self._noted:
            self._noted.add(problem)
            self.notes.append(problem)

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
    cleaned_text: str | None = None  # the benchmark's own citation-free rewrite, when the release ships one
    # the benchmark's own statement set, when the release ships one: JSON {"policy": the policy that
    # chooses it over our claims, "statements": [{"text", "urls", "indices"}]} (stages/parse.py)
    release_statements: str | None = None


@dataclass(frozen=True)
class CitedPage:
    """A cited page's text as the release fetched it (Wiki Live's `citation_contents`): what the
    benchmark's own pipeline judged, stored as that URL's fetched page so runs are offline reproducible."""

    url: str
    title: str
    text: str
    where: str  # file it came from, for messages
    unread_because: str = ""  # set when the benchmark's own pipeline would not judge this text


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
    """Whether `path` (links followed) stays inside the release: names like `../x` are not followed.
    A name the system cannot even look up (a NUL byte in it) is not inside."""
    try:
        return Path(path).resolve().is_relative_to(Path(root).resolve())
    except (OSError, ValueError, RuntimeError):  # NUL byte, a link loop
        return False


class RefusedFile(OSError):
    """A file a release names that is not read: it leads outside the release (a link, `..`) or it is
    no regular file (a named pipe would block the import forever, a device never ends). An OSError,
    so every reader's "cannot open" path reports it, with the reason as `strerror`."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.strerror = reason


def open_regular(path: Path) -> BinaryIO:
    """`path` opened for reading in binary, refused (RefusedFile) unless it is a regular file. Opened
    without blocking first, so a named pipe is refused instead of waiting for a writer; the check is
    on the opened file itself, so nothing can swap the file between check and read."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except ValueError as exc:  # a NUL byte in the name
        raise RefusedFile(f"refused: an unusable file name ({exc})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise RefusedFile(f"refused: {_file_kind(mode)}, not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def open_release_file(root: Path, path: Path, what: str = "the release") -> BinaryIO:
    """A file the release names, opened for reading in binary: only when it stays inside the release
    (`is_inside`, links followed) and is a regular file; otherwise RefusedFile saying which. `what`
    names `root` in the message (a system's folder is not a release)."""
    if not is_inside(root, path):
        raise RefusedFile(f"refused: a link or path leading outside {what}")
    return open_regular(path)


def read_release_bytes(root: Path, path: Path, limit: int | None = None) -> bytes:
    """The bytes of a file the release names (at most `limit`), by `open_release_file`'s rules."""
    with open_release_file(root, path) as handle:
        return handle.read() if limit is None else handle.read(limit)


def _file_kind(mode: int) -> str:
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "not a file")


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
