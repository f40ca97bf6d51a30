"""Shared timing helper for the bench scripts."""
from __future__ import annotations

import time
from typing import Callable


def best_of(repeats: int, work: Callable[[], object]) -> float:
    """Seconds of the fastest of `repeats` runs (the least disturbed by the rest of the machine)."""
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        timings.append(time.perf_counter() - started)
    return min(timings)
