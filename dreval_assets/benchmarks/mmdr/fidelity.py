"""MMDR's claim verdicts with the paper's fidelity checks (TRACE's FID): besides a direct contradiction, a
statement that is over-specific or inverts causation is unfaithful, so `contradicted` (templates
`mmdr/claim_verdict`, `mmdr/claim_verdicts_batch`, the shared ones' verdicts with those checks; the
claim_verdicts stage asks them for MMDR's tasks, `Benchmark.claim_verdict_templates`).

Offline (the shared lexical matching, then two measured checks on the passage it found):
- over-specific: the statement gives a number with more decimals than the passage's number it rounds to
  ("41.37%" where the passage says "41%");
- causal inversion: the statement and the passage each say "A leads to / causes / drove B" (or "B because
  of / due to A") and the statement's cause is the passage's effect and its effect the passage's cause.
Other over-specificity (scope, certainty, names) needs a reading: a judge's.
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from pydantic import BaseModel

from ...core.checklist_match import key_words
from ...core.models import ClaimVerdict, ClaimVerdictBatch, ItemVerdict
from ...judges.claim_matching import answer_claim_verdict, answer_claim_verdicts_batch

TEMPLATES = ("mmdr/claim_verdict", "mmdr/claim_verdicts_batch")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_FORWARD = re.compile(r"(.+?)\b(?:led to|leads to|lead to|caused|causes|cause|drove|drives|resulted in|"
                      r"results in)\b(.+)", re.I)
_BACKWARD = re.compile(r"(.+?)\b(?:because of|due to|was caused by|were caused by|is caused by|as a result of|"
                       r"was driven by|were driven by)\b(.+)", re.I)


def over_specific(claim: str, passage: str) -> str:
    """A number of the claim with more decimals than the passage's number it rounds to, said; else ""."""
    given = {n.replace(",", "") for n in _NUMBER.findall(passage.replace(",", ""))}
    for number in _NUMBER.findall(claim.replace(",", "")):
        if "." not in number or number in given:
            continue
        decimals = len(number.split(".")[1])
        for source in given:
            shown = len(source.split(".")[1]) if "." in source else 0
            if shown < decimals and round(float(number), shown) == float(source):
                return f"over-specific: the statement gives {number} where the source gives {source}"
    return ""


def cause_effect(text: str) -> tuple[set[str], set[str]] | None:
    """(cause words, effect words) of the first causal sentence, or None."""
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        if m := _BACKWARD.search(sentence):
            return set(key_words(m[2])), set(key_words(m[1]))
        if m := _FORWARD.search(sentence):
            return set(key_words(m[1])), set(key_words(m[2]))
    return None


def causal_inversion(claim: str, passage: str) -> str:
    said, source = cause_effect(claim), cause_effect(passage)
    if not said or not source:
        return ""
    (cause, effect), (source_cause, source_effect) = said, source
    swapped = len(cause & source_effect) + len(effect & source_cause)
    straight = len(cause & source_cause) + len(effect & source_effect)
    return "causal inversion: the statement reverses the source's cause and effect" if swapped > straight else ""


def unfaithful(claim: str, passage: str) -> str:
    return over_specific(claim, passage) or causal_inversion(claim, passage)


def _checked(verdict: ClaimVerdict, claim: str, source: str) -> ClaimVerdict:
    if verdict.verdict not in ("supported", "partial"):
        return verdict
    why = unfaithful(claim, verdict.evidence or source)
    if not why:
        return verdict
    return verdict.model_copy(update={"verdict": "contradicted", "reason": f"{why}; {verdict.reason}"})


def answer_fidelity_verdict(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    answer, extra = answer_claim_verdict(variables)
    return _checked(answer, str(variables["claim"]), str(variables.get("source_text") or "")), extra


def answer_fidelity_verdicts(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    answer, extra = answer_claim_verdicts_batch(variables)
    claims = {str(item["claim_id"]): str(item["claim"]) for item in variables["items"]}
    source = str(variables.get("source_text") or "")
    checked = [ItemVerdict(claim_id=v.claim_id, **_checked(v, claims.get(v.claim_id, ""), source).model_dump(
        exclude={"claim_id"})) for v in answer.verdicts]
    return ClaimVerdictBatch(verdicts=checked), extra


HANDLERS = {TEMPLATES[0]: answer_fidelity_verdict, TEMPLATES[1]: answer_fidelity_verdicts}
