"""The canonical, deterministic report parser: Markdown (with HTML inside) -> ParsedReport.

Stages: normalise the text -> mark code lines -> split into sections at
headings -> find the reference list -> scan each section body into blocks
(prose, list items, tables, figures) -> tokenise markers, split sentences and
emit claims in document order -> resolve cited indices to URLs.

`parse_report` never raises: on unexpected trouble it stops, returns what it
gathered so far and says so in `warnings`.

Conventions worth knowing:
- Section.text is the raw Markdown body between a heading and the next one.
- Table cells and figure captions are plain text: markers removed, link titles kept.
- An HTML table's first row is its header, like a pipe table's.
- HTML comments are dropped first, wherever they are.
- An uncited claim is a body sentence that has at least 6 words (a CJK character
  counts as one), does not end with "?", does not open like agent chatter
  ("I will ...", "Let me ...", "Okay, ..."), and contains a digit or a
  capitalised word after the first (the pronoun "I" aside).
- Agent chatter (`chatter.py`) is never a claim, cited or not: tool-call echoes and reasoning
  blocks are skipped like code, narrating sentences stay in `sentences` (they are part of what the
  system wrote) but not in the claims; a warning counts both.
- A `Sources: https://...` line is a reference list of its own, wherever it stands; its unnumbered
  entries are numbered after every listed index and every number a marker uses, so a marker never
  resolves to one of them by accident.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .chatter import chatter_lines, is_chatter_sentence
from .citation_markers import TokenizedText, tokenize_inline
from .models import Citation, Claim, ClaimKind, Figure, ParsedReport, Reference, Section, Table
from .reference_list import (
    DEFINITION_LINE_RE,
    drop_duplicates,
    is_bracketed_linked_entry,
    is_reference_label,
    is_reference_title,
    label_line_rest,
    parse_reference_entries,
    starts_linked_or_numbered_entry,
)
from .run_caches import run_cache
from .sentences import PLACEHOLDER_RE, has_words, split_sentences

__all__ = ["parse_report", "is_checkable_fact", "MAX_REPORT_CHARS"]

MAX_REPORT_CHARS = 2_000_000
MIN_FACT_WORDS = 6

_CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f\ue000-\ue003\ufeff\ufffd]")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_HTML_HEADING_RE = re.compile(r"^\s*<h([1-6])\b[^>]*>(.*?)</h\1\s*>\s*$", re.I)
_RULE_RE = re.compile(r"^\s{0,3}([-*_])(?:\s*\1){2,}\s*$")
_BLOCKQUOTE_RE = re.compile(r"^\s{0,3}(?:>\s?)+")
_LIST_ITEM_RE = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+\S|^\s*<li\b", re.I)
_LIST_MARKER_RE = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
_SEPARATOR_CELL_RE = re.compile(r":?-+:?")
_FIGURE_CAPTION_RE = re.compile(
    r"^\s*[*_]{0,2}\s*(?:Figure|Fig\.|Chart|图表?)\s*\d+[A-Za-z]?\s*[:.：\-–—]", re.I
)
_IMAGE_ONLY_RE = re.compile(r"^\s*(?:!\[[^\]\n]*\]\([^)\n]*\)|<img\b[^>]*>)\s*$", re.I)
_FIGCAPTION_RE = re.compile(
    r"<figcaption\b[^<>]{0,2000}>((?:(?!</?figcaption)[\s\S]){0,5000})</figcaption\s*>", re.I
)
_HTML_ROW_SPLIT_RE = re.compile(r"<tr\b[^<>]{0,2000}>", re.I)
_HTML_CELL_RE = re.compile(
    r"<t[hd]\b[^<>]{0,2000}>(.*?)(?=</t[hd]\s*>|<t[hd]\b|</tr\s*>|</table\s*>|$)", re.I | re.S
)
_WORD_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[^\W_]+(?:['’.-][^\W_]+)*")
# Research agents narrate their work ("I'll search ...", "Let me check ..."): not report content.
_AGENT_CHATTER_RE = re.compile(
    r"^(?:I|I'll|I’ll|I'm|I’m|I've|I’ve|I'd|Let me|Let's|Let’s|Okay|OK|Ok|Alright|Sure"
    r"|Searching|Browsing|(?:Now|Next|First|Then),? I)\b"
)


def parse_report(text: str) -> ParsedReport:
    """Parse one report. Never raises; problems are listed in `warnings`."""
    builder = _ReportBuilder()
    _guarded(builder, lambda: builder.run(text))
    _guarded(builder, builder.summarise)  # flags and unresolved indices even for a partial parse
    return builder.result()


@run_cache(maxsize=64)  # a task's reference article is read so for each system's report beside it
def without_citations(text: str) -> str:
    """The report as a judge that must not see sources reads it (DeepResearch Bench RACE): reference
    lists and their headings dropped, inline markers removed, linked titles kept as words, code kept.
    Deterministic, unlike the reference code's LLM rewrite, which can change the content."""
    builder = _ReportBuilder()
    lines = builder._normalise(text).split("\n")
    code = builder._code_lines(lines)
    spans = _section_spans(lines, code)
    dropped = {i for regions in _reference_regions(lines, code, spans) for region in regions for i in region}
    for span in spans:  # a reference section's heading, and headings of sections left empty by the drop
        inside = all(i in dropped or not lines[i].strip() for i in span.body)
        if span.heading is not None and (is_reference_title(span.title) or (inside and any(
                i in dropped for i in span.body))):
            dropped.add(span.heading)
    kept = [line if code[i] else _line_without_markers(line) for i, line in enumerate(lines) if i not in dropped]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip() + "\n"


