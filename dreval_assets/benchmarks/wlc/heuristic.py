"""Wiki Live's offline handlers (heuristics, not a model): writing criteria compared by measured
features; gold statements; gold statements against report statements and back, by overlap."""
from __future__ import annotations

from typing import Any, Mapping

from pydantic import BaseModel

from difflib import SequenceMatcher

from ...core.article_features import compare
from ...core.evidence_match import match_claim, unstated_values
from ...core.models import CriterionWinner, PairwiseOutcomes
from ...judges.readable import READS_OVERLAP, READS_WORD_LISTS, require_readable
from .live.wikilive_text import answer_gold_statements
from .coverage import GoldFactLabel, GoldFactLabels, StatementConflict, StatementConflicts

SAME_TEXT_CHARS = 30  # a statement is the evidence's when they share this many characters in a row

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


def gold_fact_label(fact: str, statements: list[dict]) -> GoldFactLabel:
    """One gold fact against its retrieved statements ({id, text}), as `core/evidence_match` reads a
    page: the statements, one a line, are the page. supported -> consistent, contradicted (a number,
    date or name of the same slot differs) -> inconsistent, anything else -> not_supported. The
    statements named are those of the matched passage; for a contradiction, those of them that state
    a value the gold fact does not."""
    page = "\n".join(s["text"] for s in statements)
    match = match_claim(fact, page)
    label = {"supported": "consistent", "contradicted": "inconsistent"}.get(match.verdict, "not_supported")
    named = []
    if label != "not_supported":
        named = in_evidence(statements, match.evidence)
        if label == "inconsistent":
            named = [s for s in named if unstated_values(s["text"], fact)] or named
    return GoldFactLabel(fact_id="", label=label, statements=[s["id"] for s in named],
                         reason=f"{match.verdict}: {match.reason}")


def in_evidence(items: list[dict], evidence: str) -> list[dict]:
    """The items ({id, text}) whose text the matched passage quotes (one per line of the page)."""
    evidence = evidence.strip("…")
    named = []
    for item in items:
        text = item["text"]
        matcher = SequenceMatcher(None, text, evidence, autojunk=False)
        common = matcher.find_longest_match(0, len(text), 0, len(evidence))
        if common.size >= min(SAME_TEXT_CHARS, len(text)):
            named.append(item)
    return named


def statement_conflict(statement: str, facts: list[dict]) -> StatementConflict:
    """Heuristic: one report statement against its retrieved gold facts ({id, text}), read as a page
    by `core/evidence_match` (the facts, one a line, are the page): contradicted (a number, date or
    name of the same slot differs) -> conflict, naming the facts of the matched passage; anything
    else -> no_conflict. Like any page, facts of under 20 words in all decide nothing."""
    match = match_claim(statement, "\n".join(f["text"] for f in facts))
    if match.verdict != "contradicted":
        return StatementConflict(statement_id="", label="no_conflict",
                                 reason=f"heuristic {match.verdict}: {match.reason}")
    named = in_evidence(facts, match.evidence)
    return StatementConflict(statement_id="", label="conflict", facts=[f["id"] for f in named],
                             reason=f"heuristic contradicted: {match.reason}")


def answer_statement_conflicts(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`wlc/statement_conflicts`: each report statement against its retrieved gold facts by word,
    number, date and name overlap (`statement_conflict`)."""
    labels = []
    for item in variables["statement_list"]:
        require_readable(READS_OVERLAP, statement=item["text"], facts=" ".join(f["text"] for f in item["facts"]))
        found = statement_conflict(item["text"], list(item["facts"]))
        labels.append(found.model_copy(update={"statement_id": item["statement_id"]}))
    return StatementConflicts(labels=labels), {}


def answer_gold_coverage(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`wlc/gold_coverage`: each gold fact against its retrieved report statements by word, number,
    date and name overlap (`gold_fact_label`)."""
    labels = []
    for fact in variables["fact_list"]:
        require_readable(READS_OVERLAP, fact=fact["text"], statements=" ".join(s["text"] for s in fact["statements"]))
        found = gold_fact_label(fact["text"], list(fact["statements"]))
        labels.append(found.model_copy(update={"fact_id": fact["fact_id"]}))
    return GoldFactLabels(labels=labels), {}


HANDLERS = {"wlc/pairwise_criteria": answer_pairwise_criteria, "wlc/gold_statements": answer_gold_statements,
            "wlc/gold_coverage": answer_gold_coverage, "wlc/statement_conflicts": answer_statement_conflicts}
