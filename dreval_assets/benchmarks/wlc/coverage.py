"""Wiki Live Cov. Wiki and Wiki Conf. (methods/wlc.md, "Wiki Fact"): the report's statements checked
against the task's gold statements (`Task.gold_facts`, facts of the reference article).

The report's statements (`report_claims`: the parser's sentences and table rows, the judge's extracted
statements, or the release's own) that cite Wikipedia are dropped first (the ban; leakage is its own
metric). Candidates are retrieved, min(``TOP_K`` (10), n) of them, by cosine similarity of the judge
endpoint's embeddings when an embedding model is configured (DREVAL_JUDGE_EMBEDDING_MODEL, the
paper's retriever; vectors cached, a failure makes the rows N/A saying so, never BM25 in its place),
else by Okapi BM25 (`core/passages.py`'s scorer); a `gold_statements` row names the retriever.

Cov. Wiki: for each gold statement, a judge labels it consistent / inconsistent / not_supported
against its top report statements only, and names the statements that state or contradict it.
Wiki Conf. (policy `wlc.wiki_conf`): by default as the reference's `gen_conflict_with_wiki`, each
report statement against its own top gold statements, labelled conflict / no_conflict
(template ``CONFLICT_TEMPLATE``); policy `gold_side` counts instead the statements the Cov. Wiki
calls name as contradicting a gold statement (no call of its own).
A report whose every statement cites Wikipedia has each gold statement not_supported, without a call
(nothing is left to state it: Cov. Wiki 0); a report with no statement at all is N/A `model_failure`.
Items are batched, ``FACTS_PER_CALL`` per call, each candidate shown once per call, and a batch is
split further when its candidates would pass ``STATEMENT_TOKENS`` (or the judge's own source
budget): an article of 100 gold statements costs ``calls_needed(100)`` = 10 Cov. Wiki calls per report.

Cov. Wiki = consistent / gold statements judged; Wiki Conf. = report statements in conflict / report
statements judged, both x100.
Rows (`report_judgments`): kind `gold_fact` (item `wlc.gold.gNNN`, score 1 consistent, 0 not supported,
-1 inconsistent), kind `statement_conflict` (item `wlc.statement_conflict.<claim id>`, score 1
conflict, 0 no conflict), kind `gold_conflict` (item `wlc.gold_conflict.<claim id>`, score 1, one per
statement a Cov. Wiki call names as contradicting) and kind `gold_statements` (item
`wlc.gold_statements.count`, score = the statements considered; item `wlc.gold_retriever.<name>`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Mapping, Sequence

import polars as pl
from pydantic import BaseModel, Field

from ...core.passages import _priority, estimate_tokens
from ...judges.base import JudgmentRequest
from ...judges.embeddings import Embeddings, cosine_top
from ...judges.prompts import fence_untrusted, load_template
from ...stages.frames import frame, rows_by_partition
from ..judging import JudgmentContext, scored_under
from ..policies import policy_value
from .metrics import (CONFLICT_PREFIX, CONFLICT_SCORE, COUNT_ITEM, GOLD_PREFIX, LABEL_SCORE, RETRIEVER_PREFIX,
                      STATEMENT_CONFLICT_PREFIX, cites_wikipedia)

TEMPLATE = "wlc/gold_coverage"
CONFLICT_TEMPLATE = "wlc/statement_conflicts"
TOP_K = 10  # report statements retrieved per gold statement (the paper's top-10)
FACTS_PER_CALL = 10  # gold statements per judge call
STATEMENT_CHARS = 600  # a report statement is shown up to here
STATEMENT_TOKENS = 6_000  # the statements block of one call stays within this (or the judge's source budget)
STATEMENT_KINDS = ("sentence", "table_row", "uncited")  # cited or not; figure captions left out


class GoldFactLabel(BaseModel):
    fact_id: str
    label: Literal["consistent", "inconsistent", "not_supported"]
    statements: list[str] = Field(default_factory=list)  # ids stating it (consistent) or contradicting it
    reason: str = ""


class GoldFactLabels(BaseModel):
    """Per gold fact of one call, its label against the report statements retrieved for it."""

    labels: list[GoldFactLabel]


class StatementConflict(BaseModel):
    statement_id: str
    label: Literal["conflict", "no_conflict"]
    facts: list[str] = Field(default_factory=list)  # gold fact ids it conflicts with
    reason: str = ""


class StatementConflicts(BaseModel):
    """Per report statement of one call, whether it conflicts with the gold facts retrieved for it."""

    labels: list[StatementConflict]


@dataclass(frozen=True)
class Statement:
    sid: str  # short id shown to the judge: r<n>, n its position among the report's statements
    claim_id: str
    text: str


def report_statements(claims: Sequence[Mapping]) -> tuple[list[Statement], int]:
    """The report's statements the gold statements are checked against, and how many were dropped
    because they cite Wikipedia."""
    kept, dropped = [], 0
    for row in claims:
        if row.get("kind") not in STATEMENT_KINDS or not (row.get("text") or "").strip():
            continue
        if cites_wikipedia(tuple(row.get("urls") or ())):
            dropped += 1
            continue
        kept.append(Statement(f"r{len(kept) + 1}", row["claim_id"], " ".join(row["text"].split())))
    return kept, dropped


def top_statements(gold: str, texts: Sequence[str], k: int = TOP_K) -> list[int]:
    """Indices of the min(k, n) texts BM25 ranks best for `gold`, best first: every gold statement
    gets its k candidates, as the paper's retriever returns (texts sharing no term follow in report
    order, so a fact stated in other words still reaches the judge)."""
    if not texts:
        return []
    order, _ = _priority(list(texts), [gold])
    return order[:min(k, len(texts))]


def calls_needed(n_facts: int, facts_per_call: int = FACTS_PER_CALL) -> int:
    """Judge calls per report for `n_facts` gold statements when no batch passes the token budget."""
    return -(-n_facts // facts_per_call)


def batches(facts: Sequence[tuple[str, str, list[int]]], statements: Sequence[Statement],
            budget: int) -> list[list[tuple[str, str, list[int]]]]:
    """Gold facts (id, text, retrieved statement indices) in calls of at most FACTS_PER_CALL whose
    statements (each shown once) cost at most `budget` tokens; a fact alone always makes a call."""
    out: list[list[tuple[str, str, list[int]]]] = []
    current: list[tuple[str, str, list[int]]] = []
    shown: set[int] = set()
    cost = 0
    for fact in facts:
        extra = sum(_statement_tokens(statements[i]) for i in set(fact[2]) - shown)
        if current and (len(current) >= FACTS_PER_CALL or cost + extra > budget):
            out.append(current)
            current, shown, cost = [], set(), 0
            extra = sum(_statement_tokens(statements[i]) for i in set(fact[2]))
        current.append(fact)
        shown |= set(fact[2])
        cost += extra
    if current:
        out.append(current)
    return out


def _statement_tokens(statement: Statement) -> int:
    return estimate_tokens(_shown(statement)) + 1


def _shown(statement: Statement) -> str:
    return f"[{statement.sid}] {statement.text[:STATEMENT_CHARS]}"


def _request_variables(batch, statements: Sequence[Statement]) -> dict:
    shown = sorted({i for _, _, idx in batch for i in idx})
    return {
        "facts": "\n".join(f"- [{fid}] {text}\n  related statements: "
                           f"{', '.join(statements[i].sid for i in idx) or 'none'}" for fid, text, idx in batch),
        "statements": fence_untrusted("\n".join(_shown(statements[i]) for i in shown)),
        "fact_list": [{"fact_id": fid, "text": text,
                       "statements": [{"id": statements[i].sid, "text": statements[i].text[:STATEMENT_CHARS]}
                                      for i in idx]} for fid, text, idx in batch],
    }


def _conflict_variables(batch, facts: Sequence[Statement]) -> dict:
    shown = sorted({i for _, _, idx in batch for i in idx})
    return {
        "statements": fence_untrusted("\n".join(f"- [{sid}] {text[:STATEMENT_CHARS]}\n  related facts: "
                                                f"{', '.join(facts[i].sid for i in idx) or 'none'}"
                                                for sid, text, idx in batch)),
        "facts": fence_untrusted("\n".join(_shown(facts[i]) for i in shown)),
        "statement_list": [{"statement_id": sid, "text": text[:STATEMENT_CHARS],
                            "facts": [{"id": facts[i].sid, "text": facts[i].text} for i in idx]}
                           for sid, text, idx in batch],
    }


@dataclass(frozen=True)
class Retriever:
    """How candidates are found: BM25, or cosine similarity of the judge endpoint's embeddings."""
    name: str  # bm25 | embeddings (<model>)
    vectors: Mapping[str, Sequence[float]] | None = None  # text -> vector, with embeddings

    def top(self, query: str, texts: Sequence[str], k: int = TOP_K) -> list[int]:
        if self.vectors is None:
            return top_statements(query, texts, k)
        return cosine_top(self.vectors[query], [self.vectors[t] for t in texts], k)


