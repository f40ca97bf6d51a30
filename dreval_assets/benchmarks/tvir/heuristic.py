"""TVIR's offline handler: internal contradictions as same-unit, different-number sentence pairs (FLC)."""
from __future__ import annotations

from typing import Any, Mapping

from pydantic import BaseModel

from ...core.models import ContradictionCount
from ...core.report_features import contradiction_candidates
from ...judges.readable import READS_WORD_LISTS, require_readable

def answer_contradictions(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`contradictions`: sentence pairs giving different numbers in one unit about the same thing."""
    report = str(variables.get("report") or "")
    require_readable(READS_WORD_LISTS, report=report)
    found = contradiction_candidates(report)
    return ContradictionCount(count=len(found), examples=found[:10]), {}


HANDLERS = {"tvir/contradictions": answer_contradictions}
