"""Wiki Live selection as the first release made it (methods/wlc.md): candidates created inside the
contamination window that are Good Articles now, list-like ones dropped, ranked by reference URLs
and then structural depth, the top N kept across topics.

Rank: more reference URLs first, then more sections + subsections, then more subsections, then more
bytes, then the lower pageid (stable). Across topics: round-robin by rank, so one topic cannot take
every slot: round 1 takes each topic's best (in rank order), round 2 each topic's second, and so on
until N are kept. Every candidate keeps its row: kept or dropped, with the reason.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Sequence


@dataclass
class Candidate:
    """One article a refresh looked at: a `wlc_candidates` row."""

    pageid: int
    title: str
    ga_at: datetime | None
    window_after: datetime | None = None
    window_before: datetime | None = None
    created_at: datetime | None = None
    in_window: bool | None = None
    bytes: int | None = None
    views: int | None = None
    external_links: int | None = None
    reference_urls: int | None = None
    sections: int | None = None
    subsections: int | None = None
    topic: str | None = None
    category: str | None = None
    list_like: bool | None = None
    rank: int | None = None
    kept: bool = False
    outcome: str = "dropped"  # task | new_version | unchanged | dropped | retry | failed
    reason: str = ""
    na_reason: str | None = None
    task_key: str | None = None
    supersedes: str | None = None
    revid: int | None = None
    n_statements: int | None = None
    gold_chunks: int | None = None
    content_hash: str | None = None
    edited: bool = False  # already a task; its article changed since (bypasses the selection)
    retried: bool = False  # kept by an earlier refresh whose text or gold failed (bypasses the selection)

    @property
    def label(self) -> str:
        return f"{self.title!r} (pageid {self.pageid})"

    @property
    def eligible(self) -> bool:
        """In the window, measured and not list-like: ranked."""
        return (self.in_window is True and self.list_like is False and self.outcome == "dropped"
                and not self.reason and self.reference_urls is not None)

    def drop(self, reason: str, outcome: str = "dropped", na_reason: str | None = None) -> None:
        """Not a task this time. A kept candidate stays kept when it failed (retry/failed): the next
        refresh retries it outside the selection."""
        self.kept = self.kept and outcome in ("retry", "failed")
        self.outcome, self.reason, self.na_reason = outcome, reason, na_reason

    def as_row(self) -> dict:
        row = asdict(self)
        row.pop("edited")
        row.pop("retried")
        return row


def rank_key(c: Candidate) -> tuple:
    return (-(c.reference_urls or 0), -((c.sections or 0) + (c.subsections or 0)), -(c.subsections or 0),
            -(c.bytes or 0), c.pageid)


def select(candidates: Sequence[Candidate], limit: int) -> list[Candidate]:
    """Rank the eligible candidates, keep `limit` across topics, give every other one its reason.
    Returns the kept ones in rank order."""
    eligible = sorted((c for c in candidates if c.eligible), key=rank_key)
    for rank, candidate in enumerate(eligible, 1):
        candidate.rank = rank
    by_topic: dict[str, list[Candidate]] = {}
    for candidate in eligible:  # topics in the order of their best candidate
        by_topic.setdefault(candidate.topic or "other", []).append(candidate)
    kept: list[Candidate] = []
    depth = 0
    while len(kept) < limit and any(len(queue) > depth for queue in by_topic.values()):
        for queue in by_topic.values():
            if len(queue) > depth and len(kept) < limit:
                kept.append(queue[depth])
        depth += 1
    chosen = {id(c) for c in kept}
    per_topic = {topic: sum(id(c) in chosen for c in queue) for topic, queue in by_topic.items()}
    for candidate in eligible:
        if id(candidate) in chosen:
            candidate.kept, candidate.reason = True, (
                f"kept: rank {candidate.rank} of {len(eligible)} ({candidate.reference_urls} reference URLs, "
                f"{candidate.sections} sections, {candidate.subsections} subsections; topic {candidate.topic})")
        else:
            topic = candidate.topic or "other"
            candidate.drop(f"not in the top {limit} across topics: rank {candidate.rank} of {len(eligible)}, "
                           f"topic {topic} has {per_topic[topic]} kept")
    return sorted(kept, key=lambda c: c.rank or 0)
