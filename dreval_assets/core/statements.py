"""Statements a judge extracts from a report's parsed units, and whether the report grounds them.

A *unit* is one claim of the parser (a sentence, an uncited sentence, a table row or a figure
caption) with its id and section title. Units go to the judge in chunks of consecutive units
(`chunk_units`); the judge returns atomic statements, each naming its unit. A statement is kept
only when the report grounds it (`grounding_problem`):
- every number and date it states is stated by its unit (`evidence_match.unstated_values`: thousands
  separators, full-width digits and "%" / "percent" read alike; rounding allowed, more precision not);
- at least `MIN_COVERAGE` of its content words (`evidence_match.content_tokens`: English and other
  Latin words by stem, Chinese by character pairs) occur in the unit, its section title or the unit
  before it (resolving "it" may borrow a subject from there).
Statement text keeps words only: citation markers and URLs the judge copied are removed
(`statement_text`), because a statement's citations are always its unit's, as the parser resolved
them. Pure: no I/O, no judge.
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Sequence

from .citation_markers import tokenize_inline
from .evidence_match import content_tokens, unstated_values
from .run_caches import run_cache

MIN_COVERAGE = 0.5  # share of a statement's content words its unit and context must hold
_DIGITS_RE = re.compile(r"(\d+)")
# what a removed marker or URL leaves: "(see )", "（）", "[]"
_EMPTY_BRACKETS_RE = re.compile(
    r"\s*[(（\[]\s*(?:(?:see|source|sources|via|from|cf\.?|来源|出处)[:：]?\s*)?[)）\]]", re.I)
_SPACE_BEFORE_STOP_RE = re.compile(r"\s+([.,;:!?。，；：！？])")


@dataclass(frozen=True)
class Unit:
    claim_id: str
    kind: str  # sentence | uncited | table_row | figure_caption
    text: str
    section: str


def claim_order(claim_id: str) -> tuple:
    """Sort key reading the digits of an id as numbers: c9999 before c10000."""
    return tuple(int(part) if part.isdigit() else part for part in _DIGITS_RE.split(claim_id))


def chunk_units(units: Sequence[Unit], chunk_chars: int) -> list[list[Unit]]:
    """Consecutive units whose texts add up to at most `chunk_chars` characters; a longer unit is a
    chunk alone."""
    chunks: list[list[Unit]] = []
    size = 0
    for unit in units:
        if not chunks or size + len(unit.text) > chunk_chars:
            chunks.append([])
            size = 0
        chunks[-1].append(unit)
        size += len(unit.text)
    return chunks


def statement_text(raw: str) -> str:
    """The statement as kept: citation markers, links' URLs and bare URLs removed, with the brackets
    they leave empty ("(see )"); whitespace tidied."""
    text = " ".join(tokenize_inline(raw or "").plain().split())
    text = _EMPTY_BRACKETS_RE.sub("", text)
    return " ".join(_SPACE_BEFORE_STOP_RE.sub(r"\1", text).split())


def duplicate_key(text: str) -> str:
    return " ".join(text.casefold().split())


def says_nothing(text: str) -> bool:
    """No content word and no figure: nothing to check (counted with the empty statements)."""
    return not content_tokens(text) and not any(char.isdigit() for char in text)


def grounding_problem(statement: str, unit: Unit, previous: Unit | None) -> str:
    """Why the report does not ground `statement` in `unit` ('' when it does)."""
    invented = unstated_values(statement, unit.text)
    if invented:
        return f"states {', '.join(repr(v) for v in invented)}, which {unit.claim_id} does not"
    words = content_tokens(statement)
    if not words:
        return ""  # only figures, all of them the unit's (`says_nothing` catches the rest)
    known = _known_words(" ".join((unit.text, unit.section, previous.text if previous else "")))
    covered = sum(word in known for word in words) / len(words)
    if covered < MIN_COVERAGE:
        return f"{covered:.0%} of its words are in {unit.claim_id} and its context (< {MIN_COVERAGE:.0%})"
    return ""


@run_cache(maxsize=4096)  # a unit's context is asked about once for each statement made of it
def _known_words(context: str) -> frozenset[str]:
    return frozenset(content_tokens(context))


EXAMPLE_CHARS = 80  # a dropped statement quoted as an example is cut to this


def short(text: str) -> str:
    return text if len(text) <= EXAMPLE_CHARS else text[:EXAMPLE_CHARS - 1] + "…"


@dataclass
class Grounded:
    """What one chunk's answer keeps: each unit's statements, and what it dropped."""
    kept: dict[str, list[str]]
    n_empty: int = 0
    n_duplicates: int = 0
    ungrounded: list[str] = field(default_factory=list)  # each dropped statement, quoted, and why


def ground(units: list[Unit], before: Unit | None, said: list[tuple[str, str]]) -> Grounded:
    """Which of the statements (unit id as the judge wrote it, text) the chunk's units ground, in the
    judge's order. Pure: the command runs it in its parse helper process when it has one
    (`stages/parse_helper.py`)."""
    by_id = {unit.claim_id: unit for unit in units}
    previous = {unit.claim_id: earlier for unit, earlier in zip(units, [before, *units])}
    found = Grounded({unit.claim_id: [] for unit in units})
    seen: dict[str, set[str]] = defaultdict(set)
    for raw_unit, raw_text in said:
        unit_id = raw_unit.strip().strip("[]").strip()
        text = statement_text(raw_text)
        unit = by_id.get(unit_id)
        if unit is None:
            found.ungrounded.append(f"{short(text)!r} (names unit {unit_id!r}, not one of its chunk's)")
        elif not text or says_nothing(text):
            found.n_empty += 1
        elif duplicate_key(text) in seen[unit_id]:
            found.n_duplicates += 1
        elif problem := grounding_problem(text, unit, previous[unit_id]):
            found.ungrounded.append(f"{short(text)!r} ({problem})")
        else:
            seen[unit_id].add(duplicate_key(text))
            found.kept[unit_id].append(text)
    return found
