"""What a suite's claim-level metrics read about one report: its claims, their per-source verdicts,
its reference list and the task's sandbox. Built by the scores stage; no Dagster."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..core.metrics import MetricValue, merge_verdicts, not_available
from .policies import policy_value


@dataclass(frozen=True)
class SourceVerdict:
    source: str  # URL, or "[n]" for a citation with no URL
    verdict: str
    origin: str = "cited"  # cited | sandbox (evidence found for the claim, not cited by it)
    na_reason: str | None = None  # set when no judgment was made (unreadable page, failed judge call)
    note: str = ""  # why, for a failed one


# Which failure names a metric's N/A when no judgment was made: the methods README's priority.
FAILURE_PRIORITY = ("provider_failure", "data_accessibility", "pipeline_failure", "model_failure")
NOTHING_JUDGED_RULE = "no source judged => N/A with the failure's reason, never 0"
UNREAD_RULE = "a claim whose every source went unread is left out (not judged), never counted as failed"


def most_retryable(buckets: Iterable[str | None], default: str | None = None) -> str | None:
    """The first of `buckets` in the methods README's priority (provider, data, pipeline, model), else
    `default`: the reason an N/A made of several failures carries."""
    present = set(buckets)
    return next((b for b in FAILURE_PRIORITY if b in present), default)


def unread(verdicts: Iterable[SourceVerdict]) -> bool:
    """Every source of a claim failed before a judgment (unread page, failed call): nothing was decided,
    so the claim is left out, never counted as failed. A cited index with no URL ("[n]") is the
    report's own fault, a decided zero (as in `judged_coverage`)."""
    verdicts = list(verdicts)
    return bool(verdicts) and all(v.na_reason is not None and not v.source.startswith("[") for v in verdicts)


@dataclass(frozen=True)
class JudgedCoverage:
    """How many of the evidence judgments a metric rests on were made, and why the others were not."""
    total: int
    failures: dict[str, int]
    example: str = ""

    @property
    def judged(self) -> int:
        return self.total - sum(self.failures.values())

    @property
    def nothing_judged(self) -> bool:
        """Sources were cited and none could be judged: the metric is N/A, not 0."""
        return self.total > 0 and self.judged == 0

    def text(self) -> str:
        failed = ", ".join(f"{n} {bucket}" for bucket, n in sorted(self.failures.items()))
        return f"sources judged {self.judged} of {self.total}" + (f" (not judged: {failed})" if failed else "")

    def carried(self, value: MetricValue) -> MetricValue:
        """`value`, carrying the judged share k/n and the unjudged sources' bucket (for validity)."""
        return value.partly_judged(self.judged, self.total, most_retryable(self.failures))

    def not_available(self, suite: str, metric: str, scale: str, judge: str) -> MetricValue:
        """The N/A row of a metric when `nothing_judged`, with the failures' most retryable bucket."""
        bucket = most_retryable(self.failures)
        example = f"; e.g. {self.example}" if self.example else ""
        return not_available(suite, metric, scale, bucket, f"nothing to score on: {self.text()}{example}"[:500], judge)


def judged_coverage(verdicts: Iterable[SourceVerdict]) -> JudgedCoverage:
    """Judged share of the URL sources among `verdicts`. A cited index with no URL ("[n]") is left
    out: it is the report's own fault, a decided zero where the paper counts it, not a failure."""
    verdicts = [v for v in verdicts if not v.source.startswith("[")]
    failed = [v for v in verdicts if v.na_reason is not None]
    examples = [v.note for v in failed if v.note]
    return JudgedCoverage(len(verdicts), dict(Counter(v.na_reason for v in failed)), examples[0][:200] if examples else "")


@dataclass(frozen=True)
class ClaimEvidence:
    claim_id: str
    kind: str  # sentence | table_row | figure_caption | uncited
    text: str
    urls: tuple[str, ...] = ()
    unresolved: tuple[int, ...] = ()
    verdicts: tuple[SourceVerdict, ...] = ()

    @property
    def cited(self) -> bool:
        return bool(self.urls or self.unresolved)

    @property
    def is_fact(self) -> bool:
        """A cited sentence or table row: what TVIR and FACT count, and what gets deduplicated."""
        return self.cited and self.kind in ("sentence", "table_row")

    def cited_verdicts(self) -> list[SourceVerdict]:
        return [v for v in self.verdicts if v.origin == "cited"]

    def merged(self, origin: str = "cited") -> str | None:
        """Best verdict over this claim's sources of one origin; None when it has none."""
        labels = [v.verdict for v in self.verdicts if v.origin == origin]
        return merge_verdicts(labels) if labels else None


