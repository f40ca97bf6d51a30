"""leaderboard: per system x suite x metric x judge, the mean over tasks with a bootstrap CI."""
from __future__ import annotations

from datetime import datetime, timezone

import polars as pl

from ..core.stats import bootstrap_ci
from .frames import frame


def build_leaderboard(scores: pl.DataFrame) -> pl.DataFrame:
    """`scores` are metric_scores rows; judges never mix in one mean."""
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    rows = []
    for (system, suite, metric, judge), group in scores.group_by(
        ["system", "suite", "metric", "judge"], maintain_order=True
    ):
        values = [v for v in group.get_column("value").to_list() if v is not None]
        ci = bootstrap_ci(values)
        rows.append({
            "system": system, "suite": suite, "metric": metric, "judge": judge,
            "scale": group.get_column("scale")[0],
            "mean": sum(values) / len(values) if values else None,
            "ci_low": ci[0] if ci else None, "ci_high": ci[1] if ci else None,
            "n_tasks": group.height, "n_scored": len(values),
            "coverage": len(values) / group.height, "computed_at": now,
        })
    return frame("leaderboard", rows).sort(["suite", "metric", "system"])
