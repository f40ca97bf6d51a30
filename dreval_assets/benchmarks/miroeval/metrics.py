"""MiroEval agentic factuality (methods/miroeval.md): RIGHT / WRONG / CONFLICT / UNKNOWN per statement.

Evidence per statement: its cited pages first; when they give nothing decisive, the best page of the
task's sandbox (origin `sandbox`) or of the live web search (origin `search`); task attachments
(origin `attachment`) when readable. CONFLICT is not a verdict of one source: it marks web evidence
and attachment evidence that disagree.
"""
from __future__ import annotations

from ...core.metrics import MetricValue, merge_verdicts, not_applicable, not_available
from ..evidence import NOTHING_JUDGED_RULE, ClaimEvidence, ReportEvidence, SourceVerdict, most_retryable
from .process import ALIGNMENT, INTRINSIC, SCALE as PROCESS_SCALE, metric_name as process_metric_name, process_score
from .judgments import without_images_note
from .process_judgments import PREFIX as PROCESS_PREFIX
from .right_ratio import factuality_ratio
from ..suite import Breakdown, Composite, MetricSpec, Suite, judgment_failure, mean_of_all

DECISIVE = ("supported", "contradicted")


def label(claim: ClaimEvidence, partial_as: str = "UNKNOWN") -> str:
    web = claim.merged("cited")
    if web not in DECISIVE:  # found evidence: the sandbox offline, the web search live (origin `search`)
        found = [v for v in (claim.merged("sandbox"), claim.merged("search")) if v]
        web = merge_verdicts(found) if found else web
    attachment = claim.merged("attachment")
    if web in DECISIVE and attachment in DECISIVE and web != attachment:
        return "CONFLICT"
    decided = web if web in DECISIVE or web == "partial" else (attachment or web)
    return {"supported": "RIGHT", "contradicted": "WRONG", "partial": partial_as}.get(decided, "UNKNOWN")


FIXED_DIMENSIONS = ("coverage", "insight", "instruction_following", "clarity")  # the paper's universal four
DIMENSION_ROWS = (*FIXED_DIMENSIONS, "grounding")  # grounding: tasks with readable attachments


def synthesis_metrics(evidence: ReportEvidence) -> list[MetricValue]:
    """Per dimension the criteria-weighted mean (0-10 -> 0-100); specificity = the weighted mean of the
    task-specific (generated) dimensions, as the release's `query_spec`; synthesis = weighted total over
    every dimension that scored, weights renormalised over them."""
    j = evidence.judge
    rubric = evidence.inputs.get("miroeval.rubric")
    if rubric is None:
        return [not_available("miroeval", m, "0-100", "pipeline_failure", "the task has no generated rubric", j)
                for m in (*DIMENSION_ROWS, "specificity", "synthesis")]
    scores = evidence.rubric("miroeval")
    dimension_scores: dict[str, float | None] = {}
    judged: dict[str, tuple[int, int]] = {}  # dimension -> (criteria scored, criteria)
    for dim in rubric.dimensions:
        pairs = [(scores.get(f"{dim.dimension_id}.{c.criterion_id}"), c.weight) for c in dim.criteria]
        scored = [(s, w) for s, w in pairs if s is not None]
        weight = sum(w for _, w in scored)
        dimension_scores[dim.dimension_id] = sum(s * w for s, w in scored) / weight if scored and weight else None
        judged[dim.dimension_id] = (len(scored), len(pairs))

    def carried(row: MetricValue, dims) -> MetricValue:
        """`row`, carrying the share of its dimensions' criteria scored and the unscored ones' bucket."""
        k, n = sum(judged[d][0] for d in dims), sum(judged[d][1] for d in dims)
        bucket = next((judgment_failure(evidence, f"miroeval.{d}", "", "pipeline_failure")[0]
                       for d in dims if judged[d][0] < judged[d][1]), None)
        return row.partly_judged(k, n, bucket)

    rows = [carried(row, [row.metric]) if row.value is not None else row
            for row in (dimension_row(evidence, name, dimension_scores) for name in DIMENSION_ROWS)]
    dynamic = task_specific(rubric)
    cap = evidence.policy("miroeval.dimension_cap")
    dimension_weights = (cap_dynamic_weights(rubric.weights, set(dynamic), float(cap)) if cap != "none"
                         else rubric.weights)
    rows.append(carried(specificity_row(evidence, dynamic, dimension_weights, dimension_scores), dynamic))
    total = synthesis_total(dimension_scores, dimension_weights)
    weights = ", ".join(f"{k}={v:.2f}" for k, v in dimension_weights.items())
    rows.append(not_available("miroeval", "synthesis", "0-100", *judgment_failure(evidence, "miroeval",
                                                                                  "no dimension scored"), j)
                if total is None else
                carried(MetricValue("miroeval", "synthesis", total, "0-100", len(dimension_scores),
                                    detail=f"weights {weights}",
                                    policy=f"the judge's dimension weights, renormalised over scored dimensions; "
                                           f"task-specific {dynamic}, cap {cap} (miroeval.dimension_cap)",
                                    judge=j), list(judged)))
    return rows