def _line_without_markers(line: str) -> str:
    tokenized = tokenize_inline(line)
    if not any(token.citation for token in tokenized.tokens):
        return line
    rebuilt = PLACEHOLDER_RE.sub(lambda m: _kept_text(tokenized.tokens[int(m.group(1))]), tokenized.text)
    return _SPACE_BEFORE_PUNCT_RE.sub(r"\1", re.sub(r"[ \t]{2,}", " ", rebuilt)).rstrip()


def _kept_text(token) -> str:
    if token.citation is None:
        return token.literal
    return token.render  # a titled link keeps its words; a bare marker disappears


_SPACE_BEFORE_PUNCT_RE = re.compile(r"[ \t]+([.,;:!?。，；：])")


def _guarded(builder: _ReportBuilder, step: Callable[[], None]) -> None:
    try:
        step()
    except Exception as error:  # the last line of defence: a report must never crash the pipeline
        builder.warn(f"parsing stopped early ({type(error).__name__}: {error}); partial result returned")


def is_checkable_fact(sentence: str) -> bool:
    """Does an uncited sentence still state something checkable? (rule in the module docstring)"""
    if sentence.rstrip().endswith(("?", "？")) or _AGENT_CHATTER_RE.match(sentence) or is_chatter_sentence(sentence):
        return False
    words = _WORD_RE.findall(sentence)
    if len(words) < MIN_FACT_WORDS:
        return False
    if re.search(r"\d", sentence):
        return True
    return any(word[0].isupper() and word != "I" for word in words[1:])


# ---------------------------------------------------------------- structure


@dataclass
class _Span:
    """A section's place in the line list: heading line (None for the preamble) and body."""

    title: str
    level: int
    heading: int | None
    start: int
    end: int

    @property
    def body(self) -> range:
        return range(self.start, self.end)


@dataclass
class _Block:
    kind: str  # prose | list_item | pipe_table | html_table | html_figure | captioned_image
    lines: list[str]


