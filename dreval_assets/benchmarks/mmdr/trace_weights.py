"""MMDR TRACE's task-adaptive weights W_k over CON, COV and FID, set per report by the judge from the task
and the report it weighs (the paper's W(t, R), as for FLAE's weights), policy `mmdr.trace.weights`:
`judge` (default, the paper's) or `equal` (ours: equal thirds, no call, named on the EVI row).

report_judgments rows, kind `trace_weights`, item ids `mmdr.trace.weight_con`, `.weight_cov`,
`.weight_fid` (non-negative, normalised by the suite), or each N/A with the call's bucket and error when
the judge could not set them: the offline judge cannot (a judge limit), a failed call is the
provider's or ours. EVI, TRACE and Overall are then N/A with that reason, never computed with a silent
1/3 fallback; CON, COV and FID do not need the weights.
"""
from __future__ import annotations

from typing import Any, Mapping

import polars as pl
from pydantic import BaseModel

from ...core.models import TraceWeights
from ...judges.base import JudgmentRequest
from ...judges.prompts import load_template
from ...judges.readable import NotRead
from ...stages.frames import frame
from ..judging import JudgmentContext, readable_reports, report_for_judge
from ..policies import policy_value

TEMPLATE = "mmdr/trace_weights"
PREFIX = "mmdr.trace"
PARTS = ("con", "cov", "fid")


def judge_trace_weights(ctx: JudgmentContext) -> pl.DataFrame:
    if policy_value(dict(ctx.policies), "mmdr.trace.weights") != "judge":
        return frame("report_judgments", [])  # equal thirds: nothing to ask
    asked, requests = [], []
    for system, task, task_row, report in readable_reports(ctx, "mmdr"):
        asked.append((system, task))
        requests.append(JudgmentRequest(TEMPLATE, {"query": task_row.get("query") or "",
                                                   "report": report_for_judge(report["text"], ctx.judge)},
                                        TraceWeights, {**ctx.labels, "system": system, "task": task}))
    rows = []
    for (system, task), judgment in zip(asked, ctx.judge.judge_many(requests), strict=True):
        base = {"system": system, "task": task, "kind": "trace_weights", "credit": None, "judge": ctx.judge.judge_id,
                "template": TEMPLATE, "template_hash": load_template(TEMPLATE)[1],
                "cache_key": judgment.provenance.cache_key or None}
        answer = judgment.answer if isinstance(judgment.answer, TraceWeights) else None
        for part in PARTS:
            row = {**base, "item_id": f"{PREFIX}.weight_{part}", "item": f"weight_{part}"}
            if answer is None:
                rows.append({**row, "score": None, "na_reason": judgment.na_reason or "pipeline_failure",
                             "reason": f"TRACE weights not set: {judgment.error or 'no answer'}"[:1000]})
            else:
                rows.append({**row, "score": float(getattr(answer, part)), "na_reason": None,
                             "reason": f"set by {ctx.judge.judge_id}: {answer.rationale}"[:1000]})
    return frame("report_judgments", rows)


def answer_trace_weights(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`mmdr/trace_weights` offline: weighing what a task and a report need is a reading it cannot do."""
    raise NotRead("the offline judge cannot set TRACE's task-adaptive weights (policy mmdr.trace.weights=equal "
                  "gives equal thirds)")
