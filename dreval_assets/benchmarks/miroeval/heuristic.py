"""MiroEval's offline handlers: the adaptive rubric, its criteria, attachment key facts; query generation."""
from __future__ import annotations

from typing import Any, Mapping

from pydantic import BaseModel

from ...core.checklist_match import key_words
from ...core.key_facts import extract_key_facts, share_kept
from ...core.models import CriteriaScores, CriterionScore, KeyFacts
from .rubric import offline_rubric
from ...judges.readable import READS_OVERLAP, READS_WORD_LISTS, require_readable
from .live.generation_offline import (answer_answer_adequacy, answer_closed_book_answer, answer_persona_queries,
                                        answer_research_necessity)

def answer_miroeval_rubric(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`miroeval_rubric`: universal dimensions plus one built from the query's most frequent terms."""
    return offline_rubric(str(variables["query"]), bool(variables.get("has_attachments"))), {"fallback": True}


def answer_criteria_scores(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`criteria_scores`: 10 x the share of each criterion's key words the report contains; Grounding,
    with the key facts of the task's attachments, 10 x the share of those facts the report keeps."""
    report = str(variables.get("report") or "")
    facts = list(variables.get("key_facts_list") or [])
    require_readable(READS_WORD_LISTS, report=report,
                     criteria=" ".join(str(c["text"]) for c in variables["criteria_list"]), key_facts=" ".join(facts))
    if facts and variables.get("dimension_id") == "grounding":
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


HANDLERS = {"miroeval/rubric": answer_miroeval_rubric, "miroeval/criteria_scores": answer_criteria_scores,
            "miroeval/key_facts": answer_key_facts, "miroeval/persona_queries": answer_persona_queries,
            "miroeval/research_necessity": answer_research_necessity,
            "miroeval/closed_book_answer": answer_closed_book_answer, "miroeval/answer_adequacy": answer_answer_adequacy}
