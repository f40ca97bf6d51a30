"""What a report's text says about its figures, deterministically: where each figure stands (the text
around it, `<figure>` in its place), what kind of visual it is by rule cues, and the pseudo-visuals
the parser does not list as figures (ASCII-art drawings and Mermaid source in code blocks)."""
from __future__ import annotations

import re
from dataclasses import dataclass

CONTEXT_CHARS = 600  # report text kept on each side of a figure
FIGURE_MARK = "<figure>"

# Rule cues (English and Chinese), in order: the first kind whose cue matches wins.
_CHART_CUES = re.compile(r"\b(?:chart|graph|plot|bar|line|pie|trend|axis|histogram|scatter)s?\b|图表|柱状图|折线图|饼图|趋势",
                         re.I)
_TABLE_CUES = re.compile(r"\btables?\b|表格|数据表", re.I)
_DIAGRAM_CUES = re.compile(r"\b(?:diagram|flow ?chart|schematic|architecture|workflow)s?\b|架构|流程|示意图", re.I)
_CHART_FOLDER = re.compile(r"(?:^|[/\\])charts?[/\\]", re.I)

_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)")
_MERMAID_START = re.compile(r"^\s*(?:graph|flowchart|sequenceDiagram|classDiagram|stateDiagram|erDiagram|gantt|pie|"
                            r"journey|mindmap|timeline|quadrantChart|xychart)\b")
_CAPTION_LINE = re.compile(r"^\s*[*_]{0,2}\s*(?:Figure|Fig\.|Chart|Diagram|图表?)\s*\d+[A-Za-z]?\s*[:.：\-–—]", re.I)
_DRAWING = set("|-+=_#*/\\<>^v.:o█▇▆▅▄▃▂▁▌▐░▒▓■□●○◆─│┌┐└┘├┤┬┴┼═║╔╗╚╝╠╣╦╩╬→←↑↓")
ASCII_ART_MIN_LINES = 3
ASCII_ART_MIN_DRAWING = 0.45  # share of a block's visible characters that draw rather than spell


def figure_kind(src: str, caption: str) -> str:
    """photo | chart | table | diagram: a `charts/` folder or chart words make a chart, then table
    words, then diagram words; anything else is a photo."""
    if _CHART_FOLDER.search(src or "") or _CHART_CUES.search(caption):
        return "chart"
    if _TABLE_CUES.search(caption):
        return "table"
    if _DIAGRAM_CUES.search(caption):
        return "diagram"
    return "photo"


@dataclass(frozen=True)
class PseudoVisual:
    """A code block standing in for a figure: Mermaid source or an ASCII-art drawing."""

    what: str  # "Mermaid source" | "ASCII art"
    caption: str  # the caption line just before it, if any
    start: int  # character span of the block (fences included)
    end: int

    @property
    def kind(self) -> str:
        if self.caption:
            found = figure_kind("", self.caption)
            if found != "photo":
                return found
        return "diagram"


def pseudo_visuals(text: str) -> list[PseudoVisual]:
    """Every fenced code block that is Mermaid source (a `mermaid` info string, or a Mermaid
    diagram keyword first) or ASCII art (at least 3 lines, mostly drawing characters), in order."""
    found, lines, offset = [], text.splitlines(keepends=True), 0
    starts = []
    for line in lines:
        starts.append(offset)
        offset += len(line)
    i = 0
    while i < len(lines):
        opening = _FENCE_OPEN.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, info = opening.group(1), opening.group(2).lower()
        j = i + 1
        while j < len(lines) and not (lines[j].strip().startswith(fence[0] * len(fence))
                                      and set(lines[j].strip()) == {fence[0]}):
            j += 1
        body = [line.rstrip("\n") for line in lines[i + 1:j]]
        what = _pseudo_kind(info, body)
        if what:
            end = starts[j] + len(lines[j]) if j < len(lines) else len(text)
            found.append(PseudoVisual(what, _caption_before(lines, i), starts[i], end))
        i = j + 1
    return found


def _pseudo_kind(info: str, body: list[str]) -> str | None:
    if info == "mermaid" or (body and not info and _MERMAID_START.match(next((b for b in body if b.strip()), ""))):
        return "Mermaid source"
    drawn = [b for b in body if b.strip()]
    if info in ("", "text", "txt", "ascii", "plain") and len(drawn) >= ASCII_ART_MIN_LINES:
        visible = [c for b in drawn for c in b if not c.isspace()]
        if visible and sum(c in _DRAWING for c in visible) / len(visible) >= ASCII_ART_MIN_DRAWING:
            return "ASCII art"
    return None


def _caption_before(lines: list[str], i: int) -> str:
    for j in range(i - 1, max(-1, i - 3), -1):
        if lines[j].strip():
            return lines[j].strip().strip("*_ ") if _CAPTION_LINE.match(lines[j]) else ""
    return ""


def figure_span(text: str, src: str, caption: str, after: int = 0) -> tuple[int, int] | None:
    """Where a figure's markup stands in the report (its `<figure>` element, or the line of its image
    and a `Figure N:` caption line just before it), searching from `after` so that figures repeating
    an image are found in order; None when neither its src nor its caption is in the text."""
    at = text.find(src, after) if src else -1
    if at < 0 and caption:
        at = text.find(caption[:40], after)
    if at < 0:
        return None
    opening = text.rfind("<figure", 0, at)
    if opening >= 0 and text.rfind("</figure", opening, at) < 0:
        closing = text.find("</figure>", at)
        if closing >= 0:
            return opening, closing + len("</figure>")
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    previous_end = start - 1
    while previous_end > 0 and text[previous_end - 1] == "\n":  # at most blank lines between
        previous_end -= 1
    previous_start = text.rfind("\n", 0, previous_end) + 1
    if previous_end > 0 and _CAPTION_LINE.match(text[previous_start:previous_end]):
        start = previous_start
    return start, end


def context_around(text: str, span: tuple[int, int] | None, chars: int = CONTEXT_CHARS) -> str:
    """Up to `chars` characters of report text on each side of the span, `<figure>` in its place
    ('' when the figure could not be placed)."""
    if span is None:
        return ""
    start, end = span
    return (text[max(0, start - chars):start] + FIGURE_MARK + text[end:end + chars]).strip()
