"""What a suite's claim-level metrics read about one report: its claims, their per-source verdicts,
its reference list and the task's sandbox. Built by the scores stage; no Dagster."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..core.metrics import merge_verdicts
from ..core.models import AdaptiveRubric, RaceCriteria
from .policies import policy_value


@dataclass(frozen=True)
class SourceVerdict:
    source: str  # URL, or "[n]" for a citation with no URL
    verdict: str
    origin: str = "cited"  # cited | sandbox (evidence found for the claim, not cited by it)


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


@dataclass
class ReportEvidence:
    system: str
    task: str
    benchmark: str
    judge: str
    claims: list[ClaimEvidence] = field(default_factory=list)
    references: list[dict] = field(default_factory=list)  # {index, url, title}
    citation_style: str = "inline"  # inline | bibliography_only | none
    sandbox: list[SandboxDoc] = field(default_factory=list)
    attachments: list[str] = field(default_factory=list)
    trace_weights: dict[str, float] | None = None  # MMDR task-adaptive weights, when a judge proposed them
    trace_weights_source: str = ""
    policies: dict[str, str] = field(default_factory=dict)  # e.g. {"wlc.ref_acc.denominator": "all"}
    duplicate_of: dict[str, str] = field(default_factory=dict)  # claim id -> first claim stating the same fact
    checklist: list[float | None] = field(default_factory=list)  # per requirement 1 / 0.5 / 0, None when N/A
    adaptive_rubric: AdaptiveRubric | None = None  # MiroEval's generated rubric for this task
    rubric_scores: dict[str, float | None] = field(default_factory=dict)  # "tvir.wq.clarity" -> 1-10; "tvir.flc.count"
    race_criteria: RaceCriteria | None = None  # DeepResearch Bench RACE criteria of this task, as loaded
    has_reference: bool = False  # the task has a reference text (WLC article, DRB reference report)

    def rubric(self, rubric_id: str) -> dict[str, float | None]:
        prefix = rubric_id + "."
        return {k[len(prefix):]: v for k, v in self.rubric_scores.items() if k.startswith(prefix)}

    def policy(self, name: str) -> str:
        return policy_value(self.policies, name)

    @property
    def cited_claims(self) -> list[ClaimEvidence]:
        return [c for c in self.claims if c.cited]

    @property
    def facts(self) -> list[ClaimEvidence]:
        """Cited sentences and table rows: what TVIR and FACT count, and what gets deduplicated."""
        return [c for c in self.cited_claims if c.kind in ("sentence", "table_row")]

    def is_repeat(self, claim: ClaimEvidence) -> bool:
        return self.duplicate_of.get(claim.claim_id, claim.claim_id) != claim.claim_id
