"""Reports written by endpoint systems: each task's request sent to the system's OpenAI-compatible
endpoint with our report protocol (inline [n] citations, a References block with one URL per
index, images embedded where used). Calls go through the judge client, so they are cached by
content (a re-run costs nothing), retried, rate-limited and written to the ledger (asset `reports`)."""
from __future__ import annotations

from typing import Mapping, Sequence

import polars as pl

from ..judges.base import FreeText, Judge, JudgmentRequest
from .frames import text_hash

TEMPLATE = "report_protocol"
REPORT_TOKENS = 16_384  # a long cited report (~2,500 words is ~3,500 tokens): room, yet a bound


def write_reports(keys: Sequence[tuple[str, str]], tasks: pl.DataFrame, writer: Judge,
                  labels: Mapping[str, str] | None = None) -> dict[tuple[str, str], dict]:
    """(system, task) -> a `reports` row for every key whose task is known."""
    task_rows = {r["task"]: r for r in tasks.iter_rows(named=True)}
    wanted = [k for k in keys if k[1] in task_rows]
    requests = [JudgmentRequest(TEMPLATE, {"query": task_rows[t]["query"],
                                           "attachments_note": _attachments_note(task_rows[t])},
                                FreeText, {**(labels or {}), "system": s, "task": t}, answer_tokens=REPORT_TOKENS)
                for s, t in wanted]
    rows = {}
    for (system, task), judgment in zip(wanted, writer.judge_many(requests), strict=True):
        row = {"system": system, "task": task, "source_path": f"endpoint model {writer.judge_id}",
               "na_reason": None, "detail": ""}
        if isinstance(judgment.answer, FreeText):
            text = judgment.answer.text
            rows[(system, task)] = {**row, "status": "ok", "text": text, "n_chars": len(text),
                                    "content_hash": text_hash(text)}
        else:
            rows[(system, task)] = {**row, "status": "failed", "text": None, "n_chars": 0, "content_hash": None,
                                    "na_reason": judgment.na_reason or "provider_failure",
                                    "detail": f"the system's endpoint did not write the report: {judgment.error}"}
    return rows


def _attachments_note(task: dict) -> str:
    names = list(task.get("attachments") or [])
    if not names:
        return ""
    return "\nThe user attached: " + ", ".join(names) + ". Read them as part of the request.\n"
