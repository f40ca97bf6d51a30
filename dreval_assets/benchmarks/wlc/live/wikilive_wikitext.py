"""What the Wiki Live selection measures in an article's wikitext: reference URLs, structural depth and
whether it is list-like. Pure functions; the rules are written where they are applied.

- Reference URLs: distinct http(s) URLs inside `<ref>` elements and citation templates (`{{cite ...}}`,
  `{{citation ...}}`, which hold the sources of articles that cite with `{{sfn}}`); archive copies
  (`archive-url=`) are the same source and are not counted.
- Sections / subsections: `== H ==` headings / deeper ones, navigation sections (see also,
  references, notes, external links, ...) and everything under them left out.
- List-like: the title starts with "List of" / "Lists of", or, with templates, references, comments,
  files and categories removed and navigation sections left out, list items and table rows hold more
  characters than prose lines.
"""
from __future__ import annotations

import re

from .wikilive_text import NAVIGATION_SECTIONS

_HEADING_RE = re.compile(r"^(={2,6})\s*(.+?)\s*\1\s*$")
_REF_RE = re.compile(r"<ref(?:\s[^>]*)?(?<!/)>(.*?)</ref\s*>", re.S | re.I)
_URL_RE = re.compile(r"https?://[^\s|\]}<>\"]+", re.I)
_ARCHIVE_PARAM_RE = re.compile(r"\|\s*archive-?url\s*=\s*[^|}]*", re.I)
_CITATION_NAME_RE = re.compile(r"\{\{\s*(?:cite[ _]|citation\b|vcite)", re.I)
_LIST_TITLE_RE = re.compile(r"^lists? of\b", re.I)
_COMMENT_RE = re.compile(r"<!--.*?-->", re.S)
_SELF_CLOSING_REF_RE = re.compile(r"<ref[^>]*/>", re.I)
_FILE_OR_CATEGORY_RE = re.compile(r"^\s*\[\[\s*(?:file|image|category)\s*:", re.I)


def templates(text: str) -> list[tuple[int, int]]:
    """(start, end) of every `{{...}}` template, nested ones included; an unclosed one runs to the end."""
    spans, stack, i = [], [], 0
    while i < len(text) - 1:
        pair = text[i:i + 2]
        if pair == "{{":
            stack.append(i)
            i += 2
        elif pair == "}}" and stack:
            spans.append((stack.pop(), i + 2))
            i += 2
        else:
            i += 1
    spans.extend((start, len(text)) for start in stack)
    return sorted(spans)


def reference_urls(wikitext: str) -> int:
    pieces = [m.group(1) for m in _REF_RE.finditer(wikitext)]
    pieces += [wikitext[a:b] for a, b in templates(wikitext) if _CITATION_NAME_RE.match(wikitext, a)]
    urls = set()
    for piece in pieces:
        for url in _URL_RE.findall(_ARCHIVE_PARAM_RE.sub("", piece)):
            urls.add(url.rstrip(".,;:)'").lower())
    return len(urls)


def structure(wikitext: str) -> tuple[int, int]:
    """(sections, subsections), navigation sections and their subsections left out."""
    sections = subsections = 0
    skip_level: int | None = None
    for line in wikitext.splitlines():
        match = _HEADING_RE.match(line.strip())
        if not match:
            continue
        level, name = len(match.group(1)), match.group(2).strip().casefold()
        if skip_level is not None and level > skip_level:
            continue
        skip_level = level if name in NAVIGATION_SECTIONS else None
        if skip_level is None:
            if level == 2:
                sections += 1
            else:
                subsections += 1
    return sections, subsections


def is_list_like(title: str, wikitext: str) -> bool:
    if _LIST_TITLE_RE.match(title.strip()):
        return True
    listed, prose = list_and_prose_chars(wikitext)
    return listed > prose


def list_and_prose_chars(wikitext: str) -> tuple[int, int]:
    text = _strip_templates(_SELF_CLOSING_REF_RE.sub("", _REF_RE.sub("", _COMMENT_RE.sub("", wikitext))))
    listed = prose = 0
    skip_level: int | None = None
    for raw in text.splitlines():
        line = raw.strip()
        heading = _HEADING_RE.match(line)
        if heading:
            level = len(heading.group(1))
            if skip_level is None or level <= skip_level:
                skip_level = level if heading.group(2).strip().casefold() in NAVIGATION_SECTIONS else None
            continue
        if not line or skip_level is not None or _FILE_OR_CATEGORY_RE.match(line):
            continue
        if line[0] in "*#;:|!" or line.startswith("{|"):
            listed += len(line.lstrip("*#;:|!{}- "))
        else:
            prose += len(line)
    return listed, prose


def _strip_templates(text: str) -> str:
    spans = templates(text)
    out, position = [], 0
    for start, end in spans:
        if start >= position:
            out.append(text[position:start])
            position = end
        elif end > position:
            position = end
    out.append(text[position:])
    return "".join(out)
