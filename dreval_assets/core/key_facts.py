"""Offline key facts of an attachment, and whether a report keeps them (MiroEval Grounding).

Extraction: the attachment's sentences that state figures, ranked by how many numbers they carry
(ties keep document order). Recall: a fact is kept when every number it states appears in the
report (numbers are what a careless reading gets wrong), or, for a fact without numbers, when
`WORDS_KEPT` of its key words appear. Full-width digits read as ASCII and two Chinese characters
count as a word, so Chinese attachments give facts too. A lexical baseline, labelled by the heuristic
judge's id.
"""
from __future__ import annotations

import re

from .checklist_match import key_words
from .language import fold_width, word_count
from .sentences import split_sentences

WORDS_KEPT = 0.6
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")


def numbers_in(text: str) -> set[str]:
    """Numbers as written, thousands separators dropped, so 12,400 and 12400 match."""
    return {n.replace(",", "") for n in _NUMBER_RE.findall(fold_width(text))}


_SOFT_BREAK_RE = re.compile(r"(?<=\S)[ \t]*\n(?![ \t]*(?:\n|[-*+|#>]|\d{1,3}[.)]\s))[ \t]*")


def extract_key_facts(text: str, limit: int) -> list[str]:
    # lines wrapped inside a paragraph are one run of prose; the sentence splitter breaks at newlines
    sentences = [" ".join(s.split()) for s in split_sentences(_SOFT_BREAK_RE.sub(" ", text))]
    stated = [(len(numbers_in(s)), i, s) for i, s in enumerate(sentences)
              if numbers_in(s) and word_count(s) >= 5 and not s.lstrip().startswith(("|", "#"))]
    best = sorted(stated, key=lambda item: (-item[0], item[1]))[:limit]
    return [s for _, _, s in sorted(best, key=lambda item: item[1])]


def fact_kept(fact: str, report_numbers: set[str], report_words: set[str]) -> bool:
    wanted = numbers_in(fact)
    if wanted:
        return wanted <= report_numbers
    words = key_words(fact)
    return bool(words) and len(words & report_words) / len(words) >= WORDS_KEPT


def share_kept(facts: list[str], report: str) -> tuple[float, int]:
    """(share of facts the report keeps, how many it keeps)."""
    report_numbers, report_words = numbers_in(report), key_words(report)
    kept = sum(fact_kept(f, report_numbers, report_words) for f in facts)
    return (kept / len(facts) if facts else 0.0), kept
