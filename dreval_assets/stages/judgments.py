"""report_judgments: report-level judgments.

Shared by every benchmark: checklists (every requirement of the task's checklist credited 1 / 0.5 / 0,
in calls of up to `benchmarks.checklists.CHUNK` items) and fixed rubrics (all dimensions of one rubric
scored 1-10 in one call, or one count of contradictions), as the registry's benchmarks declare them,
except for a benchmark that judges them itself (`Benchmark.judges_text_itself`). Then each registered
benchmark's own report judgments, given one `JudgmentContext`."""
from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Mapping, Sequence

import polars as pl

from ..benchmarks.checklists import chunked_requests, judged_rows, numbered, unjudged_rows
from ..benchmarks.judging import JudgmentContext, report_for_judge
from ..benchmarks.registry import BENCHMARKS, judge_for, judge_for_tasks, rubrics_for
from ..benchmarks.rubric import rubric_answer_rows
from ..benchmarks.suites import suite_names
from ..core.models import ContradictionCount, RubricScores
from ..judges.base import Judge, JudgmentRequest
from ..judges.parallel import each
from ..judges.prompts import load_template
from .frames import frame, rows_by_partition
from .task_rubrics import checklists as task_checklists

TEMPLATE = "checklist_items"
RUBRIC_TEMPLATE = "rubric_scores"  # a fixed rubric of another template answers a ContradictionCount


def judge_checklists(keys: Sequence[tuple[str, str]], reports: pl.DataFrame, rubrics: pl.DataFrame, judge: Judge,
                     labels: Mapping[str, str] | None = None, tasks: pl.DataFrame | None = None) -> pl.DataFrame:
    """Checklists come from `task_rubrics` (as loaded with the task). A task of a benchmark that judges
    its checklists itself (`Benchmark.judges_text_itself`, known from `tasks`) is left to it."""
    checklists = task_checklists(rubrics)
    report_by_key = rows_by_partition(reports)
    _, template_hash = load_template(TEMPLATE)
    own = _judged_by_their_benchmark(tasks)
    rows, asked = [], []
    for system, task in keys:
        items = numbered(checklists.get(task, []))
        report = report_by_key.get((system, task))
        base = {"system": system, "task": task, "kind": "checklist", "judge": judge.judge_id,
                "template": TEMPLATE, "template_hash": template_hash, "cache_key": None, "score": None}
        if not items or task in own:
            continue
        if report is None or report["status"] != "ok":
            rows.extend(unjudged_rows(base, items, report["detail"] if report else "",
                                      (report or {}).get("na_reason") or "model_failure"))
            continue
        variables = {"report": report_for_judge(report["text"], judge)}
        asked.extend((base, chunk, request) for chunk, request in chunked_requests(
            items, TEMPLATE, variables, {**(labels or {}), "system": system, "task": task}))
    judgments = judge.judge_many([request for _, _, request in asked])
    for (base, chunk, _), judgment in zip(asked, judgments, strict=True):
        rows.extend(judged_rows(base, chunk, judgment))
    return frame("report_judgments", rows)


def _judged_by_their_benchmark(tasks: pl.DataFrame | None) -> set[str]:
    if tasks is None:
        return set()
    return {r["task"] for r in tasks.iter_rows(named=True)
            if (b := BENCHMARKS.get(r["benchmark"])) is not None and b.judges_text_itself}


def judge_rubrics(keys: Sequence[tuple[str, str]], reports: pl.DataFrame, tasks: pl.DataFrame, judge: Judge,
                  extra_suites: Sequence[str] = (), labels: Mapping[str, str] | None = None) -> pl.DataFrame:
    """One call per fixed rubric of the task's suites per report (never per dimension); a rubric of
    template `contradictions` is one count of internal contradictions. Every call is given the task's
    query, as the papers' rubric prompts are."""
    benchmark = {r["task"]: r["benchmark"] for r in tasks.iter_rows(named=True)}
    own = {b.name for b in BENCHMARKS.values() if b.judges_text_itself}  # they score their rubrics themselves
    query = {r["task"]: r["query"] or "" for r in tasks.iter_rows(named=True)}
    report_by_key = rows_by_partition(reports)
    asked: list[tuple[dict, list[tuple[str, str]], JudgmentRequest]] = []
    rows = []
    for system, task in keys:
        names = suite_names(benchmark.get(task, "generic"), extra_suites)
        wanted = [(r.rubric_id, r.template, list(r.dimensions), r.title) for r in rubrics_for(names - own)]
        report = report_by_key.get((system, task))
        for rubric_id, template, dims, title in wanted:
            base = {"system": system, "task": task, "kind": "rubric" if template == RUBRIC_TEMPLATE else "contradictions",
                    "judge": judge.judge_id, "template": template, "template_hash": load_template(template)[1],
                    "cache_key": None, "credit": None}
            if report is None or report["status"] != "ok":
                rows.extend({**base, "item_id": f"{rubric_id}.{d}", "item": what, "score": None,
                             "reason": report["detail"] if report else "", "na_reason": "model_failure"} for d, what in dims)
                continue
            text = report_for_judge(report["text"], judge)
            variables = {"rubric_id": rubric_id, "rubric": title, "report": text, "query": query.get(task, ""),
                         "dimensions": "\n".join(f"- [{d}] {what}" for d, what in dims)}
            model = RubricScores if template == RUBRIC_TEMPLATE else ContradictionCount
            request = JudgmentRequest(template, variables, model, {**(labels or {}), "system": system, "task": task})
            asked.append(({**base, "rubric_id": rubric_id}, dims, request))
    judgments = judge.judge_many([request for _, _, request in asked])
    for (base, dims, _), judgment in zip(asked, judgments, strict=True):
        rubric_id = base.pop("rubric_id")
        base["cache_key"] = judgment.provenance.cache_key or None
        rows += rubric_answer_rows(base, rubric_id, dims, judgment)
    return frame("report_judgments", rows)


def judge_reports(ctx: JudgmentContext) -> pl.DataFrame:
    """Every report-level judgment of these partitions: the shared ones (at the temperature of each task's
    benchmark), then each benchmark's (at its own judge's temperature)."""
    shared = judge_for_tasks(ctx.judge, ctx.tasks.iter_rows(named=True))
    pieces = [lambda: judge_checklists(ctx.keys, ctx.reports, ctx.rubrics, shared, ctx.labels, ctx.tasks),
              lambda: judge_rubrics(ctx.keys, ctx.reports, ctx.tasks, shared, ctx.extra_suites, ctx.labels)]
    for benchmark in BENCHMARKS.values():
        own = replace(ctx, judge=judge_for(ctx.judge, benchmark.name))
        pieces += [partial(judgment, own) for judgment in benchmark.report_judgments]
    return pl.concat(each(ctx.judge, pieces))  # all templates in one pool: no waves
