"""Reference lists: recognise their headings and labels, and parse their entries.

Entry styles understood (one entry per line, continuation lines allowed):
  [1] Title https://a.example/x        [1] https://a.example/x - Title
  [1] Title. <https://a.example/x>     1. Title - https://a.example/x
  1. [Title](https://a.example/x)      - [1] [Title](https://a.example/x)
  <a id="ref1"></a> [1] Title https://...
  <li id="ref1">Title https://...</li> (or a plain <li>, numbered by position)
  [^1]: Title https://...              [1]: https://... (link definitions)
  - [Title](https://...)               (unnumbered bullet or <li>: previous number + 1)
  [1] [4] [13] Title / https://...     [1][4] https://...    [1, 4] https://...
                                       (one source under several indices: each resolves to it)
  \\[1\\] Title https://...              1\\. Title https://...  (escaped by a Markdown converter)
A line that opens with a label and a colon (`Sources: https://a, https://b`, `**Source:** [T](url)`,
`来源：…`) is a reference line wherever it stands: each link on it is an entry (`label_line_rest`).
An entry without a URL is kept with url=None.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .citation_markers import MAX_PLAIN_INDEX, first_link, is_web_url, unescape_markers
from .models import Reference
from .sentences import clean_inline_text

REFERENCE_TITLES = frozenset(
    {
        "references", "reference", "reference list", "sources", "source", "sources cited",
        "bibliography", "works cited", "citations", "references and sources",
        "sources and references", "footnotes", "notes and references", "参考文献", "参考资料", "参考来源",
        "引用来源", "参考链接",
    }
)
# Words that introduce sources on the same line ("Source: ...", "数据来源：..."), besides the titles.
INLINE_LABELS = REFERENCE_TITLES | {"来源", "资料来源", "数据来源", "信息来源", "出处", "links", "further reading"}

_SECTION_NUMBER_RE = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[IVXLC]+\.)\s*")
_BULLET_RE = re.compile(r"^\s*[-*+•]\s+")
_LEADING_TAG_RE = re.compile(
    r"\s*<(?P<name>a|li|p|div|span)\b(?P<attrs>[^<>]{0,2000})>(?P<closed>\s*</(?P=name)\s*>)?", re.I
)
_ID_NUMBER_RE = re.compile(r"""\b(?:id|name)\s*=\s*["']?[^"'>\s]*?(\d+)""", re.I)
_INDEX_PREFIX_RE = re.compile(
    r"^(?:\[\^(?P<footnote>\d{1,6})\]:"
    r"|[\[【［]\s*(?P<bracket>\d{1,6}(?:\s*[,，、]\s*\d{1,6}){0,20})\s*[\]】］]:?"
    r"|\(?(?P<number>\d{1,6})\\?[.)](?=\s|$))\s*"
)
# More indices right after the first: `[1] [4] [13] Title`, `[1][4] https://...` (not `[4](url)`).
_MORE_INDEX_RE = re.compile(r"[\[【［]\s*(?P<number>\d{1,6})\s*[\]】］](?![(:])\s*")
# `[^1]: ...` and `[1]: https://...` define a source wherever they appear (escaped `\[^1\]:` too).
DEFINITION_LINE_RE = re.compile(
    r"^\s{0,3}(?:\\?\[\^\d{1,6}\\?\]:\s*\S|\\?\[\d{1,6}\\?\]:\s*<?https?://)", re.I)
# `Sources: https://...`, `**Source:** [Title](url)`, `- References: [1] https://...`, `来源：...`
_LABEL_LINE_RE = re.compile(
    r"^\s{0,3}(?:[-*+•]\s+)?(?P<label>(?:\*\*|__|\*|_)?[^\W\d_][^:：\n]{0,28}?)\s*[:：]\s*(?:\*\*|__|\*|_)?"
    r"\s*(?P<rest>\S.*)$")
_TRAILING_LINK_WORDS_RE = re.compile(
    r"\b(?:(?:retrieved from|available (?:at|from|online))\s*[:：]?|(?:url|link|source)\s*[:：])\s*$", re.I
)
_EDGE_PUNCT = " \t-–—:：|,;·•/，；、"


def is_reference_title(title: str) -> bool:
    """True for "References", "7. Sources:", "**Bibliography**", "参考文献" ..."""
    text = _SECTION_NUMBER_RE.sub("", clean_inline_text(title))
    return text.strip().rstrip(":：").strip().casefold() in REFERENCE_TITLES


def is_reference_label(line: str) -> bool:
    """A line such as `References:` or `**Sources**` that may open a reference block."""
    stripped = line.strip()
    return 0 < len(stripped) <= 60 and not stripped.startswith("#") and is_reference_title(stripped)


def label_line_rest(line: str) -> str | None:
    """What follows the label of a `Sources: ...` line, or None when the line is not one."""
    match = _LABEL_LINE_RE.match(line)
    if not match or match.group("label").lstrip("*_").lstrip().startswith("#"):
        return None
    label = clean_inline_text(match.group("label")).strip("*_ ").casefold()
    return match.group("rest").strip() if label in INLINE_LABELS else None


def label_line_entries(rest: str) -> list[str]:
    """The entries of a label line's text, one per link: `https://a, https://b` -> two entries;
    `[1] https://a [2] https://b` keeps each entry's index. Text after the last link joins it."""
    entries: list[str] = []
    position = 0
    while link := first_link(rest[position:]):
        end = position + link.end
        entries.append(rest[position:end].strip(" ,;|、，；"))
        position = end
    tail = rest[position:].strip(" ,;|、，；")
    if tail and entries:
        entries[-1] += " " + tail
    elif tail and _INDEX_PREFIX_RE.match(tail):
        entries.append(tail)
    return entries


@dataclass
class EntryStart:
    index: int | None  # None: number it after the previous entry
    rest: str
    more: tuple[int, ...] = ()  # further indices listed for the same source


@dataclass
class _RawEntry:
    index: int | None
    parts: list[str] = field(default_factory=list)
    more: tuple[int, ...] = ()

    @property
    def text(self) -> str:
        return " ".join(self.parts)


def entry_start(line: str) -> EntryStart | None:
    """The index and remaining text if `line` starts a reference entry."""
    line = unescape_markers(line)
    text = _BULLET_RE.sub("", line, count=1)
    bulleted = text != line
    text, id_index, is_list_item = _peel_leading_tags(text)
    if prefix := _INDEX_PREFIX_RE.match(text):
        numbers = prefix.group("footnote") or prefix.group("bracket") or prefix.group("number")
        indices = [int(n) for n in re.split(r"\s*[,，、]\s*", numbers)]
        position = prefix.end()
        while more := _MORE_INDEX_RE.match(text, position):
            if int(more.group("number")) > MAX_PLAIN_INDEX:
                break  # `[1] [2023] Annual report`: a year, not an index
            indices.append(int(more.group("number")))
            position = more.end()
        rest = text[position:]
        return EntryStart(indices[0], rest, tuple(dict.fromkeys(i for i in indices[1:] if i != indices[0])))
    if id_index is not None:
        return EntryStart(id_index, text)
    if is_list_item or bulleted:
        return EntryStart(None, text)
    return None


_BRACKET_START_RE = re.compile(r"^\s*(?:[-*+•]\s+)?(?:<a\b[^<>]{0,200}>\s*</a\s*>\s*)?\\?[\[【［]\s*\d{1,6}\s*\\?[\]】］]")


def is_bracketed_linked_entry(line: str) -> bool:
    """`[3] Title https://...` (or `<a id="ref3"></a> [3] ...`): a reference entry even without a
    heading above it, as MiroEval and TVIR reports end."""
    if not _BRACKET_START_RE.match(line):
        return False
    start = entry_start(line)
    return start is not None and start.index is not None and first_link(start.rest) is not None


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


def parse_reference_entries(lines: list[str], after: int = 0) -> list[Reference]:
    """Parse the lines of one reference block. Duplicates are kept; see `drop_duplicates`.
    Unnumbered entries before any numbered one are numbered from `after` + 1."""
    entries: list[_RawEntry] = []
    for line in lines:
        if not line.strip():
            continue
        if (rest := label_line_rest(line)) is not None:
            for entry in label_line_entries(rest):
                start = entry_start(entry) or EntryStart(None, entry)
                entries.append(_RawEntry(start.index, [start.rest], start.more))
        elif start := entry_start(line):
            entries.append(_RawEntry(start.index, [start.rest], start.more))
        elif entries and _continues(entries[-1], line):
            entries[-1].parts.append(line.strip())
    _number_unnumbered(entries, after)
    return [reference for entry in entries for reference in _to_references(entry)]


def _continues(entry: _RawEntry, line: str) -> bool:
    """Indented lines, or any text while the entry still lacks its URL, belong to the entry."""
    if not clean_inline_text(line):
        return False
    return line[:1].isspace() or first_link(entry.text) is None


def _number_unnumbered(entries: list[_RawEntry], after: int) -> None:
    previous = after
    for entry in entries:
        if entry.index is None:
            entry.index = previous + 1
        previous = max([entry.index, *entry.more])


def _to_references(entry: _RawEntry) -> list[Reference]:
    url, title = split_url_and_title(entry.text)
    return [Reference(index=index, url=url, title=title) for index in (entry.index or 0, *entry.more)]


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
    """Keep the first entry of each index, unless only a later one has a URL; warn about the rest."""
    kept: dict[int, Reference] = {}
    warnings: list[str] = []
    for reference in references:
        first = kept.get(reference.index)
        if first is None:
            kept[reference.index] = reference
        elif first.url is None and reference.url is not None:
            kept[reference.index] = reference
            warnings.append(f"duplicate reference index {reference.index}: kept the later entry, the first has no URL")
        elif first != reference:
            warnings.append(f"duplicate reference index {reference.index}: kept the first entry")
    return list(kept.values()), warnings
