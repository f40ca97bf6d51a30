"""TVIR's report judgments in the paper's order (../shared/methods/tvir.md): sanitise, revise captions,
then every text-only judgment on the corrected report (`visual_text.corrected_report`: figures whose
image is missing or broken and pseudo-visuals taken out with their captions, the others as
placeholders carrying their revised captions):
1. the visual first round (chart checks, captions: `visual_judgments.caption_round`);
2. with the revisions in place, in one batch: MC, FCI, CSC (`visual_round`) and the textual ones —
   IA (the task's checklist with the query, template `tvir/checklist_items`), WQ and ADB (their full
   rubrics, `tvir/writing_quality`, `tvir/analytical_depth`, with the query) and FLC
   (`tvir/contradictions`).
TVIR judges its checklists and rubrics itself (`Benchmark.judges_text_itself`), so the shared ones
leave its tasks alone; a task of another benchmark scored under TVIR as an extra suite keeps its own
benchmark's checklist rows, and gets TVIR's rubrics from here.

Repeats (policy `tvir.judge_runs`, default 3: the paper averages three runs of its judge): the whole
sequence runs that many times, each run with its own caption revisions and its own cache keys
(`JudgmentRequest.run`), and each item's row is the mean over the runs that answered it, saying how
many did. The offline judge answers every run alike, so it is asked once."""
from __future__ import annotations

import itertools
from dataclasses import replace
from functools import partial
from typing import Any, Iterable, Iterator, Sequence

import polars as pl

from ...core.models import ContradictionCount, RubricScores
from ...judges.base import Judgment, JudgmentRequest, as_taken
from ...judges.parallel import each
from ...judges.prompts import load_template
from ...stages.frames import frame, rows_by_partition
from ..checklists import chunked_requests, judged_rows, numbered, unjudged_rows
from ..judging import JudgmentContext, report_for_judge, scored_under, task_artifacts
from ..policies import policy_value
from ..rubric import rubric_answer_rows
from .metrics import RUNS_POLICY
from .rubrics import RUBRICS, SCORED
from .visual_judgments import Plan, Rows, answer_round, caption_round, measured_rows, report_plans, visual_round

CHECKLIST_TEMPLATE = "tvir/checklist_items"


def judge_runs(ctx: JudgmentContext) -> int:
    """How many runs are averaged: the policy's, or one for a judge that answers every run alike."""
    if getattr(ctx.judge, "deterministic", False):
        return 1
    return int(policy_value(dict(ctx.policies), RUNS_POLICY))


def tvir_judgments(ctx: JudgmentContext) -> pl.DataFrame:
    """Every TVIR report judgment of these partitions (see the module doc)."""
    runs = judge_runs(ctx)
    plans = report_plans(ctx)  # the figures' kinds measured once, before the runs ask at the same time
    return frame("report_judgments", merge_runs(each(ctx.judge, [
        partial(_one_run, ctx, [replace(plan, run=run, captions={}) for plan in plans], run)
        for run in range(1, runs + 1)])))


def _one_run(ctx: JudgmentContext, plans: list[Plan], run: int) -> list[dict]:
    out = Rows(ctx.judge)
    if run == 1:  # measured, no judge: once
        for plan in plans:
            measured_rows(plan, out)
    # each round's requests go to the judge as they are made (a streaming judge sends the first while
    # the rest are made); what was asked is kept, in order, for reading the answers
    first: list = []
    answer_round(first, ctx.judge.judge_many(as_taken(ctx.judge, _kept(caption_round(ctx, plans, out), first))), out)
    own = {r["task"] for r in ctx.tasks.iter_rows(named=True) if r["benchmark"] == "tvir"}
    second: list = []
    textual: list = []
    judgments = ctx.judge.judge_many(as_taken(ctx.judge, itertools.chain(
        _kept(visual_round(ctx, plans, out), second),
        _kept((asked for plan in plans for asked in _textual_requests(ctx, plan, plan.task in own)), textual))))
    answer_round(second, judgments[:len(second)], out)
    rows = out.rows + (_unreadable_rows(ctx) if run == 1 else [])
    for (base, what, _), judgment in zip(textual, judgments[len(second):], strict=True):
        rows.extend(_textual_rows(base, what, judgment))
    return rows


def _kept(asked: Iterable[tuple], into: list) -> Iterator[JudgmentRequest]:
    """Each asked item's request, the item kept in `into` as it is taken."""
    for item in asked:
        into.append(item)
        yield item[-1]


