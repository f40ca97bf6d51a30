"""A report's text cut into segments, each either plain text or one claim's span, so a page can mark
every claim where it stands. Claims are the parser's sentences (markers such as `[3]` may have been
dropped from them), so a claim is found by its exact text, else by its first and last words."""
from __future__ import annotations

from dataclasses import dataclass

HEAD = 40  # characters of a claim's start that must match when its exact text is not in the report
TAIL = 16  # characters of its end searched after that start


@dataclass(frozen=True)
class Segment:
    text: str
    claim_id: str | None = None


def locate(text: str, claim: str, start: int) -> tuple[int, int] | None:
    """(begin, end) of the claim in `text` at or after `start`, or None. The claim's final stop is not
    required (a marker often stands before it in the report)."""
    core = claim.strip().rstrip(".!?。 ")
    if not core:
        return None
    exact = text.find(core, start)
    if exact >= 0:
        return exact, exact + len(core)
    head, tail = core[:HEAD], core[-TAIL:]
    begin = text.find(head, start)
    if begin < 0:
        return None
    end = text.find(tail, begin + max(0, len(head) - len(tail)), begin + 2 * len(core) + 40)
    return (begin, end + len(tail)) if end >= 0 else None


def segments(text: str, claims: list[tuple[str, str]]) -> tuple[list[Segment], list[str]]:
    """The text's segments for claims (id, text) in report order, and the ids not found in it."""
    out: list[Segment] = []
    missing: list[str] = []
    cursor = 0
    for claim_id, claim in claims:
        found = locate(text, claim, cursor)
        if found is None:
            found = locate(text, claim, 0)
            if found is not None and found[0] < cursor:  # overlaps a span already marked
                found = None
        if found is None:
            missing.append(claim_id)
            continue
        begin, end = found
        if begin > cursor:
            out.append(Segment(text[cursor:begin]))
        out.append(Segment(text[begin:end], claim_id))
        cursor = end
    if cursor < len(text):
        out.append(Segment(text[cursor:]))
    return out, missing
