"""A suite: one benchmark's metrics, their defaults, and the numbers it headlines."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..core.metrics import MetricValue, not_available
from .evidence import ReportEvidence

MetricFn = Callable[[ReportEvidence], list[MetricValue]]
WITHOUT_CITATIONS = "the release marks this system as writing without citations (has_citations: false)"


def judgment_failure(evidence: ReportEvidence, prefix: str, what: str,
                     default: str = "provider_failure") -> tuple[str, str]:
    """(reason bucket, detail) of a judged metric none of whose judgments under `prefix` gave a value:
    the judgments' own bucket and message (e.g. model_failure "heuristic judge does not read Chinese
    (zh)"), or `default` when they left none."""
    found = evidence.judgment_failure(prefix)
    if found is None:
        return default, what
    bucket, why = found
    return bucket, f"{what}: {why}"[:500] if why else what


def judged_checklist(evidence: ReportEvidence, suite: str, metric: str) -> tuple[list[float], MetricValue | None]:
    """The checklist credits a judge gave, or the N/A row that explains why there are none."""
    scored = [c for c in evidence.checklist if c is not None]
    if not evidence.checklist:
        return [], not_available(suite, metric, "0-100", "pipeline_failure", "the task has no checklist", evidence.judge)
    if not scored:
        return [], not_available(suite, metric, "0-100",
                                 *judgment_failure(evidence, "checklist", "no checklist item was judged"), evidence.judge)
    return scored, None


@dataclass(frozen=True)
class MetricSpec:
    metric: str
    scale: str
    judged: bool  # computed from judge verdicts (else from the parser or sandbox alone)
    meaning: str
    cites: bool = False  # rests on the report's own citations (N/A for a system released without them)
    better: int = 1  # leaderboard direction: +1 higher is better, -1 lower is better, 0 descriptive (not ranked)


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
        if evidence.system_cites is False:  # a stray URL line must not become, say, 100 % leakage
            citing = {m.metric for m in self.metrics if m.cites}
            values = [not_available(self.name, v.metric, v.scale, "model_failure", WITHOUT_CITATIONS, v.judge)
                      if v.metric in citing else v for v in values]
        return values

    def unreadable(self, reason: str, detail: str, judge: str) -> list[MetricValue]:
        """Every metric N/A, for a report that could not be read at all."""
        return [not_available(self.name, m.metric, m.scale, reason, detail, judge if m.judged else "none")
                for m in self.metrics]
