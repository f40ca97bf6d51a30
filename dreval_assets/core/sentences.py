"""Sentence splitting and plain-text cleanup for report prose (no nltk).

The splitter runs on text whose citation markers, links and code spans were
already replaced by placeholders (see `citation_markers.tokenize_inline`), so it
never cuts through a marker or a URL. A marker placeholder right after a full
stop stays with the sentence it follows: "Sales rose 5%.[3] Costs fell." gives
"Sales rose 5%.[3]" and "Costs fell.".
"""
from __future__ import annotations

import html
import re

# Placeholders are private-use characters around a token number.
# MARKER_* wraps an invisible citation (numbered marker, bare URL, image): it
# sticks to the preceding sentence. WORD_* wraps visible inline content (link
# title, code span): it reads like a word.
MARKER_OPEN, MARKER_CLOSE = "\ue000", "\ue001"
WORD_OPEN, WORD_CLOSE = "\ue002", "\ue003"
PLACEHOLDER_RE = re.compile("[\ue000\ue002](\\d+)[\ue001\ue003]")

# Case-sensitive: "No. 5" is an abbreviation, "the answer is no." is not.
ABBREVIATIONS = frozenset(
    """
    Dr Mr Mrs Ms Prof Sr Jr St Mt Ave Gen Gov Sen Rep Dept Inc Ltd Corp Co Op
    Fig Figs fig figs No Nos Vol Vols vol Eq Eqs eq Ref Refs Sec Ch Tab Ed Eds ed eds
    vs Vs al approx cf ca viz est Est pp p
    Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec
    """.split()
)
# Dotted abbreviations and acronyms whose last dot is not a sentence end: e.g. i.e. U.S. Ph.D.
_DOTTED_ABBREVIATION_RE = re.compile(r"(?:[A-Za-z]{1,2}\.)+[A-Za-z]{1,2}")
_INITIAL_RE = re.compile(r"[A-Z]")

