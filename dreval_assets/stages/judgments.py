"""report_judgments: report-level judgments.

Checklists: every requirement of the task's checklist credited 1 / 0.5 / 0, in calls of up to
`CHECKLIST_CHUNK` items. Rubrics: all dimensions of one fixed rubric scored 1-10 in one call (TVIR WQ
and ADB, DR³ DQ). Contradictions: one count of internal contradictions per report (TVIR FLC).
Pairwise: Wiki Live's 39 criteria against the reference article. FLAE: MMDR's formula and judge
channels. Synthesis: MiroEval's adaptive rubric, one call per dimension. RACE: DeepResearch Bench's
criteria, report and reference report scored together, one call per order."""
from __future__ import annotations

import hashlib
from typing import Mapping, Sequence

import polars as pl

from ..benchmarks.mmdr.metrics import alpha_det
from ..benchmarks.policies import policy_value
from ..benchmarks.registry import rubrics_for
from ..benchmarks.suites import suite_names
from ..benchmarks.wlc.metrics import combine_orders
from ..benchmarks.wlc.criteria import CATEGORIES
from ..core.flae_features import flae_observables, formula_channel
from ..core.models import (ChecklistJudgment, ContradictionCount, CriteriaScores, FlaeScores, PairwiseOutcomes,
                           RaceCriteria, RaceCriterion, RaceScores, RubricScores)
from ..core.report_parser import without_citations
from ..judges.base import Judge, JudgmentRequest
from ..judges.prompts import fence_untrusted, for_judge, load_template
from .frames import frame, rows_by_partition
from .task_rubrics import adaptive_rubric, checklists as task_checklists, key_facts as task_key_facts, race_criteria

TEMPLATE = "checklist_items"
CHECKLIST_CHUNK = 15
REPORT_CHARS = 60_000  # an LLM judge reads the report up to here; longer reports are cut and say so


