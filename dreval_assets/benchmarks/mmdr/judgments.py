"""MMDR FLAE judgments: the formula channel measured; the judge channel, the task-adaptive weights and
alpha asked of the judge in three prompts (the paper's) or in one (policy `mmdr.flae.protocol`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import polars as pl
from pydantic import BaseModel

from ...core.flae_features import flae_observables, formula_channel
from ...core.models import FlaeScores
from ...judges.base import Judge, JudgmentRequest
from ...judges.prompts import load_template
from ...stages.frames import frame, rows_by_partition
from ..judging import JudgmentContext, report_for_judge, scored_under
from ..policies import policy_value
from .flae_models import FlaeAlpha, FlaeJudgeScores, FlaeWeights
from .metrics import alpha_det

FLAE_TEMPLATE = "mmdr/flae_scores"  # the single call: scores, weights and alpha together
SCORES_TEMPLATE = "mmdr/flae_judge_scores"
WEIGHTS_TEMPLATE = "mmdr/flae_weights"
ALPHA_TEMPLATE = "mmdr/flae_alpha"

# The observables the weights and alpha prompts show, in words (core/flae_features.py measures them).
OBSERVABLES = {
    "length_completeness": "length completeness (words / 800, at most 1)",
    "heading_coverage": "heading coverage (sections / 4, at most 1)",
    "citation_compliance": "share of the report's claims that carry a citation",
    "reference_validity": "reference list valid (1: a list, and every cited index resolves)",
    "compliance": "protocol compliance (reference list, inline citations, an image when the task has images)",
    "ttr": "type-token ratio of the first 1,000 words",
    "long": "share of sentences over 35 words",
    "fragments": "share of fragments under 4 words",
    "causal": "share of sentences giving causes",
    "critical": "share of sentences weighing limitations or risks",
    "quantified": "share of sentences stating a number",
}


@dataclass(frozen=True)
class FlaeCall:
    """One judge call of the protocol: its template, answer model and which judgment item each
    answer field fills (the item ids the suite reads: `mmdr.flae.<item>`)."""
    template: str
    model: type[BaseModel]
    items: tuple[tuple[str, str], ...]  # (answer field, item id)
    fallback_note: str  # what the heuristic judge's answer is, when it falls back


JUDGE_ITEMS = (("read", "read_judge"), ("insh", "insh_judge"), ("stru", "stru_judge"))
WEIGHT_ITEMS = (("weight_read", "weight_read"), ("weight_insh", "weight_insh"), ("weight_stru", "weight_stru"))
ALPHA_ITEMS = (("alpha", "alpha_judge"),)
PROTOCOLS = {
    "separate": (FlaeCall(SCORES_TEMPLATE, FlaeJudgeScores, JUDGE_ITEMS,
                          "heuristic fallback: the formula channel again"),
                 FlaeCall(WEIGHTS_TEMPLATE, FlaeWeights, WEIGHT_ITEMS, "heuristic fallback: equal weights"),
                 FlaeCall(ALPHA_TEMPLATE, FlaeAlpha, ALPHA_ITEMS, "heuristic: sets no alpha")),
    "single_call": (FlaeCall(FLAE_TEMPLATE, FlaeScores, JUDGE_ITEMS + WEIGHT_ITEMS + ALPHA_ITEMS,
                             "heuristic fallback: the formula channel again, equal weights"),),
}


def observables_text(obs: Mapping[str, float]) -> str:
    return "\n".join(f"- {what}: {obs[name]:.2f}" for name, what in OBSERVABLES.items())


def judge_flae(keys: Sequence[tuple[str, str]], reports: pl.DataFrame, tasks: pl.DataFrame, judge: Judge,
               extra_suites: Sequence[str] = (), labels: Mapping[str, str] | None = None,
               policies: Mapping[str, str] | None = None) -> pl.DataFrame:
    """MMDR FLAE: the formula channel and alpha_det measured here; the judge channel, the weights and
    the judge's alpha asked as policy `mmdr.flae.protocol` says: `separate` (default, the paper's:
    three calls per report) or `single_call` (one). Rows `mmdr.flae.<name>` hold the parts; the suite
    fuses them. An alpha the judge did not set has no row (the suite then uses alpha_det)."""
    protocol = policy_value(dict(policies or {}), "mmdr.flae.protocol")
    calls = PROTOCOLS[protocol]
    task_rows = {r["task"]: r for r in tasks.iter_rows(named=True)}
    report_by_key = rows_by_partition(reports)
    rows, asked, requests = [], [], []
    for system, task in keys:
        row = task_rows.get(task) or {}
        report = report_by_key.get((system, task))
        if not scored_under("mmdr", row.get("benchmark", "generic"), extra_suites):
            continue
        if report is None or report["status"] != "ok":
            continue  # the mmdr suite reports these as N/A with the reason
        multimodal = row.get("modality") == "multimodal"
        obs = flae_observables(report["text"], multimodal)
        parts = {f"{d}_form": v for d, v in formula_channel(obs).items()}
        parts["alpha"] = alpha_det(obs["length_completeness"], obs["heading_coverage"], obs["citation_compliance"],
                                   obs["reference_validity"])
        base = {"system": system, "task": task, "kind": "flae", "credit": None, "judge": judge.judge_id,
                "cache_key": None}
        measured = {**base, "template": calls[0].template, "template_hash": load_template(calls[0].template)[1]}
        rows.extend({**measured, "item_id": f"mmdr.flae.{name}", "item": name, "score": value, "na_reason": None,
                     "reason": "measured (formula channel)" if name != "alpha" else "alpha_det from observables"}
                    for name, value in parts.items())
        variables = {"query": row.get("query") or "", "multimodal": multimodal,
                     "report": report_for_judge(report["text"], judge), "observables": observables_text(obs)}
        for call in calls:
            asked.append(({**base, "template": call.template, "template_hash": load_template(call.template)[1]}, call))
            requests.append(JudgmentRequest(call.template, variables, call.model,
                                            {**(labels or {}), "system": system, "task": task}))
    for (base, call), judgment in zip(asked, judge.judge_many(requests), strict=True):
        rows.extend(answer_rows({**base, "cache_key": judgment.provenance.cache_key or None}, call, judgment, protocol))
    return frame("report_judgments", rows)


def answer_rows(base: dict, call: FlaeCall, judgment, protocol: str) -> list[dict]:
    """The judgment rows one call fills: a value per item, or the call's failure on each item."""
    answer = judgment.answer
    if not isinstance(answer, call.model):
        return [{**base, "item_id": f"mmdr.flae.{item}", "item": item, "score": None, "reason": judgment.error,
                 "na_reason": judgment.na_reason or "pipeline_failure"} for _, item in call.items]
    note = call.fallback_note if judgment.extra.get("fallback") else f"judge (mmdr.flae.protocol={protocol})"
    return [{**base, "item_id": f"mmdr.flae.{item}", "item": item, "score": getattr(answer, field),
             "reason": note, "na_reason": None}
            for field, item in call.items
            if not (field == "alpha" and answer.alpha is None)]  # no alpha set: the suite uses alpha_det


def flae(ctx: JudgmentContext) -> pl.DataFrame:
    return judge_flae(ctx.keys, ctx.reports, ctx.tasks, ctx.judge, ctx.extra_suites, ctx.labels, ctx.policies)
