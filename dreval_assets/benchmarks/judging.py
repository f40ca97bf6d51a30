"""What a benchmark's report judgments are given, and the helpers they share. The report-judgment
stage builds one `JudgmentContext` and hands it to the shared judgments and to each benchmark's."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping, Sequence

import polars as pl

from ..core.images import ImageMeasure
from ..judges.base import ImageInput, Judge
from ..judges.prompts import for_judge
from .cited_sources import CitedSources

REPORT_CHARS = 60_000  # an LLM judge reads the report up to here; longer reports are cut and say so


@dataclass(frozen=True)
class FigureImage:
    """One figure of a report with its image, as the `report_images` asset found it: the parser's
    figure (index into `parsed_reports.figures`, caption, citations), the text around it, where its
    image was looked for, and either the measured image with the bytes a judge is sent (`image`) or
    why it is invalid (missing, unreadable, a pseudo-visual): the paper's rule for invalid images
    belongs to each benchmark."""

    system: str
    task: str
    figure: int  # 0-based index into parsed_reports.figures
    src: str
    caption: str
    section: str
    citation_indices: tuple[int, ...]
    context: str  # the report text around the figure, with `<figure>` where it stands
    kind: str  # photo | chart | table | diagram: rule cues from the src folder and the caption
    status: str  # ok | invalid
    invalid_reason: str = ""
    measure: ImageMeasure | None = None
    duplicate_of: int | None = None  # index of an earlier figure of the same report showing the same image
    image: ImageInput | None = None  # set exactly when status is ok
    invalid_bucket: str | None = None  # whose failure an invalid image is (report_images.na_reason): model_failure
    # is the report's own (a benchmark may score it as failed), another bucket ours (N/A, never a 0)
    origin: str = "figure"  # figure | pseudo | cited (a cited reference whose URL is an image: not a figure)


@dataclass(frozen=True)
class JudgmentContext:
    keys: Sequence[tuple[str, str]]  # (system, task) partitions
    reports: pl.DataFrame
    tasks: pl.DataFrame
    rubrics: pl.DataFrame  # task_rubrics rows of these tasks
    judge: Judge
    extra_suites: Sequence[str] = ()
    policies: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    claims: pl.DataFrame | None = None  # report_claims rows of these partitions (the parser's or the judge's statements)
    figures: Mapping[tuple[str, str], Sequence[FigureImage]] = field(default_factory=dict)  # (system, task) -> figures
    cited_sources: CitedSources | None = None  # the pages reports cite, by index (charts checked against them)
    # task -> the task's own images (its image attachments, judge-ready), in attachment order
    task_images: Mapping[str, Sequence[ImageInput]] = field(default_factory=dict)


ReportJudgment = Callable[[JudgmentContext], pl.DataFrame]  # -> report_judgments rows


def scored_under(suite: str, benchmark: str, extra_suites: Sequence[str]) -> bool:
    """Whether a task of `benchmark` is scored under `suite` (its own suite, or one the user added)."""
    return benchmark == suite or suite in extra_suites


def readable_reports(ctx: "JudgmentContext", suite: str) -> Iterator[tuple[str, str, dict, dict]]:
    """(system, task, task row, report row) of each partition scored under `suite` whose report could be
    read; the suite's own rows say why the others could not."""
    task_rows = {r["task"]: r for r in ctx.tasks.iter_rows(named=True)}
    reports = {(r["system"], r["task"]): r for r in ctx.reports.iter_rows(named=True)}
    for system, task in ctx.keys:
        task_row, report = task_rows.get(task), reports.get((system, task))
        if task_row is None or not scored_under(suite, task_row["benchmark"], ctx.extra_suites):
            continue
        if report is not None and report["status"] == "ok":
            yield system, task, task_row, report


def report_for_judge(text: str, judge: Judge) -> str:
    return for_judge(text, judge.source_token_budget, REPORT_CHARS, "report cut")[0]


def seeded_first(system: str, task: str, label: str, seed: str) -> bool:
    """A reproducible coin for one-order position-bias policies: is the generated text shown first?"""
    digest = hashlib.sha256(f"{seed}|{system}|{task}|{label}".encode()).digest()
    return digest[0] % 2 == 0


def task_artifacts(rubrics: pl.DataFrame | None, kind: str) -> dict[str, list]:
    """task -> the parsed `task_rubrics` artifacts of one kind (rows that are N/A left out)."""
    found: dict[str, list] = {}
    if rubrics is None:
        return found
    for r in rubrics.iter_rows(named=True):
        if r["kind"] == kind and r["rubric"]:
            found.setdefault(r["task"], []).append(json.loads(r["rubric"]))
    return found