def judge_checklists(keys: Sequence[tuple[str, str]], reports: pl.DataFrame, rubrics: pl.DataFrame, judge: Judge,
                     labels: Mapping[str, str] | None = None) -> pl.DataFrame:
    """Checklists come from `task_rubrics` (as loaded with the task)."""
    checklists = task_checklists(rubrics)
    report_by_key = rows_by_partition(reports)
    _, template_hash = load_template(TEMPLATE)
    rows, asked = [], []
    for system, task in keys:
        items = [(f"i{n:02d}", text) for n, text in enumerate(checklists.get(task, []), start=1)]
        report = report_by_key.get((system, task))
        base = {"system": system, "task": task, "kind": "checklist", "judge": judge.judge_id,
                "template": TEMPLATE, "template_hash": template_hash, "cache_key": None, "score": None}
        if not items:
            continue
        if report is None or report["status"] != "ok":
            rows.extend({**base, "item_id": i, "item": t, "credit": None, "reason": report["detail"] if report else "",
                         "na_reason": (report or {}).get("na_reason") or "model_failure"} for i, t in items)
            continue
        text = _for_judge(report["text"], judge)
        for start in range(0, len(items), CHECKLIST_CHUNK):
            chunk = items[start:start + CHECKLIST_CHUNK]
            variables = {"items": "\n".join(f"- [{i}] {t}" for i, t in chunk), "report": text,
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


def judge_rubrics(keys: Sequence[tuple[str, str]], reports: pl.DataFrame, tasks: pl.DataFrame, judge: Judge,
                  extra_suites: Sequence[str] = (), labels: Mapping[str, str] | None = None) -> pl.DataFrame:
    """One call per rubric per report (never per dimension), plus TVIR's contradiction count."""
    benchmark = {r["task"]: r["benchmark"] for r in tasks.iter_rows(named=True)}
    report_by_key = rows_by_partition(reports)
    asked: list[tuple[dict, list[tuple[str, str]], JudgmentRequest]] = []
    rows = []
    for system, task in keys:
        names = suite_names(benchmark.get(task, "generic"), extra_suites)
        wanted = [(r.rubric_id, "rubric_scores", list(r.dimensions), r.title) for r in rubrics_for(names)]
        if "tvir" in names:
            wanted.append(("tvir.flc", "contradictions", [("count", "internal contradictions")], "Contradictions"))
        report = report_by_key.get((system, task))
        for rubric_id, template, dims, title in wanted:
            base = {"system": system, "task": task, "kind": "rubric" if template == "rubric_scores" else "contradictions",
                    "judge": judge.judge_id, "template": template, "template_hash": load_template(template)[1],
                    "cache_key": None, "credit": None}
            if report is None or report["status"] != "ok":
                rows.extend({**base, "item_id": f"{rubric_id}.{d}", "item": what, "score": None,
                             "reason": report["detail"] if report else "", "na_reason": "model_failure"} for d, what in dims)
                continue
            text = _for_judge(report["text"], judge)
            variables = {"rubric_id": rubric_id, "rubric": title, "report": text,
                         "dimensions": "\n".join(f"- [{d}] {what}" for d, what in dims)}
            model = RubricScores if template == "rubric_scores" else ContradictionCount
            request = JudgmentRequest(template, variables, model, {**(labels or {}), "system": system, "task": task})
            asked.append(({**base, "rubric_id": rubric_id}, dims, request))
    judgments = judge.judge_many([request for _, _, request in asked])
    for (base, dims, _), judgment in zip(asked, judgments, strict=True):
        rubric_id = base.pop("rubric_id")
        base["cache_key"] = judgment.provenance.cache_key or None
        answer = judgment.answer
        if isinstance(answer, ContradictionCount):
            rows.append({**base, "item_id": f"{rubric_id}.count", "item": "internal contradictions",
                         "score": float(answer.count), "reason": "; ".join(answer.examples)[:2000], "na_reason": None})
            continue
        scores = {s.dimension_id: s for s in answer.scores} if isinstance(answer, RubricScores) else {}
        for dim, what in dims:
            got = scores.get(dim)
            if got is None:
                rows.append({**base, "item_id": f"{rubric_id}.{dim}", "item": what, "score": None,
                             "reason": judgment.error or "the judge gave no score for this dimension",
                             "na_reason": judgment.na_reason or "pipeline_failure"})
            else:
                rows.append({**base, "item_id": f"{rubric_id}.{dim}", "item": what, "score": float(got.score),
                             "reason": got.reason, "na_reason": None})
    return frame("report_judgments", rows)


def _for_judge(text: str, judge: Judge) -> str:
    return for_judge(text, judge.source_token_budget, REPORT_CHARS, "report cut")[0]


PAIRWISE_TEMPLATE = "pairwise_criteria"


def judge_pairwise(keys: Sequence[tuple[str, str]], reports: pl.DataFrame, tasks: pl.DataFrame, judge: Judge,
                   extra_suites: Sequence[str] = (), policies: Mapping[str, str] | None = None,
                   labels: Mapping[str, str] | None = None) -> pl.DataFrame:
    """Wiki Live writing: the report against the task's reference article, one call per category
    and order. Position-bias policy `wlc.position_bias`: `both_orders` (default; a win counts only
    when both orders agree, else tie) or `random_order` (one order per category, seeded by
    `wlc.seed`). Each row's score: 1 generated wins, 0 reference wins, 0.5 tie."""
    policies = policies or {}
    policy = policy_value(policies, "wlc.position_bias")
    seed = policy_value(policies, "wlc.seed")
    task_rows = {r["task"]: r for r in tasks.iter_rows(named=True)}
    report_by_key = rows_by_partition(reports)
    _, template_hash = load_template(PAIRWISE_TEMPLATE)
    plans, requests = [], []
    for system, task in keys:
        row = task_rows.get(task) or {}
        if "wlc" not in suite_names(row.get("benchmark", "generic"), extra_suites):
            continue
        report, reference = report_by_key.get((system, task)), row.get("reference_article")
        if not reference or report is None or report["status"] != "ok":
            continue  # the wlc suite reports these as N/A with the reason
        generated, reference = _for_judge(report["text"], judge), _for_judge(reference, judge)
        for category, criteria in CATEGORIES.items():
            orders = [True, False] if policy == "both_orders" else [_generated_first(system, task, category, seed)]
            for generated_first in orders:
                a, b = (generated, reference) if generated_first else (reference, generated)
                variables = {"category": category.replace("_", " "), "article_a": a, "article_b": b,
                             "criteria": "\n".join(f"- [{cid}] {what}" for cid, what, _ in criteria),
                             "criteria_list": [{"criterion_id": cid, "feature": f} for cid, _, f in criteria]}
                requests.append(JudgmentRequest(PAIRWISE_TEMPLATE, variables, PairwiseOutcomes,
                                                {**(labels or {}), "system": system, "task": task}))
                plans.append((system, task, category, generated_first))
    judgments = judge.judge_many(requests)
    winners: dict[tuple[str, str, str, str], list[str]] = {}
    cache_keys: dict[tuple[str, str, str], str] = {}
    failures: dict[tuple[str, str, str], tuple[str, str]] = {}  # a call that answered nothing: its reason
    for (system, task, category, generated_first), judgment in zip(plans, judgments, strict=True):
        answer = judgment.answer
        picked = {o.criterion_id: o.winner for o in answer.outcomes} if isinstance(answer, PairwiseOutcomes) else {}
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
        what = next(w for c, w, _ in CATEGORIES[category] if c == cid)
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
                     "reason": f"policy {policy}: " + " / ".join(found)})
    return frame("report_judgments", rows)


