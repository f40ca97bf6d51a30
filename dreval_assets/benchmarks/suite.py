"""A suite: one benchmark's metrics, their defaults, and the numbers it headlines."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Mapping, Sequence

from ..core.metrics import NOT_APPLICABLE, MetricValue, not_available
from .aggregation import TaskValue
from .evidence import ReportEvidence, most_retryable
from .policies import policy_value

MetricFn = Callable[[ReportEvidence], list[MetricValue]]
WITHOUT_CITATIONS = "the release marks this system as writing without citations (has_citations: false)"


def judgment_failure(evidence: ReportEvidence, prefix: str, what: str,
                     default: str = "provider_failure") -> tuple[str, str]:
    """(reason bucket, detail) of a judged metric none of whose judgments under `prefix` gave a value:
    the judgments' own bucket and message (e.g. pipeline_failure "judge limit: heuristic judge does not
    read Chinese (zh)"), or `default` when they left none."""
    found = evidence.judgment_failure(prefix)
    if found is None:
        return default, what
    bucket, why = found
    return bucket, f"{what}: {why}"[:500] if why else what


def judged_checklist(evidence: ReportEvidence, suite: str, metric: str) -> tuple[list[float], MetricValue | None]:
    """The checklist credits a judge gave, or the N/A row that explains why there are none. A task
    without a checklist is ours (its checklist was not loaded or generated), never the system's."""
    scored = [c for c in evidence.checklist if c is not None]
    if not evidence.checklist:
        return [], not_available(suite, metric, "0-100", "pipeline_failure", "the task has no checklist", evidence.judge)
    if not scored:
        return [], not_available(suite, metric, "0-100",
                                 *judgment_failure(evidence, "checklist", "no checklist item was judged"), evidence.judge)
    return scored, None


def checklist_carried(evidence: ReportEvidence, value: MetricValue) -> MetricValue:
    """`value`, built from the judged checklist items, carrying the judged share k/n of the task's items
    and the unjudged ones' bucket (they count into validity, never as unmet)."""
    scored = sum(1 for c in evidence.checklist if c is not None)
    bucket = judgment_failure(evidence, "checklist", "", "pipeline_failure")[0]
    return value.partly_judged(scored, len(evidence.checklist), bucket)


@dataclass(frozen=True)
class MetricSpec:
    metric: str
    scale: str
    judged: bool  # computed from judge verdicts (else from the parser or sandbox alone)
    meaning: str
    cites: bool = False  # rests on the report's own citations (not applicable to a system released without them)
    better: int = 1  # leaderboard direction: +1 higher is better, -1 lower is better, 0 descriptive (not ranked)
    aggregate: str = "mean"  # how per-task rows become the system's number (benchmarks/aggregation.RULES)
    aggregate_policy: str | None = None  # the policy that may choose another rule (its value is a rule name)
    claims: bool = False  # counts the report's claims: its rows name the extraction that made them

    def aggregation(self, policies: Mapping[str, str] | None = None) -> str:
        """The rule in force: the policy's value when the metric has one, else the declared rule."""
        return policy_value(policies or {}, self.aggregate_policy) if self.aggregate_policy else self.aggregate


@dataclass(frozen=True)
class Composite:
    """A published aggregate of the suite's other rows of the same report (TVIR TA = mean of five,
    MMDR Overall, ...). `formula` takes the parts' values (None when a part is N/A) and returns the
    value, or None when a part it needs is missing: the row is then N/A, naming the missing parts and
    taking the most retryable of their reasons."""
    metric: str
    parts: tuple[str, ...]
    formula: Callable[[Mapping[str, float | None]], float | None]
    policy: str
    scale: str = "0-100"

    def row(self, suite: str, found: Mapping[str, MetricValue], judge: str) -> MetricValue:
        parts = {p: found[p] for p in self.parts}
        judged = judge if any(v.judge != "none" for v in parts.values()) else "none"
        value = self.formula({p: v.value for p, v in parts.items()})
        if value is not None:
            shown = ", ".join(f"{p}={v.value:.2f}" if v.value is not None else f"{p}=N/A" for p, v in parts.items())
            least = min((v for v in parts.values() if v.judged_share is not None), default=None,
                        key=lambda v: v.judged_share)
            return MetricValue(suite, self.metric, value, self.scale, len(self.parts), detail=shown,
                               policy=self.policy, judge=judged,
                               judged_share=least.judged_share if least else None,
                               unjudged_reason=least.unjudged_reason if least else None)
        missing = {p: v for p, v in parts.items() if v.value is None}
        # a failed part names the composite's bucket; parts that merely do not apply make it not apply
        bucket = most_retryable((v.na_reason for v in missing.values()),
                                NOT_APPLICABLE if all(v.na_reason == NOT_APPLICABLE for v in missing.values())
                                else "pipeline_failure")
        why = "; ".join(f"{p} N/A ({v.na_reason}: {v.detail})" for p, v in missing.items())
        return MetricValue(suite, self.metric, None, self.scale, 0, na_reason=bucket,
                           detail=f"needs {', '.join(missing)}: {why}"[:500], policy=self.policy, judge=judged)


