"""metric_scores: verdicts and parser output -> long-format rows of every applicable suite."""
from __future__ import annotations

import json
from dataclasses import asdict
from typing import Mapping, Sequence

import polars as pl

from ..benchmarks.evidence import ClaimEvidence, ReportEvidence, SandboxDoc, SourceVerdict
from ..benchmarks.judging import scored_under
from ..benchmarks.registry import BENCHMARKS, judge_for, judge_for_tasks
from ..benchmarks.suites import suites_for
from ..core.dedup import ambiguous_pairs, duplicate_groups
from ..core.models import SameStatement
from ..judges.base import Judge, JudgmentRequest
from ..judges.prompts import fence_untrusted
from .frames import frame, rows_by_partition
from .tasks import corpora_of, run_corpus

Key = tuple[str, str]


def score_reports(
    keys: Sequence[Key], reports: pl.DataFrame, parsed: pl.DataFrame, claims: pl.DataFrame,
    verdicts: pl.DataFrame, tasks: pl.DataFrame, sandbox: pl.DataFrame, judge: Judge,
    extra_suites: Sequence[str] = (), policies: Mapping[str, str] | None = None,
    judgments: pl.DataFrame | None = None, rubrics: pl.DataFrame | None = None,
    systems_without_citations: frozenset[str] = frozenset(), fetched: pl.DataFrame | None = None,
    run_id: str | None = None,
) -> pl.DataFrame:
    """`systems_without_citations`: systems a release marks as writing without citations; their
    citation metrics are N/A, never scored from a stray URL line. `fetched`: the fetched_references
    rows, for the pages read although our detector flags them (a suite may count or drop those).
    `run_id`: the run the judge's questions are asked for (their ledger rows name it)."""
    task_rows = {r["task"]: r for r in tasks.iter_rows(named=True)}
    report_by_key = rows_by_partition(reports)
    inputs = _evidence_inputs(keys, task_rows, rubrics, judge, extra_suites)
    evidence = _evidence(keys, parsed, claims, verdicts, task_rows, sandbox, judge.judge_id, inputs, policies or {})
    _mark_duplicates(evidence, judge_for_tasks(judge, task_rows.values()), run_id)
    for key, flagged in flagged_pages(fetched).items():
        if key in evidence:
            evidence[key].flagged_pages = flagged
    for (system, task), ev in evidence.items():
        ev.has_reference = bool((task_rows.get(task) or {}).get("reference_article"))
        ev.system_cites = False if system in systems_without_citations else None
    if judgments is not None:
        for r in judgments.iter_rows(named=True):
            ev = evidence.get((r["system"], r["task"]))
            if ev is None:
                continue
            if r["kind"] == "checklist":
                ev.checklist.append(r["credit"])
            else:  # rubric dimensions and contradiction counts, by "<rubric>.<dimension>"
                ev.rubric_scores[r["item_id"]] = r["score"]
            if r.get("na_reason"):  # why an item has no value: the metric's N/A row says it
                item = f"checklist.{r['item_id']}" if r["kind"] == "checklist" else r["item_id"]
                ev.judgment_failures[item] = (r["na_reason"], r.get("reason") or "")
    rows = []
    for key in keys:
        report = report_by_key.get(key)
        benchmark = task_rows[key[1]]["benchmark"] if key[1] in task_rows else "generic"
        for suite in suites_for(benchmark, extra_suites):
            if report is None or report["status"] != "ok":
                detail = report["detail"] if report else "no reports row"
                reason = (report["na_reason"] if report else None) or "pipeline_failure"
                values = suite.unreadable(reason, detail, judge.judge_id)
            else:
                values = suite.score(evidence[key])
            rows.extend({"system": key[0], "task": key[1], **asdict(v)} for v in values)
    return frame("metric_scores", rows)


