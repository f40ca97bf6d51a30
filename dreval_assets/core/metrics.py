"""Shared pieces of every metric: the score row, N/A rows, and how per-source verdicts merge."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable

from .models import VERDICTS

# When a claim cites several sources, the best per-source verdict stands for the claim
# (Wiki Live's rule, support > conflict > not_support, extended to our five labels).
MERGE_ORDER = ("supported", "partial", "contradicted", "unsupported", "unknown")
MERGE_POLICY = "merge=best(supported>partial>contradicted>unsupported>unknown)"

NOT_APPLICABLE = "not_applicable"  # the metric does not apply to this task or system: no failure, no zero
# What our judge cannot do (see images, read a language, fit a prompt) is ours, never the system's: such
# N/A reasons start with this marker, so the leaderboard can tell a judge's blindness from a failure and
# never rank systems by it (a system with such rows is "not comparable" on that metric).
JUDGE_LIMIT = "judge limit: "


def judge_limit(why: str) -> str:
    """The reason text of an item our judge could not judge, marked as the judge's limit."""
    return why if why.startswith(JUDGE_LIMIT) else JUDGE_LIMIT + why


def is_judge_limit(detail: str | None) -> bool:
    """Whether an N/A row's reason (or one of the parts it names) is our judge's limit."""
    return JUDGE_LIMIT in (detail or "")


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
    # a value built from k of n judgeable items: k/n, and the bucket of the n-k not judged (None: all judged)
    judged_share: float | None = None
    unjudged_reason: str | None = None

    def partly_judged(self, judged: int, total: int, bucket: str | None) -> MetricValue:
        """This value, carrying that only `judged` of `total` items were judged (unjudged ones never count
        as failed ones; the share enters the leaderboard's validity)."""
        if self.value is None or total <= 0 or judged >= total or bucket is None:
            return self
        return replace(self, judged_share=judged / total, unjudged_reason=bucket)


def merge_verdicts(verdicts: Iterable[str]) -> str:
    labels = set(verdicts)
    bad = labels - set(VERDICTS)
    if bad:
        raise ValueError(f"unknown verdict label(s): {sorted(bad)}")
    return next((v for v in MERGE_ORDER if v in labels), "unknown")


def not_available(suite: str, metric: str, scale: str, reason: str, detail: str, judge: str = "none") -> MetricValue:
    return MetricValue(suite, metric, None, scale, 0, na_reason=reason, detail=detail, judge=judge)


def not_applicable(suite: str, metric: str, scale: str, why: str, judge: str = "none") -> MetricValue:
    """A metric that does not apply here (no attachment to ground in, no item of that kind): left out of
    means, coverage and validity, shown as not applicable."""
    return not_available(suite, metric, scale, NOT_APPLICABLE, why, judge)
