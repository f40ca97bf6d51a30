"""MiroEval agentic factuality (methods/miroeval.md): RIGHT / WRONG / CONFLICT / UNKNOWN per statement.

Evidence per statement: its cited pages first; when they give nothing decisive, the best page of the
task's sandbox (origin `sandbox`); task attachments (origin `attachment`) when readable. CONFLICT is
not a verdict of one source: it marks web evidence and attachment evidence that disagree.
"""
from __future__ import annotations

from ..core.metrics import MetricValue, not_available
from .evidence import ClaimEvidence, ReportEvidence
from .suite import MetricSpec, Suite

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


def compute(evidence: ReportEvidence) -> list[MetricValue]:
    j = evidence.judge
    statements = [c for c in evidence.claims if c.kind != "figure_caption"]
    names = ("factuality", "right", "wrong", "conflict", "unknown")
    if not statements:
        return [not_available("miroeval", m, "0-100" if m == "factuality" else "count", "model_failure",
                              "the report has no verifiable statements", j) for m in names]
    partial_as = evidence.policy("miroeval.partial", "UNKNOWN")
    labels = [label(c, partial_as) for c in statements]
    counts = {k: labels.count(k) for k in ("RIGHT", "WRONG", "CONFLICT", "UNKNOWN")}
    detail = ", ".join(f"{k}={v}" for k, v in counts.items())
    policy = (f"evidence: cited pages, then the sandbox, then attachments; partial counts as {partial_as} "
              "(miroeval.partial = UNKNOWN | RIGHT)")
    n = len(statements)
    return [MetricValue("miroeval", "factuality", 100 * counts["RIGHT"] / n, "0-100", n, detail=detail,
                        policy=policy, judge=j)] + [
        MetricValue("miroeval", k.lower(), float(v), "count", n, detail=detail, policy=policy, judge=j)
        for k, v in counts.items()]


SUITE = Suite(
    "miroeval", "MiroEval factuality",
    (MetricSpec("factuality", "0-100", True, "RIGHT / all statements"),
     MetricSpec("right", "count", True, "statements the evidence supports"),
     MetricSpec("wrong", "count", True, "statements the evidence contradicts"),
     MetricSpec("conflict", "count", True, "statements where web and attachment evidence disagree"),
     MetricSpec("unknown", "count", True, "statements no evidence decides")),
    compute, headline=("factuality", "right", "wrong", "conflict", "unknown"))


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
