"""Shared pieces of every metric: the score row, N/A rows, and how per-source verdicts merge."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from .models import VERDICTS

# When a claim cites several sources, the best per-source verdict stands for the claim
# (Wiki Live's rule, support > conflict > not_support, extended to our five labels).
MERGE_ORDER = ("supported", "partial", "contradicted", "unsupported", "unknown")
MERGE_POLICY = "merge=best(supported>partial>contradicted>unsupported>unknown)"


@dataclass(frozen=True)
class MetricValue:
    suite: str
    metric: str
    value: float | None
    scale: str
    n_items: int
    na_reason: str | None = None
    detail: str = ""
    policy: str = ""
    judge: str = "none"


def merge_verdicts(verdicts: Iterable[str]) -> str:
    labels = set(verdicts)
    bad = labels - set(VERDICTS)
    if bad:
        raise ValueError(f"unknown verdict label(s): {sorted(bad)}")
    return next((v for v in MERGE_ORDER if v in labels), "unknown")


def not_available(suite: str, metric: str, scale: str, reason: str, detail: str, judge: str = "none") -> MetricValue:
    return MetricValue(suite, metric, None, scale, 0, na_reason=reason, detail=detail, judge=judge)
