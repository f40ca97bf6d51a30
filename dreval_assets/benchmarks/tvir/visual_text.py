"""The report TVIR's text judgments read (IA, WQ, ADB, FLC and MC): the corrected report, each valid
figure replaced by a placeholder with its kind and (revised) caption, invalid figures and
pseudo-visuals taken out with their captions (the paper's sanitising: they do not count as figures).
Also the measured composition facts and the offline judge's documented scale on them (no text is
read, so it answers in every language)."""
from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from ...core.figure_text import figure_span, pseudo_visuals
from ..judging import FigureImage

_IMAGE_RE = re.compile(r"!\[[^\]\n]*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"\n]*\")?\s*\)|<img\b[^>]*>", re.I)
_SRC_ATTR_RE = re.compile(r"""\bsrc\s*=\s*["']?([^"'\s>]+)""", re.I)
_HEADING_RE = re.compile(r"^#{1,6}\s+\S", re.M)
_WORD_RE = re.compile(r"[\u3400-\u9fff]|[^\s\u3400-\u9fff]+")  # a Chinese character counts as a word

# The offline scale (ours): full quantity credit at 0.5-2 valid figures per section.
FIGURES_PER_SECTION = (0.5, 2.0)


def placeholder(number: int, figure: FigureImage, caption: str, repeats: int | None = None) -> str:
    """`[Figure N (kind): caption]`, with `, repeats Figure M` when its image is a perceptual
    duplicate of an earlier figure's (a composition fault the text alone would hide)."""
    text = " ".join(caption.split()) or "no caption"
    again = f", repeats Figure {repeats}" if repeats is not None else ""
    return f"[Figure {number} ({figure.kind}{again}): {text}]"


def corrected_report(report: str, figures: Sequence[FigureImage], captions: Mapping[int, str]) -> str:
    """The report as TVIR's text judgments read it (the paper's sanitised, caption-revised report):
    each figure's whole markup (its `<figure>` element with the `<figcaption>`, or its image with a
    `Figure N:` caption line just before it) becomes its placeholder when it is valid (`captions`:
    figure index -> caption to show, e.g. a revised one) and goes, caption and all, when it is invalid;
    pseudo-visuals (ASCII art, Mermaid source) go too. An image the parser did not take for a figure
    stays as written. Figures are placed as `report_images` placed them (`figure_span`, in order)."""
    numbers = {f.figure: n for n, f in enumerate((f for f in figures if f.status == "ok"), start=1)}
    edits: list[tuple[int, int, str]] = []
    for pseudo in pseudo_visuals(report):
        edits.append((_caption_line_start(report, pseudo.start) if pseudo.caption else pseudo.start, pseudo.end, ""))
    after = 0
    for figure in figures:
        span = figure_span(report, figure.src, figure.caption, after) or figure_span(report, figure.src,
                                                                                       figure.caption)
        if span is None or any(start < span[1] and span[0] < end for start, end, _ in edits):
            continue  # not in the text, or a pseudo-visual already taken out
        after = span[1]
        shown = "" if figure.status != "ok" else placeholder(
            numbers[figure.figure], figure, captions.get(figure.figure, figure.caption),
            numbers.get(figure.duplicate_of) if figure.duplicate_of is not None else None)
        parts = _markup_spans(report, span, figure.src)
        edits += [(a, b, shown if n == len(parts) - 1 else "") for n, (a, b) in enumerate(parts)]
    out, at = [], 0
    for start, end, shown in sorted(edits):
        if start < at:
            continue
        out += [report[at:start], shown]
        at = end
    return "".join(out + [report[at:]])


def _markup_spans(report: str, span: tuple[int, int], src: str) -> list[tuple[int, int]]:
    """The parts of a figure's span to replace: a `<figure>` element whole; an image alone on its line
    the whole span (with the caption line `figure_span` took before it); an image inside prose only the
    image markup (and that caption line), so the prose stays."""
    start, end = span
    if report.startswith("<figure", start) or not src:
        return [span]
    image = next((m for m in _IMAGE_RE.finditer(report, start, end) if _same_src(_image_src(m), src)), None)
    if image is None:
        return [span]
    line_start = report.rfind("\n", 0, image.start()) + 1
    rest = (report[line_start:image.start()] + report[image.end():end]).strip(" \t*_")
    if not rest:
        return [span]
    return ([(start, line_start)] if start < line_start else []) + [(image.start(), image.end())]


