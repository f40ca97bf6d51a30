"""A deterministic stand-in model for the loopback server: reads our rendered prompts and answers
them with the heuristic matcher, so an OpenAI-judge run gives meaningful, reproducible verdicts."""
from __future__ import annotations

import importlib
import re

from dreval_assets.benchmarks.registry import all_rubrics
from dreval_assets.benchmarks.dr3.heuristic import insight_credit
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
from dreval_assets.benchmarks.miroeval.process_measures import offline_findings
from loopback_llm import message_text

_SOURCE_RE = re.compile(r"<<<SOURCE\n(?:Title: [^\n]*\nURL: [^\n]*\n\n)?(.*?)\nSOURCE>>>", re.S)  # the page's text
_SINGLE_RE = re.compile(r"<<<STATEMENT\n(.*?)\nSTATEMENT>>>", re.S)
_CLAIMS_RE = re.compile(r"<<<CLAIMS\n(.*?)\nCLAIMS>>>", re.S)
_ITEM_RE = re.compile(r"^- \[([^\]]+)\] (.*)$", re.M)


WEIGHTS_PROMPT = "You set how much three properties"


def prompt_text(request: dict, marker: str = "<<<SOURCE") -> str:
    """The message holding our rendered template (instructor may add its own system message); a
    visual request's message is a list of parts: its text parts."""
    for message in request.get("messages", []):
        content = message_text(message.get("content"))
        if marker in content:
            return content
    raise ValueError("no dreval prompt in the request")


# Stand-in answers kept in their own modules (tests/answers_<part>.py): each has
# `answer(request, schema) -> dict | None`, None when the request is not one of its templates.
ANSWER_MODULES: tuple[str, ...] = ("answers_mmdr_visual", "answers_tvir_visual", "answers_miroeval_images",
                                  "answers_generation", "answers_wikilive")


