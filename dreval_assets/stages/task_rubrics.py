"""task_rubrics: what a method generates once per task, shared by all systems (MiroEval rubric now)."""
from __future__ import annotations

from typing import Mapping, Sequence

import polars as pl

from ..benchmarks.miroeval_rubric import finalise
from ..benchmarks.suites import suite_names
from ..core.models import AdaptiveRubric
from ..judges.base import Judge, JudgmentRequest
from ..judges.prompts import load_template
from .frames import frame

TEMPLATE = "miroeval_rubric"


def generate_rubrics(tasks: pl.DataFrame, sandbox: pl.DataFrame, judge: Judge, extra_suites: Sequence[str] = (),
                     labels: Mapping[str, str] | None = None) -> pl.DataFrame:
    with_attachments = set(sandbox.filter(pl.col("role") == "attachment").get_column("task").to_list())
    _, template_hash = load_template(TEMPLATE)
    wanted = [r for r in tasks.iter_rows(named=True)
              if "miroeval" in suite_names(r["benchmark"], extra_suites)]
    requests = [JudgmentRequest(TEMPLATE, {
        "query": r["query"], "has_attachments": r["task"] in with_attachments,
        "grounding_note": ("The request comes with attachments: add a grounding dimension for reading them. "
                           if r["task"] in with_attachments else "")}, AdaptiveRubric,
        {**(labels or {}), "task": r["task"]}) for r in wanted]
    rows = []
    for row, judgment in zip(wanted, judge.judge_many(requests), strict=True):
        base = {"task": row["task"], "kind": TEMPLATE, "judge": judge.judge_id, "template": TEMPLATE,
                "template_hash": template_hash, "cache_key": judgment.provenance.cache_key or None}
        if isinstance(judgment.answer, AdaptiveRubric):
            try:
                rubric = finalise(judgment.answer)
            except ValueError as exc:
                rows.append({**base, "rubric": None, "na_reason": "pipeline_failure", "detail": str(exc)})
                continue
            rows.append({**base, "rubric": rubric.model_dump_json(), "na_reason": None,
                         "detail": "offline rubric" if judgment.extra.get("fallback") else ""})
        else:
            rows.append({**base, "rubric": None, "na_reason": judgment.na_reason or "pipeline_failure",
                         "detail": judgment.error})
    return frame("task_rubrics", rows)