def _heading(line: str) -> tuple[int, str] | None:
    if match := _ATX_HEADING_RE.match(line):
        raw = re.sub(r"(?:^|[ \t]+)#+$", "", match.group(2) or "")
        return len(match.group(1)), tokenize_inline(raw).plain()
    if match := _HTML_HEADING_RE.match(line):
        return int(match.group(1)), tokenize_inline(match.group(2)).plain()
    return None


def _section_spans(lines: list[str], code: list[bool]) -> list[_Span]:
    headings = [(i, found) for i, line in enumerate(lines) if not code[i] and (found := _heading(line))]
    first_heading = headings[0][0] if headings else len(lines)
    spans = []
    if any(line.strip() for line in lines[:first_heading]):
        spans.append(_Span("", 0, None, 0, first_heading))
    for position, (line_number, (level, title)) in enumerate(headings):
        end = headings[position + 1][0] if position + 1 < len(headings) else len(lines)
        spans.append(_Span(title, level, line_number, line_number + 1, end))
    return spans


def _remove_html_comments(text: str) -> str:
    """Drop <!-- ... --> but keep its line breaks, so line numbers stay put. Linear time."""
    pieces, position = [], 0
    while (start := text.find("<!--", position)) != -1:
        end = text.find("-->", start + 4)
        if end == -1:
            break
        pieces.append(text[position:start] + "\n" * text.count("\n", start, end))
        position = end + 3
    pieces.append(text[position:])
    return "".join(pieces)


def _opening_fence(line: str) -> str | None:
    match = _FENCE_RE.match(line)
    if not match:
        return None
    fence = match.group(1)
    info = line.lstrip()[len(fence):]
    return None if fence[0] == "`" and "`" in info else fence


def _closes_fence(line: str, fence: str) -> bool:
    stripped = line.strip()
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]}


def _reference_regions(lines: list[str], code: list[bool], spans: list[_Span]) -> tuple[list[list[int]], list[list[int]]]:
    """Every reference block: (the listed ones, the `Sources: ...` lines)."""
    listed = _listed_regions(lines, code, spans)
    return listed, _label_line_regions(lines, code, {i for region in listed for i in region})


def _listed_regions(lines: list[str], code: list[bool], spans: list[_Span]) -> list[list[int]]:
    """Line numbers of each reference block: a References section (with its
    sub-sections), a `References:` label and what follows it in its section,
    `[n] title https://...` lines that end a section without a heading above them,
    and footnote/link definitions anywhere (with their indented continuation lines)."""
    regions: list[list[int]] = []
    reference_level: int | None = None
    for span in spans:
        if reference_level is not None and span.level > reference_level:
            regions[-1].extend(span.body)
            continue
        reference_level = None
        if span.heading is not None and is_reference_title(span.title):
            regions.append(list(span.body))
            reference_level = span.level
        elif (label := _reference_label_line(lines, code, span)) is not None:
            regions.append(list(range(label, span.end)))
        elif trailing := _trailing_entries(lines, code, span):
            regions.append(trailing)
    taken = {i for region in regions for i in region}
    definitions: list[int] = []
    for i, line in enumerate(lines):
        if i in taken or code[i]:
            continue
        if DEFINITION_LINE_RE.match(line):
            definitions.append(i)
        elif definitions and definitions[-1] == i - 1 and line[:1].isspace() and line.strip():
            definitions.append(i)  # `    https://...` continuing a footnote definition
    if definitions:
        regions.append(definitions)
    return [[i for i in region if not code[i]] for region in regions]


def _label_line_regions(lines: list[str], code: list[bool], taken: set[int]) -> list[list[int]]:
    """A `Sources: https://...` line outside any listed block, with numbered or linked entries
    directly below it: a reference block of its own, never a claim."""
    regions: list[list[int]] = []
    i = 0
    while i < len(lines):
        if i in taken or code[i] or label_line_rest(lines[i]) is None:
            i += 1
            continue
        region = [i]
        i += 1
        while i < len(lines) and i not in taken and not code[i] and starts_linked_or_numbered_entry(lines[i]):
            region.append(i)
            i += 1
        regions.append(region)
    return regions