def _image_src(match: re.Match) -> str:
    return match.group(1) if match.group(1) is not None else _src_attr(match.group(0))


def _same_src(found: str, src: str) -> bool:
    return found == src or bool(found) and found.rsplit("/", 1)[-1] == src.rsplit("/", 1)[-1]


def _caption_line_start(report: str, block_start: int) -> int:
    """Where the `Figure N:` caption line just before a pseudo-visual's code block starts."""
    return report[:block_start].rstrip("\n").rfind("\n") + 1


def _src_attr(tag: str) -> str:
    found = _SRC_ATTR_RE.search(tag)
    return found.group(1) if found else ""


def composition_facts(report: str, figures: Sequence[FigureImage]) -> dict[str, Any]:
    """What the offline composition scale reads: valid and invalid figures, sections and how many of
    them hold a figure, captioned figures, kinds and origins (own files or web images), length."""
    valid = [f for f in figures if f.status == "ok"]
    return {
        "valid_figures": len(valid),
        "invalid_figures": len(figures) - len(valid),
        "sections": max(1, len(_HEADING_RE.findall(report))),
        "sections_with_figures": len({f.section for f in valid}),
        "captioned": sum(1 for f in valid if f.caption.strip()),
        "repeats": sum(1 for f in valid if f.duplicate_of is not None),
        "kinds": sorted({f.kind for f in valid}),
        "web_images": sum(1 for f in valid if f.src.lower().startswith(("http://", "https://"))),
        "words": len(_WORD_RE.findall(report)),
    }


def offline_composition(facts: Mapping[str, Any]) -> dict[str, tuple[int, str]]:
    """The documented scale, 1-10 per dimension:
    layout = 1 + 9 x (0.5 quantity + 0.3 spread + 0.2 captioned share), quantity 1 at 0.5-2 valid
    figures per section and proportionally less outside, spread = sections holding a figure over
    min(sections, figures), all of it x (1 - share of figures repeating an earlier image);
    variety = 1 + 9 x (0.7 kinds + 0.3 origins), kinds 0 / 0.5 / 1 for one,
    two, three or more kinds (photo, chart, table, diagram), origins 1 when own files and web images
    are both used. No valid figure: 1 and 1 (the suite scores MC 0 then anyway)."""
    n = int(facts["valid_figures"])
    if n == 0:
        return {"layout": (1, "no valid figure"), "variety": (1, "no valid figure")}
    sections = max(1, int(facts["sections"]))
    per_section = n / sections
    low, high = FIGURES_PER_SECTION
    quantity = per_section / low if per_section < low else high / per_section if per_section > high else 1.0
    spread = int(facts["sections_with_figures"]) / min(sections, n)
    captioned = int(facts["captioned"]) / n
    repeats = int(facts.get("repeats") or 0)
    layout = 1 + 9 * (0.5 * quantity + 0.3 * min(1.0, spread) + 0.2 * captioned) * (1 - repeats / n)
    kinds = len(facts["kinds"])
    web = int(facts["web_images"])
    origins = 1.0 if 0 < web < n else 0.0
    variety = 1 + 9 * (0.7 * min(1.0, (kinds - 1) / 2) + 0.3 * origins)
    return {
        "layout": (_scale(layout), f"offline measure: {n} valid figure(s) over {sections} section(s) "
                                   f"(quantity {quantity:.2f}), spread {spread:.2f}, captioned {captioned:.2f}, "
                                   f"{repeats} repeating an earlier image"),
        "variety": (_scale(variety), f"offline measure: kinds {', '.join(facts['kinds'])}; "
                                     f"{web} web image(s) of {n}"),
    }


def _scale(value: float) -> int:
    return max(1, min(10, int(value + 0.5)))
