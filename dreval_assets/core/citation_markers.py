"""Inline citation markers: find them, resolve their numbers, keep them out of prose.

`tokenize_inline` replaces every citation marker, link, image and code span of
a Markdown/HTML fragment with a placeholder (see `sentences`). Sentence
splitting then cannot cut through them, each sentence knows which citations it
carries, and `TokenizedText.plain` renders clean text without the markers.

Recognised, in this order (earlier forms hide their text from later ones):
code spans (never citations), images, HTML anchors around numbers
(`<a href="#ref3">[3]</a>`), HTML links, Markdown links (`[title](url)`,
`[[3]](url)`), autolinks, DR³-Eval's named sources (`[long_context: "title", chunk 2]`,
`[Doc: f.pdf, Page 5]`, `[Image: x.jpg]`, `[RAG-3]`), `[15†L10]` / `【15†L10-L20】`,
footnotes `[^3]`, numbered brackets `[3]`, `[3, 5]`, `[3-5]` (also full-width `【3】` `［3］`, with a
caret `^[3]`, or escaped by a Markdown converter `\\[3\\]`), superscript numbers `<sup>3</sup>` (not
after a digit or a unit: `km<sup>2</sup>` is an exponent), and bare `https://` URLs (IPv6 literal
hosts included: `http://[2001:db8::1]/x`).
"""
from __future__ import annotations

import html
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .models import Citation
from .sentences import (
    MARKER_CLOSE,
    MARKER_OPEN,
    PLACEHOLDER_RE,
    WORD_CLOSE,
    WORD_OPEN,
    clean_inline_text,
    strip_emphasis,
    strip_html_tags,
    tidy_whitespace,
    unescape_markdown,
)

MAX_RANGE_WIDTH = 50  # a range citing more sources than this is a typo, not a citation
MAX_PLAIN_INDEX = 999  # larger numbers in brackets are years unless the reference list has them

# Patterns are bounded ({0,N}, attributes stop at "<") so hostile input cannot make scanning quadratic.
_OPEN = "[\\[【［〔]"  # ASCII and full-width brackets
_CLOSE = "[\\]】］〕]"
_NUMBER_LIST = r"\d{1,6}(?:\s*[-–—]\s*\d{1,6})?(?:\s*[,;，、]\s*\d{1,6}(?:\s*[-–—]\s*\d{1,6})?)*"
_URL_CHARS = "[^\\s<>\"'`\\[\\]|{}\u3000-\u303f\uff00-\uffef\ue000-\uf8ff【】]"
_IPV6_HOST = r"\[[0-9a-f:.]{2,45}(?:%25[0-9a-z._~-]{1,20})?\](?::\d{1,5})?"  # brackets are part of the URL here

BARE_URL_RE = re.compile(r"https?://(?:" + _IPV6_HOST + "(?:[/?#]" + _URL_CHARS + "*)?|" + _URL_CHARS + "+)", re.I)
MARKDOWN_LINK_RE = re.compile(
    r"(?<!!)\[(?P<title>(?:[^\[\]\n]|\[[^\[\]\n]*\]){0,300})\]"
    r"\(\s*<?(?P<href>(?:[^\s()<>]|\([^\s()<>]*\))+)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)"
)
HTML_LINK_RE = re.compile(r"<a\b(?P<attrs>[^<>]{0,2000})>(?P<inner>.{0,500}?)</a\s*>", re.I | re.S)
AUTOLINK_RE = re.compile(r"<(?P<url>https?://[^\s<>]+)>", re.I)

# Backtick runs are matched whole (lookarounds), so a long run cannot backtrack.
_CODE_SPAN_RE = re.compile(
    r"(?<!`)(?P<ticks>`+)(?!`)(?P<code>.{1,2000}?)(?<!`)(?P=ticks)(?!`)"
    r"|<code\b[^<>]{0,2000}>(?P<html>.{0,2000}?)</code>",
    re.I | re.S,
)
_MARKDOWN_IMAGE_RE = re.compile(
    r"!\[(?P<alt>[^\]\n]{0,500})\]\(\s*<?(?P<src>[^\s)>]*)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)"
)
_HTML_IMAGE_RE = re.compile(r"<img\b[^<>]{0,4000}>", re.I)
_SUP_TAG_RE = re.compile(r"</?sup\b[^<>]{0,200}>", re.I)
_HTML_NUMBERED_ANCHOR_RE = re.compile(
    r"<a\b(?P<attrs>[^<>]{0,2000})>\s*[\[【]?\s*(?P<numbers>" + _NUMBER_LIST + r")\s*[\]】]?\s*</a\s*>", re.I
)
# DR³-Eval's source citations: a corpus document by title (and chunk), a user file (and page), an
# image, or a retrieval chunk of the system's own run. Locators: `doc:<title>` (the sandbox corpus),
# `attachment:<file name>`, `rag:<n>` (resolvable only from the system's trace).
_NAMED_SOURCE_RE = re.compile(
    r"\[\s*(?P<kind>long_context|doc|image)\s*:\s*(?P<body>[^\[\]\n]{1,500})\]"
    r"|\[\s*rag\s*-\s*(?P<rag>\d{1,6})\s*\]", re.I)
