"""Wiki Live writing judgments: the report against the task's reference article, criteria by category."""
from __future__ import annotations

import json
from typing import Literal, Mapping, Sequence

import polars as pl
from pydantic import BaseModel

from ...core.models import PairwiseOutcomes
from ...judges.base import Judge, JudgmentRequest
from ...core.report_parser import without_citations
from ...judges.prompts import fence_untrusted, load_template
from ...stages.frames import frame, rows_by_partition
from ..judging import JudgmentContext, report_for_judge, scored_under, seeded_first
from ..policies import policy_value
from .criteria import CATEGORIES, OUR_TEXTS, RELEASE_CRITERIA_FILE, criteria_texts
from .metrics import combine_orders

PAIRWISE_TEMPLATE = "wlc/pairwise_criteria"
# What the prompt says about ties, by whether the protocol allows them.
TIE_RULES = {True: ("A, B, or tie when they are equally good or equally poor", "A, B or tie"),
             False: ("A or B. Ties are not allowed: when they seem equal, pick the one that meets the "
                     "criterion even slightly better", "A or B")}


class ForcedWinner(BaseModel):
    criterion_id: str
    winner: Literal["A", "B"]
    reason: str = ""


class ForcedOutcomes(BaseModel):
    """Per criterion of one category, which article meets it better, no tie allowed (the release's protocol)."""

    outcomes: list[ForcedWinner]


def task_criteria(task_row: Mapping) -> tuple[dict[str, list[tuple[str, str, str]]], str]:
    """The criteria the judge is shown for a task, and where their texts come from: the release's
    (carried in the task's attributes by the loader) or ours (live tasks, releases without the file)."""
    attributes = json.loads(task_row.get("attributes") or "{}")
    shipped = attributes.get("writing_criteria")
    if shipped:
        return criteria_texts(json.loads(shipped)), RELEASE_CRITERIA_FILE
    return criteria_texts(None), OUR_TEXTS


def task_topic(task_row: Mapping) -> str:
    """The article's topic as the reference code passes it: the task's title."""
    attributes = json.loads(task_row.get("attributes") or "{}")
    return attributes.get("title") or task_row.get("original_id") or ""


def article_for_judge(text: str, judge: Judge) -> str:
    """What the published judge reads of either article: no citation markers, no reference list."""
    return report_for_judge(without_citations(text), judge)


def presentation_orders(policy: str, system: str, task: str, category: str, seed: str) -> list[bool]:
    """Whether the generated article is shown first, per call, under `wlc.position_bias`."""
    if policy == "both_orders":
        return [True, False]
    if policy == "published":
        return [False]  # the release's code always shows the reference (Wikipedia) first
    return [seeded_first(system, task, category, seed)]


