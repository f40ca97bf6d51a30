"""A deterministic stand-in model for the loopback server: reads our rendered prompts and answers
them with the heuristic matcher, so an OpenAI-judge run gives meaningful, reproducible verdicts."""
from __future__ import annotations

import re

from dreval_assets.benchmarks.registry import all_rubrics
from dreval_assets.benchmarks.wlc.criteria import CATEGORIES
from dreval_assets.core.article_features import compare
from dreval_assets.benchmarks.miroeval.rubric import offline_rubric
from dreval_assets.core.checklist_match import item_credit, key_words
from dreval_assets.core.key_facts import extract_key_facts
from dreval_assets.core.flae_features import flae_observables, formula_channel
from dreval_assets.core.report_features import contradiction_candidates
from dreval_assets.core.dedup import content_words
from dreval_assets.core.evidence_match import match_claim
from dreval_assets.judges.preflight import PROMPT as PREFLIGHT_PROMPT

_SOURCE_RE = re.compile(r"<<<SOURCE\n(.*?)\nSOURCE>>>", re.S)
_SINGLE_RE = re.compile(r"Statement:\n(.*?)\n\nSource title:", re.S)
_ITEM_RE = re.compile(r"^- \[([^\]]+)\] (.*)$", re.M)


WEIGHTS_PROMPT = "You set how much three properties"


def prompt_text(request: dict, marker: str = "<<<SOURCE") -> str:
    """The message holding our rendered template (instructor may add its own system message)."""
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, str) and marker in content:
            return content
    raise ValueError("no dreval prompt in the request")


