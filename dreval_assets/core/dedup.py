"""Claim deduplication without O(n²) judge calls: normalised text, then token similarity.

Two claims are duplicates when their normalised texts are equal, or when they state the same numbers
and their content-word sets overlap by at least `NEAR_DUPLICATE_JACCARD`. Candidate pairs come from
an inverted index on each claim's rarest words, so the work grows with the number of claims that
share vocabulary, not with n².
"""
from __future__ import annotations

import re
from collections import defaultdict
from typing import Sequence

NEAR_DUPLICATE_JACCARD = 0.85
_WORD_RE = re.compile(r"[^\W_]+(?:[.,][0-9]+)*", re.UNICODE)
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")
_STOP = frozenset("a an the of and or in on at to for by with from as is are was were be been it its that this "
                  "these those which who".split())


def normalise_claim(text: str) -> str:
    return " ".join(_WORD_RE.findall(text.casefold()))


def _content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD_RE.findall(text.casefold()) if w not in _STOP)


def _numbers(text: str) -> tuple[str, ...]:
    return tuple(sorted(n.replace(",", "") for n in _NUMBER_RE.findall(text)))


def duplicate_groups(texts: Sequence[str], threshold: float = NEAR_DUPLICATE_JACCARD) -> list[int]:
    """For each text, the index of the first text it duplicates (itself when it is original)."""
    group = list(range(len(texts)))
    first_by_norm: dict[str, int] = {}
    words = [_content_words(t) for t in texts]
    numbers = [_numbers(t) for t in texts]
    frequency: dict[str, int] = defaultdict(int)
    for ws in words:
        for w in ws:
            frequency[w] += 1
    index: dict[str, list[int]] = defaultdict(list)
    for i, text in enumerate(texts):
        norm = normalise_claim(text)
        if norm in first_by_norm:
            group[i] = first_by_norm[norm]
            continue
        first_by_norm[norm] = i
        rare = sorted(words[i], key=lambda w: (frequency[w], w))[:3]
        candidates = {j for w in rare for j in index[w]}
        for j in sorted(candidates):
            if numbers[i] == numbers[j] and _jaccard(words[i], words[j]) >= threshold:
                group[i] = group[j]
                break
        else:
            for w in rare:
                index[w].append(i)
    return group


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0