def _trailing_entries(lines: list[str], code: list[bool], span: _Span) -> list[int]:
    """The `[n] title https://...` lines (blank lines between allowed) that end a section."""
    found: list[int] = []
    for i in reversed(span.body):
        if not lines[i].strip():
            continue
        if code[i] or not is_bracketed_linked_entry(lines[i]):
            break
        found.append(i)
    return sorted(found)


def _reference_label_line(lines: list[str], code: list[bool], span: _Span) -> int | None:
    """A `References:` line counts only when the next non-blank line is a numbered or linked entry."""
    for i in span.body:
        if code[i] or not is_reference_label(lines[i]):
            continue
        following = next((j for j in range(i + 1, span.end) if lines[j].strip()), None)
        if following is not None and not code[following] and starts_linked_or_numbered_entry(lines[following]):
            return i
    return None


# ---------------------------------------------------------------- blocks


def _scan_blocks(body: list[str | None]) -> list[_Block]:
    """Group a section's body lines (None = code or reference line) into blocks."""
    body = [None if line is None else _BLOCKQUOTE_RE.sub("", line) for line in body]
    blocks: list[_Block] = []
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            blocks.append(_Block("prose", paragraph.copy()))
            paragraph.clear()

    i = 0
    while i < len(body):
        line = body[i]
        if line is None or not line.strip() or _RULE_RE.match(line):
            flush()
            i += 1
        elif found := _multiline_block(body, i) or (_list_item(body, i) if _LIST_ITEM_RE.match(line) else None):
            flush()
            blocks.append(found[0])
            i = found[1]
        else:
            paragraph.append(line)
            i += 1
    flush()
    return blocks


def _multiline_block(body: list[str | None], i: int) -> tuple[_Block, int] | None:
    line = body[i] or ""
    opening = line.lstrip().lower()
    if opening.startswith("<figure"):
        return _until_closing_tag(body, i, "</figure", "html_figure")
    if opening.startswith("<table"):
        return _until_closing_tag(body, i, "</table", "html_table")
    if _starts_pipe_table(body, i):
        return _pipe_table(body, i)
    if _FIGURE_CAPTION_RE.match(line) and (image_line := _image_line_after(body, i)) is not None:
        return _Block("captioned_image", [line, body[image_line] or ""]), image_line + 1
    return None


def _until_closing_tag(body: list[str | None], i: int, closing: str, kind: str) -> tuple[_Block, int]:
    lines = []
    while i < len(body) and body[i] is not None:
        lines.append(body[i])
        i += 1
        if closing in lines[-1].lower():
            break
    return _Block(kind, lines), i


def _starts_pipe_table(body: list[str | None], i: int) -> bool:
    line, following = body[i], body[i + 1] if i + 1 < len(body) else None
    return line is not None and "|" in line and following is not None and _is_separator_row(following)


def _is_separator_row(line: str) -> bool:
    cells = _split_pipe_row(line)
    return "|" in line and "-" in line and all(_SEPARATOR_CELL_RE.fullmatch(cell) for cell in cells)


def _pipe_table(body: list[str | None], i: int) -> tuple[_Block, int]:
    end = i + 2
    while end < len(body) and body[end] is not None and body[end].strip() and "|" in body[end]:
        end += 1
    return _Block("pipe_table", [body[i]] + body[i + 2:end]), end


def _image_line_after(body: list[str | None], i: int) -> int | None:
    """The MMDR layout: a `Figure N:` line, at most one blank line, then an image."""
    for j in (i + 1, i + 2):
        if j >= len(body) or body[j] is None:
            return None
        if _IMAGE_ONLY_RE.match(body[j]):
            return j
        if body[j].strip():
            return None
    return None


