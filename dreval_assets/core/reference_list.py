"""Reference lists: recognise their headings and labels, and parse their entries.

Entry styles understood (one entry per line, continuation lines allowed):
  [1] Title https://a.example/x        [1] https://a.example/x - Title
  [1] Title. <https://a.example/x>     1. Title - https://a.example/x
  1. [Title](https://a.example/x)      - [1] [Title](https://a.example/x)
  <a id="ref1"></a> [1] Title https://...
  <li id="ref1">Title https://...</li> (or a plain <li>, numbered by position)
  [^1]: Title https://...              [1]: https://... (link definitions)
  - [Title](https://...)               (unnumbered bullet or <li>: previous number + 1)
An entry without a URL is kept with url=None.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .citation_markers import first_link, is_web_url
from .models import Reference
from .sentences import clean_inline_text

REFERENCE_TITLES = frozenset(
    {
        "references", "reference", "reference list", "sources", "source", "sources cited",
        "bibliography", "works cited", "citations", "references and sources",
        "sources and references", "参考文献", "参考资料", "参考来源", "引用来源",
    }
)

_SECTION_NUMBER_RE = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[IVXLC]+\.)\s*")
_BULLET_RE = re.compile(r"^\s*[-*+•]\s+")
_LEADING_TAG_RE = re.compile(
    r"\s*<(?P<name>a|li|p|div|span)\b(?P<attrs>[^<>]{0,2000})>(?P<closed>\s*</(?P=name)\s*>)?", re.I
)
_ID_NUMBER_RE = re.compile(r"""\b(?:id|name)\s*=\s*["']?[^"'>\s]*?(\d+)""", re.I)
_INDEX_PREFIX_RE = re.compile(
    r"^(?:\[\^(?P<footnote>\d{1,6})\]:"
    r"|[\[【]\s*(?P<bracket>\d{1,6})\s*[\]】]:?"
    r"|\(?(?P<number>\d{1,6})[.)](?=\s|$))\s*"
)
# `[^1]: ...` and `[1]: https://...` define a source wherever they appear.
DEFINITION_LINE_RE = re.compile(r"^\s{0,3}(?:\[\^\d{1,6}\]:\s*\S|\[\d{1,6}\]:\s*<?https?://)", re.I)
_TRAILING_LINK_WORDS_RE = re.compile(
    r"\b(?:(?:retrieved from|available (?:at|from|online))\s*[:：]?|(?:url|link|source)\s*[:：])\s*$", re.I
)
_EDGE_PUNCT = " \t-–—:：|,;·•"


def is_reference_title(title: str) -> bool:
    """True for "References", "7. Sources:", "**Bibliography**", "参考文献" ..."""
    text = _SECTION_NUMBER_RE.sub("", clean_inline_text(title))
    return text.strip().rstrip(":：").strip().casefold() in REFERENCE_TITLES


def is_reference_label(line: str) -> bool:
    """A line such as `References:` or `**Sources**` that may open a reference block."""
    stripped = line.strip()
    return 0 < len(stripped) <= 60 and not stripped.startswith("#") and is_reference_title(stripped)


@dataclass
class EntryStart:
    index: int | None  # None: number it after the previous entry
    rest: str


@dataclass
class _RawEntry:
    index: int | None
    parts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(self.parts)


def entry_start(line: str) -> EntryStart | None:
    """The index and remaining text if `line` starts a reference entry."""
    text = _BULLET_RE.sub("", line, count=1)
    bulleted = text != line
    text, id_index, is_list_item = _peel_leading_tags(text)
    if prefix := _INDEX_PREFIX_RE.match(text):
        number = prefix.group("footnote") or prefix.group("bracket") or prefix.group("number")
        return EntryStart(int(number), text[prefix.end():])
    if id_index is not None:
        return EntryStart(id_index, text)
    if is_list_item or bulleted:
        return EntryStart(None, text)
    return None


def starts_linked_or_numbered_entry(line: str) -> bool:
    """Stricter than `entry_start`: a plain bullet ("- Government data") does not qualify."""
    start = entry_start(line)
    return start is not None and (start.index is not None or first_link(start.rest) is not None)


def _peel_leading_tags(text: str) -> tuple[str, int | None, bool]:
    """Strip anchors/list tags before an entry, remembering an id like `ref3`."""
    id_index: int | None = None
    is_list_item = False
    position = 0
    while match := _LEADING_TAG_RE.match(text, position):
        attrs = match.group("attrs")
        if match.group("name").lower() == "a" and not match.group("closed") and "href" in attrs.lower():
            break  # a real link: it is the entry's content
        is_list_item = is_list_item or match.group("name").lower() == "li"
        if id_index is None and (number := _ID_NUMBER_RE.search(attrs)):
            id_index = int(number.group(1))
        position = match.end()
    return text[position:].strip(), id_index, is_list_item


def parse_reference_entries(lines: list[str]) -> list[Reference]:
    """Parse the lines of one reference block. Duplicates are kept; see `drop_duplicates`."""
    entries: list[_RawEntry] = []
    for line in lines:
        if not line.strip():
            continue
        if start := entry_start(line):
            entries.append(_RawEntry(start.index, [start.rest]))
        elif entries and _continues(entries[-1], line):
            entries[-1].parts.append(line.strip())
    _number_unnumbered(entries)
    return [_to_reference(entry) for entry in entries]


def _continues(entry: _RawEntry, line: str) -> bool:
    """Indented lines, or any text while the entry still lacks its URL, belong to the entry."""
    if not clean_inline_text(line):
        return False
    return line[:1].isspace() or first_link(entry.text) is None


def _number_unnumbered(entries: list[_RawEntry]) -> None:
    previous = 0
    for entry in entries:
        if entry.index is None:
            entry.index = previous + 1
        previous = entry.index


def _to_reference(entry: _RawEntry) -> Reference:
    url, title = split_url_and_title(entry.text)
    return Reference(index=entry.index or 0, url=url, title=title)


# Non-web locators are kept as the entry's URL, so the fetch layer can refuse them by name
# ("scheme file: is not fetched") instead of the citation looking unresolved.
_OTHER_SCHEME_RE = re.compile(r"\b(?:file|ftp|ftps|sftp|smb|gopher|data|javascript):[^\s<>\"']{1,2000}", re.I)


def split_url_and_title(text: str) -> tuple[str | None, str]:
    """`Title - https://x` -> ("https://x", "Title"); the first web link wins."""
    link = first_link(text)
    if link is None:
        other = _OTHER_SCHEME_RE.search(text)
        if other:
            rest = clean_inline_text(text[:other.start()] + " " + text[other.end():])
            return other.group(0).rstrip(".,;)"), _trim_title(rest)
        return None, _trim_title(clean_inline_text(text))
    title = clean_inline_text(link.title)
    if not title or is_web_url(title):
        title = clean_inline_text(text[:link.start] + " " + text[link.end:])
        title = _TRAILING_LINK_WORDS_RE.sub("", title)  # "Retrieved from" introduced the URL
    return link.url.strip(), _trim_title(title)


def _trim_title(title: str) -> str:
    for _ in range(2):  # twice: '"Title," ...' needs both passes
        title = title.strip(_EDGE_PUNCT + ".")  # "[1]. Title." -> "Title"
        if len(title) >= 2 and title[0] in "\"“'‘" and title[-1] in "\"”'’":
            title = title[1:-1].strip()
    return title


def drop_duplicates(references: list[Reference]) -> tuple[list[Reference], list[str]]:
    """Keep the first entry of each index; warn about the rest."""
    kept: dict[int, Reference] = {}
    warnings: list[str] = []
    for reference in references:
        if reference.index in kept:
            warnings.append(f"duplicate reference index {reference.index}: kept the first entry")
        else:
            kept[reference.index] = reference
    return list(kept.values()), warnings