@dataclass(frozen=True)
class Breakdown:
    """A task attribute a paper reports its leaderboard by (MiroEval: text-only and multimodal tasks
    apart; DR³: English and Chinese). The leaderboard aggregates each of `metrics` again over the tasks
    of each value, by the metric's own rule, as `<metric>.<value>` (`leaderboard.breakdown` =
    `<attribute>=<value>`); a composite is computed from its parts on those tasks. Any attribute can be
    asked for at display time too (`dreval leaderboard --by`): this only says which are stored."""
    attribute: str  # a tasks column (language, domain, modality) or a release label in tasks.attributes
    metrics: tuple[str, ...] = ()  # the metrics broken down; empty: the suite's headline metrics
    values: tuple[str, ...] = ()  # the values reported, in this order; empty: every value the tasks have


def mean_of_all(values: Mapping[str, float | None]) -> float | None:
    """Equal-weight mean of every part; None when one is missing (the papers average complete rows)."""
    if any(v is None for v in values.values()):
        return None
    return sum(values.values()) / len(values)


@dataclass(frozen=True)
class Suite:
    name: str
    title: str
    metrics: tuple[MetricSpec, ...]
    compute: MetricFn
    headline: tuple[str, ...]  # what `dreval leaderboard --suite` leads with, in order
    composites: tuple[Composite, ...] = ()  # computed in order after `compute`, from its rows
    # A rule over one system's task rows of this suite (metric -> its rows, any judge), returning the
    # metrics that do not apply to that system at all, with why (TVIR: no figure in any report => VA
    # and Overall not applicable). The leaderboard applies it; per-report rows stay as computed.
    system_rule: Callable[[Mapping[str, Sequence[TaskValue]]], Mapping[str, str]] | None = None
    # Task attributes the paper reports its leaderboard by (see Breakdown); computed by the leaderboard.
    breakdowns: tuple[Breakdown, ...] = ()

    def score(self, evidence: ReportEvidence) -> list[MetricValue]:
        values = self.compute(evidence)
        names = {m.metric for m in self.metrics}
        stray = {v.metric for v in values} - names
        if stray:
            raise ValueError(f"suite {self.name} produced undeclared metrics {sorted(stray)}")
        if evidence.system_cites is False:  # a stray URL line must not become, say, 100 % leakage
            citing = {m.metric for m in self.metrics if m.cites}
            # a release's design choice, not a failure: the citation metrics do not describe the system
            values = [not_available(self.name, v.metric, v.scale, NOT_APPLICABLE, WITHOUT_CITATIONS, v.judge)
                      if v.metric in citing else v for v in values]
        counting = {m.metric for m in self.metrics if m.claims}
        if evidence.extraction_empty:  # no claim to count because our extractor kept none: never a 0
            values = [not_available(self.name, v.metric, v.scale, "pipeline_failure", evidence.extraction_empty,
                                    v.judge) if v.metric in counting and v.na_reason != NOT_APPLICABLE else v
                      for v in values]
        values = [replace(v, policy=f"{v.policy}; {evidence.extraction}".lstrip("; ")) if v.metric in counting else v
                  for v in values]
        found = {v.metric: v for v in values}
        for composite in self.composites:
            found[composite.metric] = composite.row(self.name, found, evidence.judge)
            values.append(found[composite.metric])
        return values

    def spec(self, metric: str) -> MetricSpec | None:
        """The metric's spec; a breakdown's `<metric>.<value>` has its metric's."""
        found = next((m for m in self.metrics if m.metric == metric), None)
        if found is None and (split := self.broken_down(metric)) and split[0] != metric:
            return self.spec(split[0])
        return found

    def composite(self, metric: str) -> Composite | None:
        return next((c for c in self.composites if c.metric == metric), None)

    def unreadable(self, reason: str, detail: str, judge: str) -> list[MetricValue]:
        """Every metric N/A, for a report that could not be read at all."""
        return [not_available(self.name, m.metric, m.scale, reason, detail, judge if m.judged else "none")
                for m in self.metrics]

    def broken_down(self, metric: str) -> tuple[str, str] | None:
        """(base metric, value) of a leaderboard metric named `<metric>.<value>` by a breakdown."""
        base, _, value = metric.rpartition(".")
        for breakdown in self.breakdowns:
            if base in (breakdown.metrics or self.headline) and (not breakdown.values or value in breakdown.values):
                return base, value
        return None

    def __post_init__(self) -> None:
        declared = {m.metric for m in self.metrics}
        for composite in self.composites:
            if composite.metric not in declared or not set(composite.parts) <= declared:
                raise ValueError(f"suite {self.name}: composite {composite.metric} and its parts must be declared metrics")
