"""Measured features of an encyclopedia-style article, for the offline pairwise writing judge.

Word lists are ours, after Wikipedia's public "words to watch" categories. `compare` says which of
two articles does better on one feature, or a tie when they are within `TIE_MARGIN` of each other.
"""
from __future__ import annotations

import re

TIE_MARGIN = 0.15  # relative difference under which two articles tie on a feature
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
WORDS_TO_WATCH = {
    "puffery": ("legendary", "iconic", "world-class", "renowned", "acclaimed", "breathtaking", "prestigious",
                "groundbreaking", "visionary", "celebrated", "stunning", "remarkable", "unparalleled"),
    "contentious": ("cult", "extremist", "regime", "heretic", "pseudo", "denialist", "racist", "terrorist"),
    "weasel": ("some people say", "it is believed", "many believe", "critics say", "experts say",
               "it has been suggested", "some argue", "it is said", "widely regarded"),
    "doubt": ("so-called", "supposed", "alleged", "purported", "claimed to be"),
    "editorializing": ("clearly", "obviously", "of course", "notably", "interestingly", "unfortunately",
                       "fortunately", "tragically", "importantly"),
    "said": ("claimed", "admitted", "insisted", "revealed", "conceded", "confessed", "boasted"),
    "euphemisms": ("passed away", "passed on", "collateral damage", "lost his life", "lost her life"),
    "cliches": ("at the end of the day", "tip of the iceberg", "game changer", "game-changer", "state of the art",
                "in the nick of time", "paradigm shift", "cutting edge", "cutting-edge"),
    "relative_time": ("recently", "currently", "nowadays", "soon", "to date", "this year", "last year", "lately"),
    "unspecified": ("some time", "at one point", "somewhere", "various places", "a certain"),
    "survived_by": ("survived by",),
    "opinion": (" i ", " we ", " you ", " our ", "should", "must", "best", "worst", "beautiful", "terrible"),
}
LOWER_IS_BETTER = set(WORDS_TO_WATCH) | {"jargon"}


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _lead(text: str) -> str:
    """Text before the first second-level heading, without the title line."""
    body = re.split(r"^#{2,6}\s", text, maxsplit=1, flags=re.M)[0]
    return re.sub(r"^#\s.*$", "", body, flags=re.M).strip()


def measure(feature: str, text: str) -> float:
    words = _words(text)
    n = max(1, len(words))
    padded = " " + " ".join(words) + " "
    if feature in WORDS_TO_WATCH:
        return 1000 * sum(padded.count(f" {w.strip()} ") for w in WORDS_TO_WATCH[feature]) / n
    if feature == "jargon":
        return sum(1 for w in words if len(w) >= 13) / n
    if feature == "clarity":  # sentences near 22 words read best
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]
        mean = len(words) / max(1, len(sentences))
        return -abs(mean - 22)
    if feature == "lead":
        lead = len(_words(_lead(text)))
        return 1.0 if 40 <= lead <= 250 else 0.5 if lead > 0 else 0.0
    if feature == "citations":
        return float(bool(re.search(r"\[\d+\]", _lead(text))))
    if feature == "sections":
        return float(min(12, len(re.findall(r"^#{2}\s", text, flags=re.M))))
    if feature == "breadth":
        return float(len({w for w in words if len(w) > 6}))
    if feature == "focus":  # share of sentences mentioning one of the article's ten most frequent terms
        terms = [w for w in words if len(w) > 5]
        top = {w for w, _ in sorted(((w, terms.count(w)) for w in set(terms)), key=lambda x: (-x[1], x[0]))[:10]}
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]
        return sum(1 for s in sentences if top & set(_words(s))) / max(1, len(sentences))
    raise ValueError(f"unknown feature {feature!r}")


def compare(feature: str, first: str, second: str) -> str:
    """'first', 'second' or 'tie' on one feature."""
    a, b = measure(feature, first), measure(feature, second)
    if feature in LOWER_IS_BETTER:
        a, b = -a, -b
    scale = max(abs(a), abs(b), 1e-9)
    if abs(a - b) / scale < TIE_MARGIN:
        return "tie"
    return "first" if a > b else "second"