def dreval_answer(request: dict, schema: dict | None) -> dict | str:
    for name in ANSWER_MODULES:
        found = importlib.import_module(name).answer(request, schema)
        if found is not None:
            return found
    if any(m.get("content") == PREFLIGHT_PROMPT for m in request.get("messages", [])):
        return "OK"  # the CLI's check that the endpoint answers, before a run
    if any("You read the research trace of a deep-research agent" in str(m.get("content"))
           for m in request.get("messages", [])):
        return {"findings": offline_findings(_trace_steps(prompt_text(request, "<<<TRACE")))}
    if any("You evaluate how a deep-research agent researched" in str(m.get("content"))
           for m in request.get("messages", [])):
        return process_intrinsic(prompt_text(request, "<<<TRACE"))
    if any("You compare the research process of a deep-research agent" in str(m.get("content"))
           for m in request.get("messages", [])):
        return process_alignment(prompt_text(request, "<<<REPORT"))
    if any("<<<UNITS" in str(m.get("content")) for m in request.get("messages", [])):
        return extracted_statements(prompt_text(request, "<<<UNITS"))
    if any("You design the grading rubric" in str(m.get("content")) for m in request.get("messages", [])):
        text = prompt_text(request, "Request:")
        query = text.split("Request:\n", 1)[1]
        rubric = offline_rubric(query, "attachments" in text.split("Request:", 1)[0])
        return {**rubric.model_dump(), "weights": {**rubric.weights, "task_expertise": 0.6}}  # the judge's own weight
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
    if any("<<<REPORT A\n" in str(m.get("content"))  # RACE, in English or in Chinese
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
    if any("You check which of a task's key insights" in str(m.get("content")) for m in request.get("messages", [])):
        text = prompt_text(request, "<<<PASSAGES")
        passages = text.split("<<<PASSAGES\n", 1)[1].rsplit("\nPASSAGES>>>", 1)[0]
        items = _ITEM_RE.findall(text.split("<<<PASSAGES", 1)[0].split("Insights (each with its id):", 1)[1])
        return {"items": [{"item_id": i, "credit": insight_credit(t, passages)[0], "reason": "overlap"} for i, t in items]}
    if any("You rate a research report on three qualities" in str(m.get("content")) for m in request.get("messages", [])):
        report = prompt_text(request, "<<<REPORT").split("<<<REPORT\n", 1)[1].rsplit("\nREPORT>>>", 1)[0]
        return {**_flae_judge_channel(report), **FLAE_WEIGHTS, "alpha": FLAE_ALPHA}
    # FLAE's separate prompts answer the same numbers as its single call, so the protocols score alike
    if any("You score one research report on readability" in str(m.get("content")) for m in request.get("messages", [])):
        report = prompt_text(request, "<<<REPORT").split("<<<REPORT\n", 1)[1].rsplit("\nREPORT>>>", 1)[0]
        return _flae_judge_channel(report)
    if any("You decide how much three qualities" in str(m.get("content")) for m in request.get("messages", [])):
        return {**FLAE_WEIGHTS, "rationale": "the demo's tasks ask for analysis"}
    if any(WEIGHTS_PROMPT in str(m.get("content")) for m in request.get("messages", [])):
        # numbers and dates matter most in the demo's tasks: lean on fidelity
        return {"con": 0.3, "cov": 0.2, "fid": 0.5, "rationale": "numeric claims dominate this task and report"}
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
        a = text.split("<<<STATEMENT_A\n", 1)[1].split("\nSTATEMENT_A>>>", 1)[0]
        b = text.split("<<<STATEMENT_B\n", 1)[1].split("\nSTATEMENT_B>>>", 1)[0]
        overlap = len(content_words(a) & content_words(b)) / max(1, len(content_words(a) | content_words(b)))
        return {"same": overlap >= 0.7, "reason": f"overlap {overlap:.2f}"}
    if any("<<<FACTS\n" in str(m.get("content")) and "<<<STATEMENTS" in str(m.get("content"))
           for m in request.get("messages", [])):
        return statement_conflict_labels(prompt_text(request, "<<<STATEMENTS"))
    if any("<<<STATEMENTS" in str(m.get("content")) for m in request.get("messages", [])):
        return gold_coverage_labels(prompt_text(request, "<<<STATEMENTS"))
    text = prompt_text(request)
    source = _SOURCE_RE.search(text).group(1)
    single = _SINGLE_RE.search(text)
    if single:
        return _verdict(single.group(1), source)
    listing = _CLAIMS_RE.search(text).group(1)
    return {"verdicts": [{"claim_id": cid, **_verdict(claim, source)} for cid, claim in _ITEM_RE.findall(listing)]}


FLAE_WEIGHTS = {"weight_read": 0.3, "weight_insh": 0.5, "weight_stru": 0.2}
FLAE_ALPHA = 0.25


def _flae_judge_channel(report: str) -> dict:
    channel = formula_channel(flae_observables(report, multimodal=False))
    return {d: round(min(1.0, v + 0.05), 3) for d, v in channel.items()}


def _verdict(claim: str, source: str) -> dict:
    match = match_claim(claim, source)
    return {"verdict": match.verdict, "evidence": match.evidence, "reason": match.reason}


# -- statement extraction (template statement_extraction): split, resolve, drop, deterministically

PROBE = "UNGROUNDED-PROBE"  # a unit holding this marker gets PROBE_STATEMENT, which is not in the report
PROBE_STATEMENT = "The Quorvane Institute counted 9,876 lighthouses along the coast in 1911."
_UNITS_RE = re.compile(r"<<<UNITS\n(.*?)\nUNITS>>>", re.S)
_BEFORE_RE = re.compile(r"<<<BEFORE\n(.*?)\nBEFORE>>>", re.S)
_UNIT_LINE_RE = re.compile(r"^\[([^\]]+)\]( \((?:table row|figure caption)\))? (.*)$")
_AND_RE = re.compile(r",? and ")
_PRONOUN_RE = re.compile(r"^(?:It|This|They) (?=(?:is|was|are|were|has|had|have|will|\w+ed|\w+s)\b)")
_VERBS = frozenset("is was are were has had have will rose fell grew made built holds makes runs".split())
_CHATTER_RE = re.compile(r"^(?:This report|In this (?:report|section)|In conclusion|In summary|Overall,|We |I |Let me|"
                         r"本报告|综上所述|总之)")
_NAME_RE = re.compile(r"(?<=\w )[A-Z][a-z]+")
_HAN_RE = re.compile("[\u4e00-\u9fff]")


def extracted_statements(text: str) -> dict:
    """Each unit split at '; ' (and '；') and at ', and' / ' and' between clauses that each carry a
    number; a leading It/This/They resolved to the previous unit's subject (or the section title);
    pieces without a number, a name or a long Chinese clause, and chatter, dropped; table rows and
    captions kept whole. A unit holding PROBE also gets PROBE_STATEMENT."""
    listing = _UNITS_RE.search(text).group(1)
    before = _BEFORE_RE.search(text)
    previous = re.sub(r"^\([^)]*\) ", "", before.group(1)) if before else ""  # after its section's title
    section, statements = "", []
    for line in listing.splitlines():
        if line.startswith("## "):
            section = line[3:]
            continue
        match = _UNIT_LINE_RE.match(line)
        if not match:
            continue
        unit_id, note, unit = match.groups()
        for piece in [unit] if note else _clauses(unit):
            piece = _resolve(piece, _subject(previous) or section)
            if _checkable(piece):
                statements.append({"unit": unit_id, "text": piece})
        if PROBE in unit:
            statements.append({"unit": unit_id, "text": PROBE_STATEMENT})
        previous = unit
    return {"statements": statements}


def _clauses(unit: str) -> list[str]:
    pieces = []
    for part in re.split(r"; |；", unit):
        pieces.extend(_split_and(part.strip()))
    return [_finish(piece) for piece in pieces if piece]


def _split_and(part: str) -> list[str]:
    for match in _AND_RE.finditer(part):
        left, right = part[:match.start()], part[match.end():]
        # clauses, not a list of figures ("850 MW and 3,400 MWh") or a range ("between 6 and 9")
        clause = right[:1].isalpha() and "between" not in left.split()[-4:]
        if clause and len(right.split()) >= 4 and _has_digit(left) and _has_digit(right):
            return [left, *_split_and(right[:1].upper() + right[1:])]
    return [part]


def _finish(piece: str) -> str:
    piece = piece.strip().rstrip(",;；，")
    if piece and piece[-1] not in ".!?。！？":
        piece += "。" if _HAN_RE.search(piece[-1]) else "."
    return piece[:1].upper() + piece[1:]


def _subject(text: str) -> str:
    """The words before the first verb ("The Lowmarsh ferry" of "The Lowmarsh ferry carried ..."),
    when there are at most six of them."""
    words = text.split()
    for index, word in enumerate(words[:7]):
        if index and (word in _VERBS or (word.islower() and word.endswith("ed"))):
            return " ".join(words[:index]).rstrip(",")
    return ""


def _resolve(piece: str, subject: str) -> str:
    return _PRONOUN_RE.sub(subject + " ", piece, count=1) if subject else piece


def _checkable(piece: str) -> bool:
    if _CHATTER_RE.match(piece):
        return False
    return _has_digit(piece) or bool(_NAME_RE.search(piece)) or len(_HAN_RE.findall(piece)) >= 12


def _has_digit(text: str) -> bool:
    return any(char.isdigit() for char in text)


# -- Wiki Live gold coverage (template wlc/gold_coverage): the offline labels of the prompt's facts

_GOLD_FACT_RE = re.compile(r"^- \[(g\d+)\] (.*)\n  related statements: (.*)$", re.M)
_STATEMENT_LINE_RE = re.compile(r"^\[(r\d+)\] (.*)$", re.M)


def gold_coverage_labels(text: str) -> dict:
    from dreval_assets.benchmarks.wlc.heuristic import gold_fact_label

    listing = text.split("<<<STATEMENTS\n", 1)[1].rsplit("\nSTATEMENTS>>>", 1)[0]
    statements = dict(_STATEMENT_LINE_RE.findall(listing))
    labels = []
    for fact_id, fact, related in _GOLD_FACT_RE.findall(text.split("<<<STATEMENTS", 1)[0]):
        shown = [{"id": sid, "text": statements[sid]} for sid in related.split(", ") if sid in statements]
        labels.append(gold_fact_label(fact, shown).model_copy(update={"fact_id": fact_id}).model_dump())
    return {"labels": labels}


# -- Wiki Live statement conflicts (template wlc/statement_conflicts): the offline labels of the prompt's statements

_REPORT_STATEMENT_RE = re.compile(r"^- \[(r\d+)\] (.*)\n  related facts: (.*)$", re.M)
_FACT_LINE_RE = re.compile(r"^\[(g\d+)\] (.*)$", re.M)


def statement_conflict_labels(text: str) -> dict:
    from dreval_assets.benchmarks.wlc.heuristic import statement_conflict

    listing = text.split("<<<STATEMENTS\n", 1)[1].split("\nSTATEMENTS>>>", 1)[0]
    facts = dict(_FACT_LINE_RE.findall(text.split("<<<FACTS\n", 1)[1].split("\nFACTS>>>", 1)[0]))
    labels = []
    for sid, statement, related in _REPORT_STATEMENT_RE.findall(listing):
        shown = [{"id": fid, "text": facts[fid]} for fid in related.split(", ") if fid in facts]
        labels.append(statement_conflict(statement, shown).model_copy(update={"statement_id": sid}).model_dump())
    return {"labels": labels}


_STEP_LINE_RE = re.compile(r"^\[(\d+)\] \((\w+)\) (?:\(part \d+ of \d+\) )?(.*)$", re.M)


def _trace_steps(text: str) -> list[dict]:
    """The steps of a process prompt's TRACE block, as `[index] (kind) text` lines."""
    block = text.split("<<<TRACE\n", 1)[1].split("\nTRACE>>>", 1)[0]
    return [{"index": int(i), "kind": kind, "text": body} for i, kind, body in _STEP_LINE_RE.findall(block)]


def _block(text: str, name: str) -> str:
    return text.split(f"<<<{name}\n", 1)[1].split(f"\n{name}>>>", 1)[0]


def _scaled(value: float) -> float:
    return round(min(10.0, max(1.0, value)), 1)


def process_intrinsic(text: str) -> dict:
    """MiroEval intrinsic process scores, as a model reading only the structured process might: from
    the steps' kinds, the queries searched and the pages read, and the findings listed."""
    steps = _trace_steps(text)
    queries = [s["text"].lower() for s in steps if s["kind"] == "search"]
    reads = [s["text"] for s in steps if s["kind"] == "read"]
    first_read = next((n for n, s in enumerate(steps) if s["kind"] in ("read", "analyze")), len(steps))
    later = {s["text"].lower() for s in steps[first_read:] if s["kind"] == "search"} - set(queries[:first_read])
    findings = [line for line in _block(text, "FINDINGS").splitlines() if line.startswith("[")]
    actions = len(queries) + len(reads)
    waste = len(queries) - len(set(queries)) + len(reads) - len(set(reads))
    kinds = [s["kind"] for s in steps]
    scores = {
        "search_breadth": _scaled(1 + 1.5 * len(set(queries))),
        "analytical_depth": _scaled(1 + 1.5 * kinds.count("analyze") + 0.5 * len(findings)),
        "progressive_refinement": _scaled(1 + 2 * len(later)),
        "critical_thinking": _scaled(1 + 3 * kinds.count("verify")),
        "efficiency": _scaled(10 - 9 * waste / actions) if actions else None,
    }
    return {d: {"score": v, "reason": "read from the steps"} for d, v in scores.items()}


def process_alignment(text: str) -> dict:
    """MiroEval alignment scores, as a model comparing findings and report might: the share of the
    findings whose figures the report states, and of the report's figures the findings hold."""
    findings = [line for line in _block(text, "FINDINGS").splitlines() if line.startswith("[")]
    report = _block(text, "REPORT")
    found_numbers = {n for f in findings for n in re.findall(r"\d[\d,.]*\d|\d", f)}
    report_numbers = set(re.findall(r"\d[\d,.]*\d|\d", report))
    kept = sum(1 for f in findings if set(re.findall(r"\d[\d,.]*\d|\d", f)) <= report_numbers)
    traced = len(report_numbers & found_numbers) / len(report_numbers) if report_numbers else None
    scores = {"findings_to_report": _scaled(1 + 9 * kept / len(findings)) if findings else None,
              "report_to_process": _scaled(1 + 9 * traced) if traced is not None else None,
              "contradiction": _scaled(1 + 9 * traced) if traced is not None else None}
    return {d: {"score": v, "reason": "findings compared with the report"} for d, v in scores.items()}