def _list_item(body: list[str | None], i: int) -> tuple[_Block, int]:
    """A list item with its continuation lines (indented or lazy, up to a blank line)."""
    lines = [body[i]]
    i += 1
    while i < len(body):
        line = body[i]
        if line is None or not line.strip() or _LIST_ITEM_RE.match(line) or _RULE_RE.match(line):
            break
        if _multiline_block(body, i):
            break
        lines.append(line)
        i += 1
    return _Block("list_item", lines), i


def _split_pipe_row(line: str) -> list[str]:
    """Cells of a pipe-table row; `|` inside code spans or escaped as `\\|` is content."""
    row = line.strip()
    if row.startswith("|"):
        row = row[1:]
    if row.endswith("|") and not row.endswith("\\|"):
        row = row[:-1]
    cells, current, in_code = [], [], False
    for position, char in enumerate(row):
        if char == "`":
            in_code = not in_code
        if char == "|" and not in_code and (position == 0 or row[position - 1] != "\\"):
            cells.append("".join(current))
            current = []
        else:
            current.append(char)
    cells.append("".join(current))
    return [cell.strip().replace("\\|", "|") for cell in cells]


def _html_table_rows(markup: str) -> list[list[str]]:
    rows = []
    for row in _HTML_ROW_SPLIT_RE.split(markup)[1:]:
        cells = [match.group(1) for match in _HTML_CELL_RE.finditer(row)]
        if cells:
            rows.append(cells)
    return rows


def _row_text(header: list[str], cells: list[str]) -> str:
    """'Region: EU; Revenue: $5M' (cells without a header name stand alone)."""
    pairs = []
    for position, cell in enumerate(cells):
        if not cell:
            continue
        name = header[position] if position < len(header) else ""
        pairs.append(f"{name}: {cell}" if name else cell)
    return "; ".join(pairs)


def _joined(lines: list[str]) -> str:
    return " ".join(line.strip() for line in lines)


def _first_image(markup: str) -> tuple[str, str]:
    """(src, alt) of the first Markdown or HTML image in `markup`, or ("", "")."""
    images = tokenize_inline(markup).images()
    return (images[0].image_src or "", images[0].image_alt) if images else ("", "")


_MARKER_NUMBERS_RE = re.compile(r"(?:[\[【［〔]\^?|<sup\b[^<>]{0,200}>)\s*([\d\s,，、;–—-]{1,80})")


def _highest_marker_number(text: str) -> int:
    """An upper bound of the numbers markers use (years and other bracketed numbers count too)."""
    numbers = [int(n) for group in _MARKER_NUMBERS_RE.findall(text) for n in re.findall(r"(?<!\d)\d{1,3}(?!\d)", group)]
    return max(numbers, default=0)


