"""The selection after the generation filters (keep the best 50 by evidence, choose 35 by diversity
of topic and persona) and the filters' pass rates, on hand-made candidates."""
import math
import random
from collections import Counter

import pytest

from dreval_assets.benchmarks.miroeval.live.filter_rates import filter_rates
from dreval_assets.benchmarks.miroeval.live.personas import assign_personas, personas_for
from dreval_assets.benchmarks.miroeval.live.query_generation import Candidate, live_task_key
from dreval_assets.benchmarks.miroeval.live.query_selection import select


def candidate(topic, persona, number, domains=3, results=6, published="2025-03-01T00:00:00Z", **outcome):
    query = f"{topic} question {number} from a {persona}"
    found = Candidate(topic=topic, subtopic=f"{topic} sub", headline=f"h{number}", headline_url="https://x.example/h",
                      published_at=published, persona=persona, query=query, task_key=live_task_key(query),
                      n_search_results=results, distinct_domains=domains)
    for name, value in outcome.items():
        setattr(found, name, value)
    return found


def accepted_pool(topics=12, per_topic=7):
    """Accepted candidates: every topic has `per_topic`, from five personas, with falling evidence."""
    pool = []
    for t in range(topics):
        for k in range(per_topic):
            pool.append(candidate(f"topic{t:02d}", f"persona {t}-{k % 5}", t * 100 + k, domains=2 + (k * 7 + t) % 4,
                                  results=3 + (k * 5 + t) % 8, accepted=True))
    return pool


def test_keep_fifty_by_evidence_then_choose_thirty_five_spread_over_topics():
    pool = accepted_pool()  # 84 accepted
    select(pool)
    kept = [c for c in pool if c.kept]
    chosen = [c for c in pool if c.chosen]
    assert len(kept) == 50 and len(chosen) == 35 and all(c.kept for c in chosen)
    # the kept are the best 50 by (domains, results, recency, key)
    weakest_kept = min((c.distinct_domains, c.n_search_results) for c in kept)
    assert all((c.distinct_domains, c.n_search_results) <= weakest_kept for c in pool if not c.kept)
    dropped = next(c for c in pool if not c.kept)
    assert dropped.selection_reason.startswith("accepted, not kept: evidence rank ")
    assert "of 84" in dropped.selection_reason
    per_topic = Counter(c.topic for c in chosen)
    kept_per_topic = Counter(c.topic for c in kept)
    # round robin: no topic gets a k-th before every topic that has a k-th to offer got one
    limit = math.ceil(35 / len(kept_per_topic))
    assert max(per_topic.values()) <= limit + 1
    assert all(per_topic[t] >= min(n, limit - 1) for t, n in kept_per_topic.items())
    assert all(c.selection_reason.startswith("chosen: topic ") for c in chosen)
    waiting = [c for c in kept if not c.chosen]
    assert len(waiting) == 15 and all(c.selection_reason.startswith("kept, not chosen: all 35 places filled by round")
                                      for c in waiting)


def test_a_topic_prefers_a_persona_not_yet_chosen():
    pool = [candidate("energy", "energy economist", 1, domains=5, accepted=True),
            candidate("energy", "energy economist", 2, domains=4, accepted=True),
            candidate("energy", "utility regulator", 3, domains=2, accepted=True)]
    select(pool, choose=2)
    assert [c.chosen for c in pool] == [True, False, True]  # the weaker candidate with a new persona wins
    assert pool[0].selection_reason == "chosen: topic energy, persona energy economist (new), round 1"
    assert pool[2].selection_reason == "chosen: topic energy, persona utility regulator (new), round 2"
    assert pool[1].selection_reason == "kept, not chosen: all 2 places filled by round 2; topic energy has 2 chosen"


def test_topics_with_few_candidates_leave_their_places_to_others():
    pool = [candidate("health", "clinician", 1, accepted=True)]
    pool += [candidate("energy", f"p{k}", 10 + k, accepted=True) for k in range(6)]
    select(pool, choose=5)
    assert Counter(c.topic for c in pool if c.chosen) == {"health": 1, "energy": 4}