def dreval_answer(request: dict, schema: dict | None) -> dict | str:
    if any(m.get("content") == PREFLIGHT_PROMPT for m in request.get("messages", [])):
        return "OK"  # the CLI's check that the endpoint answers, before a run
    if any("You design the grading rubric" in str(m.get("content")) for m in request.get("messages", [])):
        text = prompt_text(request, "Request:")
        query = text.split("Request:\n", 1)[1]
        rubric = offline_rubric(query, "attachments" in text.split("Request:", 1)[0])
        return {**rubric.model_dump(), "weights": {**rubric.weights, "task_expertise": 0.6}}  # over the cap on purpose
    if any("You grade a research report on the criteria of one dimension" in str(m.get("content"))
           for m in request.get("messages", [])):
        text = prompt_text(request, "<<<REPORT")
        report = key_words(text.split("<<<REPORT\n", 1)[1].rsplit("\nREPORT>>>", 1)[0])
        scores = []
        for cid, criterion in _ITEM_RE.findall(text.split("The request the report answers", 1)[0]):
            wanted = key_words(criterion)
            scores.append({"criterion_id": cid, "score": round(10 * len(wanted & report) / max(1, len(wanted)), 1)})
        return {"scores": scores}
    if any("A user attached the document below" in str(m.get("content")) for m in request.get("messages", [])):
        text = prompt_text(request, "<<<ATTACHMENT")
        attachment = text.split("<<<ATTACHMENT\n", 1)[1].rsplit("\nATTACHMENT>>>", 1)[0]
        return {"facts": extract_key_facts(attachment, 12)}
    if any("You score two research reports written for the same task" in str(m.get("content"))
           for m in request.get("messages", [])):
        text = prompt_text(request, "<<<REPORT A")
        a = key_words(text.split("<<<REPORT A\n", 1)[1].split("\nREPORT A>>>", 1)[0])
        b = key_words(text.split("<<<REPORT B\n", 1)[1].split("\nREPORT B>>>", 1)[0])
        scores = []
        for cid, criterion in _ITEM_RE.findall(text.split("<<<REPORT A", 1)[0]):
            wanted = key_words(criterion)
            scores.append({"criterion_id": cid, "score_a": round(10 * len(wanted & a) / max(1, len(wanted)), 1),
                           "score_b": round(10 * len(wanted & b) / max(1, len(wanted)), 1)})
        return {"scores": scores}
    if any("You rate a research report on three qualities" in str(m.get("content")) for m in request.get("messages", [])):
        report = prompt_text(request, "<<<REPORT").split("<<<REPORT\n", 1)[1].rsplit("\nREPORT>>>", 1)[0]
        return {**_flae_judge_channel(report), **FLAE_WEIGHTS, "alpha": FLAE_ALPHA}
    # FLAE's separate prompts answer the same numbers as its single call, so the protocols score alike
    if any("You score one research report on readability" in str(m.get("content")) for m in request.get("messages", [])):
        report = prompt_text(request, "<<<REPORT").split("<<<REPORT\n", 1)[1].rsplit("\nREPORT>>>", 1)[0]
        return _flae_judge_channel(report)
    if any("You decide how much three qualities" in str(m.get("content")) for m in request.get("messages", [])):
        return {**FLAE_WEIGHTS, "rationale": "the demo's tasks ask for analysis"}
    if any("You set alpha, from 0 to 1" in str(m.get("content")) for m in request.get("messages", [])):
        return {"alpha": FLAE_ALPHA, "reason": "complete and well formed"}
    if any("You compare two encyclopedia articles" in str(m.get("content")) for m in request.get("messages", [])):
        text = prompt_text(request, "<<<ARTICLE A")
        a = text.split("<<<ARTICLE A\n", 1)[1].split("\nARTICLE A>>>", 1)[0]
        b = text.split("<<<ARTICLE B\n", 1)[1].split("\nARTICLE B>>>", 1)[0]
        features = {cid: f for criteria in CATEGORIES.values() for cid, _, f in criteria}
        no_tie = "Ties are not allowed" in text  # the published protocol: the first article keeps an even criterion
        outcomes = []
        for cid, _ in _ITEM_RE.findall(text.split("<<<ARTICLE A", 1)[0]):
            result = compare(features[cid], a, b)
            outcomes.append({"criterion_id": cid, "reason": result,
                             "winner": {"first": "A", "second": "B"}.get(result, "A" if no_tie else "tie")})
        return {"outcomes": outcomes}
    if any("You grade a research report" in str(m.get("content")) for m in request.get("messages", [])):
        text = prompt_text(request, "<<<REPORT")
        report = text.split("<<<REPORT\n", 1)[1].rsplit("\nREPORT>>>", 1)[0]
        wanted = [d for d, _ in _ITEM_RE.findall(text.split("The request the report answers", 1)[0])]
        rubric = next(r for r in all_rubrics() if [d for d, _ in r.dimensions] == wanted)
        measured = rubric.measure(report)
        return {"scores": [{"dimension_id": d, "score": max(1, min(10, round(measured[d]))), "reason": "measured"}
                           for d in wanted]}
    if any("You look for internal contradictions" in str(m.get("content")) for m in request.get("messages", [])):
        report = prompt_text(request, "<<<REPORT").split("<<<REPORT\n", 1)[1].rsplit("\nREPORT>>>", 1)[0]
        found = contradiction_candidates(report)
        return {"count": len(found), "examples": found[:5]}
    if any("<<<REPORT" in str(m.get("content")) for m in request.get("messages", [])):
        text = prompt_text(request, "<<<REPORT")
        report = text.split("<<<REPORT\n", 1)[1].rsplit("\nREPORT>>>", 1)[0]
        items = []
        for item_id, requirement in _ITEM_RE.findall(text.split("<<<REPORT", 1)[0]):
            credit, reason = item_credit(requirement, report)
            items.append({"item_id": item_id, "credit": credit, "reason": reason})
        return {"items": items}
    if any("Statement A:" in str(m.get("content")) for m in request.get("messages", [])):
        text = prompt_text(request, "Statement A:")
        a = text.split("Statement A:\n", 1)[1].split("\n\nStatement B:", 1)[0]
        b = text.split("Statement B:\n", 1)[1].split("\n\n", 1)[0]
        overlap = len(content_words(a) & content_words(b)) / max(1, len(content_words(a) | content_words(b)))
        return {"same": overlap >= 0.7, "reason": f"overlap {overlap:.2f}"}
    if any(WEIGHTS_PROMPT in str(m.get("content")) for m in request.get("messages", [])):
        # numbers and dates matter most in the demo's tasks: lean on fidelity
        return {"con": 0.3, "cov": 0.2, "fid": 0.5, "rationale": "numeric claims dominate this task"}
    text = prompt_text(request)
    source = _SOURCE_RE.search(text).group(1)
    single = _SINGLE_RE.search(text)
    if single:
        return _verdict(single.group(1), source)
    return {"verdicts": [{"claim_id": cid, **_verdict(claim, source)} for cid, claim in _ITEM_RE.findall(text)]}


FLAE_WEIGHTS = {"weight_read": 0.3, "weight_insh": 0.5, "weight_stru": 0.2}
FLAE_ALPHA = 0.25


def _flae_judge_channel(report: str) -> dict:
    channel = formula_channel(flae_observables(report, multimodal=False))
    return {d: round(min(1.0, v + 0.05), 3) for d, v in channel.items()}


def _verdict(claim: str, source: str) -> dict:
    match = match_claim(claim, source)
    return {"verdict": match.verdict, "evidence": match.evidence, "reason": match.reason}
