"""task_rubrics: what a method generates or a release supplies once per task, shared by all systems.

Kinds (one `kind` per artifact, its JSON in `rubric`):
- `checklist` and `race_criteria`: as loaded with the task (any task that has them).
- what a benchmark generates per task (`Benchmark.task_artifacts`, e.g. an adaptive rubric, the key
  facts of each attachment), for the tasks scored under it.
Loaded artifacts carry judge `loaded` and the hash of their content in `template_hash`, so a
changed release shows up as a changed row; generated ones carry the judge and template hash.
"""
from __future__ import annotations

import hashlib
import json
from functools import partial
from typing import Mapping, Sequence

import polars as pl

from ..benchmarks.judging import scored_under, task_artifacts
from ..benchmarks.registry import BENCHMARKS, judge_for
from ..judges.base import Judge
from ..judges.parallel import each
from .frames import frame

LOADED = "loaded"


def generate_rubrics(tasks: pl.DataFrame, attachments: Mapping[str, Mapping[str, str]], judge: Judge,
                     extra_suites: Sequence[str] = (), labels: Mapping[str, str] | None = None) -> pl.DataFrame:
    """`attachments`: task -> attachment name -> its text (documents) or ImageInput (images)."""
    rows = _loaded(tasks)
    makers = []  # each artifact of each benchmark, independent of the others: asked at once
    for benchmark in BENCHMARKS.values():
        wanted = [r for r in tasks.iter_rows(named=True) if scored_under(benchmark.name, r["benchmark"], extra_suites)]
        makers.extend(partial(make, wanted, attachments, judge_for(judge, benchmark.name), labels or {})
                      for make in benchmark.task_artifacts)  # at the benchmark's judge temperature
    for made in each(judge, makers):
        rows.extend(made)
    return frame("task_rubrics", rows)


def _loaded(tasks: pl.DataFrame) -> list[dict]:
    rows = []
    for r in tasks.iter_rows(named=True):
        artifacts = {"checklist": list(r["checklist"] or []) or None,
                     "race_criteria": json.loads(r["race_criteria"]) if r.get("race_criteria") else None}
        for kind, artifact in artifacts.items():
            if artifact is None:
                continue
            text = json.dumps(artifact, ensure_ascii=False, sort_keys=True)
            rows.append({"task": r["task"], "kind": kind, "rubric": text, "judge": LOADED, "template": "",
                         "template_hash": hashlib.sha256(text.encode()).hexdigest()[:16], "cache_key": None,
                         "na_reason": None, "detail": "as loaded with the task"})
    return rows


def checklists(rubrics: pl.DataFrame | None) -> dict[str, list[str]]:
    return {t: list(found[0]) for t, found in task_artifacts(rubrics, "checklist").items()}