def _textual_requests(ctx: JudgmentContext, plan: Plan, own_task: bool) -> list[tuple[dict, Any, JudgmentRequest]]:
    """IA (a TVIR task's own checklist), WQ, ADB and FLC, all on the corrected report."""
    labels = {**ctx.labels, "system": plan.system, "task": plan.task}
    report = report_for_judge(plan.corrected(), ctx.judge)
    asked: list[tuple[dict, Any, JudgmentRequest]] = []
    if own_task:
        items = numbered(_checklist(ctx, plan.task))
        base = _base(ctx, plan.system, plan.task, "checklist", CHECKLIST_TEMPLATE)
        asked += [(base, chunk, request) for chunk, request in chunked_requests(
            items, CHECKLIST_TEMPLATE, {"report": report, "query": plan.query}, labels, run=plan.run)]
    for rubric in RUBRICS:
        counts = rubric not in SCORED
        base = {**_base(ctx, plan.system, plan.task, "contradictions" if counts else "rubric", rubric.template),
                "credit": None}
        variables = {"rubric_id": rubric.rubric_id, "rubric": rubric.title, "report": report, "query": plan.query,
                     "dimensions": "\n".join(f"- [{d}] {what}" for d, what in rubric.dimensions)}
        request = JudgmentRequest(rubric.template, variables, ContradictionCount if counts else RubricScores, labels,
                                  run=plan.run)
        asked.append((base, rubric, request))
    return asked


def _checklist(ctx: JudgmentContext, task: str) -> list[str]:
    found = task_artifacts(ctx.rubrics, "checklist").get(task)
    return list(found[0]) if found else []


def _base(ctx: JudgmentContext, system: str, task: str, kind: str, template: str) -> dict:
    return {"system": system, "task": task, "kind": kind, "judge": ctx.judge.judge_id, "template": template,
            "template_hash": load_template(template)[1], "cache_key": None, "score": None}


def _textual_rows(base: dict, what: Any, judgment: Judgment) -> list[dict]:
    if base["kind"] == "checklist":
        return judged_rows(base, what, judgment)
    rubric = what
    return rubric_answer_rows({**base, "cache_key": judgment.provenance.cache_key or None}, rubric.rubric_id,
                              rubric.dimensions, judgment)


def _unreadable_rows(ctx: JudgmentContext) -> list[dict]:
    """A report that cannot be read: its checklist items and rubric dimensions N/A with the report's reason."""
    task_rows = {r["task"]: r for r in ctx.tasks.iter_rows(named=True)}
    reports = rows_by_partition(ctx.reports)
    rows = []
    for system, task in ctx.keys:
        row, report = task_rows.get(task), reports.get((system, task))
        if row is None or not scored_under("tvir", row["benchmark"], ctx.extra_suites):
            continue
        if report is not None and report["status"] == "ok":
            continue
        reason, bucket = (report["detail"] if report else ""), (report or {}).get("na_reason") or "model_failure"
        if row["benchmark"] == "tvir":
            rows += unjudged_rows(_base(ctx, system, task, "checklist", CHECKLIST_TEMPLATE),
                                  numbered(_checklist(ctx, task)), reason, bucket)
        for rubric in RUBRICS:
            base = {**_base(ctx, system, task, "rubric" if rubric in SCORED else "contradictions", rubric.template),
                    "credit": None}
            rows += [{**base, "item_id": f"{rubric.rubric_id}.{d}", "item": what, "score": None, "reason": reason,
                      "na_reason": bucket} for d, what in rubric.dimensions]
    return rows


def merge_runs(per_run: Sequence[list[dict]]) -> list[dict]:
    """One row per item: the mean of the runs that gave it a value (credit or score), saying how many
    runs answered; N/A only when none did. Rows no judge made (measured, or 0 by the paper's rule) and
    rows of the first run alone (a report that cannot be read) stay as they are; a caption revision is
    the first run's that made one, saying in how many runs it was made."""
    if len(per_run) == 1:
        return list(per_run[0])
    n = len(per_run)
    grouped: dict[tuple, list[dict]] = {}
    for rows in per_run:
        for row in rows:
            grouped.setdefault((row["system"], row["task"], row["kind"], row["item_id"]), []).append(row)
    return [_merged(rows, n) for rows in grouped.values()]


def _merged(rows: list[dict], n: int) -> dict:
    first = rows[0]
    if not first["template"] or len(rows) == 1 and first["kind"] != "caption_revision":
        return first
    if first["kind"] == "caption_revision":
        return {**first, "reason": f"revised in {len(rows)} of {n} runs (each run's later judgments read its own); "
                                   f"{first['reason']}"[:1000]}
    field = "credit" if first["kind"] == "checklist" else "score"
    answered = [r for r in rows if r[field] is not None]
    if not answered:
        return {**first, "reason": f"no run of {n} answered: {first['reason']}"[:1000]}
    values = [r[field] for r in answered]
    mean = sum(values) / len(values)
    shown = ", ".join(f"{v:g}" for v in values)
    return {**answered[0], field: mean,
            "reason": f"mean of {len(values)} of {n} runs ({shown}): {answered[0]['reason']}"[:1000]}
