"""claim_verdicts: every cited claim against every source it cites, through the judge.

Claims citing the same source are verified together in batches of `batch_size` (one call per
chunk, template `claim_verdicts_batch`); a lone claim, and every claim when `batch_size=1`, is
asked on its own (`claim_verdict`). For tasks whose suites want evidence beyond the citations
(`Benchmark.needs_sandbox_evidence`), a claim that is uncited, or whose cited sources decided
nothing, is also checked against what the evidence search finds: offline the best-matching page of
the task's sandbox (origin `sandbox`); with the web search (`fetch.search.WebSearch`, origin
`search`) up to its page bound, judged in rounds (the next page only for claims the earlier ones
left undecided), each row with the query that found its page (`search_query`); failed searches and
unreadable pages are N/A rows with their bucket.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Mapping, Sequence

import polars as pl

from ..benchmarks.registry import claim_verdict_templates, judge_for_tasks
from ..core.models import ClaimVerdict, ClaimVerdictBatch, SandboxPage
from ..core.passages import select_passages
from ..fetch.search import EvidenceSearch, SandboxSearch, SearchOutcome
from ..judges.base import ASK_NOW, Judge, Judgment, JudgmentRequest, as_taken
from ..judges.prompts import fence_untrusted, one_line
from .frames import frame

SINGLE_TEMPLATE = "claim_verdict"
BATCH_TEMPLATE = "claim_verdicts_batch"
TITLE_CHARS = 300  # a page title longer than this is not a title a judge needs


@dataclass(frozen=True)
class _Source:
    url: str
    title: str
    text: str


@dataclass(frozen=True)
class _Pair:
    system: str
    task: str
    claim_id: str
    claim: str
    source: _Source
    origin: str
    query: str | None = None


def judge_claims(claims: pl.DataFrame, fetched: pl.DataFrame, texts: Mapping[str, str], judge: Judge,
                 batch_size: int = 1, labels: Mapping[str, str] | None = None,
                 sandbox_evidence: Mapping[str, Sequence[SandboxPage]] | None = None,
                 search: EvidenceSearch | None = None, tasks: pl.DataFrame | None = None) -> pl.DataFrame:
    """`tasks`: the claims' task rows; each claim is asked at its task's benchmark's judge temperature, with its
    benchmark's own verdict templates when it declares them (`Benchmark.claim_verdict_templates`)."""
    return judge_claims_of(iter([ClaimsPart(claims, fetched, texts)]), lambda: claims, judge, batch_size, labels,
                           sandbox_evidence, search, tasks)


@dataclass(frozen=True)
class ClaimsPart:
    """Whole reports' claims with their cited pages: fetched_references rows and the pages' texts by hash."""
    claims: pl.DataFrame
    fetched: pl.DataFrame
    texts: Mapping[str, str]


def judge_claims_of(parts: Iterator[ClaimsPart], all_claims: Callable[[], pl.DataFrame], judge: Judge,
                    batch_size: int = 1, labels: Mapping[str, str] | None = None,
                    sandbox_evidence: Mapping[str, Sequence[SandboxPage]] | None = None,
                    search: EvidenceSearch | None = None, tasks: pl.DataFrame | None = None) -> pl.DataFrame:
    """As `judge_claims`, the reports coming in parts (each report in one part): a judge that streams has a
    part's claims asked as soon as it comes, while later parts are made (the claims of each report as its
    statements are grounded). The rows are those of all parts judged at once, in the same order;
    `all_claims()`, once the parts are over, gives every claim for the evidence search beyond citations."""
    templates: dict[str, tuple[str, str]] = {}
    if tasks is not None:
        judge = judge_for_tasks(judge, tasks.iter_rows(named=True))
        templates = {r["task"]: found for r in tasks.iter_rows(named=True)
                     if (found := claim_verdict_templates(r["benchmark"] or ""))}
    unknown: dict[tuple[str, str], list[dict]] = {}

    def groups() -> Iterator[list[_Pair] | None]:
        for part in parts:
            yield from _group_by_source(_cited_pairs(part, judge.judge_id, unknown), max(1, batch_size))
            yield None  # the part's requests are asked now, not held until the next part fills a chunk

    judged: dict[tuple[str, str], list[dict]] = {}
    for group, group_rows in _judge_groups(groups(), judge, labels or {}, templates):
        judged.setdefault((group[0].system, group[0].task), []).extend(group_rows)
    # a stable order makes the same rows on every run, however the reports came
    rows = [row for key in sorted(unknown) for row in unknown[key]]
    rows.extend(row for key in sorted(judged) for row in judged[key])
    if sandbox_evidence:
        rows.extend(_searched_rows(all_claims().sort("system", "task", "claim_id"), rows, sandbox_evidence,
                                   search or SandboxSearch(), judge, batch_size, labels or {}, templates))
    return frame("claim_verdicts", rows)


