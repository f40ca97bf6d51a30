"""Offline evidence matching: does a page's text back a claim? Deterministic, stdlib only.

How a claim is matched against a page
-------------------------------------
1. The page is split into sentences: sentence punctuation and newlines end them,
   hard-wrapped lines (PDF text) are rejoined first, run-ons are cut every
   ``MAX_SENTENCE_WORDS`` words. Passages are the sentences plus every window of two
   consecutive sentences in which each sentence adds claim words the other lacks.
2. Claim and page are reduced to content words: lowercase, English stop words, scale
   words and month names dropped, light suffix stripping (plural -s/-es/-ies, -ed/-ing,
   a final -e) so "batteries"/"battery" and "increased"/"increase" meet. Each claim word
   weighs ``1 + ln((n + 1) / (df + 1))`` over the page's n sentences: words the page
   never uses weigh most. Each claimed number or date weighs as much as an average word.
3. Numbers ("1,200", "1.2 million", "3bn", "45%", "$139", years) and dates ("2024-03-15",
   "March 2024", "15 March 2024", "March 15, 2024"; a date also yields its year) of the
   claim are compared with a passage's. Equal values (within the rounding of the less
   precise one) *confirm*. A claimed value without an equal one is paired with the
   passage's value of the same kind (percent, year, date, or a quantity with the same
   currency or counted words) sharing most context words (content words within
   ``ANCHOR_RADIUS`` tokens); the pair *conflicts* when they share a context word (same
   slot) or the claimed value is nowhere on the page. Other claimed values are looked up
   on the whole page (*found elsewhere*) or are *missing*.
4. Candidates are the ``RERANK_LIMIT`` best worded passages and the best worded
   ``VALUE_SENTENCE_LIMIT`` sentences holding a claimed value's digits. The chosen one
   states most of the claim: the weight of its claim words plus its confirmed values.
   Its *score* also counts conflicting values, which show it speaks of the same slot.
5. Named entities of the claim (capitalised word sequences not at sentence start,
   acronyms) are looked up on the whole page.

Chinese: full-width digits and signs read as ASCII first; 。！？ end sentences; a Chinese
"word" is a character bigram of a run of Han characters (runs cut at function characters
such as 的 and after the 年/月/日 of a date, `core/language.han_terms`), and a claimed value
weighs as much as ``CHINESE_TERMS_PER_WORD`` of them. Numbers may follow a character
directly, 万/亿/万亿 scale them ("949.5万" = 9,495,000), 元/美元/... name the currency,
"2023年3月15日" is a date, and the characters right after a quantity name what it counts;
the context of a value is the terms within ``ANCHOR_CHARS`` characters. Page length is
counted with two characters as a word.

Verdict rules, the first that applies wins
------------------------------------------
- unknown: the page has fewer than ``MIN_PAGE_WORDS`` words, or is a short error or bot
  wall page, or the claim has no content words.
- unsupported: the score is below ``MODERATE_OVERLAP`` (low overlap).
- partial: the score is below ``HIGH_OVERLAP`` (moderate overlap).
- contradicted: a claimed number or date conflicts with the passage.
- partial: some claimed number, date or entity is missing from the page.
- supported: every claimed value is confirmed or found elsewhere, every entity is on the page.
"""
from __future__ import annotations

import math
import re
import string
from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass, field, replace
from itertools import chain
from typing import Iterator, Sequence

from .language import HAN, fold_width, han_terms, has_han, word_count
from .run_caches import run_cache

HIGH_OVERLAP = 0.6
MODERATE_OVERLAP = 0.3
MIN_PAGE_WORDS = 20
ERROR_PAGE_MAX_WORDS = 80
EVIDENCE_MAX_CHARS = 400
MAX_SENTENCE_WORDS = 60
WRAPPED_LINE_MIN_CHARS = 60  # shorter lines are headings or list entries, not wrapped prose
RERANK_LIMIT = 8  # best worded passages whose values are compared
VALUE_SENTENCE_LIMIT = 4  # plus this many sentences holding a claimed value's digits
ANCHOR_RADIUS = 5  # tokens on each side of a number that tell which slot it fills
ANCHOR_CHARS = 8  # the same for Chinese, in characters (about five words)
CHINESE_TERMS_PER_WORD = 2  # a claimed value weighs as much as a word: in Chinese, two bigram terms
UNIT_WORDS = 3  # content words after a quantity that name what it counts
# Words placing a value before or after a change. Two values framed apart fill different slots
# ("290 before the refurbishment", "320 since"), so they never conflict; the words are stop words,
# so the context-word anchor alone cannot tell them apart.
_BEFORE_WORDS = frozenset("before prior until originally previously formerly earlier initially".split())
_AFTER_WORDS = frozenset("since after following afterwards subsequently later now currently".split())


@dataclass(frozen=True)
class EvidenceMatch:
    verdict: str  # supported | partial | unsupported | contradicted | unknown
    score: float  # weighted share of the claim's words and numbers the best passage covers, 0..1
    evidence: str  # the best passage, at most EVIDENCE_MAX_CHARS characters
    reason: str  # which rule decided, with its numbers


