"""MiroEval's factuality score from verdict counts: the "Right Ratio" (../shared/methods/miroeval.md)."""
from __future__ import annotations

FORMULA = "right/(right+wrong+conflict+unknown)"


def factuality_ratio(right: float, wrong: float, conflict: float, unknown: float) -> float | None:
    """RIGHT over all labelled statements, 0-1; None when there are none (no ratio, not a 0).
    Summing the counts of several tasks first gives the pooled (micro) ratio."""
    total = right + wrong + conflict + unknown
    return right / total if total > 0 else None
