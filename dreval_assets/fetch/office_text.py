"""Spreadsheets, slides and Word files (.xlsx, .pptx, .docx) as evidence text, for fetch/extract.py.

MiroEval's attachments include them (methods/miroeval.md: "tables from spreadsheets", "retrieval over
spreadsheets/slides"); the same bytes fetched from the web read the same way. Maintained parsers:
openpyxl, python-pptx, python-docx.

- Spreadsheet: each sheet in workbook order, `## Sheet: <name>`, then its rows of cells (cached values,
  not formulas; empty rows skipped, trailing empty cells dropped); at most SHEET_MAX_ROWS rows and
  SHEET_MAX_COLUMNS columns per sheet.
- Slides: in order, `## Slide <n>: <title>`, then the text of every shape (groups opened, tables as
  rows), then `Notes: ...` when the slide has speaker notes; at most MAX_SLIDES.
- Word: paragraphs and tables in document order; headings as Markdown `#` lines, list paragraphs as
  `- ` lines.
A table (a sheet, a slide's or a document's table) is a row per line, cells joined by ` | `. When its
first row is a header (two or more cells, all text, no figure, rows under it), that row is a Markdown
header line `| Plant | Capacity |` and each later row names its cells (`Plant: Punta Velas | Capacity:
220000`), so a row read alone (a key fact, a retrieved passage) still says what its figures are. A cell
merged across columns is said once. Lines are separated by a blank line: each
row or paragraph is a unit of its own (no sentence runs across two rows).
Every limit that is hit is said in the text, where the cut is (`[... not shown: ...]`), and the whole
text stops at MAX_CHARS, saying so. A file encrypted with a password (an OLE container, not a zip), a
legacy binary file under a new name, a zip that unpacks to more than MAX_UNPACKED_BYTES or bytes the
parser refuses raise `OfficeUnreadable` with one sentence saying why.
"""
from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from dataclasses import dataclass

SHEET_MAX_ROWS = 5_000
SHEET_MAX_COLUMNS = 100
MAX_SLIDES = 500
MAX_CHARS = 2_000_000  # the whole text; a judge sees less (each benchmark cuts for its prompt and says so)
MAX_UNPACKED_BYTES = 300_000_000  # a zip that unpacks to more is refused (a zip bomb or no document)

FORMATS = {"xlsx": "spreadsheet", "pptx": "presentation", "docx": "Word document"}
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTED_MARK = "EncryptionInfo".encode("utf-16-le")  # the stream an encrypted OOXML file carries
_ZIP_MEMBERS = {"xlsx": "xl/workbook.xml", "pptx": "ppt/presentation.xml", "docx": "word/document.xml"}


class OfficeUnreadable(Exception):
    """The file cannot be read as its format; the message says why in one sentence."""


@dataclass(frozen=True)
class OfficeText:
    text: str
    title: str
    how: str  # "from 3 sheet(s) by openpyxl"


def sniff_office(body: bytes) -> str | None:
    """'xlsx' | 'pptx' | 'docx' when the bytes are a zip holding that format's main part, else None."""
    if not body.startswith(b"PK\x03\x04"):
        return None
    try:
        names = set(zipfile.ZipFile(io.BytesIO(body)).namelist())
    except (zipfile.BadZipFile, ValueError):
        return None
    return next((fmt for fmt, member in _ZIP_MEMBERS.items() if member in names), None)


def office_text(body: bytes, fmt: str) -> OfficeText:
    """The evidence text of one .xlsx / .pptx / .docx file; raises OfficeUnreadable."""
    what = FORMATS[fmt]
    _check_container(body, fmt, what)
    try:
        readers = {"xlsx": _spreadsheet, "pptx": _slides, "docx": _word}
        return readers[fmt](io.BytesIO(body))
    except OfficeUnreadable:
        raise
    except Exception as exc:  # noqa: BLE001 - the parser's own errors say the file is broken
        raise OfficeUnreadable(f"unreadable: the {what} could not be parsed ({type(exc).__name__}: {exc})") from exc


