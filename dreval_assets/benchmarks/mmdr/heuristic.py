"""MMDR's offline handlers: FLAE's judge channel and the weights fall back to what is measured; TRACE's
weights it cannot set (N/A, a judge limit); no
judge-set alpha (alpha_det stands); VEF measured from the visual ground truth's text (`vef.offline_vef`);
MOSAIC's items N/A `pipeline_failure` "judge limit: ..." (it cannot see images)."""
from __future__ import annotations

from typing import Any, Mapping

from pydantic import BaseModel

from ...core.flae_features import flae_observables, formula_channel
from ...core.models import FlaeScores
from ...judges.readable import READS_WORD_LISTS, require_readable
from .fidelity import HANDLERS as FIDELITY_HANDLERS
from .flae_models import FlaeAlpha, FlaeJudgeScores, FlaeWeights
from .mosaic import TEMPLATE as MOSAIC_TEMPLATE, answer_mosaic_item
from .trace_weights import TEMPLATE as TRACE_WEIGHTS_TEMPLATE, answer_trace_weights
from .vef import TEMPLATE as VEF_TEMPLATE, answer_vef

def answer_flae_scores(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`flae_scores`: no reading; the formula channel's own values and equal weights, so FLAE with
    the heuristic judge is the formula channel (marked `fallback`)."""
    report = str(variables.get("report") or "")
    require_readable(READS_WORD_LISTS, report=report)
    formula = formula_channel(flae_observables(report, bool(variables.get("multimodal"))))
    return FlaeScores(**formula, weight_read=1 / 3, weight_insh=1 / 3, weight_stru=1 / 3), {"fallback": True}


def answer_flae_judge_scores(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`flae_judge_scores`: no reading; the formula channel's own values (marked `fallback`)."""
    report = str(variables.get("report") or "")
    require_readable(READS_WORD_LISTS, report=report)
    return FlaeJudgeScores(**formula_channel(flae_observables(report, bool(variables.get("multimodal"))))), {
        "fallback": True}


def answer_flae_weights(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`flae_weights`: no reading of the task; equal thirds (marked `fallback`)."""
    return FlaeWeights(weight_read=1 / 3, weight_insh=1 / 3, weight_stru=1 / 3,
                       rationale="fixed fallback: equal weights"), {"fallback": True}


def answer_flae_alpha(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`flae_alpha`: sets no alpha of its own, so alpha_det (already measured) stands."""
    return FlaeAlpha(alpha=None, reason="the offline judge sets no alpha: alpha_det stands"), {"fallback": True}


HANDLERS = {TRACE_WEIGHTS_TEMPLATE: answer_trace_weights, "mmdr/flae_scores": answer_flae_scores,
            "mmdr/flae_judge_scores": answer_flae_judge_scores, "mmdr/flae_weights": answer_flae_weights,
            "mmdr/flae_alpha": answer_flae_alpha, VEF_TEMPLATE: answer_vef, MOSAIC_TEMPLATE: answer_mosaic_item,
            **FIDELITY_HANDLERS}