_QUOTED_RE = re.compile(r"^[\"“”']\s*(?P<title>.*?)\s*[\"“”']\s*(?:,|$)")
_DAGGER_RE = re.compile(_OPEN + r"\s*(?P<number>\d{1,6})\s*†[^\]】］〕\n]{0,80}" + _CLOSE)
_FOOTNOTE_RE = re.compile(r"\[\^(?P<label>[^\]\s]{1,40})\](?!:)")
_BRACKET_NUMBERS_RE = re.compile(r"\^?" + _OPEN + r"\s*(?P<numbers>" + _NUMBER_LIST + r")\s*" + _CLOSE + r"\^?(?!\()")
# Markdown converters escape brackets: `\[3\]`, `\[3, 5\]`, `\[^3\]`, `\[15†L10\]` are markers all the same.
_ESCAPED_MARKER_RE = re.compile(
    r"\\?\[(?P<inner>\^?\s*" + _NUMBER_LIST + r"\s*(?:†[^\[\]\\\n]{0,80})?)\\?\](?P<colon>:?)")
# <sup>3</sup>, <sup>2,3</sup>: a citation unless it follows a base or a unit (10<sup>6</sup>, (x+1)<sup>2</sup>,
# km<sup>2</sup>); a year is no base ("in 2024<sup>3</sup>" cites).
_SUP_NUMBERS_RE = re.compile(r"<sup\b[^<>]{0,200}>\s*(?P<numbers>" + _NUMBER_LIST + r")\s*</sup\s*>", re.I)
_EXPONENT_BASE_RE = re.compile(
    r"(?:(?<![\d,.])(?:\d{1,3}|\d{5,})|\)|(?<![A-Za-z])(?:[kcmdnµμ]?m|ft|in|mi|yd|sq|kg|g|h|m/s|W/m|J|N|Pa|L|l|x|y|n|e|r))\s*$")
_NUMERIC_LABEL_RE = re.compile(r"\s*[\[【]?\s*(?P<numbers>" + _NUMBER_LIST + r")\s*[\]】]?\s*")
_RANGE_RE = re.compile(r"(\d+)\s*[-–—]\s*(\d+)")


def unescape_markers(text: str) -> str:
    """`\\[3\\]` -> `[3]` (and `\\[3]`, `[3\\]`); other escapes are left for `unescape_markdown`."""
    def replace(match: re.Match) -> str:
        literal = match.group(0)
        return f"[{match.group('inner')}]{match.group('colon')}" if "\\" in literal else literal

    return _ESCAPED_MARKER_RE.sub(replace, text) if "\\" in text else text