def task_specific(rubric) -> list[str]:
    """The rubric's task-specific dimensions: the generated ones and Grounding (paper: "Grounding &
    Task-specific Expertise"; a rubric stored before that rule may not mark it)."""
    return [d.dimension_id for d in rubric.dimensions if d.dynamic or d.dimension_id == "grounding"]


def dimension_row(evidence: ReportEvidence, name: str, dimension_scores: dict[str, float | None]) -> MetricValue:
    j = evidence.judge
    if name == "grounding" and name not in dimension_scores:
        if not evidence.attachments:  # nothing to ground in: not a failure, not a zero
            return not_applicable("miroeval", name, "0-100", "the task has no attachment to ground in", j)
        if any(d.role == "attachment" for d in evidence.sandbox):
            return not_available("miroeval", name, "0-100", "pipeline_failure",
                                 "the task's rubric has no grounding dimension though an attachment was read", j)
        names = ", ".join(evidence.attachments)
        return not_available("miroeval", name, "0-100", "data_accessibility",
                             f"none of the task's attachments could be read ({names})"[:500], j)
    if name not in dimension_scores:
        return not_available("miroeval", name, "0-100", "pipeline_failure", "not a dimension of this rubric", j)
    value = dimension_scores[name]
    if value is None:
        return not_available("miroeval", name, "0-100",
                             *judgment_failure(evidence, f"miroeval.{name}", "no criterion was scored"), j)
    note = without_images_note(evidence.inputs.get("miroeval.unread_images") or []) if name == "grounding" else ""
    return MetricValue("miroeval", name, 10 * value, "0-100", 1, policy="criteria-weighted mean, x10", judge=j,
                       detail=f"scored from the other attachments, {note}" if note else "")


def specificity_row(evidence: ReportEvidence, dynamic: list[str], weights: dict[str, float],
                    dimension_scores: dict[str, float | None]) -> MetricValue:
    """The task-specific part of the adaptive rubric (its generated dimensions and Grounding), weighted
    by their dimension weights over those that scored."""
    j = evidence.judge
    if not dynamic:
        return not_available("miroeval", "specificity", "0-100", "pipeline_failure",
                             "the rubric has no task-specific dimension", j)
    value = synthesis_total({d: dimension_scores.get(d) for d in dynamic}, weights)
    if value is None:
        return not_available("miroeval", "specificity", "0-100",
                             *judgment_failure(evidence, "miroeval", "no task-specific dimension was scored"), j)
    return MetricValue("miroeval", "specificity", value, "0-100", len(dynamic), detail=f"dimensions {dynamic}",
                       policy="weighted mean of the task-specific dimensions (release: query_spec), x10", judge=j)


def compute(evidence: ReportEvidence) -> list[MetricValue]:
    return synthesis_metrics(evidence) + factuality_metrics(evidence) + process_metrics(evidence)


