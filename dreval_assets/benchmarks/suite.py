"""A suite: one benchmark's metrics, their defaults, and the numbers it headlines."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..core.metrics import MetricValue, not_available
from .evidence import ReportEvidence

MetricFn = Callable[[ReportEvidence], list[MetricValue]]


def judged_checklist(evidence: ReportEvidence, suite: str, metric: str) -> tuple[list[float], MetricValue | None]:
    """The checklist credits a judge gave, or the N/A row that explains why there are none."""
    scored = [c for c in evidence.checklist if c is not None]
    if not evidence.checklist:
        return [], not_available(suite, metric, "0-100", "pipeline_failure", "the task has no checklist", evidence.judge)
    if not scored:
        return [], not_available(suite, metric, "0-100", "provider_failure", "no checklist item was judged",
                                 evidence.judge)
    return scored, None


@dataclass(frozen=True)
class MetricSpec:
    metric: str
    scale: str
    judged: bool  # computed from judge verdicts (else from the parser or sandbox alone)
    meaning: str


@dataclass(frozen=True)
class Suite:
    name: str
    title: str
    metrics: tuple[MetricSpec, ...]
    compute: MetricFn
    headline: tuple[str, ...]  # what `dreval leaderboard --suite` leads with, in order

    def score(self, evidence: ReportEvidence) -> list[MetricValue]:
        values = self.compute(evidence)
        names = {m.metric for m in self.metrics}
        stray = {v.metric for v in values} - names
        if stray:
            raise ValueError(f"suite {self.name} produced undeclared metrics {sorted(stray)}")
        return values

    def unreadable(self, reason: str, detail: str, judge: str) -> list[MetricValue]:
        """Every metric N/A, for a report that could not be read at all."""
        return [not_available(self.name, m.metric, m.scale, reason, detail, judge if m.judged else "none")
                for m in self.metrics]