OUTCOME_SCORE = {"generated": 1.0, "tie": 0.5, "reference": 0.0}


def _generated_first(system: str, task: str, category: str, seed: str) -> bool:
    digest = hashlib.sha256(f"{seed}|{system}|{task}|{category}".encode()).digest()
    return digest[0] % 2 == 0


FLAE_TEMPLATE = "flae_scores"


def judge_flae(keys: Sequence[tuple[str, str]], reports: pl.DataFrame, tasks: pl.DataFrame, judge: Judge,
               extra_suites: Sequence[str] = (), labels: Mapping[str, str] | None = None) -> pl.DataFrame:
    """MMDR FLAE: the formula channel measured here, the judge channel and weights in one call,
    alpha_det from the observables. Rows `mmdr.flae.<name>` hold the parts; the suite fuses them."""
    task_rows = {r["task"]: r for r in tasks.iter_rows(named=True)}
    report_by_key = rows_by_partition(reports)
    _, template_hash = load_template(FLAE_TEMPLATE)
    rows, asked, requests = [], [], []
    for system, task in keys:
        row = task_rows.get(task) or {}
        report = report_by_key.get((system, task))
        if "mmdr" not in suite_names(row.get("benchmark", "generic"), extra_suites):
            continue
        if report is None or report["status"] != "ok":
            continue  # the mmdr suite reports these as N/A with the reason
        multimodal = row.get("modality") == "multimodal"
        obs = flae_observables(report["text"], multimodal)
        parts = {f"{d}_form": v for d, v in formula_channel(obs).items()}
        parts["alpha"] = alpha_det(obs["length_completeness"], obs["heading_coverage"], obs["citation_compliance"],
                                   obs["reference_validity"])
        base = {"system": system, "task": task, "kind": "flae", "credit": None, "judge": judge.judge_id,
                "template": FLAE_TEMPLATE, "template_hash": template_hash, "cache_key": None}
        rows.extend({**base, "item_id": f"mmdr.flae.{name}", "item": name, "score": value, "na_reason": None,
                     "reason": "measured (formula channel)" if name != "alpha" else "alpha_det from observables"}
                    for name, value in parts.items())
        asked.append(base)
        requests.append(JudgmentRequest(FLAE_TEMPLATE, {"query": row.get("query", ""), "multimodal": multimodal,
                                                        "report": _for_judge(report["text"], judge)},
                                        FlaeScores, {**(labels or {}), "system": system, "task": task}))
    for base, judgment in zip(asked, judge.judge_many(requests), strict=True):
        base = {**base, "cache_key": judgment.provenance.cache_key or None}
        answer = judgment.answer
        note = "heuristic fallback: the formula channel again" if judgment.extra.get("fallback") else "judge channel"
        for name in ("read", "insh", "stru", "weight_read", "weight_insh", "weight_stru", "alpha"):
            key = name if name.startswith("weight") else f"{name}_judge"
            if isinstance(answer, FlaeScores) and name == "alpha" and answer.alpha is None:
                continue  # the judge set no alpha: the suite uses alpha_det and says so
            if isinstance(answer, FlaeScores):
                rows.append({**base, "item_id": f"mmdr.flae.{key}", "item": key, "score": getattr(answer, name),
                             "reason": note, "na_reason": None})
            else:
                rows.append({**base, "item_id": f"mmdr.flae.{key}", "item": key, "score": None,
                             "reason": judgment.error, "na_reason": judgment.na_reason or "pipeline_failure"})
    return frame("report_judgments", rows)