def _check_container(body: bytes, fmt: str, what: str) -> None:
    if body.startswith(_OLE_MAGIC):
        if _ENCRYPTED_MARK in body:
            raise OfficeUnreadable(f"unreadable: the {what} is protected with a password")
        raise OfficeUnreadable(f"unreadable: a legacy binary Office file, not a .{fmt} {what}")
    try:
        archive = zipfile.ZipFile(io.BytesIO(body))
        unpacked = sum(info.file_size for info in archive.infolist())
        names = set(archive.namelist())
    except (zipfile.BadZipFile, ValueError) as exc:
        raise OfficeUnreadable(f"unreadable: not a valid .{fmt} {what} (not a zip archive: {exc})") from exc
    if unpacked > MAX_UNPACKED_BYTES:
        raise OfficeUnreadable(f"unreadable: the {what} unpacks to {unpacked:,} bytes, over the limit of "
                               f"{MAX_UNPACKED_BYTES:,}")
    if _ZIP_MEMBERS[fmt] not in names:
        raise OfficeUnreadable(f"unreadable: not a .{fmt} {what} (no {_ZIP_MEMBERS[fmt]} in the archive)")


class _Text:
    """Lines up to MAX_CHARS; the cut is said in the text."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.chars = 0
        self.full = False

    def add(self, line: str) -> bool:
        """False once the text is full (the caller stops)."""
        if self.full:
            return False
        if self.chars + len(line) + 1 > MAX_CHARS:
            self.lines.append(f"[... not shown: the rest of the file (text limit of {MAX_CHARS:,} characters)]")
            self.full = True
            return False
        self.lines.append(line)
        self.chars += len(line) + 1
        return True

    def text(self) -> str:
        return "\n\n".join(line for line in self.lines if line.strip())


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime) and value.time() == dt.time(0):
        return value.date().isoformat()  # a date cell: spreadsheets store dates as midnight datetimes
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    return " ".join(str(value).split())


def _trimmed(cells: list[str]) -> list[str]:
    while cells and not cells[-1]:
        cells.pop()
    return cells


_FIGURE_RE = re.compile(r"^[\s$€£¥%+\-.,:/()\d]+$")


class _Rows:
    """One table's lines: a header row said once, every later row naming its cells. The first row waits
    for the second (a header needs rows under it); `finish` gives what is still waiting."""

    def __init__(self) -> None:
        self.header: list[str] | None = None
        self.pending: tuple[list[str], frozenset[int]] | None = None
        self.rows = 0

    def lines(self, cells: list[str], repeats: frozenset[int] = frozenset()) -> list[str]:
        """`repeats`: columns whose cell is the previous column's, merged across (said once)."""
        cells = _trimmed(cells)
        if not any(cells):
            return []
        self.rows += 1
        if self.rows == 1:
            filled = [c for c in cells if c]
            if len(filled) >= 2 and not any(_FIGURE_RE.match(c) for c in filled):
                self.pending = (cells, repeats)
                return []
            return [_plain(cells, repeats)]
        out = []
        if self.pending is not None:
            self.header, head_repeats = self.pending[0], self.pending[1]
            self.pending = None
            out.append("| " + " | ".join(c for i, c in enumerate(self.header) if i not in head_repeats) + " |")
        if self.header is None:
            return out + [_plain(cells, repeats)]
        named = [f"{self.header[i]}: {c}" if i < len(self.header) and self.header[i] and c else c
                 for i, c in enumerate(cells) if i not in repeats]
        return out + [" | ".join(named)]

    def finish(self) -> list[str]:
        pending, self.pending = self.pending, None
        return [_plain(*pending)] if pending else []


def _plain(cells: list[str], repeats: frozenset[int]) -> str:
    return " | ".join(c for i, c in enumerate(cells) if i not in repeats)


# --- spreadsheets ---------------------------------------------------------------------------------

def _spreadsheet(stream: io.BytesIO) -> OfficeText:
    from openpyxl import load_workbook

    book = load_workbook(stream, read_only=True, data_only=True)
    out, sheets = _Text(), 0
    try:
        for sheet in book.worksheets:
            sheets += 1
            if not out.add(f"## Sheet: {sheet.title}") or not _sheet_rows(sheet, out):
                break
            out.add("")
        title = _cell(book.properties.title) if book.properties else ""
    finally:
        book.close()
    return OfficeText(out.text(), title, f"from {sheets} sheet(s) by openpyxl")


