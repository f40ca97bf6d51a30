"""MiroEval process evaluation, judged (methods/miroeval.md section 3), as the reference: per report,
the trace's steps (`core/traces.py`); its global findings (`miroeval/process_findings`, one call per
window of steps that fits the judge's context, `trace_windows`; the windows' findings merged); the
measured facts (`process_measures.py`); the five intrinsic dimensions from the structured process only
(`miroeval/process_intrinsic`: steps and findings; a trace longer than one window is judged part by
part and each dimension is the step-weighted mean of the parts: no trace is cut); the three alignment
dimensions from the findings and the report (`miroeval/process_alignment`). Both on 1-10 with anchors.

report_judgments rows, item ids under `miroeval_process.`:
- kind `process_finding` `finding.<k>`: the finding, credit 1 when the report keeps it, else 0;
- kind `process_facts` `facts`: the measured facts as JSON in `item`, score = the number of steps;
- kind `process_coverage` `trace_seen`: the share of the steps' text the judge was shown (whole: a step
  too long for one line is shown in parts, each its own line);
- kind `process` `<dimension>`: score 1-10, or N/A with its bucket: no trace in the release
  (`data_accessibility`), an empty or broken trace (`model_failure`), our parser failing on it
  (`pipeline_failure`), a failed call (its own).
"""
from __future__ import annotations

import json
from typing import Any, Literal, Mapping, Sequence

import polars as pl
from pydantic import BaseModel, Field

from ...core.traces import ParsedTrace, parse_trace
from ...judges.answer_budget import answer_budget
from ...judges.base import Judge, JudgmentRequest
from ...judges.context_window import cut_to_tokens, prompt_tokens, room_for
from ...judges.prompts import fence_untrusted, load_template
from ...judges.readable import READS_OVERLAP, require_readable
from ...stages.frames import frame, rows_by_partition
from ..judging import JudgmentContext, report_for_judge, scored_under
from .process import ALIGNMENT, INTRINSIC
from .process_measures import DIMENSIONS, MAX_FINDINGS, measure, offline_findings, offline_scores

PREFIX = "miroeval_process"  # item ids `miroeval_process.<dimension>`, read back by the suite
FINDINGS_TEMPLATE = "miroeval/process_findings"
INTRINSIC_TEMPLATE = "miroeval/process_intrinsic"
ALIGNMENT_TEMPLATE = "miroeval/process_alignment"
TRACE_CHARS = 40_000  # one window of rendered steps at most: a longer trace is read in several
STEP_PART_CHARS = 4_000  # a longer step is shown in consecutive parts, one line each: nothing is cut
MIN_WINDOW_TOKENS = 200  # a window of steps smaller than this would say nothing: the model's context is too small
TRACE_PARSER_FAILED = "trace unreadable: "  # core/traces.parse_trace's warning when the parser itself raised


class ProcessFinding(BaseModel):
    finding: str
    first_step: int = 0
    related_steps: list[int] = Field(default_factory=list)
    strength: Literal["strong", "moderate", "weak"] = "moderate"


class ProcessFindings(BaseModel):
    """MiroEval process: the global findings of one research trace."""

    findings: list[ProcessFinding] = Field(default_factory=list, max_length=40)


class DimensionScore(BaseModel):
    score: float | None = Field(default=None, ge=1, le=10)  # None: cannot be judged from this trace
    reason: str = ""


class IntrinsicScores(BaseModel):
    """MiroEval process: the five intrinsic dimensions of the process, 1-10."""

    search_breadth: DimensionScore = Field(default_factory=DimensionScore)
    analytical_depth: DimensionScore = Field(default_factory=DimensionScore)
    progressive_refinement: DimensionScore = Field(default_factory=DimensionScore)
    critical_thinking: DimensionScore = Field(default_factory=DimensionScore)
    efficiency: DimensionScore = Field(default_factory=DimensionScore)


