"""MiroEval's process score (../shared/methods/miroeval.md, section 3), as one pure formula: the
published per-task `_overall_from_per_task` is checked against it, and our own process evaluation
will score with it.

Eight judged dimensions on 1-10: five of intrinsic quality, three of process-report alignment.
Process score = mean(intrinsic mean, alignment mean) on the 1-10 scale, x10 for 0-100. The two
groups weigh the same however many dimensions each has (an even mean of all eight would not; the
release's 7.033 = 211/30 is a value only the two-group mean can give from integer dimensions).
"""
from __future__ import annotations

from collections.abc import Mapping

from ...core.stats import mean

INTRINSIC = ("search_breadth", "analytical_depth", "progressive_refinement", "critical_thinking", "efficiency")
ALIGNMENT = ("findings_to_report", "report_to_process", "contradiction")
GROUPS = {"intrinsic": INTRINSIC, "alignment": ALIGNMENT}
SCALE = 10  # 1-10 dimension scores -> 0-100


def metric_name(dimension: str) -> str:
    """Our metric name of one dimension: `process.<dimension>`."""
    return f"process.{dimension}"


def process_score(intrinsic: Mapping[str, float | None], alignment: Mapping[str, float | None]) -> float | None:
    """0-100 from the dimension scores (1-10). Each group's mean is over its dimensions that scored;
    a group with none scored makes the score unavailable (None), never a 0."""
    group_means = [mean([v for d in dims if (v := scores.get(d)) is not None])
                   for scores, dims in ((intrinsic, INTRINSIC), (alignment, ALIGNMENT))]
    if any(m is None for m in group_means):
        return None
    return SCALE * mean(group_means)
