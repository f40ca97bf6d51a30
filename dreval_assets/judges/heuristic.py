"""The offline judge: deterministic heuristics instead of a model. No network, no cost.

Each supported prompt template has a handler in `TEMPLATE_HANDLERS`; a handler takes the
request's variables and returns the answer plus extra numbers for the Judgment. Later
templates plug in by adding a handler to the registry.

Languages (`core/language.detect_language`, by script): a handler reads only the languages its
measurement works in, and answers N/A `model_failure` "heuristic judge does not read Chinese (zh)"
(or the language found) for any other, and for texts it must compare that are in different scripts.
- overlap of words or Chinese bigrams, and numbers (claim verdicts, same statement, key facts):
  English, other Latin-script text (no English-only list decides; rare words weigh most) and Chinese;
- key-word coverage (checklists, RACE): English and Chinese (the stop lists are English and Chinese);
- English word lists and units (rubrics, contradictions, FLAE, pairwise writing, synthesis criteria):
  English only.
Handlers that read no text of the system (trace weights, the offline MiroEval rubric) answer for all.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Mapping, Sequence

from pydantic import BaseModel

from ..core.evidence_match import match_claim
from ..core.article_features import compare
from ..core.checklist_match import item_credit, key_words
from ..core.flae_features import flae_observables, formula_channel
from ..core.report_features import contradiction_candidates
from ..core.dedup import content_words
from ..core.language import detect_language, han_terms, has_han
from ..core.models import (ChecklistJudgment, ClaimVerdict, ClaimVerdictBatch, ContradictionCount, CriterionWinner,
                           DimensionScore, ItemCredit, ItemVerdict, PairwiseOutcomes, RubricScores, SameStatement,
                           TraceWeights, FlaeScores, CriteriaScores, CriterionScore, KeyFacts, RaceCriterionScores,
                           RaceScores, NaReason)
from ..core.key_facts import extract_key_facts, share_kept
from ..live.generation_offline import (answer_answer_adequacy, answer_closed_book_answer, answer_persona_queries,
                                       answer_research_necessity)
from ..live.wikilive_text import answer_gold_statements
from .base import Judgment, JudgmentRequest, JudgeStats, Provenance
from .prompts import load_template

JUDGE_ID = "heuristic-v1"
SAME_STATEMENT_JACCARD = 0.7

TemplateHandler = Callable[[Mapping[str, Any]], tuple[BaseModel, dict[str, Any]]]

READS_OVERLAP = frozenset({"en", "latn", "zh"})  # word or bigram overlap weighted by rarity, and numbers
READS_KEY_WORDS = frozenset({"en", "zh"})  # key words after English or Chinese stop lists
READS_WORD_LISTS = frozenset({"en"})  # English word lists (causal, critical, words to watch) and units


class NotRead(Exception):
    """A text is in a language the handler does not read: the answer is N/A `model_failure`."""


def require_readable(reads: frozenset[str], **texts: str) -> None:
    """Raise NotRead when one of the texts is in a language outside `reads`, or when they are in
    different scripts (a Chinese claim against an English page: no overlap to measure)."""
    found = {}
    for role, text in texts.items():
        language = detect_language(text)
        if language is None:  # too few letters to tell: nothing to object to
            continue
        if language.code not in reads:
            raise NotRead(f"heuristic judge does not read {language.label}")
        found[role] = language
    if len({language.script for language in found.values()}) > 1:
        shown = ", ".join(f"{role.replace('_', ' ')} in {language.label}" for role, language in found.items())
        raise NotRead(f"heuristic judge does not compare texts across languages ({shown})")


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
            failures[item["claim_id"]] = ("model_failure", str(error))
            continue
        match = match_claim(str(item["claim"]), source)
        verdicts.append(ItemVerdict(claim_id=item["claim_id"], verdict=match.verdict,
                                    evidence=match.evidence, reason=match.reason))
        scores[item["claim_id"]] = match.score
    if failures and not verdicts:
        raise NotRead(next(iter(failures.values()))[1])
    return ClaimVerdictBatch(verdicts=verdicts), {"scores": scores, **({"failures": failures} if failures else {})}


def answer_trace_weights(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`trace_weights`: no reading of the task; the documented fixed fallback, equal thirds."""
    return TraceWeights(con=1 / 3, cov=1 / 3, fid=1 / 3, rationale="fixed fallback: equal weights"), {"fallback": True}