def attribute(tag: str, name: str) -> str:
    """Value of an HTML attribute in `tag`, or ""."""
    match = re.search(r"(?<![\w-])" + name + r"""\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", tag, re.I)
    if not match:
        return ""
    return html.unescape(next(group for group in match.groups() if group is not None))


def clean_url(url: str) -> str:
    """Drop punctuation that ends the sentence rather than the URL."""
    while url:
        last = url[-1]
        if last in ".,;:!?*_~'\"":
            url = url[:-1]
        elif last == ")" and url.count("(") < url.count(")"):
            url = url[:-1]
        else:
            break
    return url if re.match(r"https?://[^/\s]", url, re.I) else ""


def is_web_url(href: str) -> bool:
    return re.match(r"https?://", href.strip(), re.I) is not None


@dataclass
class LinkMatch:
    url: str
    title: str  # visible link text, "" for bare URLs
    start: int
    end: int


def first_link(text: str) -> LinkMatch | None:
    """The earliest web link in `text`: Markdown link, HTML link, autolink or bare URL."""
    candidates: list[LinkMatch] = []
    for match in MARKDOWN_LINK_RE.finditer(text):
        if is_web_url(match.group("href")):
            candidates.append(LinkMatch(match.group("href"), match.group("title"), match.start(), match.end()))
            break
    for match in HTML_LINK_RE.finditer(text):
        href = attribute(match.group("attrs"), "href")
        if is_web_url(href):
            candidates.append(LinkMatch(href, match.group("inner"), match.start(), match.end()))
            break
    if match := AUTOLINK_RE.search(text):
        candidates.append(LinkMatch(match.group("url"), "", match.start(), match.end()))
    for match in BARE_URL_RE.finditer(text):
        if url := clean_url(match.group(0)):
            candidates.append(LinkMatch(url, "", match.start(), match.start() + len(url)))
            break
    return min(candidates, key=lambda link: link.start) if candidates else None


def parse_indices(numbers: str, known_indices: set[int], warnings: list[str]) -> list[int]:
    """'3, 5-7' -> [3, 5, 6, 7]. Years (> 999, not a known reference) and absurd ranges are dropped."""
    indices: list[int] = []
    for part in re.split(r"\s*[,;，、]\s*", numbers.strip()):
        indices.extend(_expand_part(part, known_indices, warnings))
    return list(dict.fromkeys(indices))


def _expand_part(part: str, known_indices: set[int], warnings: list[str]) -> list[int]:
    def plausible(number: int) -> bool:
        return number <= MAX_PLAIN_INDEX or number in known_indices

    if range_match := _RANGE_RE.fullmatch(part):
        low, high = sorted(int(group) for group in range_match.groups())
        if not (plausible(low) and plausible(high)):
            return []
        if high - low + 1 > MAX_RANGE_WIDTH:
            warnings.append(f"citation range [{part}] spans more than {MAX_RANGE_WIDTH} sources: ignored")
            return []
        return list(range(low, high + 1))
    number = int(part) if part.isdecimal() else None
    return [number] if number is not None and plausible(number) else []


@dataclass
class InlineToken:
    literal: str
    render: str = ""  # what the token reads as in plain text
    citation: Citation | None = None
    image_src: str | None = None
    image_alt: str = ""


@dataclass
class TokenizedText:
    text: str  # the fragment with placeholders
    tokens: list[InlineToken]
    warnings: list[str] = field(default_factory=list)

    def tokens_in(self, fragment: str | None = None) -> list[InlineToken]:
        source = self.text if fragment is None else fragment
        return [self.tokens[int(number)] for number in PLACEHOLDER_RE.findall(source)]

    def citations_in(self, fragment: str | None = None) -> list[Citation]:
        return [token.citation for token in self.tokens_in(fragment) if token.citation is not None]

    def images(self) -> list[InlineToken]:
        return [token for token in self.tokens if token.image_src is not None]

    def plain(self, fragment: str | None = None) -> str:
        """Plain text: markers removed, link titles and code kept, formatting stripped."""
        text = self.text if fragment is None else fragment
        text = unescape_markdown(html.unescape(strip_emphasis(text))).replace("`", "")
        text = PLACEHOLDER_RE.sub(lambda match: self.tokens[int(match.group(1))].render, text)
        return tidy_whitespace(text)


# Every pattern `_Tokenizer.run` applies needs one of these (a bracket, a tag, a backtick, a URL's "://",
# or a placeholder's own character): most sentences and statements hold none, and go through as they are
_TOKEN_HINT_RE = re.compile("[\\[【［〔<`\ue000-\ue003]|://")


def tokenize_inline(text: str, known_indices: Iterable[int] = ()) -> TokenizedText:
    """Replace markers, links, images and code spans of `text` by placeholders."""
    if not _TOKEN_HINT_RE.search(text):
        return TokenizedText(text, [])
    return _Tokenizer(set(known_indices)).run(text)


class _Tokenizer:
    def __init__(self, known_indices: set[int]) -> None:
        self.known_indices = known_indices
        self.tokens: list[InlineToken] = []
        self.warnings: list[str] = []

    def run(self, text: str) -> TokenizedText:
        text = _CODE_SPAN_RE.sub(self._code_span, text)
        text = unescape_markers(text)
        text = _MARKDOWN_IMAGE_RE.sub(self._markdown_image, text)
        text = _HTML_IMAGE_RE.sub(self._html_image, text)
        text = _SUP_NUMBERS_RE.sub(self._sup_numbers, text)
        text = _SUP_TAG_RE.sub("", text)  # <sup>[3]</sup> is just [3]
        text = _HTML_NUMBERED_ANCHOR_RE.sub(self._numbered_anchor, text)
        text = HTML_LINK_RE.sub(self._html_link, text)
        text = MARKDOWN_LINK_RE.sub(self._markdown_link, text)
        text = AUTOLINK_RE.sub(self._autolink, text)
        # Remaining tags go before bare URLs so attribute values are never cited.
        text = strip_html_tags(text, block_break="\n")
        text = _NAMED_SOURCE_RE.sub(self._named_source, text)
        text = _DAGGER_RE.sub(self._dagger, text)
        text = _FOOTNOTE_RE.sub(self._footnote, text)
        text = _BRACKET_NUMBERS_RE.sub(self._bracket_numbers, text)
        text = BARE_URL_RE.sub(self._bare_url, text)
        return TokenizedText(text, self.tokens, self.warnings)

    # -- placeholders

    def _add(self, token: InlineToken, visible: bool) -> str:
        self.tokens.append(token)
        number = len(self.tokens) - 1
        return f"{WORD_OPEN}{number}{WORD_CLOSE}" if visible else f"{MARKER_OPEN}{number}{MARKER_CLOSE}"

    def _render(self, fragment: str) -> str:
        """Plain text of a fragment that may hold earlier placeholders (e.g. code in a link title)."""
        filled = PLACEHOLDER_RE.sub(lambda match: self.tokens[int(match.group(1))].render, fragment)
        return clean_inline_text(filled)

    def _numbered(self, literal: str, numbers: str, url: str | None = None) -> str:
        indices = parse_indices(numbers, self.known_indices, self.warnings)
        if not indices and url is None:
            return literal  # e.g. [2023]: a year, not a citation
        return self._add(InlineToken(literal, citation=Citation(marker=literal, indices=indices, url=url)), False)

    def _web_link(self, literal: str, url: str, title_fragment: str) -> str:
        title = self._render(title_fragment)
        if not title or is_web_url(title):
            return self._add(InlineToken(literal, citation=Citation(marker=literal, url=url)), False)
        citation = Citation(marker=literal, url=url, title=title)
        return self._add(InlineToken(literal, render=title, citation=citation), True)

    # -- one handler per pattern

    def _code_span(self, match: re.Match) -> str:
        code = match.group("code")
        content = code.strip() if code is not None else html.unescape(match.group("html")).strip()
        return self._add(InlineToken(match.group(0), render=content), True)

    def _markdown_image(self, match: re.Match) -> str:
        token = InlineToken(match.group(0), image_src=match.group("src"), image_alt=match.group("alt"))
        return self._add(token, False)

    def _html_image(self, match: re.Match) -> str:
        tag = match.group(0)
        token = InlineToken(tag, image_src=attribute(tag, "src"), image_alt=attribute(tag, "alt"))
        return self._add(token, False)

    def _numbered_anchor(self, match: re.Match) -> str:
        href = attribute(match.group("attrs"), "href")
        return self._numbered(match.group(0), match.group("numbers"), href if is_web_url(href) else None)

    def _html_link(self, match: re.Match) -> str:
        href = attribute(match.group("attrs"), "href")
        if is_web_url(href):
            return self._web_link(match.group(0), href.strip(), match.group("inner"))
        return match.group("inner")  # in-page or relative link: keep its words

    def _markdown_link(self, match: re.Match) -> str:
        literal, title, href = match.group(0), match.group("title"), match.group("href")
        numeric = _NUMERIC_LABEL_RE.fullmatch(title)
        if is_web_url(href):
            if numeric:
                return self._numbered(literal, numeric.group("numbers"), href)
            return self._web_link(literal, href, title)
        if numeric and href.startswith("#"):
            return self._numbered(literal, numeric.group("numbers"))
        return self._add(InlineToken(literal, render=self._render(title)), True)

    def _autolink(self, match: re.Match) -> str:
        literal = match.group(0)
        url = clean_url(match.group("url"))
        if not url:
            return literal
        return self._add(InlineToken(literal, citation=Citation(marker=literal, url=url)), False)

    def _named_source(self, match: re.Match) -> str:
        literal = match.group(0)
        if match.group("rag"):
            url, title = f"rag:{match.group('rag')}", ""
        else:
            kind, body = match.group("kind").lower(), match.group("body").strip()
            quoted = _QUOTED_RE.match(body)
            # `long_context: "title", chunk N` / `Doc: file.pdf, Page 5` / `Image: x.jpg`: the name
            # is the quoted part, else what comes before the first comma
            name = quoted.group("title") if quoted else body.split(",")[0].strip()
            if not name:
                return literal
            url, title = (f"doc:{name}", name) if kind == "long_context" else (f"attachment:{name}", name)
        return self._add(InlineToken(literal, citation=Citation(marker=literal, url=url, title=title)), False)

    def _sup_numbers(self, match: re.Match) -> str:
        before = match.string[max(0, match.start() - 12):match.start()]
        if _EXPONENT_BASE_RE.search(before):
            return match.group(0)  # left for _SUP_TAG_RE: the number stays in the text
        return self._numbered(match.group(0), match.group("numbers"))

    def _dagger(self, match: re.Match) -> str:
        return self._numbered(match.group(0), match.group("number"))

    def _footnote(self, match: re.Match) -> str:
        label = match.group("label")
        if label.isdigit():
            return self._numbered(match.group(0), label)
        return self._add(InlineToken(match.group(0)), False)  # named footnote: not a numbered source

    def _bracket_numbers(self, match: re.Match) -> str:
        return self._numbered(match.group(0), match.group("numbers"))

    def _bare_url(self, match: re.Match) -> str:
        raw = match.group(0)
        url = clean_url(raw)
        if not url:
            return raw
        token = self._add(InlineToken(url, citation=Citation(marker=url, url=url)), False)
        return token + raw[len(url):]
