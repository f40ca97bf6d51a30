"""Statistics over per-task scores."""
from __future__ import annotations

import random
from typing import Sequence


def bootstrap_ci(values: Sequence[float], draws: int = 1000, level: float = 0.95, seed: int = 0) -> tuple[float, float] | None:
    """Percentile bootstrap CI of the mean, resampling tasks with replacement; None below 2 values."""
    if len(values) < 2:
        return None
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(draws))
    lo = means[int((1 - level) / 2 * draws)]
    hi = means[min(draws - 1, int((1 + level) / 2 * draws))]
    return lo, hi
