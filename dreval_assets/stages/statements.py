"""Statements as the benchmarks extract them (policy `claims.extraction = llm`): the judge decomposes
each report's parsed units into atomic statements, and only those the report grounds are kept.

Every report's units (its claims, in claim id order) are cut into chunks (`core.statements.chunk_units`);
one request per chunk, template `statement_extraction`, and all chunks of all reports go to the judge
in one call, report by report as the parser reads them (a judge that streams has the first asked while
the rest are read, and its answers grounded as they come); each chunk's prompt, and so its cache key,
depends on its report alone. A kept statement gets claim id `<unit>.s<k>` (k counts the unit's kept
statements in the judge's order) and its unit's kind, section and citations: the parser's resolution,
never the judge's. A chunk whose
request failed keeps its units as they were (extraction `sentences`), so nothing is lost or invented.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Mapping

import polars as pl

from ..benchmarks.evidence import most_retryable
from ..core.models import StatementExtraction
from ..core.statements import Grounded, Unit, chunk_units, claim_order, ground, short
from ..judges.base import Judge, Judgment, JudgmentRequest
from ..judges.context_window import context_of
from ..judges.prompts import fence_untrusted, load_template, one_line
from .frames import SCHEMAS
from .parse_helper import Soon, done_soon

TEMPLATE = "statement_extraction"
LLM, SENTENCES = "llm", "sentences"
STATEMENT_SCHEMA = {**SCHEMAS["report_claims"], "source_claim": pl.String, "extraction": pl.String}
SUMMARY_SCHEMA = {"system": pl.String, "task": pl.String, "n_units": pl.Int32, "n_statements": pl.Int32,
                  "n_ungrounded": pl.Int32, "n_duplicates": pl.Int32, "n_empty": pl.Int32,
                  "n_chunks": pl.Int32, "n_failed_chunks": pl.Int32, "na_reason": pl.String,
                  "detail": pl.String, "calls": pl.Int32, "tokens_in": pl.Int64, "tokens_out": pl.Int64}
_KIND_NOTES = {"table_row": " (table row)", "figure_caption": " (figure caption)"}


@dataclass(frozen=True)
class _Chunk:
    system: str
    task: str
    units: list[Unit]
    before: Unit | None  # the report's unit just before this chunk (context for pronouns)


@dataclass
class _Tally:
    """What one report's extraction produced and dropped."""
    n_units: int = 0
    n_statements: int = 0
    n_ungrounded: int = 0
    n_duplicates: int = 0
    n_empty: int = 0
    n_chunks: int = 0
    failures: list[tuple[str, str, int]] = field(default_factory=list)  # (bucket, error, units kept)
    ungrounded_example: str = ""
    units_without_statement: int = 0
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0

    def add(self, found: Grounded) -> None:
        """What one chunk's answer dropped (the first ungrounded statement is the report's example)."""
        self.n_empty += found.n_empty
        self.n_duplicates += found.n_duplicates
        self.n_ungrounded += len(found.ungrounded)
        if found.ungrounded and not self.ungrounded_example:
            self.ungrounded_example = found.ungrounded[0]