SYNTHESIS_TEMPLATE = "criteria_scores"


def judge_synthesis(keys: Sequence[tuple[str, str]], reports: pl.DataFrame, tasks: pl.DataFrame,
                    rubrics: pl.DataFrame, judge: Judge, labels: Mapping[str, str] | None = None) -> pl.DataFrame:
    """MiroEval adaptive synthesis: one call per rubric dimension (all its criteria), 0-10 each. The
    Grounding dimension's call also shows the key facts of the task's attachments."""
    rubric_by_task, facts_by_task = adaptive_rubric(rubrics), task_key_facts(rubrics)
    query = {r["task"]: r["query"] for r in tasks.iter_rows(named=True)}
    report_by_key = rows_by_partition(reports)
    _, template_hash = load_template(SYNTHESIS_TEMPLATE)
    plans, requests = [], []
    for system, task in keys:
        rubric, report = rubric_by_task.get(task), report_by_key.get((system, task))
        if rubric is None or report is None or report["status"] != "ok":
            continue  # the miroeval suite says why
        text = _for_judge(report["text"], judge)
        for dim in rubric.dimensions:
            facts = facts_by_task.get(task, []) if dim.dimension_id == "grounding" else []
            variables = {"dimension": dim.name, "query": query.get(task, ""), "report": text,
                         "key_facts": _key_facts_block(facts), "key_facts_list": facts,
                         "criteria": "\n".join(f"- [{c.criterion_id}] {c.text}" for c in dim.criteria),
                         "criteria_list": [{"criterion_id": c.criterion_id, "text": c.text} for c in dim.criteria]}
            requests.append(JudgmentRequest(SYNTHESIS_TEMPLATE, variables, CriteriaScores,
                                            {**(labels or {}), "system": system, "task": task}))
            plans.append((system, task, dim))
    rows = []
    for (system, task, dim), judgment in zip(plans, judge.judge_many(requests), strict=True):
        got = {s.criterion_id: s for s in judgment.answer.scores} if isinstance(judgment.answer, CriteriaScores) else {}
        for criterion in dim.criteria:
            score = got.get(criterion.criterion_id)
            rows.append({"system": system, "task": task, "kind": "criteria", "credit": None,
                         "item_id": f"miroeval.{dim.dimension_id}.{criterion.criterion_id}", "item": criterion.text,
                         "score": score.score if score else None,
                         "reason": score.reason if score else (judgment.error or "the judge gave no score"),
                         "na_reason": None if score else (judgment.na_reason or "pipeline_failure"),
                         "judge": judge.judge_id, "template": SYNTHESIS_TEMPLATE, "template_hash": template_hash,
                         "cache_key": judgment.provenance.cache_key or None})
    return frame("report_judgments", rows)


def _key_facts_block(facts: list[str]) -> str:
    if not facts:
        return ""
    lines = "\n".join(f"- {fence_untrusted(f)}" for f in facts)
    return ("\nKey facts of the attached material, which a report that reads it correctly keeps (score the "
            f"criteria against them):\n{lines}\n")


RACE_TEMPLATE = "race_scores"