def _shortened(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _sorted_indices(citations: list[Citation]) -> list[int]:
    return sorted({index for citation in citations for index in citation.indices})


# ---------------------------------------------------------------- assembly


class _ReportBuilder:
    """Fills a ParsedReport in place, so a failure part-way still leaves a partial result."""

    def __init__(self) -> None:
        self.report = ParsedReport()
        self.references_by_index: dict[int, Reference] = {}
        self.chatter_sentences: list[str] = []
        self.chatter_blocks = 0

    def warn(self, message: str) -> None:
        self.report.warnings.append(message)

    def result(self) -> ParsedReport:
        self.report.warnings = list(dict.fromkeys(self.report.warnings))
        return self.report

    def run(self, text: str) -> None:
        text = self._normalise(text)
        if not text.strip():
            self.warn("empty report: nothing to parse")
            return
        lines = text.split("\n")
        code = self._code_lines(lines)
        chatter, self.chatter_blocks = chatter_lines(lines, code)
        code = [flag or i in chatter for i, flag in enumerate(code)]  # from here on, read like code
        spans = _section_spans(lines, code)
        self.report.sections = [
            Section(title=span.title, level=span.level, text="\n".join(lines[span.start:span.end]).strip())
            for span in spans
        ]
        listed, loose = _reference_regions(lines, code, spans)
        self._collect_references([[lines[i] for i in region] for region in listed],
                                 [[lines[i] for i in region] for region in loose], _highest_marker_number(text))
        excluded = {i for region in listed + loose for i in region}
        for span in spans:
            body = [None if code[i] or i in excluded else lines[i] for i in span.body]
            for block in _scan_blocks(body):
                self._add_block(block, span.title)

    # -- text and lines

    def _normalise(self, text: object) -> str:
        if not isinstance(text, str):
            self.warn(f"report is {type(text).__name__}, not str: converted to text")
            text = text.decode("utf-8", "replace") if isinstance(text, (bytes, bytearray)) else str(text)
        if len(text) > MAX_REPORT_CHARS:
            self.warn(f"report is {len(text)} characters long: only the first {MAX_REPORT_CHARS} were parsed")
            text = text[:MAX_REPORT_CHARS]
        text = re.sub("\r\n?|[\u2028\u2029]", "\n", text)
        text, replaced = _CONTROL_RE.subn(" ", text)
        if replaced > max(10, len(text) // 20):
            self.warn(f"report looks like binary data: {replaced} control characters were ignored")
        return _remove_html_comments(text)

    def _code_lines(self, lines: list[str]) -> list[bool]:
        """Lines inside fenced code blocks or <pre> elements: never prose, never citations."""
        flags = [False] * len(lines)
        fence, opened_at, in_pre = None, 0, False
        for i, line in enumerate(lines):
            if fence or in_pre:
                flags[i] = True
                if fence and _closes_fence(line, fence):
                    fence = None
                elif in_pre and "</pre" in line.lower():
                    in_pre = False
            elif opener := _opening_fence(line):
                fence, opened_at, flags[i] = opener, i, True
            elif line.lstrip().lower().startswith("<pre"):
                flags[i] = True
                in_pre = "</pre" not in line.lower()
        if fence:
            self.warn(f"code fence opened on line {opened_at + 1} is never closed: the rest was read as code")
        return flags

    # -- references

    def _collect_references(self, listed: list[list[str]], loose: list[list[str]], highest_marker: int) -> None:
        parsed = [reference for region in listed for reference in parse_reference_entries(region)]
        for region in loose:  # `Sources:` lines: unnumbered entries after every index and marker number
            after = max([highest_marker, *(r.index for r in parsed)])
            parsed += parse_reference_entries(region, after=after)
        references, warnings = drop_duplicates(parsed)
        self.report.warnings.extend(warnings)
        self.report.references = references
        self.references_by_index = {reference.index: reference for reference in references}

    def _url_for(self, index: int) -> str | None:
        reference = self.references_by_index.get(index)
        return reference.url if reference else None

    # -- blocks

    def _tokenize(self, markup: str) -> TokenizedText:
        tokenized = tokenize_inline(markup, self.references_by_index.keys())
        self.report.warnings.extend(tokenized.warnings)
        return tokenized

    def _add_block(self, block: _Block, section: str) -> None:
        if block.kind == "prose":
            self._add_prose(_joined(block.lines), section)
        elif block.kind == "list_item":
            self._add_prose(_LIST_MARKER_RE.sub("", _joined(block.lines), count=1), section)
        elif block.kind == "pipe_table":
            rows = [_split_pipe_row(line) for line in block.lines]
            self._add_table(rows[0], rows[1:], section)
        elif block.kind == "html_table":
            if rows := _html_table_rows("\n".join(block.lines)):
                self._add_table(rows[0], rows[1:], section)
        elif block.kind == "html_figure":
            self._add_html_figure("\n".join(block.lines), section)
        elif block.kind == "captioned_image":
            src, _ = _first_image(block.lines[1])
            self._add_figure(block.lines[0], src, section)

    def _add_prose(self, markup: str, section: str) -> None:
        tokenized = self._tokenize(markup)
        for image in tokenized.images():
            self._add_figure(image.image_alt, image.image_src or "", section)
        for fragment in split_sentences(tokenized.text):
            citations = tokenized.citations_in(fragment)
            sentence = tokenized.plain(fragment)
            if has_words(sentence) and is_chatter_sentence(sentence):
                self.report.sentences.append(sentence)
                self.chatter_sentences.append(sentence)
                continue  # the agent talking about its work: its links are not the report's citations
            self.report.citations.extend(citations)
            if not has_words(sentence):
                continue
            self.report.sentences.append(sentence)
            if citations:
                self._add_claim("sentence", sentence, section, citations)
            elif is_checkable_fact(sentence):
                self._add_claim("uncited", sentence, section, [])

    def _add_table(self, header_cells: list[str], body_rows: list[list[str]], section: str) -> None:
        header = [self._plain_cell(cell)[0] for cell in header_cells]
        rows = []
        for raw_row in body_rows:
            plain_cells = [self._plain_cell(cell) for cell in raw_row]
            cells = [text for text, _ in plain_cells]
            citations = [citation for _, cell_citations in plain_cells for citation in cell_citations]
            rows.append(cells)
            if citations:
                self._add_claim("table_row", _row_text(header, cells), section, citations)
        self.report.tables.append(Table(section=section, header=header, rows=rows))

    def _plain_cell(self, markup: str) -> tuple[str, list[Citation]]:
        tokenized = self._tokenize(markup)
        citations = tokenized.citations_in()
        self.report.citations.extend(citations)
        return tokenized.plain(), citations

    def _add_html_figure(self, markup: str, section: str) -> None:
        caption_match = _FIGCAPTION_RE.search(markup)
        src, alt = _first_image(_FIGCAPTION_RE.sub(" ", markup))
        caption = caption_match.group(1) if caption_match else alt
        if src or caption.strip():
            self._add_figure(caption, src, section)

    def _add_figure(self, caption_markup: str, src: str, section: str) -> None:
        tokenized = self._tokenize(caption_markup)
        citations = tokenized.citations_in()
        self.report.citations.extend(citations)
        caption = tokenized.plain()
        self.report.figures.append(
            Figure(caption=caption, src=src, citation_indices=_sorted_indices(citations), section=section)
        )
        if citations and has_words(caption):
            self._add_claim("figure_caption", caption, section, citations)

    # -- claims and summary

    def _add_claim(self, kind: ClaimKind, text: str, section: str, citations: list[Citation]) -> None:
        indices = _sorted_indices(citations)
        resolved = [self._url_for(index) for index in indices]
        urls = [url for url in resolved if url] + [citation.url for citation in citations if citation.url]
        self.report.claims.append(
            Claim(
                claim_id=f"c{len(self.report.claims) + 1:04d}",
                kind=kind,
                text=text,
                section=section,
                citation_indices=indices,
                urls=list(dict.fromkeys(urls)),
                unresolved_indices=[index for index, url in zip(indices, resolved) if not url],
            )
        )

    def summarise(self) -> None:
        report = self.report
        if self.chatter_sentences or self.chatter_blocks:
            example = f" (first: {_shortened(self.chatter_sentences[0])!r})" if self.chatter_sentences else ""
            self.warn(f"agent chatter kept out of the claims: {len(self.chatter_sentences)} sentence(s), "
                      f"{self.chatter_blocks} tool-call or reasoning block(s){example}")
        cited = _sorted_indices(report.citations)
        report.unresolved_indices = [index for index in cited if not self._url_for(index)]
        report.has_inline_citations = bool(report.citations)
        report.has_reference_list = bool(report.references)
        if report.references and not cited:
            self.warn(f"reference list has {len(report.references)} entries but no inline numbered marker cites it")
        if cited and not report.references:
            self.warn(f"{len(cited)} cited indices but no reference list: all are unresolved")
        elif report.unresolved_indices:
            self.warn(f"cited indices without a URL in the reference list: {report.unresolved_indices}")
