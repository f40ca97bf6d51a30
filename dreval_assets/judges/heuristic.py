"""The offline judge: deterministic heuristics instead of a model. No network, no cost.

Each supported prompt template has a handler: the shared templates' are here (`SHARED_HANDLERS`),
each benchmark declares its own (`Benchmark.heuristic_handlers`, collected from the registry when the
judge is built). A handler takes the request's variables and returns the answer plus extra numbers
for the Judgment.

Languages (`core/language.detect_language`, by script): a handler reads only the languages its
measurement works in, and answers N/A `pipeline_failure` "judge limit: heuristic judge does not read Chinese (zh)"
(or the language found) for any other, and for texts it must compare that are in different scripts.
- overlap of words or Chinese bigrams, and numbers (claim verdicts, same statement, key facts):
  English, other Latin-script text (no English-only list decides; rare words weigh most) and Chinese;
- key-word coverage (checklists, RACE): English and Chinese (the stop lists are English and Chinese);
- English word lists and units (rubrics, contradictions, FLAE, pairwise writing, synthesis criteria):
  English only.
Handlers that read no text of the system (task-level weights, an offline task rubric) answer for all.
Visual requests (with images): a handler answers only from the numbers measured on the images and
passed in the variables (sizes, sharpness, contrast, duplicate hashes); a visual template without a
handler is N/A `pipeline_failure` "judge limit: the offline judge cannot see images", never a guess. A
judge's limit is ours, never the system's fault (`core.metrics.JUDGE_LIMIT`).
"""
from __future__ import annotations

import time
from typing import Any, Callable, Mapping, Sequence

from pydantic import BaseModel

from ..benchmarks.registry import BENCHMARKS, all_rubrics
from ..core.checklist_match import item_credit
from ..core.dedup import content_words
from ..core.language import han_terms, has_han
from ..core.metrics import judge_limit
from ..core.models import DimensionScore, NaReason, RubricScores, SameStatement
from .base import Judgment, JudgmentRequest, JudgeStats, Provenance
from .claim_matching import answer_claim_verdict, answer_claim_verdicts_batch
from .prompts import load_template
from .readable import READS_KEY_WORDS, READS_OVERLAP, READS_WORD_LISTS, NotRead, credit_items, require_readable

JUDGE_ID = "heuristic-v1"
SAME_STATEMENT_JACCARD = 0.7

TemplateHandler = Callable[[Mapping[str, Any]], tuple[BaseModel, dict[str, Any]]]


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
    return credit_items(READS_KEY_WORDS, variables["item_list"], report, item_credit, ("requirement", "report")), {}


def answer_rubric_scores(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`rubric_scores`: the rubric's measured text features (core/report_features.py), 1-10 each."""
    rubric = next(r for r in all_rubrics() if r.rubric_id == variables["rubric_id"])
    report = str(variables.get("report") or "")
    require_readable(READS_WORD_LISTS, report=report)
    measured = rubric.measure(report)
    scores = [DimensionScore(dimension_id=d, score=max(1, min(10, round(measured[d]))),
                             reason=f"measured {measured[d]:.1f} on the documented scale") for d, _ in rubric.dimensions]
    return RubricScores(scores=scores), {}


SHARED_HANDLERS: dict[str, TemplateHandler] = {
    "rubric_scores": answer_rubric_scores,
    "checklist_items": answer_checklist_items,
    "same_statement": answer_same_statement,
    "claim_verdict": answer_claim_verdict,
    "claim_verdicts_batch": answer_claim_verdicts_batch,
}


def template_handlers() -> dict[str, TemplateHandler]:
    """The shared handlers and every registered benchmark's."""
    handlers = dict(SHARED_HANDLERS)
    for benchmark in BENCHMARKS.values():
        handlers.update(benchmark.heuristic_handlers)
    return handlers


class HeuristicJudge:
    """Implements the `Judge` protocol with the shared handlers and the registered benchmarks'."""

    judge_id = JUDGE_ID
    source_token_budget = None  # reads whole pages: it is fast and free
    deterministic = True  # every run of a judgment answers alike: a benchmark's repeated runs ask it once

    def __init__(self, handlers: Mapping[str, TemplateHandler] | None = None) -> None:
        self.stats = JudgeStats()
        self.handlers = dict(template_handlers() if handlers is None else handlers)

    def judge_many(self, requests: Sequence[JudgmentRequest]) -> list[Judgment]:
        judgments = [self._judge_one(request) for request in requests]
        self.stats.requests += len(judgments)
        self.stats.failures += sum(1 for j in judgments if j.answer is None)
        return judgments

    def _judge_one(self, request: JudgmentRequest) -> Judgment:
        started = time.perf_counter()
        provenance = Provenance(judge_id=self.judge_id, template=request.template,
                                template_hash=_template_hash(request.template), model="", temperature=None)
        handler = self.handlers.get(request.template)
        if handler is None and request.images:  # it measures; it does not look: never a guess
            return _not_applicable(provenance, started,
                                   judge_limit(f"the offline judge cannot see images: template {request.template!r}"))
        if handler is None:
            known = ", ".join(sorted(self.handlers))
            return _not_applicable(provenance, started,
                                   f"{self.judge_id} has no handler for template {request.template!r} "
                                   f"(known: {known})")
        try:
            answer, extra = handler(request.variables)
            # Hand back the model the caller asked for, so a mismatch surfaces here, not downstream.
            answer = request.response_model.model_validate(answer.model_dump())
        except NotRead as error:  # a language it does not read, an image it cannot see: ours, not the system's
            return _not_applicable(provenance, started, judge_limit(str(error)))
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
