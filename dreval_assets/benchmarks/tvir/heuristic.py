"""TVIR's offline handlers: the checklist as key-word coverage (IA, as the shared checklist handler);
WQ and ADB as the measured text features (`core/report_features.py`, as the shared rubric handler);
internal contradictions as same-unit, different-number sentence pairs (FLC); multimodal composition
on the measured composition facts (`visual_text.offline_composition`). What
needs eyes (chart checks, captions against images, figure integration, charts against sources) is
N/A `model_failure`, saying so: the offline judge never guesses what an image shows."""
from __future__ import annotations

from typing import Any, Mapping

from pydantic import BaseModel

from ...core.checklist_match import item_credit
from ...core.models import ContradictionCount, DimensionScore, RubricScores
from ...core.report_features import contradiction_candidates
from ...judges.readable import READS_KEY_WORDS, READS_WORD_LISTS, NotRead, credit_items, require_readable
from .rubrics import SCORED
from .visual_models import (CAPTION_TEMPLATE, CHART_CHECKS_TEMPLATE, CHART_SOURCE_TEMPLATE, COMPOSITION_TEMPLATE,
                            INTEGRATION_TEMPLATE, CompositionScores, Dimension)
from .visual_text import offline_composition

def answer_checklist(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`tvir/checklist_items`: key-word coverage of each requirement in the corrected report."""
    report = str(variables.get("report") or "")
    return credit_items(READS_KEY_WORDS, variables["item_list"], report, item_credit, ("requirement", "report")), {}


def answer_rubric(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`tvir/writing_quality`, `tvir/analytical_depth`: the rubric's measured text features, 1-10 each."""
    rubric = next(r for r in SCORED if r.rubric_id == variables["rubric_id"])
    report = str(variables.get("report") or "")
    require_readable(READS_WORD_LISTS, report=report)
    measured = rubric.measure(report)
    return RubricScores(scores=[DimensionScore(dimension_id=d, score=max(1, min(10, round(measured[d]))),
                                               reason=f"measured {measured[d]:.1f} on the documented scale")
                                for d, _ in rubric.dimensions]), {}


def answer_contradictions(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`contradictions`: sentence pairs giving different numbers in one unit about the same thing."""
    report = str(variables.get("report") or "")
    require_readable(READS_WORD_LISTS, report=report)
    found = contradiction_candidates(report)
    return ContradictionCount(count=len(found), examples=found[:10]), {}


def answer_composition(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`tvir/composition`: the documented scale on the counted figures, sections, kinds and captions."""
    scores = offline_composition(variables["facts_map"])
    return CompositionScores(**{d: Dimension(score=s, reason=r) for d, (s, r) in scores.items()}), {}


def cannot_see(what: str):
    def answer(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
        raise NotRead(f"the offline judge cannot see images: {what} of {variables.get('figure', 'a figure')}")
    answer.__doc__ = f"N/A model_failure: {what} needs a vision judge."
    return answer


HANDLERS = {
    "tvir/checklist_items": answer_checklist,
    **{rubric.template: answer_rubric for rubric in SCORED},
    "tvir/contradictions": answer_contradictions,
    COMPOSITION_TEMPLATE: answer_composition,
    CHART_CHECKS_TEMPLATE: cannot_see("the chart checklist"),
    CAPTION_TEMPLATE: cannot_see("caption accuracy against the image"),
    INTEGRATION_TEMPLATE: cannot_see("the figure's integration in its context"),
    CHART_SOURCE_TEMPLATE: cannot_see("the chart's values against its sources"),
}