def _evidence(keys, parsed, claims, verdicts, task_rows, sandbox, judge_id, inputs, policies) -> dict[Key, ReportEvidence]:
    docs: dict[str, list[SandboxDoc]] = {}
    for r in sandbox.iter_rows(named=True):
        docs.setdefault(r["task"], []).append(SandboxDoc(r["url"], r["title"] or "", r["role"],
                                                         tuple(corpora_of(r))))
    by_claim: dict[tuple[str, str, str], list[SourceVerdict]] = {}
    for v in _columns(verdicts, "system", "task", "claim_id", "source", "verdict", "origin", "na_reason",
                      "reason").iter_rows(named=True):
        by_claim.setdefault((v["system"], v["task"], v["claim_id"]), []).append(
            SourceVerdict(v["source"], v["verdict"], v.get("origin") or "cited", v.get("na_reason"),
                          (v.get("reason") or "") if v.get("na_reason") else ""))
    parsed_by_key = rows_by_partition(parsed)
    result = {}
    for key in keys:
        system, task = key
        row = parsed_by_key.get(key) or {}
        task_row = task_rows.get(task) or {}
        result[key] = ReportEvidence(
            system=system, task=task, benchmark=task_row.get("benchmark", "generic"), judge=judge_id,
            modality=task_row.get("modality") or "",
            references=json.loads(row.get("references") or "[]"),
            citation_style=row.get("citation_style") or "inline",
            figures=json.loads(row.get("figures") or "[]"), extraction=extraction_text(row),
            extraction_empty=extraction_empty(row),
            sandbox=docs.get(task, []), corpus=run_corpus(system, (c for d in docs.get(task, []) for c in d.corpora)),
            attachments=list(task_row.get("attachments") or []),
            inputs=dict(inputs.get(task, {})), policies=dict(policies))
    for c in _columns(claims, "system", "task", *_CLAIM_COLUMNS).iter_rows(named=True):
        key = (c["system"], c["task"])
        if key in result:
            result[key].claims.append(_claim(c, tuple(by_claim.get((key[0], key[1], c["claim_id"]), ()))))
    return result


def _columns(rows: pl.DataFrame, *names: str) -> pl.DataFrame:
    """Only the columns read (those it has): a row as a dict costs per column, and verdicts and claims
    carry texts no score reads."""
    return rows.select([name for name in names if name in rows.columns])


_CLAIM_COLUMNS = ("claim_id", "kind", "text", "urls", "unresolved_indices")  # what `_claim` reads


def _claim(row: Mapping, verdicts: tuple[SourceVerdict, ...] = ()) -> ClaimEvidence:
    """A report_claims row as the suites read it."""
    return ClaimEvidence(row["claim_id"], row["kind"], row["text"], tuple(row["urls"] or ()),
                         tuple(row["unresolved_indices"] or ()), verdicts)


def flagged_pages(fetched: pl.DataFrame | None) -> dict[Key, dict[str, str]]:
    """(system, task) -> {url: what our detector saw} for pages read (status ok) that it flags as a
    wall (bot wall, captcha, ...): a release's text is stored read even then, as its pipeline judged it."""
    found: dict[Key, dict[str, str]] = {}
    if fetched is None or fetched.is_empty():
        return found
    for r in fetched.filter((pl.col("status") == "ok") & pl.col("blocked").is_not_null()).iter_rows(named=True):
        found.setdefault((r["system"], r["task"]), {})[r["url"]] = r["blocked"]
    return found


def extraction_empty(parsed_row: dict) -> str:
    """Why an LLM extraction kept no statement of a report whose sentences it read ("" otherwise)."""
    ungrounded = parsed_row.get("n_ungrounded") or 0
    if parsed_row.get("extraction") != "llm" or (parsed_row.get("n_statements") or 0) or not ungrounded:
        return ""
    return (f"the statement extraction kept no grounded statement ({ungrounded} ungrounded dropped): the "
            f"extractor's failure, not the report's; its claims were not counted")


