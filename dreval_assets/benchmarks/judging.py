"""What a benchmark's report judgments are given, and the helpers they share. The report-judgment
stage builds one `JudgmentContext` and hands it to the shared judgments and to each benchmark's."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import polars as pl

from ..judges.base import Judge
from ..judges.prompts import for_judge

REPORT_CHARS = 60_000  # an LLM judge reads the report up to here; longer reports are cut and say so


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


ReportJudgment = Callable[[JudgmentContext], pl.DataFrame]  # -> report_judgments rows


def scored_under(suite: str, benchmark: str, extra_suites: Sequence[str]) -> bool:
    """Whether a task of `benchmark` is scored under `suite` (its own suite, or one the user added)."""
    return benchmark == suite or suite in extra_suites


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
