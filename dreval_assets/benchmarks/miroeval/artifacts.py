"""MiroEval's per-task artifacts, made once per task and shared by every system: the adaptive rubric
(judge-generated, its weights normalised) and the key facts of each readable
attachment (Grounding is checked against them): a document's from its text, an image's from one
vision call that shows the judge the image (the offline judge cannot see it: N/A pipeline_failure, a
judge limit)."""
from __future__ import annotations

import json

from ...core.models import AdaptiveRubric, KeyFacts
from ...judges.base import ImageInput, Judge, JudgmentRequest
from ...judges.prompts import for_judge, load_template
from .judgments import IMAGE_KEY_FACTS_TEMPLATE, KEY_FACTS_KIND, RUBRIC_KIND, adaptive_rubric, unread_images
from .rubric import finalise

TEMPLATE = "miroeval/rubric"
GROUNDING_NOTE = ("The request comes with attached material: one of the task-specific dimensions has the id "
                  "grounding (dynamic true) and checks that the report reads the attachments correctly and builds "
                  "on them meaningfully.")


KEY_FACTS_TEMPLATE = "miroeval/key_facts"


MAX_KEY_FACTS = 12


ATTACHMENT_CHARS = 40_000  # an LLM judge reads an attachment up to here; the row says when it was cut


def adaptive_rubrics(wanted: list[dict], attachments, judge: Judge, labels) -> list[dict]:
    _, template_hash = load_template(TEMPLATE)
    requests = [JudgmentRequest(TEMPLATE, {
        "query": r["query"], "has_attachments": bool(attachments.get(r["task"])),
        "grounding_note": (GROUNDING_NOTE if attachments.get(r["task"]) else "")}, AdaptiveRubric,
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
            if not isinstance(text, str):
                continue  # an image: image_key_facts
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


def image_key_facts(wanted: list[dict], attachments, judge: Judge, labels) -> list[dict]:
    """One vision call per image attachment of a MiroEval task. Its facts are stored like a document's
    (kind key_facts, with the image's hash), so Grounding shows them and the claim verdicts take them
    as the image's evidence text."""
    _, template_hash = load_template(IMAGE_KEY_FACTS_TEMPLATE)
    plans, requests = [], []
    for row in wanted:
        for name, image in sorted((attachments.get(row["task"]) or {}).items()):
            if isinstance(image, ImageInput):
                plans.append((row["task"], name, image))
                requests.append(JudgmentRequest(IMAGE_KEY_FACTS_TEMPLATE, {
                    "query": row["query"], "attachment": name, "max_facts": MAX_KEY_FACTS}, KeyFacts,
                    {**(labels or {}), "task": row["task"]}, images=(image,)))
    rows = []
    for (task, name, image), judgment in zip(plans, judge.judge_many(requests), strict=True):
        base = {"task": task, "kind": KEY_FACTS_KIND, "judge": judge.judge_id, "template": IMAGE_KEY_FACTS_TEMPLATE,
                "template_hash": template_hash, "cache_key": judgment.provenance.cache_key or None}
        if isinstance(judgment.answer, KeyFacts) and judgment.answer.facts:
            artifact = {"attachment": name, "facts": judgment.answer.facts, "image": image.sha256}
            rows.append({**base, "rubric": json.dumps(artifact), "na_reason": None, "detail": ""})
        elif isinstance(judgment.answer, KeyFacts):
            rows.append({**base, "rubric": None, "na_reason": "data_accessibility",
                         "detail": f"image attachment {name}: the judge read no key facts in it"})
        else:
            rows.append({**base, "rubric": None, "na_reason": judgment.na_reason or "pipeline_failure",
                         "detail": f"image attachment {name}: {judgment.error}"})
    return rows


def evidence_inputs(tasks: list[dict], rubrics, judge: Judge) -> dict[str, dict]:
    """The generated rubric each task's synthesis scores read, and why an image attachment of the task
    has no key facts (its Grounding row says it was scored without them)."""
    found, unread = adaptive_rubric(rubrics), unread_images(rubrics)
    return {t["task"]: {"miroeval.rubric": found[t["task"]], "miroeval.unread_images": unread.get(t["task"], [])}
            for t in tasks if t["task"] in found}
