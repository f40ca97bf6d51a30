"""Statistics over per-task scores."""
from __future__ import annotations

from typing import Mapping, Sequence

import polars as pl


def bootstrap_ci(values: Sequence[float], draws: int = 1000, level: float = 0.95, seed: int = 0,
                 weights: Sequence[float] | None = None) -> tuple[float, float] | None:
    """Percentile bootstrap CI of the (weighted) mean, resampling tasks with replacement; None below 2
    values. With `weights` each draw is sum(v w) / sum(w) over the resampled tasks (a pooled ratio).
    The draws are sampled in polars (seeded, so reproducible): a leaderboard holds thousands of these."""
    if len(values) < 2:
        return None
    n = len(values)
    if weights is None:
        picks = pl.Series(values, dtype=pl.Float64).sample(n * draws, with_replacement=True, seed=seed)
        means = picks.reshape((draws, n)).arr.mean().sort()
    else:
        picked = pl.Series(range(n)).sample(n * draws, with_replacement=True, seed=seed)
        v = pl.Series(values, dtype=pl.Float64).gather(picked)
        w = pl.Series(weights, dtype=pl.Float64).gather(picked)
        totals = w.reshape((draws, n)).arr.sum()
        means = ((v * w).reshape((draws, n)).arr.sum() / totals).drop_nans().sort()  # all-zero weights: no ratio
        if means.len() == 0:
            return None
        draws = means.len()
    lo = means[int((1 - level) / 2 * draws)]
    hi = means[min(draws - 1, int((1 + level) / 2 * draws))]
    return lo, hi


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def competition_ranks(scores: Mapping[str, float], higher_is_better: bool = True) -> dict[str, int]:
    """Rank 1 for the best score; equal scores share the better rank and the next one skips ("1224"),
    as sports tables and most published leaderboards do."""
    ordered = sorted(scores.values(), reverse=higher_is_better)
    return {name: ordered.index(score) + 1 for name, score in scores.items()}
