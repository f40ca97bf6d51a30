"""DR³ information recall (methods/dr3.md): does the report cover each gold insight of its task?

The task's insights come in two sources kept apart since the loader: from the user files (`uf`,
Task.gold_insights) and from the sandbox corpus (`sc`, Task.gold_insights_sandbox). Each source's
insights go to the judge in batches of up to `INSIGHT_BATCH` (template `dr3/insight_recall`), each
batch with the passages of the report that best match its insights (BM25, `core/passages.py`) within
`PASSAGE_TOKENS` (or the judge's source budget, or the room its model's context leaves, when smaller); a
report that fits is shown whole.
The judge credits each insight 1 (covered), 0.5 (partly) or 0. Rows `dr3.ir.<source>.i<nn>`, kind
`insight_recall`, the credit in `score` and `credit`; the suite reads them back (metrics.py)."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Sequence

import polars as pl

from ...core.models import ChecklistJudgment
from ...core.passages import select_passages
from ...judges.base import Judge, JudgmentRequest
from ...judges.context_window import passage_tokens, room_for
from ...judges.prompts import fence_untrusted, load_template
from ...stages.frames import frame, rows_by_partition
from ..judging import JudgmentContext, scored_under

TEMPLATE = "dr3/insight_recall"
KIND = "insight_recall"
INSIGHT_BATCH = 10  # insights per call
PASSAGE_TOKENS = 6_000  # report passages shown per call, at most
SOURCES = (("uf", "gold_insights", "the user files"), ("sc", "gold_insights_sandbox", "the sandbox corpus"))


def insights_of(task_row: Mapping[str, Any]) -> dict[str, list[str]]:
    """source (`uf`, `sc`) -> the task's gold insights of that source."""
    return {source: [t for t in (task_row.get(column) or []) if t] for source, column, _ in SOURCES}


def item_ids(source: str, insights: Sequence[str]) -> list[tuple[str, str]]:
    return [(f"dr3.ir.{source}.i{n:02d}", text) for n, text in enumerate(insights, start=1)]


def report_passages(report: str, insights: Sequence[str], judge: Judge, room: int | None = None) -> str:
    """The report's passages that best match these insights, within the passage budget and the `room`
    the judge's context leaves in the prompt (None: unknown)."""
    budget = PASSAGE_TOKENS if judge.source_token_budget is None else min(PASSAGE_TOKENS, judge.source_token_budget)
    if room is not None:
        budget = min(budget, passage_tokens(room))
    return select_passages(report, list(insights), budget).text


def judge_insight_recall(keys: Sequence[tuple[str, str]], reports: pl.DataFrame, tasks: pl.DataFrame, judge: Judge,
                         extra_suites: Sequence[str] = (), labels: Mapping[str, str] | None = None) -> pl.DataFrame:
    task_rows = {r["task"]: r for r in tasks.iter_rows(named=True)}
    report_by_key = rows_by_partition(reports)
    _, template_hash = load_template(TEMPLATE)
    rows, asked = [], []
    for system, task in keys:
        row = task_rows.get(task) or {}
        if not scored_under("dr3", row.get("benchmark", "generic"), extra_suites):
            continue
        report = report_by_key.get((system, task))
        if report is None or report["status"] != "ok":
            continue  # the suite reports an unreadable report as N/A with its reason
        base = {"system": system, "task": task, "kind": KIND, "judge": judge.judge_id, "template": TEMPLATE,
                "template_hash": template_hash, "cache_key": None}
        for source, _, where in SOURCES:
            items = item_ids(source, insights_of(row)[source])
            for start in range(0, len(items), INSIGHT_BATCH):
                chunk = items[start:start + INSIGHT_BATCH]
                variables = {"query": row.get("query") or "", "source": where,
                             "insights": "\n".join(f"- [{i.rsplit('.', 1)[1]}] {t}" for i, t in chunk),
                             "insight_list": [{"item_id": i.rsplit(".", 1)[1], "text": t} for i, t in chunk],
                             "passages": ""}
                request = JudgmentRequest(TEMPLATE, variables, ChecklistJudgment,
                                          {**(labels or {}), "system": system, "task": task})
                passages = report_passages(report["text"], [t for _, t in chunk], judge, room_for(judge, request))
                request = replace(request, variables={**variables, "passages": fence_untrusted(passages)})
                asked.append((base, chunk, request))
    judgments = judge.judge_many([request for _, _, request in asked])
    for (base, chunk, _), judgment in zip(asked, judgments, strict=True):
        answer = judgment.answer
        credits = {c.item_id: c for c in answer.items} if isinstance(answer, ChecklistJudgment) else {}
        for item_id, text in chunk:
            got = credits.get(item_id.rsplit(".", 1)[1])
            row = {**base, "item_id": item_id, "item": text, "cache_key": judgment.provenance.cache_key or None}
            if got is None:
                rows.append({**row, "credit": None, "score": None,
                             "reason": judgment.error or "the judge gave no credit for this insight",
                             "na_reason": judgment.na_reason or "pipeline_failure"})
            else:
                rows.append({**row, "credit": float(got.credit), "score": float(got.credit), "reason": got.reason,
                             "na_reason": None})
    return frame("report_judgments", rows)


def insight_recall(ctx: JudgmentContext) -> pl.DataFrame:
    return judge_insight_recall(ctx.keys, ctx.reports, ctx.tasks, ctx.judge, ctx.extra_suites, ctx.labels)


def evidence_inputs(tasks: list[dict], rubrics: pl.DataFrame | None, judge: Judge) -> dict[str, dict]:
    """How many gold insights each source of each task has: the suite tells 'no gold' from 'not judged'."""
    return {t["task"]: {"dr3.insights": {s: len(v) for s, v in insights_of(t).items()}} for t in tasks}
