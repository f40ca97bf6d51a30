"""Streaming CSV reading for release loaders: one row at a time, UTF-8 with or without a byte order
mark, LF or CRLF line ends; a row whose cells do not match the header is logged and skipped whole."""
from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

from .records import ImportLog, open_regular, open_release_file, relative


def iter_csv(path: Path, root: Path, log: ImportLog) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number where the row starts, {header: cell}) per data row; header cells stripped."""
    name = relative(root, path)
    try:
        handle = io.TextIOWrapper(open_release_file(root, path), encoding="utf-8-sig", newline="")
    except OSError as exc:
        log.miss(name, None, f"cannot open: {exc.strerror}")
        return
    with handle:
        reader = csv.reader(handle)
        try:
            header = [cell.strip() for cell in next(reader, [])]
            if not header:
                log.skip(name, None, "empty file: no header row")
                return
            line = reader.line_num + 1
            for cells in reader:
                start, line = line, reader.line_num + 1
                if not any(cell.strip() for cell in cells):
                    continue  # a blank line
                if len(cells) != len(header):
                    log.skip(name, start, f"row has {len(cells)} cells, the header {len(header)}")
                    continue
                yield start, dict(zip(header, cells))
        except UnicodeDecodeError as exc:
            log.skip(name, None, f"not UTF-8 ({exc.reason}); the rest of the file is unreadable")
        except csv.Error as exc:
            log.skip(name, reader.line_num, f"malformed CSV ({exc}); the rest of the file is unreadable")


def header_of(path: Path, root: Path | None = None) -> list[str]:
    """The header cells of a CSV file ([] when it cannot be read, or leads out of `root`)."""
    try:
        with io.TextIOWrapper(open_release_file(root, path) if root is not None else open_regular(path),
                              encoding="utf-8-sig", newline="") as handle:
            return [cell.strip() for cell in next(csv.reader(handle), [])]
    except (OSError, UnicodeDecodeError, csv.Error):
        return []
