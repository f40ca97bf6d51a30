"""A fixed rubric (dimension ids, names and what they ask), scored 1-10 per dimension in one call of
the shared `rubric_scores` template, or a count in one call of `contradictions`; benchmarks declare
theirs in their folder."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from ..core.models import ContradictionCount, RubricScores
from ..judges.base import Judgment


@dataclass(frozen=True)
class Rubric:
    rubric_id: str  # e.g. "tvir.wq"
    suite: str
    title: str
    dimensions: tuple[tuple[str, str], ...]  # (id, what it asks)
    measure: Callable[[str], dict[str, float]] | None  # the offline judge's measurement, 1-10 per dimension
    template: str = "rubric_scores"  # or a template answering one ContradictionCount (TVIR's FLC)


def rubric_answer_rows(base: dict, rubric_id: str, dimensions: Sequence[tuple[str, str]],
                       judgment: Judgment) -> list[dict]:
    """The report_judgments rows of one rubric call: a count row for a ContradictionCount, else one row
    per dimension, its score or the call's failure (N/A with its bucket, never a 0)."""
    answer = judgment.answer
    if isinstance(answer, ContradictionCount):
        return [{**base, "item_id": f"{rubric_id}.count", "item": "internal contradictions",
                 "score": float(answer.count), "reason": "; ".join(answer.examples)[:2000], "na_reason": None}]
    scores = {s.dimension_id: s for s in answer.scores} if isinstance(answer, RubricScores) else {}
    rows = []
    for dim, what in dimensions:
        got = scores.get(dim)
        if got is None:
            rows.append({**base, "item_id": f"{rubric_id}.{dim}", "item": what, "score": None,
                         "reason": judgment.error or "the judge gave no score for this dimension",
                         "na_reason": judgment.na_reason or "pipeline_failure"})
        else:
            rows.append({**base, "item_id": f"{rubric_id}.{dim}", "item": what, "score": float(got.score),
                         "reason": got.reason, "na_reason": None})
    return rows