@dataclass(frozen=True)
class SandboxDoc:
    url: str
    title: str
    role: str
    corpora: tuple[str, ...] = ()  # the task's named corpora holding it (DR³ sizes); empty: every corpus


@dataclass
class ReportEvidence:
    system: str
    task: str
    benchmark: str
    judge: str
    modality: str = ""  # the task's (tasks.modality): text, multimodal
    claims: list[ClaimEvidence] = field(default_factory=list)
    references: list[dict] = field(default_factory=list)  # {index, url, title}
    citation_style: str = "inline"  # inline | bibliography_only | none
    figures: list[dict] = field(default_factory=list)  # the parser's figures: {caption, src, citation_indices, section}
    sandbox: list[SandboxDoc] = field(default_factory=list)  # every corpus of the task, each doc naming its own
    corpus: str = ""  # the named corpus this run searched (`stages.tasks.run_corpus`); "": the task's only one
    attachments: list[str] = field(default_factory=list)
    policies: dict[str, str] = field(default_factory=dict)  # e.g. {"wlc.ref_acc.denominator": "all"}
    duplicate_of: dict[str, str] = field(default_factory=dict)  # claim id -> first claim stating the same fact
    checklist: list[float | None] = field(default_factory=list)  # per requirement 1 / 0.5 / 0, None when N/A
    # item id ("checklist.i01", "tvir.wq.clarity", ...) -> (reason bucket, why) of a judged item with no value
    judgment_failures: dict[str, tuple[str, str]] = field(default_factory=dict)
    rubric_scores: dict[str, float | None] = field(default_factory=dict)  # "tvir.wq.clarity" -> 1-10; "tvir.flc.count"
    # what a benchmark prepared for this task's suites, by "<benchmark>.<name>" (its evidence_inputs)
    inputs: dict[str, Any] = field(default_factory=dict)
    has_reference: bool = False  # the task has a reference text (WLC article, DRB reference report)
    system_cites: bool | None = None  # False: the release says this system writes without citations
    extraction: str = "claims: the parser's sentences"  # what a claim is here (policy claims.extraction)
    # why the statement extraction left no statement of a report that has some: ours, never a 0 ("" when it did)
    extraction_empty: str = ""
    # URL -> what our detector saw (bot_wall, captcha, ...) on a page that was read and judged all the same
    flagged_pages: dict[str, str] = field(default_factory=dict)

    def rubric(self, rubric_id: str) -> dict[str, float | None]:
        prefix = rubric_id + "."
        return {k[len(prefix):]: v for k, v in self.rubric_scores.items() if k.startswith(prefix)}

    def policy(self, name: str) -> str:
        return policy_value(self.policies, name)

    def judgment_failure(self, prefix: str) -> tuple[str, str] | None:
        """(reason bucket, why) of the report-level judgments under `prefix` that gave no value, the
        most frequent first; None when none failed with a reason."""
        found = [v for k, v in self.judgment_failures.items() if k.startswith(prefix + ".")]
        return max(found, key=found.count) if found else None

    @property
    def cited_claims(self) -> list[ClaimEvidence]:
        return [c for c in self.claims if c.cited]

    @property
    def facts(self) -> list[ClaimEvidence]:
        """The claims that are facts (`ClaimEvidence.is_fact`), in order."""
        return [c for c in self.claims if c.is_fact]

    def coverage(self, claims: Iterable[ClaimEvidence] | None = None,
                 origins: tuple[str, ...] | None = ("cited",)) -> JudgedCoverage:
        """Judged share of the URL sources of `claims` (default: every claim) of the given origins (None: all)."""
        chosen = self.claims if claims is None else claims
        return judged_coverage(v for c in chosen for v in c.verdicts if origins is None or v.origin in origins)

    def is_repeat(self, claim: ClaimEvidence) -> bool:
        return self.duplicate_of.get(claim.claim_id, claim.claim_id) != claim.claim_id