def judge_pairwise(keys: Sequence[tuple[str, str]], reports: pl.DataFrame, tasks: pl.DataFrame, judge: Judge,
                   extra_suites: Sequence[str] = (), policies: Mapping[str, str] | None = None,
                   labels: Mapping[str, str] | None = None) -> pl.DataFrame:
    """Wiki Live writing: the report against the task's reference article, one call per category
    and order, both articles without citation markers or reference lists, the topic given, the
    release's criteria texts (ours where the task has none). Position-bias policy `wlc.position_bias`:
    `published` (default, the release's protocol: reference first, one call per category, no tie),
    `both_orders` (a win counts only when both orders agree, else tie) or `random_order` (one order
    per category, seeded by `wlc.seed`). Each row's score: 1 generated wins, 0 reference wins, 0.5 tie."""
    policies = policies or {}
    policy = policy_value(policies, "wlc.position_bias")
    seed = policy_value(policies, "wlc.seed")
    allow_tie = policy != "published"
    tie_rule, choices = TIE_RULES[allow_tie]
    answer_model = PairwiseOutcomes if allow_tie else ForcedOutcomes
    task_rows = {r["task"]: r for r in tasks.iter_rows(named=True)}
    report_by_key = rows_by_partition(reports)
    _, template_hash = load_template(PAIRWISE_TEMPLATE)
    plans, requests = [], []
    texts: dict[tuple[str, str], tuple[dict, str]] = {}  # the criteria shown per report and their source
    for system, task in keys:
        row = task_rows.get(task) or {}
        if not scored_under("wlc", row.get("benchmark", "generic"), extra_suites):
            continue
        report, reference = report_by_key.get((system, task)), row.get("reference_article")
        if not reference or report is None or report["status"] != "ok":
            continue  # the wlc suite reports these as N/A with the reason
        generated, reference = article_for_judge(report["text"], judge), article_for_judge(reference, judge)
        shown, source = task_criteria(row)
        texts[(system, task)] = (shown, source)
        for category, criteria in shown.items():
            for generated_first in presentation_orders(policy, system, task, category, seed):
                a, b = (generated, reference) if generated_first else (reference, generated)
                variables = {"category": category.replace("_", " "), "article_a": a, "article_b": b,
                             "topic": fence_untrusted(task_topic(row)),
                             "tie_rule": tie_rule, "choices": choices, "allow_tie": allow_tie,
                             "criteria": "\n".join(f"- [{cid}] {what}" for cid, what, _ in criteria),
                             "criteria_list": [{"criterion_id": cid, "feature": f} for cid, _, f in criteria]}
                requests.append(JudgmentRequest(PAIRWISE_TEMPLATE, variables, answer_model,
                                                {**(labels or {}), "system": system, "task": task}))
                plans.append((system, task, category, generated_first))
    judgments = judge.judge_many(requests)
    winners: dict[tuple[str, str, str, str], list[str]] = {}
    cache_keys: dict[tuple[str, str, str], str] = {}
    failures: dict[tuple[str, str, str], tuple[str, str]] = {}  # a call that answered nothing: its reason
    for (system, task, category, generated_first), judgment in zip(plans, judgments, strict=True):
        answer = judgment.answer
        picked = ({o.criterion_id: o.winner for o in answer.outcomes}
                  if isinstance(answer, (PairwiseOutcomes, ForcedOutcomes)) else {})
        cache_keys[(system, task, category)] = judgment.provenance.cache_key or ""
        if answer is None and judgment.na_reason:
            failures[(system, task, category)] = (judgment.na_reason, judgment.error)
        for cid, _, _ in CATEGORIES[category]:
            side = picked.get(cid)
            winner = None if side is None else "tie" if side == "tie" else (
                "generated" if (side == "A") == generated_first else "reference")
            winners.setdefault((system, task, category, cid), []).append(winner)
    rows = []
    for (system, task, category, cid), found in winners.items():
        shown, source = texts[(system, task)]
        what = next(w for c, w, _ in shown[category] if c == cid)
        base = {"system": system, "task": task, "kind": "pairwise", "item_id": f"wlc.{category}.{cid}", "item": what,
                "credit": None, "judge": judge.judge_id, "template": PAIRWISE_TEMPLATE, "template_hash": template_hash,
                "cache_key": cache_keys.get((system, task, category)) or None}
        if None in found:
            na, error = failures.get((system, task, category), ("pipeline_failure", ""))
            rows.append({**base, "score": None, "reason": error or "the judge gave no winner for this criterion",
                         "na_reason": na})
            continue
        outcome = combine_orders(*found) if len(found) == 2 else found[0]
        rows.append({**base, "score": OUTCOME_SCORE[outcome], "na_reason": None,
                     "reason": f"policy {policy}; criteria texts: {source}: " + " / ".join(found)})
    return frame("report_judgments", rows)


OUTCOME_SCORE = {"generated": 1.0, "tie": 0.5, "reference": 0.0}


def pairwise(ctx: JudgmentContext) -> pl.DataFrame:
    return judge_pairwise(ctx.keys, ctx.reports, ctx.tasks, ctx.judge, ctx.extra_suites, ctx.policies, ctx.labels)