def _embedding_pass(ctx: JudgmentContext, texts: Sequence[str]) -> tuple[str | None, Embeddings | None]:
    """(embedding model, what it found) when the judge has one configured, else (None, None)."""
    model = getattr(ctx.judge, "embedding_model", None)
    if not model:
        return None, None
    return model, ctx.judge.embed(list(dict.fromkeys(texts)), {**ctx.labels})


@dataclass
class _Report:
    system: str
    task: str
    base: dict
    gold: list[tuple[str, str]]  # (fact id, text)
    statements: list[Statement]


def gold_coverage(ctx: JudgmentContext) -> pl.DataFrame:
    """The report judgments behind Cov. Wiki and Wiki Conf. (see the module doc)."""
    task_rows = {r["task"]: r for r in ctx.tasks.iter_rows(named=True)}
    report_by_key = rows_by_partition(ctx.reports)
    claims_by_key: dict[tuple[str, str], list[dict]] = {}
    if ctx.claims is not None:
        for row in ctx.claims.iter_rows(named=True):
            claims_by_key.setdefault((row["system"], row["task"]), []).append(row)
    _, template_hash = load_template(TEMPLATE)
    _, conflict_hash = load_template(CONFLICT_TEMPLATE)
    per_statement = policy_value(ctx.policies, "wlc.wiki_conf") == "per_statement"
    budget = min(STATEMENT_TOKENS, ctx.judge.source_token_budget or STATEMENT_TOKENS)
    base_of = lambda system, task: {"system": system, "task": task, "judge": ctx.judge.judge_id,  # noqa: E731
                                    "template": TEMPLATE, "template_hash": template_hash, "credit": None}
    rows, judged = [], []
    for system, task in ctx.keys:
        row = task_rows.get(task) or {}
        gold = [" ".join(str(g).split()) for g in (row.get("gold_facts") or []) if str(g).strip()]
        report = report_by_key.get((system, task))
        if (not gold or not scored_under("wlc", row.get("benchmark", "generic"), ctx.extra_suites)
                or report is None or report["status"] != "ok"):
            continue  # the suite says why (no gold statements; the report's own N/A)
        statements, dropped = report_statements(claims_by_key.get((system, task), []))
        base = base_of(system, task)
        wiki = f"; {dropped} citing Wikipedia dropped" if dropped else ""
        rows.append({**base, "kind": "gold_statements", "item_id": COUNT_ITEM, "item": "report statements considered",
                     "score": float(len(statements)), "cache_key": None, "na_reason": None,
                     "reason": f"{len(statements)} report statements{wiki}"})
        facts = [(f"g{n:03d}", text) for n, text in enumerate(gold, start=1)]
        if not statements and dropped:  # all cite Wikipedia: the ban leaves nothing to state a gold fact (paper: 0)
            why = f"not_supported: no report statement left after the ban{wiki}; decided without a call"
            rows.extend({**base, "kind": "gold_fact", "item_id": f"{GOLD_PREFIX}.{fid}", "item": text,
                         "score": LABEL_SCORE["not_supported"], "cache_key": None, "na_reason": None, "reason": why}
                        for fid, text in facts)
            continue
        if not statements:  # the system wrote nothing checkable
            why = "the report has no statements to check the gold statements against"
            rows.extend({**base, "kind": "gold_fact", "item_id": f"{GOLD_PREFIX}.{fid}", "item": text, "score": None,
                         "cache_key": None, "na_reason": "model_failure", "reason": why} for fid, text in facts)
            continue
        judged.append(_Report(system, task, base, facts, statements))
    model, embedded = _embedding_pass(ctx, [t for r in judged for t in [g for _, g in r.gold] +
                                            [s.text for s in r.statements]])
    name = "bm25" if model is None else f"embeddings ({model})"
    retriever = Retriever(name, embedded.vectors if embedded else None)
    requests, plans = [], []
    for r in judged:
        rows.append({**r.base, "kind": "gold_statements", "item_id": f"{RETRIEVER_PREFIX}.{name}", "item": name,
                     "score": 1.0, "cache_key": None, "na_reason": None,
                     "reason": f"candidates per statement: min({TOP_K}, n) by {name}"})
        texts = [s.text for s in r.statements]
        gold_texts = [g for _, g in r.gold]
        failed = [embedded.failures[t] for t in gold_texts + texts if t in embedded.failures] if embedded else []
        if failed:  # configured embeddings that failed: N/A saying so, never BM25 under the embeddings' name
            na, error = failed[0]
            why = f"retrieval by {name} failed for {len(failed)} texts: {error}"[:500]
            rows.extend({**r.base, "kind": "gold_fact", "item_id": f"{GOLD_PREFIX}.{fid}", "item": text, "score": None,
                         "cache_key": None, "na_reason": na, "reason": why} for fid, text in r.gold)
            if per_statement:
                rows.extend({**r.base, "template": CONFLICT_TEMPLATE, "template_hash": conflict_hash,
                             "kind": "statement_conflict", "item_id": f"{STATEMENT_CONFLICT_PREFIX}.{s.claim_id}",
                             "item": s.text, "score": None, "cache_key": None, "na_reason": na, "reason": why}
                            for s in r.statements)
            continue
        labels = {**ctx.labels, "system": r.system, "task": r.task}
        retrieved = [(fid, text, retriever.top(text, texts)) for fid, text in r.gold]
        for batch in batches(retrieved, r.statements, budget):
            requests.append(JudgmentRequest(TEMPLATE, _request_variables(batch, r.statements), GoldFactLabels, labels))
            plans.append(("gold", r, batch))
        if per_statement:  # the reference's gen_conflict_with_wiki: each statement against its own top gold facts
            pool = [Statement(fid, fid, text) for fid, text in r.gold]
            asked = [(s.sid, s.text, retriever.top(s.text, gold_texts)) for s in r.statements]
            for batch in batches(asked, pool, budget):
                requests.append(JudgmentRequest(CONFLICT_TEMPLATE, _conflict_variables(batch, pool),
                                                StatementConflicts, labels))
                plans.append(("statements", r, batch))
    judgments = ctx.judge.judge_many(requests)
    conflicts: dict[tuple[str, str, str], tuple[str, list[str]]] = {}  # (system, task, claim) -> (text, facts)
    for (side, r, batch), judgment in zip(plans, judgments, strict=True):
        if side == "gold":
            rows.extend(_gold_rows(r, batch, judgment, conflicts))
        else:
            rows.extend(_statement_rows(r, batch, judgment, conflict_hash))
    for (system, task, claim_id), (text, fids) in conflicts.items():
        rows.append({**base_of(system, task), "kind": "gold_conflict", "item_id": f"{CONFLICT_PREFIX}.{claim_id}",
                     "item": text, "score": 1.0, "cache_key": None, "na_reason": None,
                     "reason": "contradicts gold " + ", ".join(fids)})
    return frame("report_judgments", rows)


