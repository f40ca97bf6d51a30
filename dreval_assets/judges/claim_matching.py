"""The offline judge's shared claim matching, apart from the judge so that a benchmark's own
claim-verdict handlers can build on it without importing the registry the judge reads."""
from __future__ import annotations

from typing import Any, Mapping

from pydantic import BaseModel

from ..core.evidence_match import match_claim
from ..core.metrics import judge_limit
from ..core.models import ClaimVerdict, ClaimVerdictBatch, ItemVerdict
from .readable import READS_OVERLAP, NotRead, require_readable


def answer_claim_verdict(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`claim_verdict`: lexical evidence matching of the claim against the source text."""
    claim, source = str(variables["claim"]), str(variables.get("source_text") or "")
    require_readable(READS_OVERLAP, claim=claim, source=source)
    match = match_claim(claim, source)
    verdict = ClaimVerdict(verdict=match.verdict, evidence=match.evidence, reason=match.reason)
    return verdict, {"score": match.score}


def answer_claim_verdicts_batch(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`claim_verdicts_batch`: the same matching for every claim of the batch against one source. A
    claim it does not read is left out of the answer, with its reason in `extra["failures"]`."""
    source = str(variables.get("source_text") or "")
    require_readable(READS_OVERLAP, source=source)
    verdicts, scores, failures = [], {}, {}
    for item in variables["items"]:
        try:
            require_readable(READS_OVERLAP, claim=str(item["claim"]), source=source)
        except NotRead as error:
            failures[item["claim_id"]] = ("pipeline_failure", judge_limit(str(error)))
            continue
        match = match_claim(str(item["claim"]), source)
        verdicts.append(ItemVerdict(claim_id=item["claim_id"], verdict=match.verdict,
                                    evidence=match.evidence, reason=match.reason))
        scores[item["claim_id"]] = match.score
    if failures and not verdicts:
        raise NotRead(next(iter(failures.values()))[1])
    return ClaimVerdictBatch(verdicts=verdicts), {"scores": scores, **({"failures": failures} if failures else {})}