def judge_race(keys: Sequence[tuple[str, str]], reports: pl.DataFrame, tasks: pl.DataFrame, rubrics: pl.DataFrame,
               judge: Judge, extra_suites: Sequence[str] = (), policies: Mapping[str, str] | None = None,
               labels: Mapping[str, str] | None = None) -> pl.DataFrame:
    """DeepResearch Bench RACE: the report and the task's reference report, both with citations
    stripped by our parser, scored on every criterion of the task in one call per order. Policy
    `drb.race.position_bias`: `both_orders` (default; each score is the mean of the two orders),
    `target_first` (the reference code's fixed order) or `random_order` (seeded by `drb.race.seed`).
    Rows `drb.race.<dimension>.<criterion>.target` / `.reference`, 0-10."""
    policies = policies or {}
    policy = policy_value(policies, "drb.race.position_bias")
    seed = policy_value(policies, "drb.race.seed")
    task_rows = {r["task"]: r for r in tasks.iter_rows(named=True)}
    criteria_by_task = race_criteria(rubrics)
    report_by_key = rows_by_partition(reports)
    _, template_hash = load_template(RACE_TEMPLATE)
    plans, requests = [], []
    for system, task in keys:
        row = task_rows.get(task) or {}
        criteria, report = criteria_by_task.get(task), report_by_key.get((system, task))
        if "drb" not in suite_names(row.get("benchmark", "generic"), extra_suites):
            continue
        if criteria is None or not row.get("reference_article") or report is None or report["status"] != "ok":
            continue  # the drb suite reports these as N/A with the reason
        target = _for_judge(without_citations(report["text"]), judge)
        reference = _for_judge(without_citations(row["reference_article"]), judge)
        listed = race_criterion_ids(criteria)
        shown = "\n".join(f"- [{cid}] ({dim.replace('_', ' ')}) {c.criterion}: {c.explanation}"
                          for cid, dim, c in listed)
        items = [{"criterion_id": cid, "criterion": c.criterion, "explanation": c.explanation} for cid, _, c in listed]
        orders = {"both_orders": [True, False], "target_first": [True],
                  "random_order": [_generated_first(system, task, "race", seed)]}[policy]
        for target_first in orders:
            a, b = (target, reference) if target_first else (reference, target)
            requests.append(JudgmentRequest(RACE_TEMPLATE, {"query": row.get("query", ""), "criteria": shown,
                                                            "criteria_list": items, "article_a": a, "article_b": b},
                                            RaceScores, {**(labels or {}), "system": system, "task": task}))
            plans.append((system, task, target_first, listed))
    found: dict[tuple[str, str, str], list[tuple[float, float] | None]] = {}
    cache_keys: dict[tuple[str, str], str] = {}
    failures: dict[tuple[str, str], tuple[str, str]] = {}
    for (system, task, target_first, listed), judgment in zip(plans, judge.judge_many(requests), strict=True):
        answer = judgment.answer
        got = {s.criterion_id: s for s in answer.scores} if isinstance(answer, RaceScores) else {}
        cache_keys.setdefault((system, task), judgment.provenance.cache_key or "")
        if not isinstance(answer, RaceScores):
            failures[(system, task)] = (judgment.na_reason or "pipeline_failure", judgment.error or "")
        for cid, _, _ in listed:
            score = got.get(cid)
            pair = None if score is None else ((score.score_a, score.score_b) if target_first
                                               else (score.score_b, score.score_a))
            found.setdefault((system, task, cid), []).append(pair)
    criterion_text = {(s, t, cid): c.criterion for s, t, _, listed in plans for cid, _, c in listed}
    rows = []
    for (system, task, cid), pairs in found.items():
        base = {"system": system, "task": task, "kind": "race", "credit": None, "judge": judge.judge_id,
                "template": RACE_TEMPLATE, "template_hash": template_hash,
                "cache_key": cache_keys.get((system, task)) or None}
        for side, position in (("target", 0), ("reference", 1)):
            row = {**base, "item_id": f"drb.race.{cid}.{side}", "item": criterion_text[(system, task, cid)]}
            if None in pairs:
                na, error = failures.get((system, task), ("pipeline_failure", "the judge gave no score for this criterion"))
                rows.append({**row, "score": None, "reason": error or "the judge gave no score for this criterion",
                             "na_reason": na})
            else:
                values = [p[position] for p in pairs]
                rows.append({**row, "score": sum(values) / len(values), "na_reason": None,
                             "reason": f"policy {policy}: " + " / ".join(f"{v:g}" for v in values)})
    return frame("report_judgments", rows)


def race_criterion_ids(criteria: RaceCriteria) -> list[tuple[str, str, RaceCriterion]]:
    """(id `<dimension>.c<n>`, dimension, criterion) in the order the task gives them."""
    return [(f"{dim}.c{n}", dim, c) for dim in criteria.dimension_weights
            for n, c in enumerate(criteria.criteria.get(dim, []), start=1)]