def extract_statements(claims: pl.DataFrame, judge: Judge, labels: Mapping[str, str] | None = None,
                       chunk_chars: int = 6000, partitions: Iterable[tuple[str, str]] = ()
                       ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """claims: report_claims rows, possibly of many reports. Returns (statements, summary): the grounded
    statements with the report_claims columns plus `source_claim` and `extraction`, and one summary row
    per report (also per (system, task) of `partitions` that has no claims, with zero counts)."""
    by_report: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for row in claims.iter_rows(named=True):
        by_report[(row["system"], row["task"])].append(row)
    return extract_statements_of(iter([by_report[key] for key in sorted(by_report)]), judge, labels, chunk_chars,
                                 partitions)


def extract_statements_of(reports: Iterator[list[dict]], judge: Judge, labels: Mapping[str, str] | None = None,
                          chunk_chars: int = 6000, partitions: Iterable[tuple[str, str]] = (),
                          on_report: Callable[[str, str, pl.DataFrame], None] | None = None
                          ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """As `extract_statements`, from each report's claim rows in turn (`reports` yields one report's rows
    at a time, in any order). A judge that streams its requests has a report's chunks asked as soon as the
    report is read (the parser's next reports are read meanwhile); the rows and the summary come out in
    (system, task) order whatever the order read. `on_report(system, task, its statements)` is called
    as each report's statements are all grounded, in the order read (its claims can be judged while
    later reports are asked)."""
    chunk_chars = min(chunk_chars, fitting_chunk_chars(context_of(judge)))
    rows_by_id: dict[tuple[str, str, str], dict] = {}
    tallies: dict[tuple[str, str], _Tally] = {}
    chunks: list[_Chunk] = []
    chunks_of: dict[tuple[str, str], int] = {}  # a report's chunk count, once all its chunks are made
    of_report: dict[tuple[str, str], list[pl.DataFrame]] = {}  # grounded, of reports not yet handed on

    def hand_on(key: tuple[str, str]) -> None:
        """The report's statements to `on_report`, once its chunks are all made and grounded."""
        if on_report is not None and chunks_of.get(key) and len(of_report.get(key, ())) == chunks_of[key]:
            on_report(*key, pl.concat(of_report.pop(key), rechunk=True))

    def requests() -> Iterator[JudgmentRequest]:
        for rows in reports:
            rows = sorted(rows, key=lambda r: claim_order(r["claim_id"]))
            system, task = rows[0]["system"], rows[0]["task"]
            units = [Unit(r["claim_id"], r["kind"], r["text"] or "", r["section"] or "") for r in rows]
            rows_by_id.update(((system, task, r["claim_id"]), r) for r in rows)
            tallies[(system, task)] = _Tally(n_units=len(units))
            n_chunks = 0
            for part in chunk_units(units, chunk_chars):
                chunks.append(_Chunk(system, task, part, _before(units, part)))
                n_chunks += 1
                yield _request(chunks[-1], labels or {})
            chunks_of[(system, task)] = n_chunks
            hand_on((system, task))  # its last chunk may be grounded already

    made = requests()
    # a streaming judge's answers are grounded as they come, while later reports are read and asked
    judgments = judge.judge_each(made) if getattr(judge, "streams_requests", False) else judge.judge_many(list(made))
    answered: list[tuple[Judgment, Soon]] = []
    grounded: list[tuple[str, str, int, pl.DataFrame]] = []

    def settle(waiting: bool) -> None:
        """The rows of the answered chunks, in the order asked, as far as their grounding is done (all of
        them when `waiting`): made while later answers are awaited, not all after the last one (~0.3 s
        of the claims' wait at 10 x 10)."""
        while len(grounded) < len(answered) and (waiting or answered[len(grounded)][1].done()):
            index = len(grounded)
            chunk, (judgment, found) = chunks[index], answered[index]
            rows = _chunk_rows(chunk, judgment, found(), rows_by_id, tallies[(chunk.system, chunk.task)])
            statements = pl.DataFrame(rows, schema=STATEMENT_SCHEMA, orient="row")
            grounded.append((chunk.system, chunk.task, index, statements))
            if on_report is not None:
                of_report.setdefault((chunk.system, chunk.task), []).append(statements)
                hand_on((chunk.system, chunk.task))

    for index, judgment in enumerate(judgments):
        if index >= len(chunks):  # a judgment for a request never made: the judge's bug, said plainly
            raise RuntimeError(f"the judge answered more than the {len(chunks)} statement extraction requests")
        answered.append((judgment, _grounding(chunks[index], judgment)))
        settle(waiting=False)
    if len(answered) != len(chunks):
        raise RuntimeError(f"the judge answered {len(answered)} of {len(chunks)} statement extraction requests")
    settle(waiting=True)
    for key in partitions:
        tallies.setdefault(tuple(key), _Tally())
    ordered = [frame for *_, frame in sorted(grounded, key=lambda item: item[:3])]
    statements_frame = pl.concat(ordered, rechunk=True) if ordered else pl.DataFrame(schema=STATEMENT_SCHEMA)
    summary = [_summary_row(system, task, tally) for (system, task), tally in sorted(tallies.items())]
    return statements_frame, pl.DataFrame(summary, schema=SUMMARY_SCHEMA, orient="row")


def _before(units: list[Unit], chunk: list[Unit]) -> Unit | None:
    index = units.index(chunk[0])
    return units[index - 1] if index else None


def _request(chunk: _Chunk, labels: Mapping[str, str]) -> JudgmentRequest:
    context = ""
    if chunk.before is not None:
        before = chunk.before
        context = ("\nFor reference only (extract nothing from it), the unit just before this part, after the "
                   "title of its section:\n<<<BEFORE\n"
                   f"({fence_untrusted(one_line(before.section))}) {fence_untrusted(one_line(before.text))}"
                   "\nBEFORE>>>\n")
    variables = {"units": fence_untrusted(_listing(chunk.units)), "context": context}
    return JudgmentRequest(TEMPLATE, variables, StatementExtraction,
                           {**labels, "system": chunk.system, "task": chunk.task},
                           answer_tokens=extraction_budget(variables["units"]))


def fitting_chunk_chars(context_tokens: int | None) -> int:
    """The largest chunk whose request fits the judge model's context with its answer: the template,
    the units (u tokens, ~3.2 characters each as the judge estimates them) and ~1.25u + 150 answer
    tokens. Unbounded for an unknown context; at least one short paragraph."""
    if not context_tokens:
        return 10**9
    template_tokens = len(load_template(TEMPLATE)[0]) // 3 + 100  # the instructions and the unit before
    units_tokens = (context_tokens - template_tokens - 150) / 2.25
    return max(500, int(units_tokens * 3.2))


def extraction_budget(units: str) -> int:
    """Statements restate their units about once, with unit ids and JSON around them: ~1.25x the
    units' tokens (4 characters a token), plus room for the frame."""
    return int(1.25 * len(units) / 4) + 150


def _listing(units: list[Unit]) -> str:
    """Units under their section titles: '## <title>' then '[<id>] <text>' lines."""
    lines, section = [], None
    for unit in units:
        if unit.section != section:
            section = unit.section
            lines.append(f"## {one_line(section) or '(no section title)'}")
        lines.append(f"[{unit.claim_id}]{_KIND_NOTES.get(unit.kind, '')} {one_line(unit.text)}")
    return "\n".join(lines)


def _said(judgment: Judgment) -> list[tuple[str, str]]:
    return [(statement.unit, statement.text) for statement in judgment.answer.statements]


def _grounding(chunk: _Chunk, judgment: Judgment) -> Soon:
    """What the chunk's answer grounds, begun as the answer comes (in the parse helper when it runs);
    None for a failed request."""
    if not isinstance(judgment.answer, StatementExtraction):
        return Soon.now(None)
    return done_soon(ground, chunk.units, chunk.before, _said(judgment))


def _chunk_rows(chunk: _Chunk, judgment: Judgment, found: Grounded | None, rows_by_id: dict,
                tally: _Tally) -> list[dict]:
    tally.n_chunks += 1
    tally.calls += not judgment.provenance.cache_hit
    tally.tokens_in += judgment.provenance.tokens_in
    tally.tokens_out += judgment.provenance.tokens_out
    originals = [rows_by_id[(chunk.system, chunk.task, unit.claim_id)] for unit in chunk.units]
    if found is None:
        bucket = judgment.na_reason or "pipeline_failure"
        tally.failures.append((bucket, judgment.error or "no answer", len(chunk.units)))
        return [{**_claim_columns(row), "source_claim": row["claim_id"], "extraction": SENTENCES}
                for row in originals]
    tally.add(found)
    rows = []
    for row in originals:
        texts = found.kept[row["claim_id"]]
        tally.units_without_statement += not texts
        tally.n_statements += len(texts)
        rows.extend({**_claim_columns(row), "claim_id": f"{row['claim_id']}.s{k}", "text": text,
                     "source_claim": row["claim_id"], "extraction": LLM}
                    for k, text in enumerate(texts, start=1))
    return rows


def _claim_columns(row: dict) -> dict:
    return {column: row[column] for column in SCHEMAS["report_claims"] if column in row}


def _summary_row(system: str, task: str, tally: _Tally) -> dict:
    na_reason = most_retryable((bucket for bucket, _, _ in tally.failures), "pipeline_failure") \
        if tally.failures else None
    return {"system": system, "task": task, "n_units": tally.n_units, "n_statements": tally.n_statements,
            "n_ungrounded": tally.n_ungrounded, "n_duplicates": tally.n_duplicates, "n_empty": tally.n_empty,
            "n_chunks": tally.n_chunks, "n_failed_chunks": len(tally.failures), "na_reason": na_reason,
            "detail": _detail(tally, na_reason), "calls": tally.calls, "tokens_in": tally.tokens_in,
            "tokens_out": tally.tokens_out}


def _detail(tally: _Tally, na_reason: str | None) -> str:
    parts = []
    if tally.failures:
        error = next(error for bucket, error, _ in tally.failures if bucket == na_reason)
        kept = sum(n for _, _, n in tally.failures)
        parts.append(f"{len(tally.failures)} of {tally.n_chunks} chunks failed ({na_reason}: {short(error)}): "
                     f"their {kept} sentences kept")
    if tally.n_ungrounded:
        parts.append(f"{tally.n_ungrounded} ungrounded statements dropped, e.g. {tally.ungrounded_example}")
    if tally.n_duplicates or tally.n_empty:
        parts.append(f"{tally.n_duplicates} repeated and {tally.n_empty} empty statements dropped")
    if tally.units_without_statement:
        parts.append(f"{tally.units_without_statement} units gave no statement")
    return "; ".join(parts)