def process_metrics(evidence: ReportEvidence) -> list[MetricValue]:
    """The process score from the trace's eight judged dimensions (`process_judgments.py`):
    mean(intrinsic mean, alignment mean) x10, each group over its dimensions that scored; each
    dimension also as `process.<dimension>` (x10, as the release's per-task cells are compared)."""
    j = evidence.judge
    scores = evidence.rubric(PROCESS_PREFIX)

    def unscored(dim: str) -> tuple[str, str]:
        """(bucket, why) of a dimension with no score: its own judgment row's (item id = the dimension)."""
        bucket, why = evidence.judgment_failures.get(f"{PROCESS_PREFIX}.{dim}", ("pipeline_failure", ""))
        return bucket, f"not scored: {why}"[:500] if why else "not scored"

    rows = []
    for dim in (*INTRINSIC, *ALIGNMENT):
        value = scores.get(dim)
        rows.append(MetricValue("miroeval", process_metric_name(dim), PROCESS_SCALE * value, "0-100", 1,
                                policy="judged 1-10, x10", judge=j) if value is not None else
                    not_available("miroeval", process_metric_name(dim), "0-100", *unscored(dim), j))
    intrinsic = {d: scores.get(d) for d in INTRINSIC}
    alignment = {d: scores.get(d) for d in ALIGNMENT}
    value = process_score(intrinsic, alignment)
    if value is None:
        rows.append(not_available("miroeval", "process", "0-100",
                                  *judgment_failure(evidence, PROCESS_PREFIX, "no process dimension was scored",
                                                    default="pipeline_failure"), j))
        return rows
    scored = [d for d in (*INTRINSIC, *ALIGNMENT) if scores.get(d) is not None]
    missing = [d for d in (*INTRINSIC, *ALIGNMENT) if scores.get(d) is None]
    bucket = most_retryable(unscored(d)[0] for d in missing)
    seen = scores.get("trace_seen")
    row = MetricValue("miroeval", "process", value, "0-100", len(scored),
                      detail=f"dimensions scored {len(scored)} of 8" + (f"; not scored: {missing}" if missing else "")
                      + (f"; every step read, {seen:.0%} of the steps' text shown" if seen is not None else ""),
                      policy="process = mean(intrinsic mean, alignment mean) x10, each group over its scored "
                             "dimensions; intrinsic judged on the structured process, alignment on findings and "
                             "report (two calls, the reference's)", judge=j)
    rows.append(row.partly_judged(len(scored), len(scored) + len(missing), bucket))
    return rows


NO_EVIDENCE_SOURCE = ("no evidence source (no readable cited page or attachment passage, and no search ran: web "
                      "search off): enable DREVAL_EVIDENCE_SEARCH=web")
STATEMENT_RULE = ("a statement is judged when some source of it was judged; one whose every source went unread, or "
                  "with no source where no search ran, is left out (never UNKNOWN); one a search found nothing for "
                  "is UNKNOWN")


def evidence_of(claim: ClaimEvidence) -> list[SourceVerdict]:
    """The statement's evidence rows; a cited index with no URL is no evidence of its truth."""
    return [v for v in claim.verdicts if not v.source.startswith("[")]


def statement_bucket(claim: ClaimEvidence, searched: bool) -> str | None:
    """None when the statement was judged (some evidence read, or a search that found nothing); else the
    bucket of why not."""
    found = evidence_of(claim)
    if any(v.na_reason is None for v in found) or (not found and searched):
        return None
    if not found:
        return "pipeline_failure"  # no evidence source at all: our search is off
    return most_retryable(v.na_reason for v in found)


def factuality_metrics(evidence: ReportEvidence) -> list[MetricValue]:
    j = evidence.judge
    statements = [c for c in evidence.claims if c.kind != "figure_caption"]
    names = ("factuality", "right", "wrong", "conflict", "unknown")
    scale = {m: "0-100" if m == "factuality" else "count" for m in names}
    if not statements:
        return [not_available("miroeval", m, scale[m], "model_failure", "the report has no verifiable statements", j)
                for m in names]
    coverage = evidence.coverage(statements, origins=None)  # cited, searched and attachment evidence
    if coverage.nothing_judged:
        return [coverage.not_available("miroeval", m, scale[m], j) for m in names]
    # a web-like search ran for undecided statements: the task's sandbox offline, or the live web search
    searched = (any(d.role != "attachment" for d in evidence.sandbox)
                or any(v.origin in ("sandbox", "search") for c in statements for v in c.verdicts))
    buckets = [statement_bucket(c, searched) for c in statements]
    judged = [c for c, b in zip(statements, buckets) if b is None]
    if not judged:  # nothing checkable: no number (a release's 86.0 is not our 0.0)
        return [not_available("miroeval", m, scale[m], "pipeline_failure", f"{NO_EVIDENCE_SOURCE}; {coverage.text()}",
                              j) for m in names]
    partial_as = evidence.policy("miroeval.partial")
    labels = [label(c, partial_as) for c in judged]
    counts = {k: labels.count(k) for k in ("RIGHT", "WRONG", "CONFLICT", "UNKNOWN")}
    n, k = len(statements), len(judged)
    unjudged = most_retryable(buckets)
    unsourced = 0 if searched else sum(1 for c in statements if not evidence_of(c))
    detail = (", ".join(f"{key}={v}" for key, v in counts.items()) + f"; statements judged {k} of {n}"
              + (f" ({unsourced} with {NO_EVIDENCE_SOURCE})" if unsourced else "") + f"; {coverage.text()}")
    policy = (f"evidence: cited pages, then the sandbox or the web search, then attachments; partial counts as "
              f"{partial_as} (miroeval.partial = UNKNOWN | RIGHT); {STATEMENT_RULE}; {NOTHING_JUDGED_RULE}")
    ratio = factuality_ratio(counts["RIGHT"], counts["WRONG"], counts["CONFLICT"], counts["UNKNOWN"])
    rows = [MetricValue("miroeval", "factuality", 100 * ratio, "0-100", k, detail=detail, policy=policy, judge=j)]
    rows += [MetricValue("miroeval", key.lower(), float(v), "count", k, detail=detail, policy=policy, judge=j)
             for key, v in counts.items()]
    return [row.partly_judged(k, n, unjudged) for row in rows]


