"""What a benchmark is to the pipeline: one object per benchmark folder, listed by the registry.

The generic stages and the CLI ask the registry, never a benchmark by name: its suite (metrics and
headline), its release loader, its fixed rubrics (and whether it judges them and its checklists itself),
its policies with their defaults, whether its statements look for evidence beyond their citations, its
own report judgments, the offline judge's handlers for its templates, its judge's published
temperature and its live refresh."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from pydantic import BaseModel

from .judging import ReportJudgment

if TYPE_CHECKING:
    import polars as pl

    from ..judges.base import Judge
    from ..releases.published import Check
from .policies import Policy
from .rubric import Rubric
from .suite import Suite


# The offline judge's answer to one template: variables in, (answer, extra numbers) out.
HeuristicHandler = Callable[[Mapping[str, Any]], tuple[BaseModel, dict[str, Any]]]
# Per-task artifacts it generates once for every system (task_rubrics rows): the task rows scored under
# it, their attachments (task -> name -> text, or an image attachment's judges.base.ImageInput), the
# judge, ledger labels.
TaskArtifacts = Callable[[list[dict], Mapping[str, Mapping[str, str]], "Judge", Mapping[str, str]], list[dict]]
# What its suite reads per task besides the report (ReportEvidence.inputs, "<benchmark>.<name>"):
# the task rows scored under it, the task_rubrics rows, the judge -> task -> inputs.
EvidenceInputs = Callable[[list[dict], "pl.DataFrame | None", "Judge"], dict[str, dict[str, Any]]]
# `dreval verify`: the benchmark's published_scores rows -> one Check per published aggregate it recomputes.
PublishedChecks = Callable[["pl.DataFrame"], Iterable["Check"]]


@dataclass(frozen=True)
class LiveRefresh:
    """How a benchmark refreshes itself from the live web. `module` (imported when a refresh runs)
    defines `refresh(store, judge, config: live.config.LiveConfig, api: fetch.api.JsonApi) ->
    live.summary.RefreshSummary`; `schedule` is the refresh job's cron (UTC)."""
    module: str
    schedule: str


@dataclass(frozen=True)
class Benchmark:
    name: str  # the task keys' prefix and the suite's name
    suite: Suite
    loader: str | None = None  # module of its release loader (layout_problem, iter_tasks, iter_reports, iter_systems)
    rubrics: tuple[Rubric, ...] = ()  # fixed rubrics (scored by the shared `rubric_scores` template unless their own)
    # its report judgments credit its tasks' checklists and score its fixed rubrics themselves (TVIR: on the
    # corrected report, after caption revision); the shared checklist and rubric judgments leave them alone
    judges_text_itself: bool = False
    policies: dict[str, Policy] = field(default_factory=dict)  # "<name>.<choice>" -> Policy
    needs_sandbox_evidence: bool = False  # statements are checked against the task's sandbox beyond citations
    report_judgments: tuple[ReportJudgment, ...] = ()  # its own report-level judgments (rows of report_judgments)
    heuristic_handlers: Mapping[str, HeuristicHandler] = field(default_factory=dict)  # template -> offline answer
    task_artifacts: tuple[TaskArtifacts, ...] = ()
    evidence_inputs: EvidenceInputs | None = None
    prompts_dir: Path | None = None  # its own templates, for a benchmark that lives outside this package
    published_checks: PublishedChecks | None = None  # recomputes its release's published aggregates
    # the tasks its published release holds, per split ('all' when it has none): an aggregate a release
    # publishes may be over all of them while a copy holds fewer (`dreval verify`: not comparable then)
    published_tasks: Mapping[str, int] = field(default_factory=dict)
    # the sampling temperature of its published judge: its own judgments and the shared ones on its tasks
    # are asked at it (`judges/temperature.py`); DREVAL_JUDGE_TEMPERATURE overrides every benchmark's
    judge_temperature: float = 0.0
    # its own claim-verdict prompts (single, batch), answered with the shared models, for its tasks' claims
    # (None: the shared `claim_verdict`, `claim_verdicts_batch`)
    claim_verdict_templates: tuple[str, str] | None = None
    live: LiveRefresh | None = None  # its refresh from the live web (its folder's `live/`), if it has one

    def __post_init__(self) -> None:
        if self.suite.name != self.name:
            raise ValueError(f"benchmark {self.name}: its suite is named {self.suite.name!r}")
        stray = [p for p in self.policies if not p.startswith(self.name + ".")]
        if stray:
            raise ValueError(f"benchmark {self.name}: policies must start with '{self.name}.': {stray}")