def test_the_selection_does_not_depend_on_arrival_order():
    pool = accepted_pool(per_topic=5)
    select(pool)
    expected = {c.task_key: (c.kept, c.chosen, c.selection_reason) for c in pool}
    shuffled = accepted_pool(per_topic=5)
    random.Random(7).shuffle(shuffled)
    select(shuffled)
    assert {c.task_key: (c.kept, c.chosen, c.selection_reason) for c in shuffled} == expected


def test_ties_on_evidence_go_to_the_more_recent_headline():
    old = candidate("energy", "a", 1, published="2025-01-01T00:00:00Z", accepted=True)
    new = candidate("energy", "a", 2, published="2025-03-01T09:00:00+01:00", accepted=True)
    undated = candidate("energy", "a", 3, published="", accepted=True)
    select([old, undated, new], keep=2, choose=1)
    assert (new.chosen, old.kept, undated.kept) == (True, True, False)


def test_every_candidate_that_was_not_accepted_says_what_stopped_it():
    pool = [candidate("t", "p", 1, rejected_by="search", rejection_detail="2 result(s) from 2 domain(s)"),
            candidate("t", "p", 2, rejected_by="necessity", rejection_detail="general background"),
            candidate("t", "p", 3, rejected_by="judge_failure",
                      rejection_detail="research_necessity: provider_failure: HTTP 503"),
            candidate("t", "p", 4, rejected_by="endpoint_failure", rejection_detail="search: HTTP 500"),
            candidate("t", "p", 5, rejected_by="known", rejection_detail="an earlier refresh registered this task")]
    select(pool)
    assert [c.selection_reason for c in pool] == [
        "rejected by search: 2 result(s) from 2 domain(s)", "rejected by necessity: general background",
        "N/A in the necessity filter (judge_failure, retried next refresh): research_necessity: provider_failure: "
        "HTTP 503",
        "N/A in the search filter (endpoint_failure, retried next refresh): search: HTTP 500",
        "known: an earlier refresh registered this task"]
    assert not any(c.kept or c.chosen for c in pool)


def test_pass_rates_leave_failures_out_of_the_denominator():
    pool = [candidate("t", "p", 1, passed_search=True, needs_external=True, adequate=False, accepted=True),
            candidate("t", "p", 2, passed_search=True, needs_external=True, adequate=True),
            candidate("t", "p", 3, passed_search=True, needs_external=False),
            candidate("t", "p", 4, passed_search=False),
            candidate("t", "p", 5, passed_search=True, rejected_by="judge_failure",
                      rejection_detail="research_necessity: provider_failure"),
            candidate("t", "p", 6, passed_search=True, needs_external=True, rejected_by="judge_failure",
                      rejection_detail="answer_adequacy: model_failure"),
            candidate("t", "p", 7, rejected_by="endpoint_failure", rejection_detail="search: HTTP 500"),
            candidate("t", "p", 8, rejected_by="known")]
    rates = {r.name: r for r in filter_rates(pool)}
    assert rates["search"].as_dict() == {"entered": 6, "passed": 5, "rate": 83.3, "not_judged": 1, "paper": 84.4}
    assert rates["necessity"].as_dict() == {"entered": 4, "passed": 3, "rate": 75.0, "not_judged": 1, "paper": 63.2}
    assert rates["inverse_quality"].as_dict() == {"entered": 2, "passed": 1, "rate": 50.0, "not_judged": 1,
                                                  "paper": 52.1}
    assert filter_rates([])[0].rate is None


@pytest.mark.parametrize("topic, first", [("Health policy", "clinician"), ("agriculture", "farm manager"),
                                          ("knitting", "industry researcher")])
def test_personas_come_from_our_list_five_per_field(topic, first):
    personas = personas_for(topic)
    assert len(personas) == 5 and personas[0] == first
    # the five headlines of a subtopic are asked from the five personas, one each
    assert sorted(p for n in range(5) for p in assign_personas(topic, n, 1)) == sorted(personas)
    assert assign_personas(topic, 1, 2) == [personas[2], personas[3]]
