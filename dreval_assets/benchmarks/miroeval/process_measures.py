"""MiroEval process evaluation, the measured side (methods/miroeval.md section 3): the facts measured
on a parsed trace and its report, the offline findings, and the offline judge's documented linear
scales. Pure functions; the judgment in `process_judgments.py` asks the judge with these facts.

Facts (`measure`):
- queries, distinct_queries (lower-cased, punctuation dropped), repeated_queries = queries - distinct;
- distinct_domains: hosts (no `www.`) of every URL a step touches;
- pages_read: distinct URLs of read steps; revisits = read-step URL visits - pages_read;
- refined_queries: distinct queries first issued after the first read or analyze step;
- n_<kind> per step kind (`tool`: a tool call no cue names), n_steps, n_findings;
- r_to_p: share of the report's checkable claims (citing a URL or stating a figure other than a year)
  whose cited URL or one of whose figures appears in the trace;
- p_to_r: share of the trace's findings the report keeps (its figures all there; without figures 60%
  of its key words: `core/key_facts.share_kept`, as Grounding).

Offline scores, each 1-10 (clamped, one decimal):
- search_breadth = 1 + 0.75 distinct_queries + 0.75 distinct_domains
- analytical_depth = 1 + 1.5 n_analyze + 0.5 n_findings
- progressive_refinement = 1 + 2 refined_queries
- critical_thinking = 1 + 3 n_verify
- efficiency = 10 - 9 (repeated_queries + revisits) / (queries + read visits); N/A with neither
- findings_to_report = 1 + 9 p_to_r (N/A: no findings); report_to_process = 1 + 9 r_to_p (N/A: no
  checkable claim)
- contradiction: N/A, a judge limit (ours, not the system's): counting cannot tell whether the report
  contradicts what its process found.
"""
from __future__ import annotations

import re
from typing import Any

from ...core.dedup import normalise_claim
from ...core.key_facts import numbers_in, share_kept
from ...core.language import word_count
from ...core.metrics import judge_limit
from ...core.report_parser import parse_report
from ...core.sentences import split_sentences
from ...core.traces import ParsedTrace, domain, normalise_query, normalise_url, urls_in
from .process import ALIGNMENT, INTRINSIC

DIMENSIONS = (*INTRINSIC, *ALIGNMENT)
MAX_FINDINGS = 12
_YEAR_RE = re.compile(r"^(1[89]|20)\d\d$")
_NAME_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+")
_CALL_PREFIX_RE = re.compile(r"^\s*(?:\[\w+\]|[\w.]+:\s*[\[{])")


def figures(text: str) -> set[str]:
    """Numbers stated in a text, years left out (every trace and report mentions the year)."""
    return {n for n in numbers_in(text) if not _YEAR_RE.match(n)}


def _visits(parsed: ParsedTrace) -> list[str]:
    return [normalise_url(u) for s in parsed.steps if s.kind == "read" for u in s.urls]


def measure(parsed: ParsedTrace, trace: str, report: str, findings: list[str]) -> dict[str, Any]:
    steps = parsed.steps
    queries = [normalise_query(q) for s in steps if s.kind == "search" for q in s.queries]
    queries = [q for q in queries if q]
    first_look = next((s.index for s in steps if s.kind in ("read", "analyze")), None)
    early = {normalise_query(q) for s in steps if s.kind == "search" and (first_look is None or s.index < first_look)
             for q in s.queries}
    late = {normalise_query(q) for s in steps if s.kind == "search" and first_look is not None and s.index > first_look
            for q in s.queries} - early - {""}
    visits = _visits(parsed)
    touched = {domain(u) for s in steps for u in s.urls} - {""}
    facts: dict[str, Any] = {"n_steps": len(steps), **{f"n_{k}": sum(s.kind == k for s in steps)
                                                       for k in ("plan", "search", "read", "analyze", "synthesize",
                                                                 "verify", "tool")},
                             "queries": len(queries), "distinct_queries": len(set(queries)),
                             "repeated_queries": len(queries) - len(set(queries)),
                             "distinct_domains": len(touched), "pages_read": len(set(visits)),
                             "revisits": len(visits) - len(set(visits)), "refined_queries": len(late),
                             "n_findings": len(findings)}
    checkable, traced = report_traced(report, trace)
    facts["report_claims_checkable"], facts["report_claims_traced"] = checkable, traced
    facts["r_to_p"] = round(traced / checkable, 4) if checkable else None
    if findings:
        share, kept = share_kept(findings, report)
        facts["findings_in_report"], facts["p_to_r"] = kept, round(share, 4)
    else:
        facts["findings_in_report"], facts["p_to_r"] = 0, None
    return facts


