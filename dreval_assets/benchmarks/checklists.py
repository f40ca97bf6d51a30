"""Crediting a task's checklist: every requirement 1 / 0.5 / 0, in calls of up to `CHUNK` items. The
shared checklist judgment (stages/judgments.py) and a benchmark that shows its own text with its own
template (TVIR: the corrected report with the query) build their requests and rows here."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..core.models import ChecklistJudgment
from ..judges.base import Judgment, JudgmentRequest

CHUNK = 15

Item = tuple[str, str]  # (item id "i01", requirement text)


def numbered(requirements: Sequence[str]) -> list[Item]:
    return [(f"i{n:02d}", text) for n, text in enumerate(requirements, start=1)]


def chunked_requests(items: Sequence[Item], template: str, variables: Mapping[str, Any], labels: Mapping[str, str],
                     run: int = 1) -> list[tuple[list[Item], JudgmentRequest]]:
    """One request per chunk of items; `variables` carry the report (and whatever else the template shows)."""
    out = []
    for start in range(0, len(items), CHUNK):
        chunk = list(items[start:start + CHUNK])
        shown = {**variables, "items": "\n".join(f"- [{i}] {t}" for i, t in chunk),
                 "item_list": [{"item_id": i, "text": t} for i, t in chunk]}
        out.append((chunk, JudgmentRequest(template, shown, ChecklistJudgment, labels, run=run)))
    return out


def unjudged_rows(base: Mapping[str, Any], items: Sequence[Item], reason: str, na_reason: str) -> list[dict]:
    """The items of a report that cannot be judged (no readable report): N/A with the report's reason."""
    return [{**base, "item_id": i, "item": t, "credit": None, "reason": reason, "na_reason": na_reason}
            for i, t in items]


def judged_rows(base: Mapping[str, Any], chunk: Sequence[Item], judgment: Judgment) -> list[dict]:
    """One row per item of a chunk: its credit and reason, or N/A with the judgment's bucket."""
    answer = judgment.answer
    credits = {c.item_id: c for c in answer.items} if isinstance(answer, ChecklistJudgment) else {}
    rows = []
    for item_id, text in chunk:
        credit = credits.get(item_id)
        row = {**base, "item_id": item_id, "item": text, "cache_key": judgment.provenance.cache_key or None}
        if credit is None:
            rows.append({**row, "credit": None, "reason": judgment.error or "the judge gave no credit for this item",
                         "na_reason": judgment.na_reason or "pipeline_failure"})
        else:
            rows.append({**row, "credit": float(credit.credit), "reason": credit.reason, "na_reason": None})
    return rows
