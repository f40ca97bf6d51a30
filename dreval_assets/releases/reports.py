"""Systems' reports in a release: embedded ones (one per JSON/JSONL record), one-file ones, and the
local images they show."""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from urllib.parse import unquote

from .records import (
    ImportedReport,
    ImportLog,
    first_of,
    open_regular,
    open_release_file,
    relative,
    text_of,
    trace_text,
    unknown_fields,
)
from .json_readers import READ_CHUNK, iter_records
from .report_text import read_report_file

REMOTE = ("http://", "https://", "data:", "//")  # image sources that are not files of the release
MARKDOWN_IMAGE = re.compile(r"!\[[^\]]*\]\(\s*(<[^>]*>|[^)\s]+)")
HTML_IMAGE = re.compile(r"""<img\b[^>]*?\bsrc\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.IGNORECASE)
FILE_URL = re.compile(r"^file:(//)?(localhost(?=/))?", re.IGNORECASE)  # file:///abs -> /abs, file://a/b -> a/b


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
                                 trace=_trace(record, trace_fields))


def _trace(record: dict, trace_fields: tuple[str, ...]) -> str | None:
    """The record's research trace; "" when the release gives the field empty (the system left no
    trace: the process evaluation's model_failure), None when it has no such field or null (no trace
    in the release: data_accessibility)."""
    found = trace_text(first_of(record, *trace_fields)) if trace_fields else None
    if found is None and any(record.get(name) in ("", [], {}) or (isinstance(record.get(name), str)
                                                                and not record[name].strip())
                             for name in trace_fields):
        return ""
    return found


# --- one-file reports ------------------------------------------------------------------------

def is_blank(path: Path, root: Path | None = None) -> bool:
    """True when the file holds only whitespace; reads no further than the first non-blank chunk.
    A file `read_report` would refuse (outside `root`, not a regular file) is not read: False, and
    reading it says why."""
    try:
        handle = open_release_file(root, path) if root is not None else open_regular(path)
    except OSError:
        return False
    with handle:
        for chunk in iter(lambda: handle.read(READ_CHUNK), b""):
            if chunk.strip():
                return False
    return True


def read_report(path: Path, where: str, log: ImportLog, root: Path | None = None) -> str | None:
    """A one-file report's text, to check what it embeds (one report at a time); None (logged) when
    the import would refuse it (unreadable, binary, over the size limit, empty, outside `root` the
    release, not a regular file). Another encoding than UTF-8 is decoded and noted."""
    got = read_report_file(path, root=root)
    if got.status != "ok":
        log.skip(where, None, "empty report" if got.status == "empty" else got.detail)
        return None
    if got.detail:
        log.note(where, None, got.detail)
    return got.text


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