def extraction_text(parsed_row: dict) -> str:
    """What the report's claims are, for the policy of every row that counts them."""
    if parsed_row.get("extraction") == "release":
        return f"claims: {parsed_row.get('extraction_detail') or 'the release statements'}"[:400]
    if (parsed_row.get("extraction") or "sentences") != "llm":
        return "claims: the parser's sentences (claims.extraction = sentences)"
    text = (f"claims: {parsed_row.get('n_statements')} statements grounded in {parsed_row.get('n_claims')} parsed "
            f"sentences (claims.extraction = llm; {parsed_row.get('n_ungrounded') or 0} ungrounded dropped)")
    if parsed_row.get("extraction_na_reason"):
        text += f"; some sentences kept: {parsed_row.get('extraction_detail') or parsed_row['extraction_na_reason']}"
    return text[:400]


def _mark_duplicates(evidence: dict[Key, ReportEvidence], judge: Judge, run_id: str | None = None) -> None:
    """Deduplicate each report's facts; the judge settles only the ambiguous pairs (one batch for all)."""
    asked = _same_statement_questions({key: [c.text for c in ev.facts] for key, ev in evidence.items()}, run_id)
    answers = judge.judge_many([request for _, request in asked])
    # an unanswered pair stays two facts: merging needs a positive answer
    same = {q: isinstance(a.answer, SameStatement) and a.answer.same for (q, _), a in zip(asked, answers)}
    for key, ev in evidence.items():
        facts = ev.facts
        groups = duplicate_groups([c.text for c in facts], lambda j, i, key=key: same.get((key, j, i), False))
        ev.duplicate_of = {facts[i].claim_id: facts[g].claim_id for i, g in enumerate(groups) if g != i}


def ask_same_statements_ahead(claims: pl.DataFrame, tasks: pl.DataFrame, judge: Judge, run_id: str | None = None) -> None:
    """The same-statement questions `metric_scores` will ask of these reports' facts, asked now by a step
    that waits on the judge anyway (they depend on the parsed claims only): `metric_scores` then finds
    their answers in the call cache, and its reports' fact pairs computed (`dedup`'s cache), instead of
    asking after the last verdict with the endpoint idle. Only for a judge with a call cache."""
    if getattr(judge, "calls", None) is None:
        return
    facts: dict[Key, list[str]] = {}
    for c in claims.iter_rows(named=True):
        if _claim(c).is_fact:  # as `ReportEvidence.facts` picks them
            facts.setdefault((c["system"], c["task"]), []).append(c["text"])
    asked = _same_statement_questions(facts, run_id)
    if asked:
        judge_for_tasks(judge, tasks.iter_rows(named=True)).judge_many([request for _, request in asked])


def _same_statement_questions(facts: Mapping[Key, Sequence[str]], run_id: str | None = None,
                              ) -> list[tuple[tuple[Key, int, int], JudgmentRequest]]:
    """((report, earlier, later), request) for each ambiguous pair of a report's facts."""
    run = {"run_id": run_id} if run_id else {}
    return [((key, earlier, later), JudgmentRequest(
        "same_statement", {"statement_a": fence_untrusted(texts[earlier]), "statement_b": fence_untrusted(texts[later])},
        SameStatement, {**run, "asset": "metric_scores", "system": key[0], "task": key[1]}))
        for key, texts in facts.items() for earlier, later in ambiguous_pairs(texts)]


def _evidence_inputs(keys, task_rows, rubrics, judge: Judge, extra_suites) -> dict[str, dict]:
    """task -> what each benchmark scoring it prepared for its suite (`Benchmark.evidence_inputs`)."""
    found: dict[str, dict] = {}
    tasks = sorted({t for _, t in keys if t in task_rows})
    for benchmark in BENCHMARKS.values():
        if benchmark.evidence_inputs is None:
            continue
        wanted = [task_rows[t] for t in tasks if scored_under(benchmark.name, task_rows[t]["benchmark"], extra_suites)]
        for task, values in benchmark.evidence_inputs(wanted, rubrics, judge_for(judge, benchmark.name)).items():
            found.setdefault(task, {}).update(values)
    return found
