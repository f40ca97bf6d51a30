"""How a system's per-task rows of one metric become its benchmark number, as each paper aggregates.

A rule is a name (written on every leaderboard row, with the policy that chose it):
- `mean`: mean over the tasks that scored; N/A tasks are left out (coverage says how many).
- `micro`: pooled over tasks, sum(value x n_items) / sum(n_items): a ratio whose numerator and
  denominator are counted across all tasks (DRB FACT citation accuracy, MiroEval's right ratio).
- `mean_na_zero`: mean over every task, an N/A task counting 0 (a paper that averages failures in).
- `mean_with_items`: mean over the tasks that scored with at least one item (DRB reference code's
  effective citations: divided by the tasks that have citations).
- `sum`: the total over the tasks that scored (MiroEval's RIGHT / WRONG / CONFLICT / UNKNOWN counts,
  reported as totals by the paper).
- `of_parts`: a composite (TVIR TA, DR³ Avg, MiroEval Overall) computed by its formula from the
  system's numbers of its parts, as the papers' tables do; per task it is the mean of the task rows
  (the leaderboard replaces it with the formula's value).

Validity (methods README, MMDR's reason-aware scheme): every task row counts 1 when scored and w(r)
when N/A for reason r (provider 0.8, data accessibility 0.9, pipeline 0.5, model 0); a row built from
k of n judgeable items counts k/n + (1 - k/n) x w(reason of the unjudged); validity is their mean, and
the validity-adjusted score is the aggregate x validity^alpha. A `not_applicable` row is not a task of
the metric at all: no rule, no validity and no coverage counts it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..core.metrics import NOT_APPLICABLE

RULES = {
    "mean": "mean over scored tasks (N/A left out)",
    "micro": "pooled over tasks: sum(value x n_items) / sum(n_items) of the scored tasks",
    "mean_na_zero": "mean over all tasks, N/A counted as 0",
    "mean_with_items": "mean over scored tasks that have at least one item",
    "sum": "total over scored tasks",
    "of_parts": "the paper's formula over this system's aggregates of the parts",
}
VALIDITY_WEIGHTS = {"provider_failure": 0.8, "data_accessibility": 0.9, "pipeline_failure": 0.5, "model_failure": 0.0}
VALIDITY_ALPHA = 1.0


@dataclass(frozen=True)
class TaskValue:
    value: float | None
    n_items: int = 1
    na_reason: str | None = None
    judged_share: float | None = None  # k/n when only k of n items were judged
    unjudged_reason: str | None = None
    detail: str = ""

    @property
    def applies(self) -> bool:
        return self.na_reason != NOT_APPLICABLE

    @property
    def validity(self) -> float:
        if self.value is None:
            return VALIDITY_WEIGHTS.get(self.na_reason or "", 0.0)
        if self.judged_share is None:
            return 1.0
        return self.judged_share + (1 - self.judged_share) * VALIDITY_WEIGHTS.get(self.unjudged_reason or "", 0.0)


def applicable(rows: Sequence[TaskValue]) -> list[TaskValue]:
    """The rows of tasks the metric applies to."""
    return [r for r in rows if r.applies]


def weighted_values(rule: str, rows: Sequence[TaskValue]) -> list[tuple[float, float]]:
    """(value, weight) per task entering the rule's weighted mean: every rule above is one (`sum` is
    the mean times the number of tasks), so its bootstrap resamples these pairs."""
    if rule not in RULES:
        raise ValueError(f"unknown aggregation rule {rule!r}; known: {', '.join(RULES)}")
    rows = applicable(rows)
    scored = [r for r in rows if r.value is not None]
    if rule == "mean_na_zero":
        return [(r.value if r.value is not None else 0.0, 1.0) for r in rows] if scored else []
    if rule == "mean_with_items":
        return [(r.value, 1.0) for r in scored if r.n_items > 0]
    if rule == "micro":
        return [(r.value, float(r.n_items)) for r in scored if r.n_items > 0]
    return [(r.value, 1.0) for r in scored]


def aggregate(rule: str, rows: Sequence[TaskValue]) -> float | None:
    """The system's number under `rule`; None when no task gives one."""
    pairs = weighted_values(rule, rows)
    if rule == "sum":
        return sum(v for v, _ in pairs) if pairs else None
    total = sum(w for _, w in pairs)
    return sum(v * w for v, w in pairs) / total if total > 0 else None


def validity(rows: Sequence[TaskValue]) -> float | None:
    """Mean of each applicable task's validity (1 scored, k/n + (1 - k/n) w(r) partly judged, w(r) N/A);
    None without such rows. A reason outside the four buckets counts as the system's (0)."""
    rows = applicable(rows)
    if not rows:
        return None
    return sum(r.validity for r in rows) / len(rows)


def validity_adjusted(score: float | None, validity_value: float | None, alpha: float = VALIDITY_ALPHA) -> float | None:
    return None if score is None or validity_value is None else score * validity_value ** alpha