def _cited_pairs(part: ClaimsPart, judge_id: str, unknown: dict[tuple[str, str], list[dict]]) -> list[_Pair]:
    """Each cited claim of the part against each readable page it cites, in (system, task, claim) order; a
    citation with no URL or an unread page is an unknown row (added to `unknown`, by report)."""
    pages = {(r["system"], r["task"], r["url"]): r for r in part.fetched.iter_rows(named=True)}
    # a stable order makes the same batches, hence the same prompts and cache keys, on every run
    claims = part.claims.sort("system", "task", "claim_id")
    pending: list[_Pair] = []
    for claim in claims.filter(pl.col("kind") != "uncited").iter_rows(named=True):
        base = _base(claim["system"], claim["task"], claim["claim_id"], judge_id)
        rows = unknown.setdefault((claim["system"], claim["task"]), [])
        for index in claim["unresolved_indices"] or []:
            rows.append(_unknown(base, f"[{index}]", "model_failure",
                                 f"citation [{index}] has no URL in the report's reference list"))
        for url in claim["urls"] or []:
            page = pages.get((claim["system"], claim["task"], url))
            if page is None or page["status"] != "ok" or not part.texts.get(page["page_hash"]):
                reason = page["na_reason"] if page else "pipeline_failure"
                detail = page["detail"] if page else "URL missing from fetched_references"
                rows.append(_unknown(base, url, reason or "data_accessibility", detail))
                continue
            source = _Source(url, page["title"] or "", part.texts[page["page_hash"]])
            pending.append(_Pair(claim["system"], claim["task"], claim["claim_id"], claim["text"], source, "cited"))
    return pending


def _judge_pairs(pairs: list[_Pair], judge: Judge, batch_size: int, labels: Mapping[str, str],
                 templates: Mapping[str, tuple[str, str]] | None = None) -> list[dict]:
    return [row for _, rows in _judge_groups(iter(_group_by_source(pairs, max(1, batch_size))), judge, labels,
                                             templates) for row in rows]


def _judge_groups(groups: Iterator[list[_Pair] | None], judge: Judge, labels: Mapping[str, str],
                  templates: Mapping[str, tuple[str, str]] | None = None) -> list[tuple[list[_Pair], list[dict]]]:
    """(group, its rows) of each group, in order; the groups taken as the judge asks for their requests
    (None among them: what is made so far is asked now)."""
    asked: list[tuple[list[_Pair], bool]] = []

    def requests() -> Iterator[JudgmentRequest]:  # each group's passages selected as its turn comes
        for group in groups:
            if group is None:
                yield ASK_NOW
                continue
            request, cut = _request(group, judge.source_token_budget, labels,
                                    (templates or {}).get(group[0].task, (SINGLE_TEMPLATE, BATCH_TEMPLATE)))
            asked.append((group, cut))
            yield request

    judgments = judge.judge_many(as_taken(judge, requests()))
    return [(group, _rows_from_judgment(group, judgment, cut))
            for (group, cut), judgment in zip(asked, judgments, strict=True)]


def _searched_rows(claims: pl.DataFrame, cited_rows: list[dict], sandbox_evidence: Mapping[str, Sequence[SandboxPage]],
                   search: EvidenceSearch, judge: Judge, batch_size: int, labels: Mapping[str, str],
                   templates: Mapping[str, tuple[str, str]] | None = None) -> list[dict]:
    """For the listed tasks: each claim no cited source decided, against what `search` finds for it
    (origin `search.name`), and every claim against its best passage of the task's attachments (origin
    `attachment`, so web and attachment evidence can be compared). Round 0 judges each claim's first
    page with the attachments; round r its r-th page, only while no earlier page decided it."""
    decided = {(r["system"], r["task"], r["claim_id"]) for r in cited_rows
               if r["verdict"] in ("supported", "contradicted", "partial")}
    searched: list[tuple[tuple[str, str, str], str]] = []
    corpora: list[list[SandboxPage]] = []
    attachment_pairs: dict[tuple[str, str, str], list[_Pair]] = {}
    order: list[tuple[tuple[str, str, str], str]] = []
    attachment_search = SandboxSearch()  # one for all claims: each attachment's words are read once
    for claim in claims.filter(pl.col("kind") != "figure_caption").iter_rows(named=True):
        key = (claim["system"], claim["task"], claim["claim_id"])
        if claim["task"] not in sandbox_evidence:
            continue
        corpus = sandbox_evidence.get(claim["task"]) or []
        web = [p for p in corpus if p.role != "attachment"]
        attachments = [p for p in corpus if p.role == "attachment"]
        order.append((key, claim["text"]))
        if (web or search.reads_web) and key not in decided:
            searched.append((key, claim["text"]))
            corpora.append(web)
        attachment_pairs[key] = [_Pair(*key, claim["text"], _Source(p.url, p.title, p.text), "attachment")
                                 for p in attachment_search.search(claim["text"], attachments)]
    outcomes: dict[tuple[str, str, str], SearchOutcome] = dict(zip(
        [key for key, _ in searched], search.search_many([text for _, text in searched], corpora) if searched else []))
    rows: list[dict] = []
    for key, outcome in outcomes.items():
        for failure in outcome.failures:
            rows.append({**_unknown(_base(*key, judge.judge_id), failure.source, failure.na_reason, failure.detail),
                         "origin": search.name, "search_query": failure.query})
    depth = max((len(o.pages) for o in outcomes.values()), default=0)
    settled: set[tuple[str, str, str]] = set()
    for rank in range(max(depth, 1)):
        pairs = []
        for key, text in order:
            outcome = outcomes.get(key)
            if outcome is not None and key not in settled and rank < len(outcome.pages):
                page = outcome.pages[rank]
                pairs.append(_Pair(*key, text, _Source(page.url, page.title, page.text), search.name, page.query))
            if rank == 0:
                pairs.extend(attachment_pairs.get(key, []))
        judged = _judge_pairs(pairs, judge, batch_size, labels, templates)
        settled |= {(r["system"], r["task"], r["claim_id"]) for r in judged
                    if r["origin"] == search.name and r["verdict"] in ("supported", "contradicted")}
        rows.extend(judged)
    return rows


