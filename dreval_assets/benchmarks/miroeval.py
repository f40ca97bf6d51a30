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
