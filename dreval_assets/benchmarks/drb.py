"""DeepResearch Bench FACT (methods/drb.md): citation accuracy and effective citations."""
from __future__ import annotations

from ..core.metrics import MetricValue, not_available
from .evidence import ReportEvidence
from .suite import MetricSpec, Suite

TO_FACT = {"supported": "supported", "partial": "unsupported", "unsupported": "unsupported",
           "contradicted": "unsupported", "unknown": "unknown"}


def statement_url_pairs(evidence: ReportEvidence) -> list[str]:
    """FACT labels of distinct (statement, URL) pairs: statements deduplicated per URL."""
    seen: set[tuple[str, str]] = set()  # (representative claim, URL)
    labels = []
    for claim in evidence.cited_claims:
        first = evidence.duplicate_of.get(claim.claim_id, claim.claim_id)
        for v in claim.cited_verdicts():
            if not v.source.startswith("[") and (first, v.source) not in seen:
                seen.add((first, v.source))
                labels.append(TO_FACT[v.verdict])
    return labels


def compute(evidence: ReportEvidence) -> list[MetricValue]:
    j = evidence.judge
    labels = statement_url_pairs(evidence)
    supported, unsupported = labels.count("supported"), labels.count("unsupported")
    effective = MetricValue("drb", "effective_citations", float(supported), "count", len(labels),
                            detail=f"pairs={len(labels)}, unknown={labels.count('unknown')}",
                            policy="supported statement-URL pairs of this task (reported per task, zeros kept; "
                                   "the reference code divides by tasks that have citations)", judge=j)
    if supported + unsupported == 0:
        if evidence.citation_style == "bibliography_only":
            reason = "a bibliography but no inline citations: no statement-URL pairs (reference code scores 0)"
        elif not labels:
            reason = "no statement-URL pairs"
        else:
            reason = "every cited URL was unreadable"
        bucket = "data_accessibility" if labels else "model_failure"
        return [not_available("drb", "fact_accuracy", "0-100", bucket, reason, j), effective]
    accuracy = MetricValue("drb", "fact_accuracy", 100 * supported / (supported + unsupported), "0-100",
                           supported + unsupported, detail=f"supported={supported}, unsupported={unsupported}",
                           policy="supported / (supported + unsupported); unknown left out; partial and "
                                  "contradicted count as unsupported", judge=j)
    return [accuracy, effective]


SUITE = Suite(
    "drb", "DeepResearch Bench FACT",
    (MetricSpec("fact_accuracy", "0-100", True, "supported / (supported + unsupported) statement-URL pairs"),
     MetricSpec("effective_citations", "count", True, "supported statement-URL pairs per task")),
    compute, headline=("fact_accuracy", "effective_citations"))


def race_score(target: dict[str, float], reference: dict[str, float], weights: dict[str, float]) -> float:
    """RACE = T / (T + R) with T = sum W_d t_d and R = sum W_d r_d (0.5 = parity with the reference)."""
    t = sum(weights[d] * target[d] for d in weights)
    r = sum(weights[d] * reference[d] for d in weights)
    if t + r == 0:
        raise ValueError("target and reference both score 0: RACE is undefined")
    return t / (t + r)


def weighted_criteria(scores: list[float], weights: list[float]) -> float:
    """A dimension's criterion scores (0-10) averaged with the criteria weights."""
    if not scores or len(scores) != len(weights) or sum(weights) <= 0:
        raise ValueError("criteria scores and positive weights must align")
    return sum(s * w for s, w in zip(scores, weights)) / sum(weights)