def report_traced(report: str, trace: str) -> tuple[int, int]:
    """(checkable claims of the report, those whose cited URL or a figure appears in the trace)."""
    trace_urls = {normalise_url(u) for u in urls_in(trace)}
    trace_figures = figures(trace)
    checkable = traced = 0
    for claim in parse_report(report).claims:
        stated = figures(claim.text)
        if not claim.urls and not stated:
            continue
        checkable += 1
        traced += bool({normalise_url(u) for u in claim.urls} & trace_urls or stated & trace_figures)
    return checkable, traced


def offline_findings(steps: list[dict]) -> list[dict]:
    """The findings of a trace without a judge: sentences of read and analyze steps that state a
    figure or name something (a capitalised word inside the sentence), five words or more; tool-call
    echoes left out. Strength: strong when its figures recur in another step, moderate with a figure,
    weak with a name only. At most 12, figures first, in trace order."""
    found: list[tuple[int, int, dict]] = []
    seen: set[str] = set()
    step_figures = {int(s["index"]): figures(str(s["text"])) for s in steps}
    for s in steps:
        if s["kind"] not in ("read", "analyze"):
            continue
        body = str(s["text"]).split("\n-> ", 1)[-1] if "\n-> " in str(s["text"]) else str(s["text"])
        for sentence in split_sentences(body):
            sentence = " ".join(sentence.split())
            if _CALL_PREFIX_RE.match(sentence) or word_count(sentence) < 5 or "http" in sentence:
                continue
            stated = figures(sentence)
            if not stated and not _NAME_RE.search(sentence):
                continue
            key = normalise_claim(sentence)
            if key in seen:
                continue
            seen.add(key)
            related = [i for i, f in step_figures.items() if i != int(s["index"]) and stated and stated & f]
            strength = "strong" if related else ("moderate" if stated else "weak")
            found.append((0 if stated else 1, len(found), {"finding": sentence, "first_step": int(s["index"]),
                                                          "related_steps": related, "strength": strength}))
    best = sorted(found, key=lambda x: (x[0], x[1]))[:MAX_FINDINGS]
    return [f for _, _, f in sorted(best, key=lambda x: x[1])]


def _scale(value: float) -> float:
    return round(min(10.0, max(1.0, value)), 1)


def offline_scores(facts: dict[str, Any]) -> dict[str, tuple[float | None, str]]:
    """dimension -> (1-10 score or None, reason), from the measured facts (scales in the module doc)."""
    f = facts
    actions = f["queries"] + f["pages_read"] + f["revisits"]
    waste = f["repeated_queries"] + f["revisits"]
    out: dict[str, tuple[float | None, str]] = {
        "search_breadth": (_scale(1 + 0.75 * f["distinct_queries"] + 0.75 * f["distinct_domains"]),
                           f"{f['distinct_queries']} distinct queries, {f['distinct_domains']} domains"),
        "analytical_depth": (_scale(1 + 1.5 * f["n_analyze"] + 0.5 * f["n_findings"]),
                             f"{f['n_analyze']} analyze steps, {f['n_findings']} findings"),
        "progressive_refinement": (_scale(1 + 2 * f["refined_queries"]),
                                   f"{f['refined_queries']} new queries after the first reading"),
        "critical_thinking": (_scale(1 + 3 * f["n_verify"]), f"{f['n_verify']} verify steps"),
        "efficiency": ((_scale(10 - 9 * waste / actions), f"{f['repeated_queries']} repeated queries, "
                        f"{f['revisits']} revisits of {actions} searches and reads") if actions else
                       (None, "the trace has no search or read to judge for redundancy")),
        "findings_to_report": ((_scale(1 + 9 * f["p_to_r"]), f"{f['findings_in_report']} of {f['n_findings']} "
                                "findings in the report") if f["p_to_r"] is not None else
                               (None, "the trace states no finding")),
        "report_to_process": ((_scale(1 + 9 * f["r_to_p"]), f"{f['report_claims_traced']} of "
                               f"{f['report_claims_checkable']} checkable report claims found in the trace")
                              if f["r_to_p"] is not None else (None, "the report has no claim with a URL or figure")),
        "contradiction": (None, judge_limit("the heuristic judge does not read whether the report contradicts "
                                            "its process")),
    }
    return out
