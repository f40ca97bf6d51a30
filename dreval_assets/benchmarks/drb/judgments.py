"""DeepResearch Bench RACE judgments: report and reference report scored together on the task's criteria
(the reference code's protocol: one call per report, the report first, on its cleaned article)."""
from __future__ import annotations

from typing import Mapping, Sequence

import polars as pl

from ...core.models import RaceCriteria, RaceCriterion, RaceScores
from ...core.report_parser import without_citations
from ...judges.base import Judge, JudgmentRequest
from ...judges.prompts import load_template
from ...stages.frames import frame, rows_by_partition
from ..judging import JudgmentContext, report_for_judge, scored_under, seeded_first, task_artifacts
from ..policies import policy_value


CRITERIA_KIND = "race_criteria"


def race_criteria(rubrics: pl.DataFrame | None) -> dict[str, RaceCriteria]:
    return {t: RaceCriteria.model_validate(found[0]) for t, found in task_artifacts(rubrics, CRITERIA_KIND).items()}


RACE_TEMPLATE = "drb/race_scores"
RACE_TEMPLATE_ZH = "drb/race_scores_zh"  # the reference code instructs the judge in Chinese on Chinese tasks
TARGET_TEXT_ITEM = "drb.race.target_text"  # 1: the release's cleaned article was scored, 0: our stripping
RELEASE_CLEANED = "the release's cleaned article (cleaned_data)"
NO_SCORE = "the judge gave no score for this criterion"
OUR_STRIPPING = "the report with citations stripped by our parser (the release has no cleaned article)"


def race_template(language: str | None) -> str:
    return RACE_TEMPLATE_ZH if (language or "").lower().startswith("zh") else RACE_TEMPLATE


def race_inputs(report: dict, task_row: dict) -> tuple[str, bool, str]:
    """(target text, whether it is the release's cleaned article, reference text) as RACE scores them:
    the benchmark's own cleaning when the release ships it, our deterministic stripping otherwise. A
    DRB reference report comes from cleaned_data and is shown as released."""
    cleaned = report.get("cleaned_text")
    target = cleaned if cleaned else without_citations(report["text"])
    reference = task_row["reference_article"]
    if task_row.get("benchmark") != "drb":
        reference = without_citations(reference)
    return target, bool(cleaned), reference


def judge_race(keys: Sequence[tuple[str, str]], reports: pl.DataFrame, tasks: pl.DataFrame, rubrics: pl.DataFrame,
               judge: Judge, extra_suites: Sequence[str] = (), policies: Mapping[str, str] | None = None,
               labels: Mapping[str, str] | None = None) -> pl.DataFrame:
    """DeepResearch Bench RACE as published: the report (the release's cleaned article when it has
    one, else citations stripped by our parser) and the task's reference report scored on every
    criterion of the task, with its explanation, in ONE call per report, the report first. Policy
    `drb.race.position_bias`: `target_first` (default, the reference code's), `both_orders` (each
    score the mean of the two orders, two calls) or `random_order` (seeded by `drb.race.seed`).
    Rows `drb.race.<dimension>.<criterion>.target` / `.reference`, 0-10, and `drb.race.target_text`
    saying which text was scored (1 the release's cleaned article, 0 our stripping)."""
    policies = policies or {}
    policy = policy_value(policies, "drb.race.position_bias")
    seed = policy_value(policies, "drb.race.seed")
    task_rows = {r["task"]: r for r in tasks.iter_rows(named=True)}
    criteria_by_task = race_criteria(rubrics)
    report_by_key = rows_by_partition(reports)
    plans, requests = [], []
    released: dict[tuple[str, str], bool] = {}
    for system, task in keys:
        row = task_rows.get(task) or {}
        criteria, report = criteria_by_task.get(task), report_by_key.get((system, task))
        if not scored_under("drb", row.get("benchmark", "generic"), extra_suites):
            continue
        if criteria is None or not row.get("reference_article") or report is None or report["status"] != "ok":
            continue  # the drb suite reports these as N/A with the reason
        target_text, released[(system, task)], reference_text = race_inputs(report, row)
        target, reference = report_for_judge(target_text, judge), report_for_judge(reference_text, judge)
        listed = race_criterion_ids(criteria)
        shown = "\n".join(f"- [{cid}] ({dim.replace('_', ' ')}) {c.criterion}: {c.explanation}"
                          for cid, dim, c in listed)
        items = [{"criterion_id": cid, "criterion": c.criterion, "explanation": c.explanation} for cid, _, c in listed]
        orders = {"both_orders": [True, False], "target_first": [True],
                  "random_order": [seeded_first(system, task, "race", seed)]}[policy]
        for target_first in orders:
            a, b = (target, reference) if target_first else (reference, target)
            variables = {"query": row.get("query", ""), "criteria": shown, "criteria_list": items,
                         "article_a": a, "article_b": b}
            requests.append(JudgmentRequest(race_template(row.get("language")), variables, RaceScores,
                                            {**(labels or {}), "system": system, "task": task}))
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

    def base(system: str, task: str) -> dict:
        template = race_template((task_rows.get(task) or {}).get("language"))
        return {"system": system, "task": task, "kind": "race", "credit": None, "judge": judge.judge_id,
                "template": template, "template_hash": load_template(template)[1],
                "cache_key": cache_keys.get((system, task)) or None}
    rows = [{**base(system, task), "item_id": TARGET_TEXT_ITEM, "item": "the report text RACE scored",
             "score": 1.0 if cleaned else 0.0, "reason": RELEASE_CLEANED if cleaned else OUR_STRIPPING,
             "na_reason": None} for (system, task), cleaned in released.items()]
    for (system, task, cid), pairs in found.items():
        source = "release cleaned" if released[(system, task)] else "our stripping"
        for side, position in (("target", 0), ("reference", 1)):
            row = {**base(system, task), "item_id": f"drb.race.{cid}.{side}",
                   "item": criterion_text[(system, task, cid)]}
            if None in pairs:
                na, error = failures.get((system, task), ("pipeline_failure", NO_SCORE))
                rows.append({**row, "score": None, "reason": error or NO_SCORE, "na_reason": na})
            else:
                values = [p[position] for p in pairs]
                rows.append({**row, "score": sum(values) / len(values), "na_reason": None,
                             "reason": f"policy {policy}, target text {source}: "
                                       + " / ".join(f"{v:g}" for v in values)})
    return frame("report_judgments", rows)


def race_criterion_ids(criteria: RaceCriteria) -> list[tuple[str, str, RaceCriterion]]:
    """(id `<dimension>.c<n>`, dimension, criterion) in the order the task gives them."""
    return [(f"{dim}.c{n}", dim, c) for dim in criteria.dimension_weights
            for n, c in enumerate(criteria.criteria.get(dim, []), start=1)]


def race(ctx: JudgmentContext) -> pl.DataFrame:
    return judge_race(ctx.keys, ctx.reports, ctx.tasks, ctx.rubrics, ctx.judge, ctx.extra_suites, ctx.policies,
                      ctx.labels)


def evidence_inputs(tasks: list[dict], rubrics: pl.DataFrame | None, judge: Judge) -> dict[str, dict]:
    """The RACE criteria each task's scores read (as loaded with the task)."""
    found = race_criteria(rubrics)
    return {t["task"]: {"drb.race_criteria": found[t["task"]]} for t in tasks if t["task"] in found}