def _gold_rows(r: _Report, batch, judgment, conflicts: dict) -> list[dict]:
    """One `gold_fact` row per gold fact of the call; contradicting statements noted in `conflicts`."""
    answer, rows = judgment.answer, []
    got = {a.fact_id: a for a in answer.labels} if isinstance(answer, GoldFactLabels) else {}
    by_sid = {s.sid: s for s in r.statements}
    for fid, text, idx in batch:
        item = {**r.base, "kind": "gold_fact", "item_id": f"{GOLD_PREFIX}.{fid}", "item": text,
                "cache_key": judgment.provenance.cache_key or None}
        label = got.get(fid)
        if label is None:
            rows.append({**item, "score": None, "na_reason": judgment.na_reason or "pipeline_failure",
                         "reason": judgment.error or "the judge gave no label for this gold statement"})
            continue
        allowed = {r.statements[i].sid for i in idx}
        named = [sid for sid in dict.fromkeys(label.statements) if sid in allowed]
        if label.label == "inconsistent":
            for sid in named:
                key = (r.system, r.task, by_sid[sid].claim_id)
                conflicts.setdefault(key, (by_sid[sid].text, []))[1].append(fid)
        ids = ", ".join(by_sid[sid].claim_id for sid in named)
        reason = f"{label.label}" + (f" ({ids})" if ids else "") + f": {label.reason}"
        rows.append({**item, "score": LABEL_SCORE[label.label], "na_reason": None, "reason": reason[:500]})
    return rows


