"""MiroEval agentic factuality (methods/miroeval.md): RIGHT / WRONG / CONFLICT / UNKNOWN per statement.

Evidence per statement: its cited pages first; when they give nothing decisive, the best page of the
task's sandbox (origin `sandbox`); task attachments (origin `attachment`) when readable. CONFLICT is
not a verdict of one source: it marks web evidence and attachment evidence that disagree.
"""
from __future__ import annotations

from ...core.metrics import MetricValue, not_available
from ..evidence import NOTHING_JUDGED_RULE, ClaimEvidence, ReportEvidence
from ..suite import MetricSpec, Suite, judgment_failure

DECISIVE = ("supported", "contradicted")


def label(claim: ClaimEvidence, partial_as: str = "UNKNOWN") -> str:
    web = claim.merged("cited")
    if web not in DECISIVE:
        web = claim.merged("sandbox") or web
    attachment = claim.merged("attachment")
    if web in DECISIVE and attachment in DECISIVE and web != attachment:
        return "CONFLICT"
    decided = web if web in DECISIVE or web == "partial" else (attachment or web)
    return {"supported": "RIGHT", "contradicted": "WRONG", "partial": partial_as}.get(decided, "UNKNOWN")


SYNTHESIS_DIMENSIONS = ("coverage", "insight", "instruction_following", "clarity", "specificity", "grounding")


def synthesis_metrics(evidence: ReportEvidence) -> list[MetricValue]:
    """Per dimension the criteria-weighted mean (0-10 -> 0-100); synthesis = weighted total over the
    dimensions that scored, weights renormalised over them."""
    j = evidence.judge
    names = (*SYNTHESIS_DIMENSIONS, "synthesis")
    rubric = evidence.inputs.get("miroeval.rubric")
    if rubric is None:
        return [not_available("miroeval", m, "0-100", "pipeline_failure", "the task has no generated rubric", j)
                for m in names]
    scores = evidence.rubric("miroeval")
    dimension_scores: dict[str, float | None] = {}
    for dim in rubric.dimensions:
        pairs = [(scores.get(f"{dim.dimension_id}.{c.criterion_id}"), c.weight) for c in dim.criteria]
        scored = [(s, w) for s, w in pairs if s is not None]
        weight = sum(w for _, w in scored)
        dimension_scores[dim.dimension_id] = sum(s * w for s, w in scored) / weight if scored and weight else None
    rows = []
    for name in SYNTHESIS_DIMENSIONS:
        value = dimension_scores.get(name)
        if name not in dimension_scores:
            rows.append(not_available("miroeval", name, "0-100", "pipeline_failure", "not a dimension of this rubric", j))
        elif value is None:
            rows.append(not_available("miroeval", name, "0-100",
                                      *judgment_failure(evidence, f"miroeval.{name}", "no criterion was scored"), j))
        else:
            rows.append(MetricValue("miroeval", name, 10 * value, "0-100", 1, policy="criteria-weighted mean, x10", judge=j))
    total = synthesis_total(dimension_scores, rubric.weights)
    dynamic = [d.dimension_id for d in rubric.dimensions if d.dynamic]
    weights = ", ".join(f"{k}={v:.2f}" for k, v in rubric.weights.items())
    rows.append(not_available("miroeval", "synthesis", "0-100", *judgment_failure(evidence, "miroeval",
                                                                                  "no dimension scored"), j)
                if total is None else
                MetricValue("miroeval", "synthesis", total, "0-100", len(dimension_scores), detail=f"weights {weights}",
                            policy=f"weights renormalised over scored dimensions; task-specific {dynamic} capped "
                                   "at 0.20", judge=j))
    return rows


def compute(evidence: ReportEvidence) -> list[MetricValue]:
    return synthesis_metrics(evidence) + factuality_metrics(evidence)


def factuality_metrics(evidence: ReportEvidence) -> list[MetricValue]:
    j = evidence.judge
    statements = [c for c in evidence.claims if c.kind != "figure_caption"]
    names = ("factuality", "right", "wrong", "conflict", "unknown")
    if not statements:
        return [not_available("miroeval", m, "0-100" if m == "factuality" else "count", "model_failure",
                              "the report has no verifiable statements", j) for m in names]
    coverage = evidence.coverage(statements, origins=None)  # cited, searched and attachment evidence
    if coverage.nothing_judged:
        return [coverage.not_available("miroeval", m, "0-100" if m == "factuality" else "count", j) for m in names]
    partial_as = evidence.policy("miroeval.partial")
    labels = [label(c, partial_as) for c in statements]
    counts = {k: labels.count(k) for k in ("RIGHT", "WRONG", "CONFLICT", "UNKNOWN")}
    detail = ", ".join(f"{k}={v}" for k, v in counts.items()) + f"; {coverage.text()}"
    policy = (f"evidence: cited pages, then the sandbox, then attachments; partial counts as {partial_as} "
              f"(miroeval.partial = UNKNOWN | RIGHT); {NOTHING_JUDGED_RULE}")
    n = len(statements)
    return [MetricValue("miroeval", "factuality", 100 * counts["RIGHT"] / n, "0-100", n, detail=detail,
                        policy=policy, judge=j)] + [
        MetricValue("miroeval", k.lower(), float(v), "count", n, detail=detail, policy=policy, judge=j)
        for k, v in counts.items()]


SUITE = Suite(
    "miroeval", "MiroEval (adaptive synthesis, factuality)",
    (*(MetricSpec(d, "0-100", True, f"adaptive rubric dimension {d}") for d in SYNTHESIS_DIMENSIONS),
     MetricSpec("synthesis", "0-100", True, "adaptive synthesis quality: weighted over scored dimensions"),
     MetricSpec("factuality", "0-100", True, "RIGHT / all statements"),
     MetricSpec("right", "count", True, "statements the evidence supports", better=0),
     MetricSpec("wrong", "count", True, "statements the evidence contradicts", better=-1),
     MetricSpec("conflict", "count", True, "statements where web and attachment evidence disagree", better=-1),
     MetricSpec("unknown", "count", True, "statements no evidence decides", better=0)),
    compute, headline=("synthesis", "factuality", "right", "wrong", "conflict", "unknown", *SYNTHESIS_DIMENSIONS))


DYNAMIC_DIMENSION_CAP = 0.20


def cap_dynamic_weights(weights: dict[str, float], dynamic: set[str]) -> dict[str, float]:
    """Normalise dimension weights, holding each task-specific dimension at most at 0.20; the excess
    goes to the other dimensions in proportion (the cap the reference prompt states, enforced)."""
    total = sum(max(0.0, w) for w in weights.values())
    if total <= 0:
        raise ValueError("dimension weights must have a positive sum")
    result = {k: max(0.0, w) / total for k, w in weights.items()}
    for _ in range(len(result)):
        over = {k for k in dynamic if result.get(k, 0) > DYNAMIC_DIMENSION_CAP + 1e-12}
        if not over:
            break
        excess = sum(result[k] - DYNAMIC_DIMENSION_CAP for k in over)
        for k in over:
            result[k] = DYNAMIC_DIMENSION_CAP
        free = {k: v for k, v in result.items() if k not in dynamic or v < DYNAMIC_DIMENSION_CAP}
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