class AlignmentScores(BaseModel):
    """MiroEval process: the three process-report alignment dimensions, 1-10."""

    findings_to_report: DimensionScore = Field(default_factory=DimensionScore)
    report_to_process: DimensionScore = Field(default_factory=DimensionScore)
    contradiction: DimensionScore = Field(default_factory=DimensionScore)


# the findings answer is bounded by the findings asked for, not by the steps read
FINDINGS_TOKENS = answer_budget(ProcessFindings, {"findings": [None] * MAX_FINDINGS}, FINDINGS_TEMPLATE)


def step_dicts(parsed: ParsedTrace) -> list[dict]:
    return [{"index": s.index, "kind": s.kind, "text": s.text, "queries": s.queries, "urls": s.urls,
             "depends_on": s.depends_on} for s in parsed.steps]


def step_line(step: Mapping[str, Any]) -> str:
    part = f" (part {step['part']} of {step['parts']})" if step.get("parts", 1) > 1 else ""
    return f"[{step['index']}] ({step['kind']}){part} {' '.join(str(step['text']).split())}"


def step_parts(steps: list[dict], room: int | None) -> list[dict]:
    """The steps as the lines a window holds: a step whose line is longer than STEP_PART_CHARS, or than
    `room` tokens, is split at spaces into consecutive parts (the same index, `part` k of `parts`)."""
    lines = []
    for step in steps:
        text = " ".join(str(step["text"]).split())
        if len(step_line(step)) <= STEP_PART_CHARS and (room is None or prompt_tokens(step_line(step)) <= room):
            lines.append(step)
            continue
        pieces = []
        while text:
            piece = text[:STEP_PART_CHARS - 40]  # 40: the line's "[index] (kind) (part k of n)" head
            if room is not None:
                piece = cut_to_tokens(piece, max(room - 40, 1))
            if len(piece) < len(text) and " " in piece[len(piece) // 2:]:
                piece = piece[:piece.rindex(" ")]  # whole words
            pieces.append(piece)
            text = text[len(piece):].lstrip()
        lines += [{**step, "text": piece, "part": k, "parts": len(pieces)} for k, piece in enumerate(pieces, 1)]
    return lines


def share_seen(requests: Sequence[JudgmentRequest]) -> float:
    """The share of the windows' step lines their prompts show: 1 unless a window had to be cut, which
    parts sized to the room avoid."""
    full = [fence_untrusted("\n".join(step_line(s) for s in r.variables["steps_list"])) for r in requests]
    shown = sum(len(r.variables["steps"]) for r in requests)
    return min(1.0, shown / sum(len(f) for f in full)) if requests and any(full) else 1.0


def trace_windows(steps: list[dict], judge: Judge, room: int | None) -> list[list[dict]]:
    """The steps in consecutive windows whose rendered lines fit one prompt: within TRACE_CHARS and,
    when the judge's context is known, within `room` tokens; every step is in a window, a long one in
    parts (no trace is cut). The offline judge reads one window of all steps whole."""
    if judge.source_token_budget is None:
        return [steps]
    room = _usable(room)
    windows: list[list[dict]] = [[]]
    used_chars = used_tokens = 0
    for step in step_parts(steps, room):
        line = step_line(step)
        chars, tokens = len(line) + 1, prompt_tokens(line)
        if windows[-1] and (used_chars + chars > TRACE_CHARS or (room is not None and used_tokens + tokens > room)):
            windows.append([])
            used_chars = used_tokens = 0
        windows[-1].append(step)
        used_chars, used_tokens = used_chars + chars, used_tokens + tokens
    return windows


def _window_text(window: list[dict], room: int | None) -> str:
    text = fence_untrusted("\n".join(step_line(s) for s in window))
    room = _usable(room)
    return text if room is None else cut_to_tokens(text, room)  # parts fit the room: a last resort


def _usable(room: int | None) -> int | None:
    """A room too small for a few steps is none: the prompt is then refused as too long (N/A saying
    so), never sent with an empty window."""
    return room if room is not None and room >= MIN_WINDOW_TOKENS else None


def merge_findings(per_window: Sequence[Sequence[ProcessFinding]]) -> list[tuple[int, ProcessFinding]]:
    """The findings of a trace read in windows, each with its window's index: round-robin over the
    windows (each lists its most important first), a finding met before dropped, at most MAX_FINDINGS."""
    merged, seen = [], set()
    for rank in range(max((len(f) for f in per_window), default=0)):
        for window, findings in enumerate(per_window):
            if rank < len(findings) and findings[rank].finding.strip():
                key = " ".join(findings[rank].finding.lower().split())
                if key not in seen:
                    seen.add(key)
                    merged.append((window, findings[rank]))
    return merged[:MAX_FINDINGS]


def _row(system: str, task: str, kind: str, item_id: str, item: str, *, judge: Judge, template: str = "",
         template_hash: str = "", score: float | None = None, credit: float | None = None, reason: str = "",
         na_reason: str | None = None, cache_key: str | None = None) -> dict:
    return {"system": system, "task": task, "kind": kind, "item_id": f"{PREFIX}.{item_id}", "item": item,
            "credit": credit, "score": score, "reason": reason[:1000], "na_reason": na_reason,
            "judge": judge.judge_id, "template": template, "template_hash": template_hash, "cache_key": cache_key}


def _na_rows(system: str, task: str, bucket: str, why: str, judge: Judge, **kw) -> list[dict]:
    return [_row(system, task, "process", d, d, judge=judge, reason=why, na_reason=bucket, **kw) for d in DIMENSIONS]


def judge_process(keys: Sequence[tuple[str, str]], reports: pl.DataFrame, tasks: pl.DataFrame, judge: Judge,
                  extra_suites: Sequence[str] = (), labels: Mapping[str, str] | None = None) -> pl.DataFrame:
    task_rows = {r["task"]: r for r in tasks.iter_rows(named=True)}
    report_by_key = rows_by_partition(reports)
    _, findings_hash = load_template(FINDINGS_TEMPLATE)
    _, intrinsic_hash = load_template(INTRINSIC_TEMPLATE)
    _, alignment_hash = load_template(ALIGNMENT_TEMPLATE)
    rows: list[dict] = []
    todo: list[tuple[str, str, dict, ParsedTrace, list[dict]]] = []
    for system, task in keys:
        task_row, report = task_rows.get(task), report_by_key.get((system, task))
        if task_row is None or not scored_under("miroeval", task_row["benchmark"], extra_suites):
            continue
        if report is None or report["status"] != "ok":
            continue  # the suite says why the report is unreadable
        trace = report.get("trace")
        if trace is None:
            rows += _na_rows(system, task, "data_accessibility", "the release has no research trace for this report",
                             judge)
            continue
        parsed = parse_trace(trace)
        if not parsed.steps:
            why = "; ".join(parsed.warnings) or "the research trace is empty"
            # an empty or broken trace is the system's; our parser failing on a trace is ours
            bucket = "pipeline_failure" if why.startswith(TRACE_PARSER_FAILED) else "model_failure"
            rows += _na_rows(system, task, bucket, f"no research step in the trace ({parsed.shape}): {why}", judge)
            continue
        todo.append((system, task, report, parsed, step_dicts(parsed)))

    def request(template: str, variables: dict, model, system: str, task: str, **options) -> JudgmentRequest:
        return JudgmentRequest(template, variables, model, {**(labels or {}), "system": system, "task": task},
                               **options)

    def findings_request(system: str, task: str, window: list[dict], room: int | None) -> JudgmentRequest:
        variables = {"query": task_rows[task]["query"], "steps": _window_text(window, room), "steps_list": window,
                     "max_findings": MAX_FINDINGS}
        return request(FINDINGS_TEMPLATE, variables, ProcessFindings, system, task, answer_tokens=FINDINGS_TOKENS)

    def intrinsic_requests(system: str, task: str, steps: list[dict], findings: str, facts: dict
                           ) -> list[JudgmentRequest]:
        """The intrinsic call on every window of steps that fits its prompt beside the findings."""
        def asked(window: list[dict], room: int | None, note: str) -> JudgmentRequest:
            return request(INTRINSIC_TEMPLATE, {
                "query": task_rows[task]["query"], "steps": _window_text(window, room), "steps_list": window,
                "findings": findings, "facts_map": facts, "part_note": note}, IntrinsicScores, system, task)

        room = room_for(judge, asked([], None, PART_NOTE.format(k=1, n=2, first=1, last=1)))
        windows = trace_windows(steps, judge, room)
        if len(windows) == 1:
            return [asked(windows[0], room, "")]
        return [asked(w, room, PART_NOTE.format(k=k, n=len(windows), first=w[0]["index"], last=w[-1]["index"]))
                for k, w in enumerate(windows, start=1)]

    windows = []  # per trace: its windows, each with the findings request that reads it
    for system, task, _, _, steps in todo:
        room = room_for(judge, findings_request(system, task, [], None))
        windows.append([findings_request(system, task, w, room) for w in trace_windows(steps, judge, room)])
    found = iter(judge.judge_many([r for trace in windows for r in trace]))
    plans, requests = [], []
    for (system, task, report, parsed, steps), window_requests in zip(todo, windows, strict=True):
        judgments = [next(found) for _ in window_requests]
        failed = next((j for j in judgments if not isinstance(j.answer, ProcessFindings)), None)
        if failed is not None:  # without findings the alignment cannot be judged: the whole process waits
            rows += _na_rows(system, task, failed.na_reason or "pipeline_failure",
                             f"findings of the trace: {failed.error or 'no answer'}", judge,
                             template=FINDINGS_TEMPLATE, template_hash=findings_hash)
            continue
        merged = merge_findings([j.answer.findings for j in judgments])
        findings = [f for _, f in merged]
        facts = measure(parsed, report["trace"], report["text"], [f.finding for f in findings])
        facts["trace_shape"] = parsed.shape
        kept = _kept_flags([f.finding for f in findings], report["text"])
        for k, ((window, f), in_report) in enumerate(zip(merged, kept, strict=True), start=1):
            rows.append(_row(system, task, "process_finding", f"finding.{k}", f.finding, judge=judge,
                             template=FINDINGS_TEMPLATE, template_hash=findings_hash, credit=float(in_report),
                             reason=f"first step {f.first_step}; related {f.related_steps}; {f.strength}",
                             cache_key=judgments[window].provenance.cache_key or None))
        rows.append(_row(system, task, "process_facts", "facts", json.dumps(facts), judge=judge,
                         score=float(len(parsed.steps)),
                         reason="measured from the trace: " + "; ".join(parsed.warnings)[:400]))
        findings_text = fence_untrusted("\n".join(f"[{f.first_step}] ({f.strength}) {f.finding}"
                                                  for f in findings) or "(none)")
        parts = intrinsic_requests(system, task, steps, findings_text, facts)
        alignment = request(ALIGNMENT_TEMPLATE, {
            "query": task_rows[task]["query"], "findings": findings_text, "facts_map": facts,
            "report": report_for_judge(report["text"], judge)}, AlignmentScores, system, task, fit=("report",))
        seen = min(share_seen(window_requests), share_seen(parts))
        in_parts = len({s["index"] for r in parts for s in r.variables["steps_list"] if s.get("parts", 1) > 1})
        rows.append(_row(system, task, "process_coverage", "trace_seen", "trace_seen", judge=judge, score=seen,
                         reason=f"{len(parts)} window(s) of steps read, every step; {seen:.0%} of the steps' text "
                                f"shown" + (f"; {in_parts} long step(s) shown in parts" if in_parts else "")))
        plans.append((system, task, [len(w.variables["steps_list"]) for w in parts]))
        requests += [*parts, alignment]

    answers = iter(judge.judge_many(requests))
    for system, task, sizes in plans:
        parts, alignment = [next(answers) for _ in sizes], next(answers)
        for d in INTRINSIC:
            rows.append(_dimension_row(system, task, d, [(j, n) for j, n in zip(parts, sizes)], judge,
                                       INTRINSIC_TEMPLATE, intrinsic_hash))
        for d in ALIGNMENT:
            rows.append(_dimension_row(system, task, d, [(alignment, 1)], judge, ALIGNMENT_TEMPLATE, alignment_hash))
    return frame("report_judgments", rows)


PART_NOTE = ("The process is long: you see part {k} of {n}, steps {first} to {last}, with the findings of the "
             "whole process. Score what this part shows. ")


def _dimension_row(system: str, task: str, dimension: str, parts: list[tuple[Any, int]], judge: Judge,
                   template: str, template_hash: str) -> dict:
    """One dimension's row from the calls that judged it: the mean of the parts' scores weighted by
    their steps (one call: its score); N/A with the first failure's bucket when no part scored it."""
    scored, failures = [], []
    for judgment, steps in parts:
        got = getattr(judgment.answer, dimension, None) if judgment.answer is not None else None
        if got is not None and got.score is not None:
            scored.append((float(got.score), steps, got.reason))
        else:  # answered without it: the judge could not
            why = (judgment.error or "no answer") if judgment.answer is None else (got.reason if got else "")
            failures.append((judgment.na_reason or "pipeline_failure", why or "the judge gave no score"))
    key = parts[0][0].provenance.cache_key or None
    if not scored:
        bucket, why = failures[0]
        return _row(system, task, "process", dimension, dimension, judge=judge, template=template,
                    template_hash=template_hash, reason=why, na_reason=bucket)
    weight = sum(n for _, n, _ in scored)
    value = sum(v * n for v, n, _ in scored) / weight
    reason = scored[0][2] if len(parts) == 1 else (
        f"step-weighted mean of {len(scored)} of {len(parts)} parts: " + "; ".join(r for _, _, r in scored))
    return _row(system, task, "process", dimension, dimension, judge=judge, template=template,
                template_hash=template_hash, score=round(value, 4), reason=reason, cache_key=key)


def _kept_flags(findings: list[str], report: str) -> list[bool]:
    from ...core.key_facts import fact_kept, numbers_in
    from ...core.checklist_match import key_words
    numbers, words = numbers_in(report), key_words(report)
    return [fact_kept(f, numbers, words) for f in findings]


def process(ctx: JudgmentContext) -> pl.DataFrame:
    return judge_process(ctx.keys, ctx.reports, ctx.tasks, ctx.judge, ctx.extra_suites, ctx.labels)


# --- the offline judge's handlers ----------------------------------------------------------------

def answer_process_findings(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`miroeval/process_findings`: the sentences of read and analyze steps that state figures or
    named facts (`process_measures.offline_findings`)."""
    steps = list(variables.get("steps_list") or [])
    require_readable(READS_OVERLAP, trace=" ".join(str(s["text"]) for s in steps))
    return ProcessFindings(findings=[ProcessFinding(**f) for f in offline_findings(steps)]), {}


def answer_process_intrinsic(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`miroeval/process_intrinsic`: the documented linear scales on the measured facts."""
    scores = offline_scores(dict(variables["facts_map"]))
    return IntrinsicScores(**{d: DimensionScore(score=scores[d][0], reason=scores[d][1]) for d in INTRINSIC}), {}


def answer_process_alignment(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`miroeval/process_alignment`: the linear scales on the measured shares; the report's consistency
    with its process is not measured (no score, a judge limit)."""
    scores = offline_scores(dict(variables["facts_map"]))
    return AlignmentScores(**{d: DimensionScore(score=scores[d][0], reason=scores[d][1]) for d in ALIGNMENT}), {}


HANDLERS = {FINDINGS_TEMPLATE: answer_process_findings, INTRINSIC_TEMPLATE: answer_process_intrinsic,
            ALIGNMENT_TEMPLATE: answer_process_alignment}