_CJK_STOPS = "。！？"
# A run of terminators, then closing quotes/brackets/emphasis and citation markers.
_BOUNDARY_RE = re.compile(
    r"(?P<stop>[。！？]+|[.!?…]+)"
    r"(?P<tail>(?:[\"'”’»)\]*_]|\s*\ue000\d+\ue001)*)"
)
_ORPHAN_RE = re.compile(r"(?:\s|\ue000\d+\ue001|[.,;:!?。，；：！？])+")
_LEADING_PUNCT = "([{\"'“‘*_"
_NEXT_VISIBLE_RE = re.compile(r"\S")


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences. A newline is a hard break (block-level HTML)."""
    sentences: list[str] = []
    for chunk in text.split("\n"):
        sentences.extend(_split_chunk(chunk))
    return _attach_orphan_markers(sentences)


def _split_chunk(chunk: str) -> list[str]:
    pieces: list[str] = []
    start = 0
    for match in _BOUNDARY_RE.finditer(chunk):
        if _is_sentence_end(chunk, start, match):
            pieces.append(chunk[start:match.end()].strip())
            start = match.end()
    pieces.append(chunk[start:].strip())
    return [piece for piece in pieces if piece]


def _is_sentence_end(chunk: str, start: int, match: re.Match) -> bool:
    stop = match.group("stop")
    if stop[0] in _CJK_STOPS:
        return True
    end = match.end()
    if end == len(chunk):
        return True
    if not chunk[end].isspace():  # 3.5, v1.2.3, e.g.,
        return False
    following = _NEXT_VISIBLE_RE.search(chunk, end)  # indexes, not slices: long chunks stay linear
    if following is None:
        return True
    if following.group(0).islower():  # "approx. twice", "Yahoo! reported"
        return False
    return not (stop == "." and _ends_with_abbreviation(chunk[max(start, match.start() - 40):match.start()]))


def _ends_with_abbreviation(before: str) -> bool:
    words = before.split()
    if not words or before[-1:].isspace():
        return False
    word = words[-1].lstrip(_LEADING_PUNCT)
    return (
        word in ABBREVIATIONS
        or _DOTTED_ABBREVIATION_RE.fullmatch(word) is not None
        or _INITIAL_RE.fullmatch(word) is not None
    )


def _attach_orphan_markers(sentences: list[str]) -> list[str]:
    """A 'sentence' made only of markers belongs to the sentence before it."""
    merged: list[str] = []
    for sentence in sentences:
        if merged and MARKER_OPEN in sentence and _ORPHAN_RE.fullmatch(sentence):
            merged[-1] = f"{merged[-1]} {sentence}"
        else:
            merged.append(sentence)
    return merged


# ---------------------------------------------------------------- cleanup

_TAG_RE = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)(?:\s[^<>]*)?/?>")
_BLOCK_TAGS = frozenset(
    "p div br hr li ul ol dl dt dd tr table thead tbody tfoot td th caption section article "
    "header footer nav aside blockquote figure figcaption h1 h2 h3 h4 h5 h6 pre details summary".split()
)
_MARKDOWN_ESCAPE_RE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>~])")


def strip_html_tags(text: str, block_break: str = " ") -> str:
    """Drop HTML tags; block-level tags become `block_break` so words do not glue."""
    def replace(match: re.Match) -> str:
        return block_break if match.group(1).lower() in _BLOCK_TAGS else ""

    return _TAG_RE.sub(replace, text)


_STRONG_RE = re.compile(r"(?<!\\)(?:\*\*|__|~~)")  # "\*" is an escaped, literal star
_STAR_RE = re.compile(r"(?<![\w*\\])\*(?=\S)|(?<=[^\s\\])\*(?![\w*])")
_UNDERSCORE_RE = re.compile(r"(?<![\w\\])_(?=\S)|(?<=[^\s\\])_(?!\w)")


def strip_emphasis(text: str) -> str:
    """Remove Markdown emphasis markers but keep `2 * 3` and snake_case intact."""
    # each pattern only where its character occurs: their look-behinds are tried at every position
    if "**" in text or "__" in text or "~~" in text:
        text = _STRONG_RE.sub("", text)
    if "*" in text:
        text = _STAR_RE.sub("", text)
    return _UNDERSCORE_RE.sub("", text) if "_" in text else text


def unescape_markdown(text: str) -> str:
    return _MARKDOWN_ESCAPE_RE.sub(r"\1", text) if "\\" in text else text


_EMPTIED_PARENTHESES_RE = re.compile(
    r"[(（]\s*(?:(?:see(?: also)?|source|sources|via|cf\.|from)\s*:?\s*)?[,;]?\s*[)）]", re.I
)


_SPACE_BEFORE_CLOSING_RE = re.compile(r"\s+([,.;:!?%)\]}。，；：！？、）])")
_SPACE_AFTER_OPENING_RE = re.compile(r"([(\[{（])\s+")
_REPEATED_COMMAS_RE = re.compile(r",(?:\s*,)+")
_PUNCTUATION_BEFORE_STOP_RE = re.compile(r"[,;]+(?=[.!?。！？])")


def tidy_whitespace(text: str) -> str:
    """Collapse whitespace and repair the gaps left where markers were removed."""
    text = " ".join(text.split())
    # "(see [3])" or "(source: https://...)" emptied of their marker
    if "(" in text or "（" in text:
        text = _EMPTIED_PARENTHESES_RE.sub("", text)
    text = _SPACE_BEFORE_CLOSING_RE.sub(r"\1", text)
    text = _SPACE_AFTER_OPENING_RE.sub(r"\1", text)
    if "," in text or ";" in text:
        text = _REPEATED_COMMAS_RE.sub(",", text)  # "[1], [2], and" -> ", and"
        text = _PUNCTUATION_BEFORE_STOP_RE.sub("", text)
    return " ".join(text.split())


def clean_inline_text(text: str) -> str:
    """Markdown/HTML fragment -> plain text (no tags, emphasis, escapes or backticks)."""
    text = strip_html_tags(strip_emphasis(text))
    text = unescape_markdown(html.unescape(text)).replace("`", "")
    return tidy_whitespace(text)


def has_words(text: str) -> bool:
    return re.search(r"[^\W_]", text) is not None
