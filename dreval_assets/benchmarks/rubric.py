"""A fixed rubric (dimension ids, names and what they ask), scored 1-10 per dimension in one call of
the shared `rubric_scores` template, or a count in one call of `contradictions`; benchmarks declare
theirs in their folder."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Rubric:
    rubric_id: str  # e.g. "tvir.wq"
    suite: str
    title: str
    dimensions: tuple[tuple[str, str], ...]  # (id, what it asks)
    measure: Callable[[str], dict[str, float]] | None  # the offline judge's measurement, 1-10 per dimension
    template: str = "rubric_scores"  # or a template answering one ContradictionCount (TVIR's FLC)