# --------------------------------------------------------------------------- words

_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8,
    "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}
_SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "mn": 1e6, "bn": 1e9}
_STOP_WORDS = frozenset(
    """
    a an the and or but if then than so of in on at to for from by with without about as
    into onto over under between among through during before after above below up down
    out off is are was were be been being am has have had having do does did doing will
    would shall should can could may might must it its this that these those there here
    their them they he she his her him we our us you your i me my which who whom whose
    what when where why how all any both each few more most other some such no nor not
    only own same too very also just per cent percent pct while whereas according around
    approximately roughly nearly almost via yet since until because said says
    """.split()
) | frozenset(_SCALES) | frozenset(_MONTHS)

# Splitting on translated whitespace is several times faster than a word regex on big pages.
_PUNCTUATION = (string.punctuation + "\u2018\u2019\u201c\u201d\u2013\u2014\u2026\u2022\u00b7\u00ab\u00bb"
                + "，。、；：？！（）《》〈〉【】「」『』")  # Chinese punctuation separates words too
_WORD_SEPARATORS = str.maketrans({char: " " for char in _PUNCTUATION})
# For positions around a number: words and numbers both count as tokens.
_TOKEN_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*|\d[\d,.]*")
_HAN_RUN_RE = re.compile(f"[{HAN}]+")


def _undouble(stem: str) -> str:
    """'plann' -> 'plan', but keep 'install', 'process', 'buzz'."""
    if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
        return stem[:-1]
    return stem


