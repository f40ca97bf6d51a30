"""report_judgments: report-level judgments. Checklists now: every requirement of the task's
checklist credited 1 / 0.5 / 0 against the report, in calls of up to `CHECKLIST_CHUNK` items."""
from __future__ import annotations

from typing import Mapping, Sequence

import polars as pl

from ..core.models import ChecklistJudgment
from ..judges.base import Judge, JudgmentRequest
from ..judges.prompts import fence_untrusted, load_template
from .frames import frame

TEMPLATE = "checklist_items"
CHECKLIST_CHUNK = 15
REPORT_CHARS = 60_000  # an LLM judge reads the report up to here; longer reports are cut and say so


def judge_checklists(keys: Sequence[tuple[str, str]], reports: pl.DataFrame, tasks: pl.DataFrame, judge: Judge,
                     labels: Mapping[str, str] | None = None) -> pl.DataFrame:
    checklists = {r["task"]: list(r["checklist"] or []) for r in tasks.iter_rows(named=True)}
    report_by_key = {(r["system"], r["task"]): r for r in reports.iter_rows(named=True)}
    _, template_hash = load_template(TEMPLATE)
    rows, asked = [], []
    for system, task in keys:
        items = [(f"i{n:02d}", text) for n, text in enumerate(checklists.get(task, []), start=1)]
        report = report_by_key.get((system, task))
        base = {"system": system, "task": task, "kind": "checklist", "judge": judge.judge_id,
                "template": TEMPLATE, "template_hash": template_hash, "cache_key": None}
        if not items:
            continue
        if report is None or report["status"] != "ok":
            rows.extend({**base, "item_id": i, "item": t, "credit": None, "reason": report["detail"] if report else "",
                         "na_reason": (report or {}).get("na_reason") or "model_failure"} for i, t in items)
            continue
        text = report["text"]
        if judge.source_token_budget is not None and len(text) > REPORT_CHARS:
            text = text[:REPORT_CHARS] + f"\n[... report cut: {REPORT_CHARS} of {len(report['text'])} characters]"
        for start in range(0, len(items), CHECKLIST_CHUNK):
            chunk = items[start:start + CHECKLIST_CHUNK]
            variables = {"items": "\n".join(f"- [{i}] {t}" for i, t in chunk), "report": fence_untrusted(text),
                         "item_list": [{"item_id": i, "text": t} for i, t in chunk]}
            request = JudgmentRequest(TEMPLATE, variables, ChecklistJudgment,
                                      {**(labels or {}), "system": system, "task": task})
            asked.append((base, chunk, request))
    judgments = judge.judge_many([request for _, _, request in asked])
    for (base, chunk, _), judgment in zip(asked, judgments, strict=True):
        credits = {c.item_id: c for c in judgment.answer.items} if isinstance(judgment.answer, ChecklistJudgment) else {}
        for item_id, text in chunk:
            credit = credits.get(item_id)
            row = {**base, "item_id": item_id, "item": text, "cache_key": judgment.provenance.cache_key or None}
            if credit is None:
                rows.append({**row, "credit": None, "reason": judgment.error or "the judge gave no credit for this item",
                             "na_reason": judgment.na_reason or "pipeline_failure"})
            else:
                rows.append({**row, "credit": float(credit.credit), "reason": credit.reason, "na_reason": None})
    return frame("report_judgments", rows)
