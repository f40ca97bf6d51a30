"""Domain models shared by every layer. Plain pydantic, no Dagster."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

ClaimKind = Literal["sentence", "table_row", "figure_caption", "uncited"]
Verdict = Literal["supported", "partial", "unsupported", "contradicted", "unknown"]
VERDICTS: tuple[str, ...] = ("supported", "partial", "unsupported", "contradicted", "unknown")
PageRole = Literal["supportive", "distractor", "noise", "attachment"]
# Why a row has no value: the four failure buckets (whose fault, DESIGN "Who is at fault"), and
# `not_applicable`, a metric that does not apply to this task or system: neither a failure nor a zero.
NaReason = Literal["provider_failure", "data_accessibility", "pipeline_failure", "model_failure", "not_applicable"]
NA_REASONS: tuple[str, ...] = ("provider_failure", "data_accessibility", "pipeline_failure", "model_failure",
                               "not_applicable")


class SandboxPage(BaseModel):
    """One document of a task's offline corpus (DR³-style supportive/distractor/noise)."""

    url: str
    title: str = ""
    role: PageRole = "noise"
    text: str
    # the named corpora of the task that hold this page (DR³: the sandbox sizes, "32k" ... "512k");
    # empty: the task has one corpus, or the page is in every run's (an attachment)
    corpora: list[str] = Field(default_factory=list)


class RaceCriterion(BaseModel):
    criterion: str
    explanation: str = ""
    weight: float = Field(ge=0)


class RaceCriteria(BaseModel):
    """DeepResearch Bench RACE criteria of one task: dimension weights and weighted criteria per dimension."""

    dimension_weights: dict[str, float]
    criteria: dict[str, list[RaceCriterion]]


class Task(BaseModel):
    key: str  # partition key `<benchmark>.<slug>`
    benchmark: str
    original_id: str
    query: str
    language: str = "en"
    domain: str = ""
    modality: Literal["text", "multimodal"] = "text"
    attachments: list[str] = Field(default_factory=list)  # paths relative to the release root, or URLs (images)
    checklist: list[str] = Field(default_factory=list)
    reference_article: str | None = None  # the text a reference-based method compares with (WLC article, DRB report)
    gold_facts: list[str] = Field(default_factory=list)  # gold statements (WLC)
    gold_insights: list[str] = Field(default_factory=list)  # DR³ gold insights from the user files (I_UF)
    gold_insights_sandbox: list[str] = Field(default_factory=list)  # DR³ gold insights from the sandbox (I_SC)
    visual_ground_truth: str | None = None  # MMDR textualised visual ground truth
    visual_ground_truth_version: str | None = None
    race_criteria: RaceCriteria | None = None
    attributes: dict[str, str] = Field(default_factory=dict)  # release labels kept as given: difficulty, set, ...
    sandbox: list[SandboxPage] = Field(default_factory=list)
    attachment_texts: dict[str, str] = Field(default_factory=dict)  # readable attachments, name -> text
    attachment_images: dict[str, str] = Field(default_factory=dict)  # image attachments, name -> data URL (judge size)


class Reference(BaseModel):
    """One entry of a report's reference list."""

    index: int
    url: str | None = None
    title: str = ""


class Citation(BaseModel):
    """An inline citation marker as found in the text."""

    marker: str  # the literal text, e.g. "[3-5]"
    indices: list[int] = Field(default_factory=list)  # numbered markers
    url: str | None = None  # inline link or bare URL
    title: str = ""


class Figure(BaseModel):
    caption: str = ""
    src: str = ""
    citation_indices: list[int] = Field(default_factory=list)
    section: str = ""


class Table(BaseModel):
    section: str = ""
    header: list[str] = Field(default_factory=list)
    rows: list[list[str]] = Field(default_factory=list)


class Section(BaseModel):
    title: str
    level: int
    text: str


class Claim(BaseModel):
    """An atomic statement of a report with its citations resolved to URLs."""

    claim_id: str  # stable within a report: c0001, c0002, ...
    kind: ClaimKind
    text: str
    section: str = ""
    citation_indices: list[int] = Field(default_factory=list)
    urls: list[str] = Field(default_factory=list)
    unresolved_indices: list[int] = Field(default_factory=list)


class ParsedReport(BaseModel):
    sections: list[Section] = Field(default_factory=list)
    sentences: list[str] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    references: list[Reference] = Field(default_factory=list)
    figures: list[Figure] = Field(default_factory=list)
    tables: list[Table] = Field(default_factory=list)
    claims: list[Claim] = Field(default_factory=list)
    unresolved_indices: list[int] = Field(default_factory=list)
    has_inline_citations: bool = False
    has_reference_list: bool = False
    warnings: list[str] = Field(default_factory=list)


