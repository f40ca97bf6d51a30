"""Which language a text is in, told by its script, and the pieces the offline judge needs to read
Chinese (full-width folding, character terms, a word count that counts characters). Stdlib only.

Detection (`detect_language`) counts the letters of each script in the text (URLs left out; long
texts by their first `SAMPLE_CHARS` characters). A CJK character (Han, kana, Hangul) weighs
`CJK_LETTER_WEIGHT` letters: one carries about as much text as three Latin letters. The heaviest
script names the language:
- Han: Chinese (zh), unless kana make up at least `KANA_SHARE` of Han and kana: Japanese (ja);
- kana: Japanese (ja); Hangul: Korean (ko); Greek (el); Thai (th);
- Cyrillic, Arabic, Hebrew, Devanagari: the script (cyrl, arab, hebr, deva), not one language;
- Latin: English (en) when English function words are at least `ENGLISH_SHARE` of its words, else
  Latin-script text other than English (latn). Under `ENGLISH_MIN_WORDS` Latin words (a claim, a
  title) the text cannot tell and counts as English.
Text with less than `MIN_LETTERS` weighted letters has no language (None): nothing to object to.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .run_caches import run_cache

SAMPLE_CHARS = 20_000
CJK_LETTER_WEIGHT = 3
KANA_SHARE = 0.1
ENGLISH_SHARE = 0.06  # English reports run at 0.18-0.35 on this list; other Latin-script languages at 0-0.03
ENGLISH_MIN_WORDS = 40
MIN_LETTERS = 10

HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_KANA = "\u3040-\u309f\u30a0-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9f"  # not U+30FB, a dot Chinese uses too
_SCRIPT_RE = re.compile(
    f"(?P<han>[{HAN}]+)|(?P<kana>[{_KANA}]+)|(?P<hangul>[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]+)"
    r"|(?P<latn>[A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f]+)|(?P<cyrl>[\u0400-\u04ff]+)"
    r"|(?P<arab>[\u0600-\u06ff\u0750-\u077f]+)|(?P<el>[\u0370-\u03ff]+)|(?P<hebr>[\u0590-\u05ff]+)"
    r"|(?P<th>[\u0e00-\u0e7f]+)|(?P<deva>[\u0900-\u097f]+)")
_CJK_GROUPS = frozenset({"han", "kana", "hangul"})
_URL_RE = re.compile(r"(?:https?://|www\.)\S+", re.I)
# Common English words that other Latin-script languages rarely use as words of their own.
_ENGLISH_FUNCTION_WORDS = frozenset("""the and of that with which this from have has for been their its it
were they these by are to be as at or not""".split())

NAMES = {"en": "English", "latn": "Latin-script text other than English", "zh": "Chinese", "ja": "Japanese",
         "ko": "Korean", "cyrl": "Cyrillic-script text", "arab": "Arabic-script text", "el": "Greek",
         "hebr": "Hebrew-script text", "th": "Thai", "deva": "Devanagari-script text"}


@dataclass(frozen=True)
class Language:
    code: str  # a key of NAMES

    @property
    def name(self) -> str:
        return NAMES[self.code]

    @property
    def label(self) -> str:
        """'Chinese (zh)': how messages name it."""
        return f"{self.name} ({self.code})"

    @property
    def script(self) -> str:
        """English and other Latin-script text share one script: word overlap works between them."""
        return "latn" if self.code in ("en", "latn") else self.code


def detect_language(text: str) -> Language | None:
    """The language of `text` by its script (see the module doc); None when it has too few letters."""
    return _detect(text[:SAMPLE_CHARS])


@run_cache(maxsize=512)
def _detect(sample: str) -> Language | None:
    weights: dict[str, int] = {}
    latin_words: list[str] = []
    for match in _SCRIPT_RE.finditer(_URL_RE.sub(" ", sample)):
        group = match.lastgroup
        run = match.group()
        weights[group] = weights.get(group, 0) + len(run) * (CJK_LETTER_WEIGHT if group in _CJK_GROUPS else 1)
        if group == "latn":
            latin_words.append(run.lower())
    if sum(weights.values()) < MIN_LETTERS:
        return None
    top = max(weights, key=lambda g: (weights[g], g))
    if top in ("han", "kana"):
        kana, cjk = weights.get("kana", 0), weights.get("kana", 0) + weights.get("han", 0)
        return Language("ja" if kana >= KANA_SHARE * cjk else "zh")
    if top == "hangul":
        return Language("ko")
    if top == "latn":
        if len(latin_words) < ENGLISH_MIN_WORDS:
            return Language("en")
        share = sum(1 for w in latin_words if w in _ENGLISH_FUNCTION_WORDS) / len(latin_words)
        return Language("en" if share >= ENGLISH_SHARE else "latn")
    return Language(top)


# ------------------------------------------------------------------ reading Chinese

# Full-width digits, letters, the decimal point and signs (％ ＄ ＋ －), and the ideographic space, as
# ASCII. Not the full-width comma, colon or stops: "120，350" lists two numbers, it is not 120350.
_WIDTH_TABLE = ({code: code - 0xFEE0 for code in (*range(0xFF10, 0xFF1A), *range(0xFF21, 0xFF3B),
                                                   *range(0xFF41, 0xFF5B), 0xFF04, 0xFF05, 0xFF0B, 0xFF0D, 0xFF0E)}
                | {0x3000: 0x20})
_HAN_RE = re.compile(f"[{HAN}]")
_HAN_RUN_RE = re.compile(f"[{HAN}]+")
# Function characters a Chinese run is cut at, so terms are not bridged across them: 的 of, 了, 和 and, ...
FUNCTION_CHARS = "的了着和与及或之其也并而被把在是这那该"
_FUNCTION_RE = re.compile(f"[{FUNCTION_CHARS}]")


_WIDE_RE = re.compile("[" + "".join(map(chr, _WIDTH_TABLE)) + "]")


def fold_width(text: str) -> str:
    """Full-width digits, letters and signs as ASCII ('９４９．５％' -> '949.5%'); same length."""
    return text.translate(_WIDTH_TABLE) if _WIDE_RE.search(text) else text


def has_han(text: str) -> bool:
    return _HAN_RE.search(text) is not None


_DATE_CHAR_RE = re.compile(r"(?<=\d)([年月日])")


def han_terms(text: str) -> list[str]:
    """Chinese terms in order: each Han run is cut at function characters and after the 年/月/日 of a
    date, then every piece gives its character bigrams (a one-character piece gives itself). Chinese
    puts no spaces between words, and bigrams are the usual way to match it without a dictionary."""
    terms = []
    for run in _HAN_RUN_RE.findall(_DATE_CHAR_RE.sub(r"\1 ", text)):
        for piece in _FUNCTION_RE.split(run):
            if len(piece) == 1:
                terms.append(piece)
            terms.extend(piece[i:i + 2] for i in range(len(piece) - 1))
    return terms


def word_count(text: str) -> int:
    """Words separated by spaces, with every two Han characters counting as one more word."""
    han = len(_HAN_RE.findall(text))
    return len((_HAN_RE.sub(" ", text) if han else text).split()) + han // 2
