"""Each generation filter's pass rate after a refresh, beside the paper's (MiroEval section 4:
84.4 % of candidates pass search validation, 63.2 % of those the necessity check, 52.1 % of those
the inverse quality check).

passed / entered, where `entered` counts the candidates the filter decided. A candidate whose judge
call or endpoint answer failed in that filter is N/A, not a rejection: it is left out of the
denominator and counted on its own (`not_judged`), so a provider outage cannot look like a strict
filter. Candidates that never reached a filter (known, duplicate, rejected earlier) are not in it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from .query_selection import failed_stage

if TYPE_CHECKING:
    from .candidates import Candidate

PAPER_PASS_RATES = {"search": 84.4, "necessity": 63.2, "inverse_quality": 52.1}


@dataclass(frozen=True)
class FilterRate:
    name: str  # search | necessity | inverse_quality
    entered: int  # candidates the filter decided
    passed: int
    not_judged: int  # N/A in this filter: judge or endpoint failure, outside `entered`
    paper: float

    @property
    def rate(self) -> float | None:
        """Percent passed, one decimal; None when the filter decided nothing."""
        return round(100 * self.passed / self.entered, 1) if self.entered else None

    def as_dict(self) -> dict:
        return {"entered": self.entered, "passed": self.passed, "rate": self.rate, "not_judged": self.not_judged,
                "paper": self.paper}


def filter_rates(candidates: Sequence["Candidate"]) -> list[FilterRate]:
    decided = {
        "search": [c.passed_search for c in candidates if c.passed_search is not None],
        "necessity": [c.needs_external for c in candidates if c.needs_external is not None],
        "inverse_quality": [not c.adequate for c in candidates if c.adequate is not None],
    }
    failed = [failed_stage(c) for c in candidates]
    return [FilterRate(name, len(outcomes), sum(outcomes), failed.count(name), PAPER_PASS_RATES[name])
            for name, outcomes in decided.items()]