METRICS = (
    *(MetricSpec(d, "0-100", True, f"adaptive rubric dimension {d}") for d in DIMENSION_ROWS),
    MetricSpec("specificity", "0-100", True, "the task-specific dimensions of the adaptive rubric, weighted"),
    MetricSpec("synthesis", "0-100", True, "adaptive synthesis quality: weighted over scored dimensions"),
    MetricSpec("factuality", "0-100", True, "RIGHT / all statements", aggregate="micro",
               aggregate_policy="miroeval.factuality.aggregate", claims=True),
    # the paper reports the label counts as totals over tasks (e.g. 3,335 right / 170 wrong / 496 unknown)
    MetricSpec("right", "count", True, "statements the evidence supports", better=0, aggregate="sum", claims=True),
    MetricSpec("wrong", "count", True, "statements the evidence contradicts", better=-1, aggregate="sum",
               claims=True),
    MetricSpec("conflict", "count", True, "statements where web and attachment evidence disagree", better=-1,
               aggregate="sum", claims=True),
    MetricSpec("unknown", "count", True, "statements no evidence decides", better=0, aggregate="sum", claims=True),
    MetricSpec("process", "0-100", True, "process evaluation of the research trace: mean(intrinsic mean, "
               "alignment mean) x10"),
    *(MetricSpec(process_metric_name(d), "0-100", True, f"process dimension {d} (1-10, x10)")
      for d in (*INTRINSIC, *ALIGNMENT)),
    MetricSpec("overall", "0-100", True, "MiroEval Overall: mean of synthesis, factuality and process",
               aggregate="of_parts"),
)
COMPOSITES = (Composite("overall", ("synthesis", "factuality", "process"), mean_of_all,
                        "Overall = mean(synthesis, factuality, process), the layers shown beside it"),)
# the paper's leaderboard gives text-only and multimodal tasks their own headline numbers
BY_MODALITY = ("overall", "synthesis", "factuality", "process")
MODALITIES = ("text", "multimodal")

SUITE = Suite(
    "miroeval", "MiroEval", METRICS, compute,
    headline=("overall", "overall.text", "overall.multimodal", "synthesis", "factuality", "process", "right", "wrong",
              "conflict", "unknown", *FIXED_DIMENSIONS, "specificity", "grounding",
              *(f"{m}.{x}" for x in MODALITIES for m in BY_MODALITY[1:])),
    composites=COMPOSITES, breakdowns=(Breakdown("modality", BY_MODALITY, MODALITIES),))


def cap_dynamic_weights(weights: dict[str, float], dynamic: set[str], cap: float = 0.20) -> dict[str, float]:
    """Normalise dimension weights, holding each task-specific dimension at most at `cap`; the excess
    goes to the other dimensions in proportion (policy `miroeval.dimension_cap`; not the published
    default: the published per-task weights exceed it)."""
    total = sum(max(0.0, w) for w in weights.values())
    if total <= 0:
        raise ValueError("dimension weights must have a positive sum")
    result = {k: max(0.0, w) / total for k, w in weights.items()}
    for _ in range(len(result)):
        over = {k for k in dynamic if result.get(k, 0) > cap + 1e-12}
        if not over:
            break
        excess = sum(result[k] - cap for k in over)
        for k in over:
            result[k] = cap
        free = {k: v for k, v in result.items() if k not in dynamic or v < cap}
        free_total = sum(free.values())
        for k, v in free.items():
            result[k] = v + excess * (v / free_total if free_total else 1 / len(free))
    return result


def synthesis_total(dimension_scores: dict[str, float | None], weights: dict[str, float]) -> float | None:
    """Sum_d W_d * dim_d over the dimensions that scored, weights renormalised over them (0-10 scale
    in, 0-100 out); a failed dimension (None) is left out, not counted as 0."""
    scored = {d: s for d, s in dimension_scores.items() if s is not None and weights.get(d, 0) > 0}
    if not scored:
        return None
    total_weight = sum(weights[d] for d in scored)
    return 10 * sum(weights[d] / total_weight * s for d, s in scored.items())
