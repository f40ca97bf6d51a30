"""MiroEval's adaptive rubric, generated once per task and shared by all systems (methods/miroeval.md).

The paper's four universal dimensions (coverage, insight, instruction following, clarity), one to
three task-specific dimensions, and Grounding when the task has readable attachments: Grounding is one
of the task-specific ("Grounding & Task-specific Expertise") dimensions, which together are the reported
Specificity (`query_spec`). Each dimension has 1-10 weighted criteria. Dimension weights are the judge's,
normalised, with no cap (the published per-task weights give the task-specific dimensions 0.38-0.48
together); the 0.20 cap of an earlier prompt is the policy `miroeval.dimension_cap`. The offline
counterpart builds the task-specific dimension from the query's most salient terms.
"""
from __future__ import annotations

import re
from collections import Counter

from ...core.models import AdaptiveRubric, RubricCriterion, RubricDimension

UNIVERSAL = {
    "coverage": ("Coverage", ("answers every part of the request", "covers the main aspects of the topic")),
    "insight": ("Insight", ("explains causes and implications", "draws conclusions beyond restating sources")),
    "instruction_following": ("Instruction following", ("respects the requested scope, format and focus",
                                                        "answers the questions asked, in order")),
    "clarity": ("Clarity", ("is organised with clear sections", "uses plain, precise sentences")),
}
GROUNDING = ("Grounding", ("reads the attached material correctly", "extends the attached material meaningfully"))
_WORD = re.compile(r"[a-z][a-z-]{3,}")
_HAN_RUN = re.compile(r"[\u4e00-\u9fff]{2,}")
_STOP = frozenset("""what which their there about would could should these those with from into that this have
been also were does please give recent figures sources source much many more most report briefing preparing
today where when how""".split())


def offline_rubric(query: str, has_attachments: bool) -> AdaptiveRubric:
    """Universal dimensions, one task-specific dimension from the query's most frequent terms (and
    Grounding with attachments), equal weights; criteria carry equal weights."""
    top = salient_terms(query)
    dims = [RubricDimension(dimension_id=k, name=name, dynamic=False,
                            criteria=[RubricCriterion(criterion_id=f"c{i}", text=t, weight=1.0)
                                      for i, t in enumerate(texts, start=1)])
            for k, (name, texts) in UNIVERSAL.items()]
    if top:
        dims.append(RubricDimension(dimension_id="task_expertise", name=f"Expertise on {', '.join(top[:2])}",
                                    dynamic=True, criteria=[RubricCriterion(criterion_id=f"c{i}", weight=1.0,
                                                                            text=f"treats {term} with expert detail")
                                                            for i, term in enumerate(top, start=1)]))
    if has_attachments:
        dims.append(RubricDimension(dimension_id="grounding", name=GROUNDING[0], dynamic=True,
                                    criteria=[RubricCriterion(criterion_id=f"c{i}", text=t, weight=1.0)
                                              for i, t in enumerate(GROUNDING[1], start=1)]))
    return finalise(AdaptiveRubric(dimensions=dims, weights={d.dimension_id: 1.0 for d in dims}))


def salient_terms(query: str, n: int = 4) -> list[str]:
    """The query's most frequent content words; for a query without them (Chinese), its most frequent
    two-character runs, so every task has its task-specific dimension."""
    terms = [w for w in _WORD.findall(query.lower()) if w not in _STOP]
    if not terms:
        terms = [run[i:i + 2] for run in _HAN_RUN.findall(query) for i in range(len(run) - 1)]
    return [w for w, _ in Counter(terms).most_common(n)]


def finalise(rubric: AdaptiveRubric) -> AdaptiveRubric:
    """The judge's weights normalised (a dimension it gave none weighs 0); Grounding marked task-specific.
    Raises ValueError when no weight is positive."""
    weights = {d.dimension_id: max(0.0, float(rubric.weights.get(d.dimension_id, 0.0))) for d in rubric.dimensions}
    total = sum(weights.values())
    if total <= 0:
        raise ValueError("dimension weights must have a positive sum")
    dimensions = [d.model_copy(update={"dynamic": True}) if d.dimension_id == "grounding" else d
                  for d in rubric.dimensions]
    return rubric.model_copy(update={"dimensions": dimensions,
                                     "weights": {k: w / total for k, w in weights.items()}})
