"""MMDR FLAE judgments: the formula channel measured, the judge channel and weights in one call."""
from __future__ import annotations

from typing import Mapping, Sequence

import polars as pl

from ...core.flae_features import flae_observables, formula_channel
from ...core.models import FlaeScores
from ...judges.base import Judge, JudgmentRequest
from ...judges.prompts import load_template
from ...stages.frames import frame, rows_by_partition
from ..judging import JudgmentContext, report_for_judge, scored_under

from .metrics import alpha_det

FLAE_TEMPLATE = "mmdr/flae_scores"


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
                "template": FLAE_TEMPLATE, "template_hash": template_hash, "cache_key": None}
        rows.extend({**base, "item_id": f"mmdr.flae.{name}", "item": name, "score": value, "na_reason": None,
                     "reason": "measured (formula channel)" if name != "alpha" else "alpha_det from observables"}
                    for name, value in parts.items())
        asked.append(base)
        requests.append(JudgmentRequest(FLAE_TEMPLATE, {"query": row.get("query", ""), "multimodal": multimodal,
                                                        "report": report_for_judge(report["text"], judge)},
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


def flae(ctx: JudgmentContext) -> pl.DataFrame:
    return judge_flae(ctx.keys, ctx.reports, ctx.tasks, ctx.judge, ctx.extra_suites, ctx.labels)
