"""Wiki Live's offline handlers: writing criteria compared by measured features; gold statements."""
from __future__ import annotations

from typing import Any, Mapping

from pydantic import BaseModel

from ...core.article_features import compare
from ...core.models import CriterionWinner, PairwiseOutcomes
from ...judges.readable import READS_WORD_LISTS, require_readable
from ...live.wikilive_text import answer_gold_statements

def answer_pairwise_criteria(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`pairwise_criteria`: each criterion's measured feature compared between the two articles. When
    ties are not allowed (the published protocol, reference shown first), no measurable difference
    leaves the criterion to article A: the generated article wins only by measuring better."""
    a, b = str(variables["article_a"]), str(variables["article_b"])
    require_readable(READS_WORD_LISTS, article_a=a, article_b=b)
    allow_tie = bool(variables.get("allow_tie", True))
    outcomes = []
    for criterion in variables["criteria_list"]:
        result = compare(criterion["feature"], a, b)
        winner = {"first": "A", "second": "B"}.get(result, "tie" if allow_tie else "A")
        note = "" if allow_tie or result != "tie" else " (no tie allowed: the first article keeps it)"
        outcomes.append(CriterionWinner(criterion_id=criterion["criterion_id"], winner=winner,
                                        reason=f"feature {criterion['feature']}: {result}{note}"))
    return PairwiseOutcomes(outcomes=outcomes), {}


HANDLERS = {"wlc/pairwise_criteria": answer_pairwise_criteria, "wlc/gold_statements": answer_gold_statements}
