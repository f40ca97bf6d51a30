"""task_rubrics: what a method generates or a release supplies once per task, shared by all systems.

Kinds (one `kind` per artifact, its JSON in `rubric`):
- `miroeval_rubric`: MiroEval's adaptive rubric (judge-generated, 0.20 cap enforced).
- `key_facts`: the key facts of one readable attachment, `{"attachment": name, "facts": [...]}`
  (judge-generated; MiroEval's Grounding dimension is checked against them).
- `checklist`: the task's checklist as loaded (TVIR, DR³ and any task that has one).
- `race_criteria`: DeepResearch Bench's RACE criteria as loaded.
Loaded artifacts carry judge `loaded` and the hash of their content in `template_hash`, so a
changed release shows up as a changed row; generated ones carry the judge and template hash.
"""
from __future__ import annotations

import hashlib
import json
from typing import Mapping, Sequence

import polars as pl

from ..benchmarks.judging import task_artifacts
from ..benchmarks.miroeval.rubric import finalise
from ..benchmarks.suites import suite_names
from ..core.models import AdaptiveRubric, KeyFacts
from ..judges.base import Judge, JudgmentRequest
from ..judges.prompts import for_judge, load_template
from .frames import frame

TEMPLATE = "miroeval_rubric"
KEY_FACTS_TEMPLATE = "key_facts"
MAX_KEY_FACTS = 12
ATTACHMENT_CHARS = 40_000  # an LLM judge reads an attachment up to here; the row says when it was cut
LOADED = "loaded"


def generate_rubrics(tasks: pl.DataFrame, attachments: Mapping[str, Mapping[str, str]], judge: Judge,
                     extra_suites: Sequence[str] = (), labels: Mapping[str, str] | None = None) -> pl.DataFrame:
    """`attachments`: task -> readable attachment name -> text."""
    miroeval = [r for r in tasks.iter_rows(named=True) if "miroeval" in suite_names(r["benchmark"], extra_suites)]
    rows = [*_loaded(tasks), *_adaptive_rubrics(miroeval, attachments, judge, labels),
            *_key_facts(miroeval, attachments, judge, labels)]
    return frame("task_rubrics", rows)


def _loaded(tasks: pl.DataFrame) -> list[dict]:
    rows = []
    for r in tasks.iter_rows(named=True):
        artifacts = {"checklist": list(r["checklist"] or []) or None,
                     "race_criteria": json.loads(r["race_criteria"]) if r.get("race_criteria") else None}
        for kind, artifact in artifacts.items():
            if artifact is None:
                continue
            text = json.dumps(artifact, ensure_ascii=False, sort_keys=True)
            rows.append({"task": r["task"], "kind": kind, "rubric": text, "judge": LOADED, "template": "",
                         "template_hash": hashlib.sha256(text.encode()).hexdigest()[:16], "cache_key": None,
                         "na_reason": None, "detail": "as loaded with the task"})
    return rows


def _adaptive_rubrics(wanted: list[dict], attachments, judge: Judge, labels) -> list[dict]:
    _, template_hash = load_template(TEMPLATE)
    requests = [JudgmentRequest(TEMPLATE, {
        "query": r["query"], "has_attachments": bool(attachments.get(r["task"])),
        "grounding_note": ("The request comes with attachments: add a grounding dimension for reading them. "
                           if attachments.get(r["task"]) else "")}, AdaptiveRubric,
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
    return rows


def _key_facts(wanted: list[dict], attachments, judge: Judge, labels) -> list[dict]:
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
        base = {"task": task, "kind": KEY_FACTS_TEMPLATE, "judge": judge.judge_id, "template": KEY_FACTS_TEMPLATE,
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


def checklists(rubrics: pl.DataFrame | None) -> dict[str, list[str]]:
    return {t: list(found[0]) for t, found in task_artifacts(rubrics, "checklist").items()}