def _sheet_rows(sheet, out: _Text) -> bool:
    """The sheet's rows into out; False when the text is full."""
    shown, wide, rows = 0, False, _Rows()
    for number, row in enumerate(sheet.iter_rows(values_only=True), start=1):
        wide = wide or len(row) > SHEET_MAX_COLUMNS
        lines = rows.lines([_cell(v) for v in row[:SHEET_MAX_COLUMNS]])
        if not lines:
            continue
        if shown == SHEET_MAX_ROWS:
            total = sheet.max_row if isinstance(sheet.max_row, int) else None
            rest = f"rows {number}-{total}" if total else f"rows from {number} on"
            out.add(f"[... not shown: {rest} of sheet {sheet.title} (row limit of {SHEET_MAX_ROWS:,})]")
            break
        if not all(out.add(line) for line in lines):
            return False
        shown += 1
    if not all(out.add(line) for line in rows.finish()):
        return False
    if wide:
        out.add(f"[... not shown: columns after {SHEET_MAX_COLUMNS} of sheet {sheet.title} "
                f"(column limit of {SHEET_MAX_COLUMNS})]")
    return not out.full


# --- slides ---------------------------------------------------------------------------------------

def _slides(stream: io.BytesIO) -> OfficeText:
    from pptx import Presentation

    deck = Presentation(stream)
    out, first_title = _Text(), ""
    slides = list(deck.slides)
    for number, slide in enumerate(slides[:MAX_SLIDES], start=1):
        title_shape = slide.shapes.title
        title = _cell(title_shape.text_frame.text) if title_shape is not None and title_shape.has_text_frame else ""
        first_title = first_title or title
        if not out.add(f"## Slide {number}" + (f": {title}" if title else "")):
            break
        title_id = title_shape.shape_id if title_shape is not None else None
        for shape in slide.shapes:
            if shape.shape_id != title_id:  # the title is on the slide's heading line already
                _shape_lines(shape, out)
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes = slide.notes_slide.notes_text_frame.text.strip()
            if notes:
                out.add("Notes: " + notes)
        out.add("")
    if len(slides) > MAX_SLIDES:
        out.add(f"[... not shown: slides {MAX_SLIDES + 1}-{len(slides)} (slide limit of {MAX_SLIDES})]")
    title = _cell(deck.core_properties.title) or first_title
    return OfficeText(out.text(), title, f"from {min(len(slides), MAX_SLIDES)} slide(s) by python-pptx")


def _shape_lines(shape, out: _Text) -> None:
    if getattr(shape, "shapes", None) is not None:  # a group: its shapes in order
        for inner in shape.shapes:
            _shape_lines(inner, out)
        return
    if getattr(shape, "has_table", False) and shape.has_table:
        rows = _Rows()
        for row in shape.table.rows:
            cells = list(row.cells)
            merged = frozenset(i for i, c in enumerate(cells) if c.is_spanned)  # covered by a merged cell
            for line in rows.lines([_cell(c.text) for c in cells], merged):
                out.add(line)
        for line in rows.finish():
            out.add(line)
        return
    if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        for paragraph in shape.text_frame.paragraphs:
            text = " ".join(paragraph.text.split())
            if text:
                out.add(("  " * paragraph.level) + ("- " if paragraph.level else "") + text)


# --- Word documents -------------------------------------------------------------------------------

def _word(stream: io.BytesIO) -> OfficeText:
    from docx import Document
    from docx.table import Table

    document = Document(stream)
    out = _Text()
    paragraphs = tables = 0
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            tables += 1
            if not _table_lines(block, out):
                break
            out.add("")
            continue
        text = " ".join(block.text.split())
        if not text:
            continue
        paragraphs += 1
        if not out.add(_paragraph_line(text, block.style.name if block.style is not None else "")):
            break
    title = _cell(document.core_properties.title)
    return OfficeText(out.text(), title,
                      f"from {paragraphs} paragraph(s) and {tables} table(s) by python-docx")


def _paragraph_line(text: str, style: str) -> str:
    low = style.lower()
    if low == "title":
        return f"# {text}"
    if low.startswith("heading"):
        level = low.removeprefix("heading").strip()
        return "#" * (min(int(level), 5) + 1 if level.isdigit() else 2) + f" {text}"
    if low.startswith("list"):
        return f"- {text}"
    return text


def _table_lines(table, out: _Text) -> bool:
    rows = _Rows()
    for row in table.rows:
        grid = list(row.cells)  # a merged cell comes back once per grid column it spans
        repeats = frozenset(i for i in range(1, len(grid)) if grid[i]._tc is grid[i - 1]._tc)
        if not all(out.add(line) for line in rows.lines([_cell(c.text) for c in grid], repeats)):
            return False
    return all(out.add(line) for line in rows.finish())