def _group_by_source(pairs: list[_Pair], batch_size: int) -> list[list[_Pair]]:
    by_source: dict[tuple[str, str, str, str], list[_Pair]] = {}
    for pair in pairs:
        by_source.setdefault((pair.system, pair.task, pair.source.url, pair.origin), []).append(pair)
    return [group[i:i + batch_size] for group in by_source.values() for i in range(0, len(group), batch_size)]


def _request(group: list[_Pair], budget: int | None, labels,
             templates: tuple[str, str] = (SINGLE_TEMPLATE, BATCH_TEMPLATE)) -> tuple[JudgmentRequest, bool]:
    first = group[0]
    text, truncated = first.source.text, False
    if budget is not None:  # the passages that matter for these claims, within the prompt budget
        selection = select_passages(text, [p.claim for p in group], budget)
        text, truncated = selection.text, selection.truncated
    # everything from a report or a page is data inside a fence, a title or statement on one line
    source = {"source_url": fence_untrusted(one_line(first.source.url)),
              "source_title": fence_untrusted(one_line(first.source.title, TITLE_CHARS)),
              "source_text": fence_untrusted(text)}
    call_labels = {**labels, "system": first.system, "task": first.task}
    if len(group) == 1:
        return JudgmentRequest(templates[0], {"claim": fence_untrusted(first.claim), **source}, ClaimVerdict,
                               call_labels), truncated
    items = [{"claim_id": p.claim_id, "claim": p.claim} for p in group]
    listing = fence_untrusted("\n".join(f"- [{p.claim_id}] {one_line(p.claim)}" for p in group))
    return JudgmentRequest(templates[1], {"items": items, "claims": listing, **source},
                           ClaimVerdictBatch, call_labels), truncated


def _rows_from_judgment(group: list[_Pair], judgment: Judgment, truncated: bool) -> list[dict]:
    prov = judgment.provenance
    provenance = {"judge": prov.judge_id, "template": prov.template, "template_hash": prov.template_hash,
                  "model": prov.model or None, "temperature": prov.temperature, "seed": prov.seed,
                  "cache_key": prov.cache_key or None, "batch_size": len(group), "source_truncated": truncated}
    answers: dict[str, ClaimVerdict] = {}
    scores: Mapping[str, float] = {}
    failures = judgment.extra.get("failures", {})  # claim id -> (bucket, why): claims a batch answer left out
    if isinstance(judgment.answer, ClaimVerdictBatch):
        answers = {v.claim_id: v for v in judgment.answer.verdicts}
        scores = judgment.extra.get("scores", {})
    elif isinstance(judgment.answer, ClaimVerdict):
        answers = {group[0].claim_id: judgment.answer}
        scores = {group[0].claim_id: judgment.extra.get("score")}
    rows = []
    for pair in group:
        base = {**_base(pair.system, pair.task, pair.claim_id, prov.judge_id), **provenance,
                "source": pair.source.url, "origin": pair.origin, "search_query": pair.query}
        answer = answers.get(pair.claim_id)
        if answer is None:
            reason, detail = failures.get(pair.claim_id, (judgment.na_reason or "pipeline_failure", judgment.error))
            detail = detail or "the judge returned no verdict for this claim"
            rows.append({**base, "verdict": "unknown", "score": None, "evidence": "", "reason": detail,
                         "na_reason": reason})
            continue
        rows.append({**base, "verdict": answer.verdict, "score": scores.get(pair.claim_id),
                     "evidence": answer.evidence, "reason": answer.reason, "na_reason": None})
    return rows


def _base(system: str, task: str, claim_id: str, judge_id: str) -> dict:
    return {"system": system, "task": task, "claim_id": claim_id, "judge": judge_id, "template": "",
            "template_hash": "", "model": None, "temperature": None, "seed": None, "cache_key": None,
            "batch_size": None, "source_truncated": None, "origin": "cited", "search_query": None}


def _unknown(base: dict, source: str, na_reason: str, detail: str) -> dict:
    return {**base, "source": source, "verdict": "unknown", "score": None, "evidence": "",
            "reason": detail, "na_reason": na_reason}