def answer_same_statement(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`same_statement`: the same numbers were checked before asking; the same when content words
    overlap by at least `SAME_STATEMENT_JACCARD` (in Chinese, character bigrams stand for words)."""
    a, b = str(variables["statement_a"]), str(variables["statement_b"])
    require_readable(READS_OVERLAP, statement_a=a, statement_b=b)
    a, b = _overlap_terms(a), _overlap_terms(b)
    overlap = len(a & b) / len(a | b) if a | b else 1.0
    same = overlap >= SAME_STATEMENT_JACCARD
    return SameStatement(same=same, reason=f"content-word overlap {overlap:.2f}"), {"overlap": overlap}


def _overlap_terms(text: str) -> frozenset[str]:
    """Content words; a Chinese run is one 'word' to `content_words`, so it gives its bigrams instead."""
    words = content_words(text)
    if not has_han(text):
        return words
    return frozenset(w for w in words if not has_han(w)) | frozenset(han_terms(text))


def answer_checklist_items(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`checklist_items`: key-word coverage of each requirement in the report (placeholders removed)."""
    report = str(variables.get("report") or "")
    require_readable(READS_KEY_WORDS, report=report)
    for item in variables["item_list"]:
        require_readable(READS_KEY_WORDS, requirement=str(item["text"]), report=report)
    credits = []
    for item in variables["item_list"]:
        credit, reason = item_credit(str(item["text"]), report)
        credits.append(ItemCredit(item_id=item["item_id"], credit=credit, reason=reason))
    return ChecklistJudgment(items=credits), {}


def answer_rubric_scores(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`rubric_scores`: the rubric's measured text features (core/report_features.py), 1-10 each."""
    from ..benchmarks.registry import all_rubrics

    rubric = next(r for r in all_rubrics() if r.rubric_id == variables["rubric_id"])
    report = str(variables.get("report") or "")
    require_readable(READS_WORD_LISTS, report=report)
    measured = rubric.measure(report)
    scores = [DimensionScore(dimension_id=d, score=max(1, min(10, round(measured[d]))),
                             reason=f"measured {measured[d]:.1f} on the documented scale") for d, _ in rubric.dimensions]
    return RubricScores(scores=scores), {}


def answer_contradictions(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`contradictions`: sentence pairs giving different numbers in one unit about the same thing."""
    report = str(variables.get("report") or "")
    require_readable(READS_WORD_LISTS, report=report)
    found = contradiction_candidates(report)
    return ContradictionCount(count=len(found), examples=found[:10]), {}


def answer_pairwise_criteria(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`pairwise_criteria`: each criterion's measured feature compared between the two articles."""
    a, b = str(variables["article_a"]), str(variables["article_b"])
    require_readable(READS_WORD_LISTS, article_a=a, article_b=b)
    outcomes = []
    for criterion in variables["criteria_list"]:
        result = compare(criterion["feature"], a, b)
        outcomes.append(CriterionWinner(criterion_id=criterion["criterion_id"],
                                        winner={"first": "A", "second": "B"}.get(result, "tie"),
                                        reason=f"feature {criterion['feature']}: {result}"))
    return PairwiseOutcomes(outcomes=outcomes), {}


def answer_flae_scores(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`flae_scores`: no reading; the formula channel's own values and equal weights, so FLAE with
    the heuristic judge is the formula channel (marked `fallback`)."""
    report = str(variables.get("report") or "")
    require_readable(READS_WORD_LISTS, report=report)
    formula = formula_channel(flae_observables(report, bool(variables.get("multimodal"))))
    return FlaeScores(**formula, weight_read=1 / 3, weight_insh=1 / 3, weight_stru=1 / 3), {"fallback": True}


def answer_miroeval_rubric(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`miroeval_rubric`: universal dimensions plus one built from the query's most frequent terms."""
    from ..benchmarks.miroeval.rubric import offline_rubric

    return offline_rubric(str(variables["query"]), bool(variables.get("has_attachments"))), {"fallback": True}


def answer_criteria_scores(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`criteria_scores`: 10 x the share of each criterion's key words the report contains; with the
    key facts of the task's attachments (Grounding), 10 x the share of those facts the report keeps."""
    report = str(variables.get("report") or "")
    facts = list(variables.get("key_facts_list") or [])
    require_readable(READS_WORD_LISTS, report=report,
                     criteria=" ".join(str(c["text"]) for c in variables["criteria_list"]), key_facts=" ".join(facts))
    if facts:
        share, kept = share_kept(facts, report)
        return CriteriaScores(scores=[
            CriterionScore(criterion_id=c["criterion_id"], score=round(10 * share, 1),
                           reason=f"{kept} of {len(facts)} key facts of the attachments kept")
            for c in variables["criteria_list"]]), {}
    present = key_words(report)
    scores = []
    for criterion in variables["criteria_list"]:
        wanted = key_words(str(criterion["text"]))
        share = len(wanted & present) / len(wanted) if wanted else 0.0
        scores.append(CriterionScore(criterion_id=criterion["criterion_id"], score=round(10 * share, 1),
                                     reason=f"{len(wanted & present)} of {len(wanted)} key words present"))
    return CriteriaScores(scores=scores), {}


def answer_key_facts(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`key_facts`: the attachment's sentences that state the most figures."""
    text = str(variables["attachment_text"])
    require_readable(READS_OVERLAP, attachment=text)
    return KeyFacts(facts=extract_key_facts(text, int(variables["max_facts"]))), {}


def answer_race_scores(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`race_scores`: per criterion, 10 x the share of its key words (criterion and explanation) each
    article contains. RACE divides target by target + reference, so this measures relative coverage."""
    article_a, article_b = str(variables["article_a"]), str(variables["article_b"])
    criteria = " ".join(f"{c['criterion']} {c['explanation']}" for c in variables["criteria_list"])
    require_readable(READS_KEY_WORDS, article_a=article_a, article_b=article_b, criteria=criteria)
    words_a, words_b = key_words(article_a), key_words(article_b)
    scores = []
    for criterion in variables["criteria_list"]:
        wanted = key_words(f"{criterion['criterion']} {criterion['explanation']}")
        a = len(wanted & words_a) / len(wanted) if wanted else 0.0
        b = len(wanted & words_b) / len(wanted) if wanted else 0.0
        scores.append(RaceCriterionScores(criterion_id=criterion["criterion_id"], score_a=round(10 * a, 1),
                                          score_b=round(10 * b, 1),
                                          reason=f"key words present: A {a:.0%}, B {b:.0%} of {len(wanted)}"))
    return RaceScores(scores=scores), {}


TEMPLATE_HANDLERS: dict[str, TemplateHandler] = {
    "miroeval_rubric": answer_miroeval_rubric,
    "criteria_scores": answer_criteria_scores,
    "key_facts": answer_key_facts,
    "race_scores": answer_race_scores,
    "gold_statements": answer_gold_statements,
    "persona_queries": answer_persona_queries,
    "research_necessity": answer_research_necessity,
    "closed_book_answer": answer_closed_book_answer,
    "answer_adequacy": answer_answer_adequacy,
    "flae_scores": answer_flae_scores,
    "pairwise_criteria": answer_pairwise_criteria,
    "rubric_scores": answer_rubric_scores,
    "contradictions": answer_contradictions,
    "checklist_items": answer_checklist_items,
    "same_statement": answer_same_statement,
    "trace_weights": answer_trace_weights,
    "claim_verdict": answer_claim_verdict,
    "claim_verdicts_batch": answer_claim_verdicts_batch,
}


class HeuristicJudge:
    """Implements the `Judge` protocol with the handlers of `TEMPLATE_HANDLERS`."""

    judge_id = JUDGE_ID
    source_token_budget = None  # reads whole pages: it is fast and free

    def __init__(self) -> None:
        self.stats = JudgeStats()

    def judge_many(self, requests: Sequence[JudgmentRequest]) -> list[Judgment]:
        judgments = [self._judge_one(request) for request in requests]
        self.stats.requests += len(judgments)
        self.stats.failures += sum(1 for j in judgments if j.answer is None)
        return judgments

    def _judge_one(self, request: JudgmentRequest) -> Judgment:
        started = time.perf_counter()
        provenance = Provenance(judge_id=self.judge_id, template=request.template,
                                template_hash=_template_hash(request.template), model="", temperature=None)
        handler = TEMPLATE_HANDLERS.get(request.template)
        if handler is None:
            known = ", ".join(sorted(TEMPLATE_HANDLERS))
            return _not_applicable(provenance, started,
                                   f"{self.judge_id} has no handler for template {request.template!r} "
                                   f"(known: {known})")
        try:
            answer, extra = handler(request.variables)
            # Hand back the model the caller asked for, so a mismatch surfaces here, not downstream.
            answer = request.response_model.model_validate(answer.model_dump())
        except NotRead as error:  # a language it does not read: say so rather than score it
            return _not_applicable(provenance, started, str(error), "model_failure")
        except Exception as error:  # one bad item must not sink the batch
            return _not_applicable(provenance, started,
                                   f"{self.judge_id} failed on template {request.template!r}: "
                                   f"{type(error).__name__}: {error}")
        provenance.latency_s = time.perf_counter() - started
        return Judgment(answer=answer, provenance=provenance, extra=extra)


def _template_hash(name: str) -> str:
    """The template's version hash, or '' when no such prompt file exists."""
    try:
        return load_template(name)[1]
    except KeyError:
        return ""


def _not_applicable(provenance: Provenance, started: float, error: str,
                    na_reason: NaReason = "pipeline_failure") -> Judgment:
    provenance.latency_s = time.perf_counter() - started
    return Judgment(answer=None, provenance=provenance, na_reason=na_reason, error=error)
