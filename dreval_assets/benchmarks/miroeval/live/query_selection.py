"""MiroEval's selection after the three filters (methods/miroeval.md section 4: "-> 50, then 35
chosen"), as a deterministic rule over the accepted candidates, and the reason written on every
candidate.

1. Keep: the accepted candidates ranked by evidence score, the first `keep` (50) kept. The paper
   does not say how its 50 were cut, so we prefer the queries the web can best support.
   Evidence score, best first: more distinct registered domains among the search results, then more
   search results, then the more recent headline, then the task key (a hash of the query), so ties
   never depend on the order candidates arrived in.
2. Choose: `choose` (35) of the kept ones, by diversity of topic and persona, in rounds. In each round
   every topic with kept candidates left takes one turn, topics whose best remaining candidate scores
   higher going first; a topic's turn takes its best candidate whose persona no chosen candidate has
   yet, or its best candidate when every remaining persona has been seen. Choosing stops when
   `choose` are chosen. So no topic gets a second candidate before every topic with kept candidates
   has one: with 12 topics and 35 places no topic has more than 3 while each has 3 to offer.

Candidates that were not accepted keep `kept = chosen = False` and a reason saying what stopped them:
a filter's rejection, an N/A judgment or endpoint answer (not a rejection: retried next refresh),
an earlier refresh's decision (`known`) or a duplicate.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from .candidates import Candidate

DEFAULT_KEEP = 50
DEFAULT_CHOOSE = 35
FAILURE_STAGES = {"search": "search", "research_necessity": "necessity", "closed_book_answer": "inverse_quality",
                  "answer_adequacy": "inverse_quality"}  # rejection_detail prefix -> the filter it failed in


def select(candidates: Sequence["Candidate"], keep: int = DEFAULT_KEEP, choose: int = DEFAULT_CHOOSE) -> None:
    """Set `kept`, `chosen` and `selection_reason` on every candidate (see the module docstring)."""
    if keep < 1 or choose < 1:
        raise ValueError("keep and choose must be at least 1")
    for candidate in candidates:
        if not candidate.accepted:
            candidate.kept = candidate.chosen = False
            candidate.selection_reason = outcome_reason(candidate)
    ranked = sorted((c for c in candidates if c.accepted), key=evidence_key)
    for rank, candidate in enumerate(ranked[keep:], start=keep + 1):
        candidate.kept = candidate.chosen = False
        candidate.selection_reason = (f"accepted, not kept: evidence rank {rank} of {len(ranked)}, "
                                      f"only the best {keep} are kept")
    kept = ranked[:keep]
    for candidate in kept:
        candidate.kept, candidate.chosen = True, False
    _choose(kept, choose)


def evidence_key(candidate: "Candidate") -> tuple:
    """Sort key, best first: domains, results, recency, then the task key (module docstring)."""
    return (-candidate.distinct_domains, -candidate.n_search_results, -_timestamp(candidate.published_at),
            candidate.task_key)


def failed_stage(candidate: "Candidate") -> str | None:
    """The filter a judge or endpoint failure happened in (None when the candidate did not fail)."""
    if candidate.rejected_by not in ("judge_failure", "endpoint_failure"):
        return None
    return FAILURE_STAGES.get(candidate.rejection_detail.split(":", 1)[0], "search")


def outcome_reason(candidate: "Candidate") -> str:
    by, detail = candidate.rejected_by, candidate.rejection_detail
    if by in ("search", "necessity", "inverse_quality"):
        return f"rejected by {by}: {detail}" if detail else f"rejected by {by}"
    if by in ("judge_failure", "endpoint_failure"):
        return f"N/A in the {failed_stage(candidate)} filter ({by}, retried next refresh): {detail}"
    return f"{by}: {detail}" if detail else str(by)


def _choose(kept: list["Candidate"], choose: int) -> None:
    pools: dict[str, list[Candidate]] = {}
    for candidate in kept:  # already in evidence order
        pools.setdefault(candidate.topic, []).append(candidate)
    taken = {topic: 0 for topic in pools}
    seen: set[str] = set()
    chosen, round_number = 0, 0
    while chosen < choose and any(pools.values()):
        round_number += 1
        order = sorted((t for t in pools if pools[t]), key=lambda t: (evidence_key(pools[t][0]), t))
        for topic in order:
            if chosen == choose:
                break
            pool = pools[topic]
            pick = next((c for c in pool if _persona(c) not in seen), pool[0])
            pool.remove(pick)
            fresh = _persona(pick) not in seen
            seen.add(_persona(pick))
            taken[topic] += 1
            chosen += 1
            pick.chosen = True
            pick.selection_reason = (f"chosen: topic {topic}, persona {pick.persona} "
                                     f"({'new' if fresh else 'seen before'}), round {round_number}")
    for topic, pool in pools.items():
        for candidate in pool:
            candidate.selection_reason = (f"kept, not chosen: all {choose} places filled by round {round_number}; "
                                          f"topic {topic} has {taken[topic]} chosen")


def _persona(candidate: "Candidate") -> str:
    return " ".join(candidate.persona.split()).casefold()


def _timestamp(published_at: str) -> float:
    """Seconds since the epoch of an ISO date (naive means UTC); unknown dates are the oldest."""
    try:
        moment = datetime.fromisoformat(published_at.strip().replace("Z", "+00:00"))
    except ValueError:
        return float("-inf")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()