def _statement_rows(r: _Report, batch, judgment, template_hash: str) -> list[dict]:
    """One `statement_conflict` row per report statement of the call: 1 conflict, 0 none, N/A unanswered."""
    answer, rows = judgment.answer, []
    got = {a.statement_id: a for a in answer.labels} if isinstance(answer, StatementConflicts) else {}
    by_sid = {s.sid: s for s in r.statements}
    for sid, text, idx in batch:
        item = {**r.base, "template": CONFLICT_TEMPLATE, "template_hash": template_hash,
                "kind": "statement_conflict", "item_id": f"{STATEMENT_CONFLICT_PREFIX}.{by_sid[sid].claim_id}",
                "item": text, "cache_key": judgment.provenance.cache_key or None}
        label = got.get(sid)
        if label is None:
            rows.append({**item, "score": None, "na_reason": judgment.na_reason or "pipeline_failure",
                         "reason": judgment.error or "the judge gave no label for this statement"})
            continue
        shown = {r.gold[i][0] for i in idx}  # the ids of the gold facts this statement was shown
        named = [fid for fid in dict.fromkeys(label.facts) if fid in shown]
        reason = label.label + (f" (gold {', '.join(named)})" if named else "") + f": {label.reason}"
        rows.append({**item, "score": CONFLICT_SCORE[label.label], "na_reason": None, "reason": reason[:500]})
    return rows
