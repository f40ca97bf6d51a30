"""Domain personas for MiroEval-style query generation: who a generated request speaks for.

MiroEval writes its candidate queries "in domain personas" without publishing its list, so this is
our own: five roles per field, each a kind of professional who works in or is affected by that field
(roles, never names). A topic takes the first row whose stem starts a word of the topic's name
(`"Health policy"` -> health); a topic matching no row takes `GENERIC_PERSONAS`. Roles are unique
across rows, so "persona diversity" in the selection is diversity across fields too.

The generator assigns personas itself (the judge is told whom to write for), so the candidate records
a persona from this list, whichever judge wrote the query: headline j of a subtopic, with q queries
per headline, gets personas j*q ... j*q+q-1 of its topic's row (wrapping). With the default five
headlines and one query each, every subtopic is asked from all five personas once.
"""
from __future__ import annotations

import re

PERSONAS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("tech", "software", "computing", "ai"),
     ("software engineer", "technology policy analyst", "venture investor", "chief information security officer",
      "computer science lecturer")),
    (("financ", "econom", "market", "bank"),
     ("equity analyst", "central bank economist", "small business owner", "pension fund manager",
      "financial regulator")),
    (("business", "industr", "compan"),
     ("strategy consultant", "supply chain manager", "trade union representative", "corporate lawyer",
      "procurement director")),
    (("health", "medic", "pharma"),
     ("clinician", "public health researcher", "hospital administrator", "health economist", "patient advocate")),
    (("climate", "environment", "weather"),
     ("climate scientist", "environmental regulator", "insurance risk analyst", "city resilience planner",
      "carbon market trader")),
    (("energy", "power", "oil"),
     ("grid operator engineer", "energy economist", "utility regulator", "renewable project developer",
      "industrial energy buyer")),
    (("politic", "government", "election", "policy"),
     ("policy analyst", "political journalist", "civil servant", "diplomat", "campaign strategist")),
    (("law", "legal", "court", "justice"),
     ("litigation lawyer", "legal scholar", "compliance officer", "court reporter", "human rights advocate")),
    (("science", "research", "space"),
     ("research scientist", "science journalist", "research funder", "laboratory manager",
      "science policy adviser")),
    (("education", "school", "universit"),
     ("school teacher", "education researcher", "university administrator", "admissions counsellor",
      "student finance adviser")),
    (("agricult", "farm", "food"),
     ("farm manager", "agronomist", "commodity trader", "rural development officer", "water resource engineer")),
    (("sport",),
     ("sports analyst", "club administrator", "sports journalist", "sports physician", "league official")),
    (("transport", "travel", "mobility"),
     ("transport planner", "transport economist", "commuter advocate", "fleet manager",
      "aviation safety engineer")),
    (("culture", "entertainment", "media", "art"),
     ("media analyst", "arts programmer", "cultural critic", "museum curator", "music producer")),
)
GENERIC_PERSONAS = ("industry researcher", "investigative journalist", "academic economist", "management consultant",
                    "local government officer")


def personas_for(topic: str) -> tuple[str, ...]:
    """The topic's row of personas (see the module docstring for the matching rule)."""
    lower = topic.lower()
    for stems, personas in PERSONAS:
        if any(re.search(rf"\b{stem}", lower) for stem in stems):
            return personas
    return GENERIC_PERSONAS


def assign_personas(topic: str, headline_number: int, count: int) -> list[str]:
    """The `count` personas asked to write about the subtopic's `headline_number`-th headline."""
    personas = personas_for(topic)
    start = headline_number * count
    return [personas[(start + k) % len(personas)] for k in range(count)]