def _stem(word: str) -> str:
    if len(word) <= 2:
        return word
    if word.endswith(("ies", "ied")) and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("ing") and len(word) >= 6:
        word = _undouble(word[:-3])
    elif word.endswith("ed") and len(word) >= 5:
        word = _undouble(word[:-2])
    elif word.endswith(("sses", "xes", "zes", "ches", "shes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


@run_cache(maxsize=200_000)
def _content_stem(word: str) -> str:
    """The stem of a word, or '' for stop words, single letters and numbers."""
    lower = word.lower()
    if len(lower) < 2 or not lower[0].isalpha() or lower in _STOP_WORDS:
        return ""
    return _stem(lower)


def _words(text: str) -> list[str]:
    return text.translate(_WORD_SEPARATORS).split()


def _word_stems(word: str) -> list[str]:
    """The content stems of one space-separated word: its stem, or for a word holding Chinese, the
    Chinese terms (character bigrams) and the stems of the pieces between them."""
    if not has_han(word):
        stem = _content_stem(word)
        return [stem] if stem else []
    pieces = [stem for piece in _HAN_RUN_RE.split(word) if (stem := _content_stem(piece))]
    return han_terms(word) + pieces


@run_cache(maxsize=200_000)  # a report's and its pages' words repeat: each is stemmed once
def _stems_of(word: str) -> tuple[str, ...]:
    return tuple(_word_stems(word))


def _ordered_content_tokens(text: str) -> tuple[str, ...]:
    """Unique content stems in order of appearance."""
    return tuple(dict.fromkeys(chain.from_iterable(map(_stems_of, _words(text)))))


# ----------------------------------------------------------------------- sentences

# A newline after a long line, before a non-blank, non-list line, is a hard wrap (PDF text).
_WRAPPED_NEWLINE_RE = re.compile(
    rf"\n(?<=[^\n]{{{WRAPPED_LINE_MIN_CHARS}}}\n)(?![ \t]*(?:\n|[-*\u2022][ \t]|\d+[.)][ \t]))"
)
# A sentence ends at a (remaining) newline, or at . ! ? before a capital or digit.
# Every match starts with one of those four characters, which lets the scan run fast.
_SENTENCE_BREAK = r"[.!?\n](?:(?<=\n)\s*|[\"'\u201d\u2019)\]]?(?P<gap>\s+)(?=[\"'\u201c\u2018(\[]?[A-Z0-9]))"
_SENTENCE_BREAK_RE = re.compile(_SENTENCE_BREAK)
# Text with Chinese stops also ends a sentence after 。！？ (and its closing quotes); only such text
# pays for the longer pattern.
_CHINESE_STOPS = ("。", "！", "？")
_CHINESE_SENTENCE_BREAK_RE = re.compile(_SENTENCE_BREAK + r"|(?P<cjk>[。！？]+[\"'\u201d\u2019)\]）」』]*)[^\S\n]*")
_NON_SPACE_RE = re.compile(r"\S+")


def _unwrap(text: str) -> str:
    """Join hard-wrapped lines; same length as `text`, so offsets stay valid."""
    return _WRAPPED_NEWLINE_RE.sub(" ", text)


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    chinese = any(stop in text for stop in _CHINESE_STOPS)
    for match in (_CHINESE_SENTENCE_BREAK_RE if chinese else _SENTENCE_BREAK_RE).finditer(text):
        if chinese and match.group("cjk") is not None:  # the Chinese stop stays with its sentence
            end = match.end("cjk")
        else:
            end = match.start() if match.group("gap") is None else match.start("gap")
        spans.extend(_cut_run_on(text, start, end))
        start = match.end()
    spans.extend(_cut_run_on(text, start, len(text)))
    return spans


def _cut_run_on(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """A run-on (table dump, scraped wall) must not become one passage covering everything."""
    if end - start <= MAX_SENTENCE_WORDS * 5:  # too short to hold that many words: skip counting
        return [(start, end)] if end > start and not text[start:end].isspace() else []
    words = [match.span() for match in _NON_SPACE_RE.finditer(text, start, end)]
    return [(words[first][0], words[min(first + MAX_SENTENCE_WORDS, len(words)) - 1][1])
            for first in range(0, len(words), MAX_SENTENCE_WORDS)]


# ---------------------------------------------------------------- numbers and dates

_MONTH_ALTERNATION = "|".join(sorted((name.capitalize() for name in _MONTHS), key=len, reverse=True))
_NAMED_DATE_RE = re.compile(
    rf"\b(?:(?P<day1>\d{{1,2}})(?:st|nd|rd|th)?\s+)?(?P<month>{_MONTH_ALTERNATION})\.?"
    rf"\s+(?:(?P<day2>\d{{1,2}})(?:st|nd|rd|th)?,?\s+)?(?P<year>\d{{4}})\b"
)
_ISO_DATE_RE = re.compile(r"(?<![\d-])(?P<year>\d{4})-(?P<month>\d{2})(?:-(?P<day>\d{2}))?(?![\d-])")
_CJK_DATE_RE = re.compile(r"(?<!\d)(?P<year>\d{4})\s?年\s?(?P<month>\d{1,2})\s?月(?:\s?(?P<day>\d{1,2})\s?[日号])?")
# A number may follow a Chinese character directly ("达到949.5万辆"); 万 and 亿 scale it, 元 names yuan.
_NUMBER_RE = re.compile(
    rf"(?:(?<![\w.,])|(?<=[{HAN}]))(?<![A-Za-z]-)"
    r"(?:(?P<cur>US\$|\$|€|£|¥)\s?)?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?P<ordinal>st|nd|rd|th)?"
    r"(?:\s?(?P<scale>thousand|million|billion|trillion|bn|mn)\b|(?P<cjkscale>万亿|亿|万))?"
    r"(?:\s?(?P<pct>%|percent\b|per\s+cent\b|pct\b))?"
    r"(?:\s?(?P<curword>dollars|euros|pounds|yen|yuan|USD|EUR|GBP)\b|(?P<cjkcur>美元|欧元|日元|英镑|人民币|元))?"
)
_CJK_SCALES = {"万": 1e4, "亿": 1e8, "万亿": 1e12}
_CURRENCIES = {
    "$": "usd", "us$": "usd", "usd": "usd", "dollars": "usd",
    "€": "eur", "eur": "eur", "euros": "eur",
    "£": "gbp", "gbp": "gbp", "pounds": "gbp",
    "¥": "yen", "yen": "yen", "yuan": "cny",
    "美元": "usd", "欧元": "eur", "日元": "yen", "英镑": "gbp", "人民币": "cny", "元": "cny",
}
_YEAR_RANGE = range(1800, 2101)
_NO_UNIT: frozenset[str] = frozenset()


@dataclass(frozen=True)
class _Mention:
    """One number or date as written. `value` is a float, or (year, month, day) for dates."""

    family: str  # percent | year | date | quantity
    value: float | tuple[int, int, int | None]
    precision: float  # value of the last written digit: "1.2 million" -> 100000
    unit: frozenset[str]  # a quantity's currency code, or the content words following it
    text: str
    start: int
    end: int
    anchor: frozenset[str] = field(default=frozenset(), compare=False)  # context words
    frame: str = field(default="", compare=False)  # "before" | "after" | "": the time it speaks of


def _date_mentions(text: str) -> list[_Mention]:
    mentions = []
    for match in _NAMED_DATE_RE.finditer(text):
        day = match.group("day1") or match.group("day2")
        month = _MONTHS[match.group("month").lower()]
        mentions.append(_date(match, int(match.group("year")), month, int(day) if day else None))
    for match in _ISO_DATE_RE.finditer(text):
        month, day = int(match.group("month")), match.group("day")
        if 1 <= month <= 12:  # "2023-24" is a fiscal year, not a month
            mentions.append(_date(match, int(match.group("year")), month, int(day) if day else None))
    for match in _CJK_DATE_RE.finditer(text):  # 2023年3月15日
        month, day = int(match.group("month")), match.group("day")
        if 1 <= month <= 12:
            mentions.append(_date(match, int(match.group("year")), month, int(day) if day else None))
    return [mention for mention in mentions if mention.value[0] in _YEAR_RANGE]


def _date(match: re.Match, year: int, month: int, day: int | None) -> _Mention:
    return _Mention("date", (year, month, day), 1.0, _NO_UNIT, match.group(), match.start(), match.end())


def _number_mention(text: str, match: re.Match) -> _Mention | None:
    digits, scale_word, cjk_scale = match.group("num"), match.group("scale"), match.group("cjkscale")
    after = text[match.end("num"):match.end("num") + 1]
    glued_letter = after.isalpha() and not has_han(after)  # "949.5万辆", "2023年" are quantities
    if glued_letter and not (match.group("ordinal") or scale_word):
        return None  # "5G", "3D", "4680cells" are names, not quantities
    plain = digits.replace(",", "")
    decimals = len(plain.partition(".")[2])
    scale = _SCALES[scale_word.lower()] if scale_word else _CJK_SCALES[cjk_scale] if cjk_scale else 1.0
    value, precision = float(plain) * scale, 10.0 ** -decimals * scale
    currency = match.group("cur") or match.group("curword") or match.group("cjkcur")
    span = (match.group(), match.start(), match.end())
    if match.group("pct"):
        return _Mention("percent", value, precision, _NO_UNIT, *span)
    if currency:
        currency_code = _CURRENCIES.get(currency.lower(), currency)
        return _Mention("quantity", value, precision, frozenset([currency_code]), *span)
    if digits.isdigit() and len(digits) == 4 and not (scale_word or match.group("ordinal")) and int(digits) in _YEAR_RANGE:
        return _Mention("year", value, 1.0, _NO_UNIT, *span)
    if has_han(text[match.end():match.end() + 1]):
        return _Mention("quantity", value, precision, _chinese_unit_after(text, match.end()), *span)
    return _Mention("quantity", value, precision, _unit_after(text, match.end()), *span)


_PHRASE_END_RE = re.compile(r"[,;:()]|\.\s")


def _unit_after(text: str, position: int) -> frozenset[str]:
    """Content words right after a quantity, up to the phrase's end: "120 new electric buses"."""
    phrase = _PHRASE_END_RE.split(text[position:position + 40], maxsplit=1)[0]
    return frozenset(stem for word in _words(phrase)[:UNIT_WORDS] if (stem := _content_stem(word)))


def _chinese_unit_after(text: str, position: int) -> frozenset[str]:
    """The measure word or unit right after a quantity, as its first character and first two
    ("辆" of "949.5万辆", "千瓦" of "120万千瓦"): Chinese writes no space between them."""
    run = _HAN_RUN_RE.match(text, position)
    word = run.group()[:2] if run else ""
    return frozenset({word[:1], word}) - {""}


def _find_mentions(text: str) -> list[_Mention]:
    """All dates, the years they contain and all other numbers of a text, in text order."""
    dates = _date_mentions(text)
    masked = text
    for date in dates:  # so "2024-03-15" does not also read as the numbers 2024, 03 and 15
        masked = masked[:date.start] + " " * (date.end - date.start) + masked[date.end:]
    years = [_Mention("year", float(date.value[0]), 1.0, _NO_UNIT, date.text, date.start, date.end)
             for date in dates]
    numbers = [mention for match in _NUMBER_RE.finditer(masked) if (mention := _number_mention(masked, match))]
    return sorted(dates + years + numbers, key=lambda mention: (mention.start, mention.family))


def _mentions_with_context(text: str) -> list[_Mention]:
    """Mentions of one sentence (or claim), each with the content words around it."""
    mentions = _find_mentions(text)
    if not mentions:
        return []
    tokens = list(_TOKEN_RE.finditer(text))
    chinese = has_han(text)
    starts = [token.start() for token in tokens]
    stems = [_content_stem(token.group()) for token in tokens]
    anchored = []
    for mention in mentions:
        first = bisect_left(starts, mention.start)
        after = bisect_left(starts, mention.end)  # tokens[first:after] are the mention itself
        around = stems[max(0, first - ANCHOR_RADIUS):first] + stems[after:after + ANCHOR_RADIUS]
        if chinese:  # the Chinese terms within ANCHOR_CHARS characters on each side
            around += han_terms(text[max(0, mention.start - ANCHOR_CHARS):mention.start])
            around += han_terms(text[mention.end:mention.end + ANCHOR_CHARS])
        anchored.append(replace(mention, anchor=frozenset(stem for stem in around if stem),
                                frame=_time_frame(tokens, first, after)))
    return anchored


def _time_frame(tokens: list[re.Match], first: int, after: int) -> str:
    """The frame word nearest the value in its sentence decides; equally near rivals leave none."""
    nearest: dict[str, int] = {}
    for index, token in enumerate(tokens):
        word = token.group().lower()
        frame = "before" if word in _BEFORE_WORDS else "after" if word in _AFTER_WORDS else ""
        if frame:
            distance = first - index if index < first else index - after + 1
            nearest[frame] = min(distance, nearest.get(frame, distance))
    if len(nearest) == 2 and nearest["before"] == nearest["after"]:
        return ""
    return min(nearest, key=nearest.get, default="")


def _agrees(claimed: _Mention, found: _Mention) -> bool:
    """`found` states `claimed`: same kind and value (a date at least as precise)."""
    if claimed.family != found.family:
        return False
    if claimed.family == "date":
        return all(want is None or want == got for want, got in zip(claimed.value, found.value))
    tolerance = 0.5 * max(claimed.precision, found.precision)
    return abs(claimed.value - found.value) <= tolerance * (1 + 1e-9)


def _conflicts(claimed: _Mention, found: _Mention) -> bool:
    """`found` gives a different value of the very same kind (percent vs percent, ...)."""
    if claimed.family != found.family:
        return False
    if claimed.frame and found.frame and claimed.frame != found.frame:
        return False  # one speaks of before a change, the other of after it
    if claimed.family == "date":
        return any(want is not None and got is not None and want != got
                   for want, got in zip(claimed.value, found.value))
    if claimed.family == "quantity" and not (claimed.unit == found.unit or claimed.unit & found.unit):
        return False  # "150 buses" vs "120 new electric buses" dispute; "150 buses" vs "$120" do not
    return not _agrees(claimed, found)


@run_cache(maxsize=1024)
def _leading_digits_pattern(digits: str) -> re.Pattern:
    """Finds where a number starting with these digits may be written: '12' in '1,200,000'."""
    return re.compile("[.,]?".join(digits))


def _leading_digits(mention: _Mention) -> str:
    """The significant digits a page must contain to possibly state this value."""
    if mention.family in ("year", "date"):
        return str(int(mention.value[0] if mention.family == "date" else mention.value))
    written = f"{mention.value:.15g}".partition("e")[0].replace(".", "").lstrip("0")
    return written[:2] or "0"  # two digits survive rescaling and rounding ("1.19 million")


# ------------------------------------------------------------------------ entities

_ENTITY_RE = re.compile(
    r"(?<![\w&'\u2019.-])[A-Z][\w&'\u2019.-]*"
    r"(?:\s+(?:(?:of|for|and|de|du|la|von|van)\s+)?[A-Z][\w&'\u2019.-]*)*"
)
_ACRONYM_RE = re.compile(r"[A-Z][A-Z0-9&]+s?")
_SENTENCE_START_RE = re.compile(r"(?:^|[.!?:;\n])\s*[\"'\u201c(\[]?$")


def _clean_entity_word(word: str) -> str:
    word = re.sub(r"['\u2019]s$", "", word.rstrip(".,;:'\u2019"))
    return word[:-1] if _ACRONYM_RE.fullmatch(word) and word.endswith("s") else word  # "EVs" -> "EV"


def _claim_entities(claim: str) -> list[str]:
    entities = []
    for match in _ENTITY_RE.finditer(claim):
        at_sentence_start = _SENTENCE_START_RE.search(claim, 0, match.start()) is not None
        for first_index, words in _name_groups(match.group().split()):
            lone_first_word = at_sentence_start and first_index == 0 and len(words) == 1
            if lone_first_word and not _ACRONYM_RE.fullmatch(words[0]):
                continue  # a capitalised first word is grammar, not a name
            entities.append(" ".join(words))
    return list(dict.fromkeys(entities))


def _name_groups(raw_words: list[str]) -> list[tuple[int, list[str]]]:
    """Split a capitalised run into names, each as (index of its first word, words).

    Acronyms stand alone, an abbreviation's dot ("U.S.") ends a name, capitalised stop words
    and months ("The", "In", "March") are no names; lowercase connectors stay inside ("Bank of America").
    """
    groups: list[tuple[int, list[str]]] = []
    open_group = False
    for index, raw in enumerate(raw_words):
        word = _clean_entity_word(raw)
        if word.islower():
            if open_group:
                groups[-1][1].append(word)
            continue
        if not word or word.lower() in _STOP_WORDS:
            open_group = False
            continue
        acronym = _ACRONYM_RE.fullmatch(word) is not None
        if open_group and not acronym:
            groups[-1][1].append(word)
        else:
            groups.append((index, [word]))
        open_group = not acronym and not raw.endswith(".")
    for _, words in groups:
        while words[-1].islower():  # a connector left dangling by a split
            words.pop()
    return groups


# --------------------------------------------------------------------------- page


class _Page:
    """A page split into sentences, with per-sentence values and page-wide lookups on demand."""

    def __init__(self, text: str) -> None:
        self.text = _unwrap(text)
        self.spans = _sentence_spans(self.text)
        self._starts = [start for start, _ in self.spans]
        self._values: dict[int, list[_Mention]] = {}
        self._states: dict[_Mention, bool] = {}
        self._lower: str | None = None

    def sentence(self, index: int) -> str:
        start, end = self.spans[index]
        return " ".join(self.text[start:end].split())

    def passage(self, first: int, last: int) -> str:
        return " ".join(self.sentence(index) for index in range(first, last + 1))

    def values(self, first: int, last: int) -> list[_Mention]:
        found = []
        for index in range(first, last + 1):
            if index not in self._values:
                self._values[index] = _mentions_with_context(self.sentence(index))
            found.extend(self._values[index])
        return found

    def states(self, claimed: _Mention) -> bool:
        """Some sentence of the page gives this value (only sentences with its digits are parsed)."""
        if claimed not in self._states:
            self._states[claimed] = any(
                _agrees(claimed, found) for index in self.sentences_with_digits(_leading_digits(claimed))
                for found in self.values(index, index)
            )
        return self._states[claimed]

    def sentences_with_digits(self, digits: str) -> Iterator[int]:
        """Sentences where a number starting with these digits may be written."""
        seen = set()
        for match in _leading_digits_pattern(digits).finditer(self.text):
            if match.start() and self.text[match.start() - 1].isdigit():
                continue  # the middle of a longer number
            index = bisect_right(self._starts, match.start()) - 1
            if index >= 0 and index not in seen:
                seen.add(index)
                yield index

    def names(self, entity: str) -> bool:
        """The entity occurs as whole words, in any case, possibly with a possessive or plural s."""
        if self._lower is None:
            self._lower = self.text.lower()
        # The pattern starts with a literal so the scan is fast; the left word edge is checked here.
        for match in _entity_pattern(entity.lower()).finditer(self._lower):
            if match.start() == 0 or not self._lower[match.start() - 1].isalnum():
                return True
        return False


@run_cache(maxsize=64)  # a source is matched against each claim cited to it: its sentences are read once
def _read_page(text: str) -> _Page:
    return _Page(text)


@run_cache(maxsize=1024)
def _entity_pattern(lower_entity: str) -> re.Pattern:
    words = r"\s+".join(re.escape(word) for word in lower_entity.split())
    return re.compile(rf"{words}(?:['\u2019]?s)?(?!\w)")


# ----------------------------------------------------------------------- passages


@dataclass(frozen=True)
class _Passage:
    first: int  # index of its first sentence
    last: int  # index of its last sentence (inclusive)
    words_covered: float  # weight of the claim words it contains
    length: int  # characters; of two equal passages the shorter is the sharper quote


@dataclass(frozen=True)
class _ClaimWeights:
    words: dict[str, float]  # claim word -> rarity on this page
    per_value: float  # one claimed number or date weighs as much as an average claim word
    total: float  # all claim words and all claimed values


def _claim_weights(hits: Sequence[frozenset[str]], claim_tokens: tuple[str, ...], value_count: int
                   ) -> _ClaimWeights:
    document_frequency = Counter(token for found in hits for token in found)
    words = {token: 1.0 + math.log((len(hits) + 1) / (document_frequency[token] + 1))
             for token in claim_tokens}
    word_total = math.fsum(words.values())
    per_value = word_total / len(words)
    if any(has_han(token) for token in claim_tokens):  # a Chinese word gives about two bigram terms
        per_value *= CHINESE_TERMS_PER_WORD
    return _ClaimWeights(words, per_value, word_total + per_value * value_count)


def _claim_words_per_sentence(page: _Page, claim_set: frozenset[str]) -> list[frozenset[str]]:
    """For each sentence, the claim stems it contains; each distinct page word is stemmed once."""
    separated = page.text.translate(_WORD_SEPARATORS)  # one char for one char: spans still fit
    sentence_words = [set(separated[start:end].split()) for start, end in page.spans]
    vocabulary = set().union(*sentence_words)
    no_hits: frozenset[str] = frozenset()
    if any(has_han(token) for token in claim_set):  # a Chinese word gives several terms
        forms = {word: found for word in vocabulary if (found := claim_set.intersection(_word_stems(word)))}
        return [frozenset().union(*map(forms.__getitem__, common))
                if (common := words.intersection(forms)) else no_hits
                for words in sentence_words]
    claim_forms = {word: stem for word in vocabulary if (stem := _content_stem(word)) in claim_set}
    return [frozenset(map(claim_forms.__getitem__, common))
            if (common := words.intersection(claim_forms)) else no_hits
            for words in sentence_words]


def _candidate_passages(page: _Page, hits: Sequence[frozenset[str]], weights: _ClaimWeights,
                        claimed: Sequence[_Mention]) -> list[_Passage]:
    """The passages worth comparing values on: the best worded ones, and the best worded
    sentences holding the digits of a claimed value."""
    covered_by: dict[frozenset[str], float] = {}  # sentences often hit the same claim words
    lengths = [end - start for start, end in page.spans]

    def passage(first: int, last: int, found: frozenset[str]) -> _Passage:
        if found not in covered_by:
            # fsum is exact, so the iteration order of the set cannot change the score.
            covered_by[found] = math.fsum(weights.words[token] for token in found)
        return _Passage(first, last, covered_by[found], sum(lengths[first:last + 1]))

    def best(passages: list[_Passage], limit: int) -> list[_Passage]:
        return sorted(passages, key=lambda p: (-p.words_covered, p.length, p.first))[:limit]

    worded = []
    for index, found in enumerate(hits):
        if found:
            worded.append(passage(index, index, found))
        if index + 1 < len(hits):
            pair = found | hits[index + 1]
            # A window only earns its place when each sentence adds claim words the other lacks.
            if pair != found and pair != hits[index + 1]:
                worded.append(passage(index, index + 1, pair))
    with_values = {index for value in claimed
                   for index in page.sentences_with_digits(_leading_digits(value)) if hits[index]}
    numbered = [passage(index, index, hits[index]) for index in sorted(with_values)]
    return list(dict.fromkeys(best(worded, RERANK_LIMIT) + best(numbered, VALUE_SENTENCE_LIMIT)))


@dataclass
class _Comparison:
    confirmed_in_passage: int = 0
    confirmed_on_page: int = 0
    conflicts: list[tuple[_Mention, _Mention]] = field(default_factory=list)  # (claimed, found)
    missing: list[_Mention] = field(default_factory=list)


def _compare_values(claimed: Sequence[_Mention], found: Sequence[_Mention], page: _Page) -> _Comparison:
    comparison = _Comparison()
    free = list(range(len(found)))  # passage values not yet used to confirm a claimed value
    unconfirmed = []
    # Equal values first: "up from 14% in 2022" confirms "14% in 2022" even if 18% sits closer.
    for value in claimed:
        equal = [index for index in free if _agrees(value, found[index])]
        if equal:
            free.remove(_most_shared_context(value, found, equal))
            comparison.confirmed_in_passage += 1
        else:
            unconfirmed.append(value)
    for value in unconfirmed:
        rivals = [index for index in free if _conflicts(value, found[index])]
        rival = found[_most_shared_context(value, found, rivals)] if rivals else None
        on_page = page.states(value)
        if rival is not None and (value.anchor & rival.anchor or not on_page):
            comparison.conflicts.append((value, rival))
        elif on_page:
            comparison.confirmed_on_page += 1
        else:
            comparison.missing.append(value)
    return comparison


def _most_shared_context(value: _Mention, found: Sequence[_Mention], indices: list[int]) -> int:
    """The passage value whose context words overlap the claimed value's most (first on ties)."""
    return max(indices, key=lambda index: len(value.anchor & found[index].anchor))


@dataclass(frozen=True)
class _Scored:
    passage: _Passage
    comparison: _Comparison
    support: float  # share of the claim's words and values the passage states
    topic: float  # the same, also counting values it states differently: it speaks of the same slot


def _score(passage: _Passage, comparison: _Comparison, weights: _ClaimWeights) -> _Scored:
    stated = passage.words_covered + weights.per_value * comparison.confirmed_in_passage
    disputed = weights.per_value * len(comparison.conflicts)
    return _Scored(passage, comparison, round(stated / weights.total, 6),
                   round((stated + disputed) / weights.total, 6))


def _choose_passage(page: _Page, candidates: Sequence[_Passage], claimed: Sequence[_Mention],
                    weights: _ClaimWeights) -> _Scored:
    """The passage stating most of the claim; a passage that disputes values ranks by what it confirms,
    so a page giving the claimed figure for the right year beats a similar sentence about another year."""
    scored = [_score(passage, _compare_values(claimed, page.values(passage.first, passage.last), page), weights)
              for passage in candidates]
    return max(scored, key=lambda s: (s.support, s.topic, -s.passage.length, -s.passage.first))


def _trim_evidence(passage: str, claim_tokens: frozenset[str]) -> str:
    """The EVIDENCE_MAX_CHARS-long stretch of the passage holding most claim words."""
    if len(passage) <= EVIDENCE_MAX_CHARS:
        return passage
    budget = EVIDENCE_MAX_CHARS - 2  # room for the two ellipses
    words = [(match.start(), match.end(), _content_stem(match.group().strip(_PUNCTUATION)) in claim_tokens)
             for match in _NON_SPACE_RE.finditer(passage)]
    best = (-1, 0, 0)  # (claim words inside, first word, end word)
    end, hits = 0, 0  # words[first:end] is the current stretch, `hits` its claim words
    for first, (start, _, is_hit) in enumerate(words):
        if end < first:
            end, hits = first, 0
        while end < len(words) and words[end][1] - start <= budget:
            hits += words[end][2]
            end += 1
        if end > first:
            if hits > best[0]:
                best = (hits, first, end)
            hits -= is_hit
    _, first, end = best
    if end <= first:  # a single word longer than the budget
        return passage[:budget] + "…"
    text = passage[words[first][0]:words[end - 1][1]]
    return ("…" if first > 0 else "") + text + ("…" if end < len(words) else "")


# ------------------------------------------------------------------------ verdict

_ERROR_PAGE_RE = re.compile(
    r"access denied|enable javascript|are you a robot|verify you are (?:a )?human|captcha|"
    r"page not found|404 not found|403 forbidden|sign in to continue|subscribe to continue|"
    r"访问被拒绝|验证码|人机验证|页面不存在|请先登录|登录后查看",
    re.IGNORECASE,
)
_CITATION_MARKER_RE = re.compile(r"\[\d+(?:\s*[-\u2013,]\s*\d+)*\]|【\d+(?:\s*[-\u2013,，、]\s*\d+)*】|https?://\S+")


def match_claim(claim: str, page_text: str) -> EvidenceMatch:
    """Judge whether `page_text` supports `claim`; see the module docstring for the rules."""
    page_text = fold_width(page_text or "")  # full-width digits and signs read as ASCII
    if unreadable := _unreadable_page_reason(page_text):
        return EvidenceMatch("unknown", 0.0, "", unreadable)
    claim_text = _CITATION_MARKER_RE.sub(" ", fold_width(claim or ""))  # "[3]" is a marker, not the number 3
    claim_tokens = _ordered_content_tokens(claim_text)
    if not claim_tokens:
        return EvidenceMatch("unknown", 0.0, "", "Claim has no content words to look for.")

    page = _read_page(page_text)
    hits = _claim_words_per_sentence(page, frozenset(claim_tokens))
    claimed = _mentions_with_context(claim_text)
    weights = _claim_weights(hits, claim_tokens, len(claimed))
    candidates = _candidate_passages(page, hits, weights, claimed)
    if not candidates:
        return EvidenceMatch("unsupported", 0.0, "", "No passage shares a content word with the claim.")
    best = _choose_passage(page, candidates, claimed, weights)
    evidence = _trim_evidence(page.passage(best.passage.first, best.passage.last), frozenset(claim_tokens))
    if best.topic < MODERATE_OVERLAP:
        return EvidenceMatch("unsupported", best.topic, evidence,
                             f"Best passage covers {best.topic:.0%} of the claim's words and numbers "
                             f"(< {MODERATE_OVERLAP:.0%}).")
    missing_names = [name for name in _claim_entities(claim_text) if not page.names(name)]
    verdict, reason = _decide(best.topic, best.comparison, missing_names)
    return EvidenceMatch(verdict, best.topic, evidence, reason)


def _unreadable_page_reason(page_text: str) -> str:
    # split() with a limit counts words only as far as the rules need.
    words = len(page_text.split(None, ERROR_PAGE_MAX_WORDS))
    if words < ERROR_PAGE_MAX_WORDS and has_han(page_text):  # Chinese puts no spaces between words
        words = min(ERROR_PAGE_MAX_WORDS, word_count(page_text))
    if words < MIN_PAGE_WORDS:
        return f"Page has {words} words (< {MIN_PAGE_WORDS}), too little text to judge."
    if words < ERROR_PAGE_MAX_WORDS and (wall := _ERROR_PAGE_RE.search(page_text)):
        return f"Page of {words} words looks like an error or bot wall ({wall.group()!r})."
    return ""


def _decide(score: float, comparison: _Comparison, missing_names: list[str]) -> tuple[str, str]:
    coverage = f"Passage covers {score:.0%} of the claim's words and numbers"
    if score < HIGH_OVERLAP:
        return "partial", f"{coverage} (between {MODERATE_OVERLAP:.0%} and {HIGH_OVERLAP:.0%})."
    if comparison.conflicts:
        claimed, found = comparison.conflicts[0]
        return "contradicted", f"{coverage} but says {found.text!r} where the claim says {claimed.text!r}."
    missing = [value.text for value in comparison.missing] + missing_names
    if missing:
        return "partial", f"{coverage} but the page lacks {', '.join(repr(item) for item in missing)}."
    checked = comparison.confirmed_in_passage + comparison.confirmed_on_page
    values = f"all {checked} claimed numbers/dates" if checked else "no numbers/dates to check"
    return "supported", f"{coverage} (>= {HIGH_OVERLAP:.0%}); {values}, all claimed names are on the page."


# ------------------------------------------------------------- for other readers


@run_cache(maxsize=4096)  # an extracted statement is read for its words twice (empty? grounded?)
def content_tokens(text: str) -> tuple[str, ...]:
    """The content words of `text` as the matcher reads them (citation markers and URLs left out,
    full-width folded, Chinese as character pairs), unique, in order of appearance."""
    return _ordered_content_tokens(_CITATION_MARKER_RE.sub(" ", fold_width(text or "")))


def unstated_values(statement: str, text: str) -> list[str]:
    """The numbers and dates of `statement`, as written there, that `text` does not state: for telling
    whether a restatement of `text` invented a figure. A value may be rounded ("1.2 million" for
    "1,234,567") but not made more precise; a date needs the same year, month and day where the
    statement gives them; other values compare by value whatever their kind ("45%" = "45 percent")."""
    found = _stated_mentions(text or "")
    missing = [value.text for value in _stated_mentions(statement or "")
               if not any(_restates(value, given) for given in found)]
    return list(dict.fromkeys(missing))


@run_cache(maxsize=4096)  # a unit's text is asked about once for each statement made of it
def _stated_mentions(text: str) -> tuple[_Mention, ...]:
    return tuple(_find_mentions(_CITATION_MARKER_RE.sub(" ", fold_width(text))))


def _restates(value: _Mention, given: _Mention) -> bool:
    if value.family == "date" or given.family == "date":
        return value.family == given.family and _agrees(value, given)
    return abs(value.value - given.value) <= 0.5 * value.precision * (1 + 1e-9)
