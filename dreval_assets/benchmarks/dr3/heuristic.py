"""DR³'s offline handler: information recall by number, date and named-entity overlap.

`dr3/insight_recall`: each insight is matched against the report passages it was shown with the
offline evidence matcher (`core/evidence_match.match_claim`): its figures and dates must appear with
the same value, its names must be there, and enough of its content words. supported -> 1, partial
-> 0.5 (some figure, date or name missing, or moderate overlap), anything else -> 0 (a conflicting
figure counts as not covered). It measures overlap, not paraphrase: an insight the report restates
in other words scores lower than an LLM judge would give it."""
from __future__ import annotations

from typing import Any, Mapping

from pydantic import BaseModel

from ...core.evidence_match import match_claim
from ...judges.readable import READS_OVERLAP, credit_items

CREDIT = {"supported": 1, "partial": 0.5}


def insight_credit(insight: str, passages: str) -> tuple[float, str]:
    """(1 / 0.5 / 0, reason) of one insight against the report passages."""
    match = match_claim(insight, passages)
    if match.verdict == "unknown":
        return 0, f"not covered: {match.reason}"
    return CREDIT.get(match.verdict, 0), f"{match.verdict}: {match.reason}"


def answer_insight_recall(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    passages = str(variables.get("passages") or "")
    return credit_items(READS_OVERLAP, variables["insight_list"], passages, insight_credit, ("insight", "passages"),
                        reason_chars=300), {}


HANDLERS = {"dr3/insight_recall": answer_insight_recall}
