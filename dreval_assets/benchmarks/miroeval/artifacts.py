"""MiroEval's per-task artifacts, made once per task and shared by every system: the adaptive rubric
(judge-generated, the 0.20 cap on task-specific dimensions enforced) and the key facts of each readable
attachment (Grounding is checked against them)."""
from __future__ import annotations

import json

from ...core.models import AdaptiveRubric, KeyFacts
from ...judges.base import Judge, JudgmentRequest
from ...judges.prompts import for_judge, load_template
from .judgments import KEY_FACTS_KIND, RUBRIC_KIND, adaptive_rubric
from .rubric import finalise

TEMPLATE = "miroeval/rubric"


KEY_FACTS_TEMPLATE = "miroeval/key_facts"


MAX_KEY_FACTS = 12


ATTACHMENT_CHARS = 40_000  # an LLM judge reads an attachment up to here; the row says when it was cut


def adaptive_rubrics(wanted: list[dict], attachments, judge: Judge, labels) -> list[dict]:
    _, template_hash = load_template(TEMPLATE)
    requests = [JudgmentRequest(TEMPLATE, {
        "query": r["query"], "has_attachments": bool(attachments.get(r["task"])),
        "grounding_note": ("The request comes with attachments: add a grounding dimension for reading them. "
                           if attachments.get(r["task"]) else "")}, AdaptiveRubric,
        {**(labels or {}), "task": r["task"]}) for r in wanted]
    rows = []
    for row, judgment in zip(wanted, judge.judge_many(requests), strict=True):
        base = {"task": row["task"], "kind": RUBRIC_KIND, "judge": judge.judge_id, "template": TEMPLATE,
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
    return rows


def key_facts(wanted: list[dict], attachments, judge: Judge, labels) -> list[dict]:
    """One call per readable attachment of a MiroEval task."""
    _, template_hash = load_template(KEY_FACTS_TEMPLATE)
    plans, requests = [], []
    for row in wanted:
        for name, text in sorted((attachments.get(row["task"]) or {}).items()):
            shown, cut = for_judge(text, judge.source_token_budget, ATTACHMENT_CHARS, "cut")
            plans.append((row["task"], name, cut))
            requests.append(JudgmentRequest(KEY_FACTS_TEMPLATE, {
                "query": row["query"], "attachment": name, "attachment_text": shown,
                "max_facts": MAX_KEY_FACTS}, KeyFacts, {**(labels or {}), "task": row["task"]}))
    rows = []
    for (task, name, cut), judgment in zip(plans, judge.judge_many(requests), strict=True):
        base = {"task": task, "kind": KEY_FACTS_KIND, "judge": judge.judge_id, "template": KEY_FACTS_TEMPLATE,
                "template_hash": template_hash, "cache_key": judgment.provenance.cache_key or None}
        if isinstance(judgment.answer, KeyFacts) and judgment.answer.facts:
            rows.append({**base, "rubric": json.dumps({"attachment": name, "facts": judgment.answer.facts}),
                         "na_reason": None, "detail": "attachment cut for the judge" if cut else ""})
        elif isinstance(judgment.answer, KeyFacts):
            rows.append({**base, "rubric": None, "na_reason": "data_accessibility",
                         "detail": f"no key facts found in attachment {name}"})
        else:
            rows.append({**base, "rubric": None, "na_reason": judgment.na_reason or "pipeline_failure",
                         "detail": judgment.error})
    return rows


def evidence_inputs(tasks: list[dict], rubrics, judge: Judge) -> dict[str, dict]:
    """The generated rubric each task's synthesis scores read."""
    found = adaptive_rubric(rubrics)
    return {t["task"]: {"miroeval.rubric": found[t["task"]]} for t in tasks if t["task"] in found}
