"""Claim deduplication without O(n²) judge calls: normalised text, then token similarity.

Two claims are duplicates when their normalised texts are equal, or when they state the same numbers
and their content-word sets overlap by at least `NEAR_DUPLICATE_JACCARD`. Pairs with the same numbers
in the ambiguous band [`AMBIGUOUS_JACCARD`, `NEAR_DUPLICATE_JACCARD`) are the only ones a judge is
asked about (`same` callback). Candidate pairs come from an inverted index on each claim's rarest
words, so the work grows with the number of claims that share vocabulary, not with n².
"""
from __future__ import annotations

import re
from collections import defaultdict
from typing import Callable, Sequence

from .run_caches import run_cache

NEAR_DUPLICATE_JACCARD = 0.85
AMBIGUOUS_JACCARD = 0.6
_WORD_RE = re.compile(r"[^\W_]+(?:[.,][0-9]+)*", re.UNICODE)
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")
_STOP = frozenset("a an the of and or in on at to for by with from as is are was were be been it its that this "
                  "these those which who".split())


def normalise_claim(text: str) -> str:
    return " ".join(_WORD_RE.findall(text.casefold()))


def content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD_RE.findall(text.casefold()) if w not in _STOP)


def _numbers(text: str) -> tuple[str, ...]:
    return tuple(sorted(n.replace(",", "") for n in _NUMBER_RE.findall(text)))


def ambiguous_pairs(texts: Sequence[str]) -> list[tuple[int, int]]:
    """Pairs (earlier, later) a judge should settle: same numbers, similar but not clearly the same,
    neither already a sure duplicate of an earlier text."""
    sure = duplicate_groups(texts)
    return sorted({(j, i) for i, j, score in _candidates(texts)
                   if AMBIGUOUS_JACCARD <= score < NEAR_DUPLICATE_JACCARD and sure[i] == i and sure[j] == j})


def duplicate_groups(texts: Sequence[str], same: Callable[[int, int], bool] | None = None) -> list[int]:
    """For each text, the index of the first text it duplicates (itself when it is original).

    `same(i, j)` decides the ambiguous pairs; without it they stay distinct.
    """
    group = list(range(len(texts)))
    for i, j, score in _candidates(texts):
        if group[i] != i:
            continue
        sure = score >= NEAR_DUPLICATE_JACCARD
        if sure or (same is not None and score >= AMBIGUOUS_JACCARD and same(j, i)):
            group[i] = group[j]
    return group


def _candidates(texts: Sequence[str]) -> tuple[tuple[int, int, float], ...]:
    """(later i, earlier j, similarity) for pairs stating the same numbers; exact duplicates score 1."""
    return _candidates_of(tuple(texts))


# a report's facts are paired three times (the ambiguous pairs, then the groups), the first time ahead, in
# the judge step (`scores.ask_same_statements_ahead`): a run's slice of reports (DREVAL_RUN_PARTITIONS) fits
@run_cache(maxsize=256)
def _candidates_of(texts: tuple[str, ...]) -> tuple[tuple[int, int, float], ...]:
    words = [content_words(t) for t in texts]
    numbers = [_numbers(t) for t in texts]
    frequency: dict[str, int] = defaultdict(int)
    for ws in words:
        for w in ws:
            frequency[w] += 1
    first_by_norm: dict[str, int] = {}
    index: dict[str, list[int]] = defaultdict(list)
    found = []
    for i, text in enumerate(texts):
        norm = normalise_claim(text)
        if norm in first_by_norm:
            found.append((i, first_by_norm[norm], 1.0))
            continue
        first_by_norm[norm] = i
        # index on the rarest words this text shares with others: a word no other text has finds nothing
        rare = sorted((w for w in words[i] if frequency[w] > 1), key=lambda w: (frequency[w], w))[:3]
        for j in sorted({j for w in rare for j in index[w]}):
            if numbers[i] == numbers[j]:
                score = _jaccard(words[i], words[j])
                if score >= AMBIGUOUS_JACCARD:
                    found.append((i, j, score))
        for w in rare:
            index[w].append(i)
    return tuple(found)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0
