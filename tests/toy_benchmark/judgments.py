"""The toy's one report judgment: template `toy_focus`, one call per report."""
import polars as pl

from dreval_assets.benchmarks.judging import JudgmentContext, report_for_judge, scored_under
from dreval_assets.core.models import DimensionScore
from dreval_assets.judges.base import JudgmentRequest
from dreval_assets.judges.prompts import load_template
from dreval_assets.stages.frames import frame, rows_by_partition

TEMPLATE = "toy_focus"


def focus(ctx: JudgmentContext) -> pl.DataFrame:
    queries = {r["task"]: r["query"] for r in ctx.tasks.iter_rows(named=True)
               if scored_under("toy", r["benchmark"], ctx.extra_suites)}
    reports = rows_by_partition(ctx.reports)
    asked = [(s, t) for s, t in ctx.keys if t in queries and (reports.get((s, t)) or {}).get("status") == "ok"]
    requests = [JudgmentRequest(TEMPLATE, {"query": queries[t], "report": report_for_judge(reports[(s, t)]["text"], ctx.judge)},
                                DimensionScore, {**ctx.labels, "system": s, "task": t}) for s, t in asked]
    _, template_hash = load_template(TEMPLATE)
    rows = []
    for (system, task), judgment in zip(asked, ctx.judge.judge_many(requests), strict=True):
        answer = judgment.answer
        rows.append({"system": system, "task": task, "kind": "rubric", "item_id": "toy.focus.score", "item": "focus",
                     "credit": None, "score": float(answer.score) if answer else None,
                     "reason": answer.reason if answer else judgment.error,
                     "na_reason": None if answer else (judgment.na_reason or "pipeline_failure"),
                     "judge": ctx.judge.judge_id, "template": TEMPLATE, "template_hash": template_hash,
                     "cache_key": judgment.provenance.cache_key or None})
    return frame("report_judgments", rows)