class FetchResult(BaseModel):
    """What became of one cited URL. `status` is `ok` only when text is usable evidence."""

    url: str
    status: Literal["ok", "unknown"]
    backend: str  # sandbox | cache | live
    final_url: str | None = None
    title: str = ""
    content_type: str = ""
    text: str | None = None
    role: str | None = None  # sandbox role when known
    na_reason: NaReason | None = None
    detail: str = ""
    http_status: int | None = None
    charset: str | None = None
    n_bytes: int = 0
    truncated: bool = False  # the body hit the byte cap
    blocked: str | None = None  # bot_wall, captcha, login_wall, paywall, cookie_wall, empty, error_page, ...
    attempts: int = 0


class ClaimVerdict(BaseModel):
    verdict: Verdict
    evidence: str = ""
    reason: str = ""


class ItemVerdict(ClaimVerdict):
    """One claim's verdict inside a batch that checks several claims against one source."""

    claim_id: str


class ClaimVerdictBatch(BaseModel):
    verdicts: list[ItemVerdict]


class ItemCredit(BaseModel):
    item_id: str
    credit: Literal[0, 0.5, 1]
    reason: str = ""


class ChecklistJudgment(BaseModel):
    """Credits for checklist requirements against one report."""

    items: list[ItemCredit]


class DimensionScore(BaseModel):
    dimension_id: str
    score: int = Field(ge=1, le=10)
    reason: str = ""


class RubricScores(BaseModel):
    """1-10 scores for every dimension of one rubric, judged in one call."""

    scores: list[DimensionScore]


class ContradictionCount(BaseModel):
    count: int = Field(ge=0)
    examples: list[str] = Field(default_factory=list)


class CriterionWinner(BaseModel):
    criterion_id: str
    winner: Literal["A", "B", "tie"]
    reason: str = ""


class PairwiseOutcomes(BaseModel):
    """Per criterion of one category, which of two articles meets it better."""

    outcomes: list[CriterionWinner]


class FlaeScores(BaseModel):
    """MMDR FLAE judge channel: READ, INSH, STRU in [0, 1] and task-adaptive weights over them."""

    read: float = Field(ge=0, le=1)
    insh: float = Field(ge=0, le=1)
    stru: float = Field(ge=0, le=1)
    weight_read: float = Field(ge=0)
    weight_insh: float = Field(ge=0)
    weight_stru: float = Field(ge=0)
    alpha: float | None = Field(default=None, ge=0, le=1)  # the judge-set fusion weight (policy mmdr.flae.alpha=judge)


class RubricCriterion(BaseModel):
    criterion_id: str
    text: str
    explanation: str = ""  # what meeting the criterion looks like, shown to the scoring judge
    weight: float = Field(default=1.0, ge=0)


class RubricDimension(BaseModel):
    dimension_id: str
    name: str
    dynamic: bool = False  # task-specific (Grounding among them) rather than one of the four universal
    criteria: list[RubricCriterion]


class AdaptiveRubric(BaseModel):
    """A task's generated rubric: dimensions with weighted criteria, and dimension weights."""

    dimensions: list[RubricDimension]
    weights: dict[str, float]


class CriterionScore(BaseModel):
    criterion_id: str
    score: float = Field(ge=0, le=10)
    reason: str = ""


class CriteriaScores(BaseModel):
    """0-10 scores for every criterion of one rubric dimension, judged in one call."""

    scores: list[CriterionScore]


class RaceCriterionScores(BaseModel):
    criterion_id: str
    score_a: float = Field(ge=0, le=10)
    score_b: float = Field(ge=0, le=10)
    reason: str = ""


class RaceScores(BaseModel):
    """DeepResearch Bench RACE: two articles scored 0-10 on every criterion of the task, in one call."""

    scores: list[RaceCriterionScores]


class KeyFacts(BaseModel):
    """MiroEval Grounding: the facts of one attachment a report that reads it correctly should keep."""

    facts: list[str] = Field(max_length=30)


class SameStatement(BaseModel):
    """Whether two statements of one report state the same fact (for deduplication)."""

    same: bool
    reason: str = ""


class TraceWeights(BaseModel):
    """MMDR task-adaptive weights over CON, COV and FID (normalised by the suite)."""

    con: float = Field(ge=0)
    cov: float = Field(ge=0)
    fid: float = Field(ge=0)
    rationale: str = ""


class ExtractedStatement(BaseModel):
    """One atomic statement a judge extracted, naming the report unit (claim id) it comes from."""

    unit: str
    text: str


class StatementExtraction(BaseModel):
    """The statements of one chunk of a report's units (citations are never the judge's: the unit's)."""

    statements: list[ExtractedStatement]
