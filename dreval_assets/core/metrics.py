"""Metric formulas over claim verdicts. Pure functions; every row says its policy and judge."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from .models import VERDICTS

# When a claim cites several sources, the best per-source verdict stands for the claim
# (Wiki Live's rule, support > conflict > not_support, extended to our five labels).
MERGE_ORDER = ("supported", "partial", "contradicted", "unsupported", "unknown")
MERGE_POLICY = "merge=best(supported>partial>contradicted>unsupported>unknown)"
TVIR_CREDIT = {"supported": 1.0, "partial": 0.5}  # everything else scores 0


@dataclass(frozen=True)
class ClaimFacts:
    """What the metrics need to know about one claim."""

    claim_id: str
    kind: str
    n_targets: int  # distinct cited URLs plus unresolvable indices


@dataclass(frozen=True)
class MetricValue:
    suite: str
    metric: str
    value: float | None
    scale: str
    n_items: int
    na_reason: str | None = None
    detail: str = ""
    policy: str = ""
    judge: str = "none"


def merge_verdicts(verdicts: Iterable[str]) -> str:
    labels = set(verdicts)
    bad = labels - set(VERDICTS)
    if bad:
        raise ValueError(f"unknown verdict label(s): {sorted(bad)}")
    return next((v for v in MERGE_ORDER if v in labels), "unknown")


def not_available(suite: str, metric: str, scale: str, reason: str, detail: str, judge: str = "none") -> MetricValue:
    return MetricValue(suite, metric, None, scale, 0, na_reason=reason, detail=detail, judge=judge)


def report_metrics(
    claims: Sequence[ClaimFacts],
    verdicts_by_claim: Mapping[str, Sequence[str]],
    unresolved_indices: Sequence[int],
    judge: str,
) -> list[MetricValue]:
    """The first metric set for one report whose text was readable."""
    merged = {cid: merge_verdicts(vs) for cid, vs in verdicts_by_claim.items() if vs}
    return [
        *core_metrics(claims, merged, unresolved_indices, judge),
        tvir_citation_support(claims, merged, judge),
    ]


def core_metrics(
    claims: Sequence[ClaimFacts], merged: Mapping[str, str], unresolved_indices: Sequence[int], judge: str
) -> list[MetricValue]:
    n = len(claims)
    rows = [
        MetricValue("core", "n_claims", float(n), "count", n, policy="parser claims of every kind"),
        MetricValue("core", "unresolved_citations", float(len(set(unresolved_indices))), "count",
                    len(set(unresolved_indices)), policy="distinct cited indices with no URL"),
    ]
    if n == 0:
        reason = "the report has no claims to check"
        return rows + [
            not_available("core", "supported_ratio", "0-100", "model_failure", reason, judge),
            not_available("core", "contradicted_ratio", "0-100", "model_failure", reason, judge),
            not_available("core", "citations_per_claim", "ratio", "model_failure", reason),
        ]
    counts = {v: sum(1 for c in claims if merged.get(c.claim_id) == v) for v in VERDICTS}
    policy = f"denominator=all claims incl. uncited; {MERGE_POLICY}"
    detail = ", ".join(f"{v}={counts[v]}" for v in VERDICTS) + f", uncited={n - len(merged)}"
    return rows + [
        MetricValue("core", "supported_ratio", 100.0 * counts["supported"] / n, "0-100", n,
                    detail=detail, policy=policy, judge=judge),
        MetricValue("core", "contradicted_ratio", 100.0 * counts["contradicted"] / n, "0-100", n,
                    detail=detail, policy=policy, judge=judge),
        MetricValue("core", "citations_per_claim", sum(c.n_targets for c in claims) / n, "ratio", n,
                    policy="distinct cited targets per claim, all claims"),
    ]


def tvir_citation_support(claims: Sequence[ClaimFacts], merged: Mapping[str, str], judge: str) -> MetricValue:
    """TVIR CS: 1 / 0.5 / 0 per fact–citation pair, mean ×100; no pair scores 0 as in the paper."""
    facts = [c for c in claims if c.kind in ("sentence", "table_row") and c.n_targets > 0]
    policy = f"unknown counts 0; no pairs => 0 (TVIR); figure captions excluded; {MERGE_POLICY}"
    if not facts:
        return MetricValue("tvir", "cs", 0.0, "0-100", 0, detail="no fact-citation pairs", policy=policy, judge=judge)
    labels = [merged.get(c.claim_id, "unknown") for c in facts]
    credit = sum(TVIR_CREDIT.get(v, 0.0) for v in labels)
    detail = f"pairs={len(facts)}, unknown={labels.count('unknown')}"
    return MetricValue("tvir", "cs", 100.0 * credit / len(facts), "0-100", len(facts),
                       detail=detail, policy=policy, judge=judge)


def unreadable_report_metrics(reason: str, detail: str, judge: str) -> list[MetricValue]:
    """Every metric of the first set, N/A, for a report that could not be read at all."""
    specs = [("core", "n_claims", "count"), ("core", "unresolved_citations", "count"),
             ("core", "supported_ratio", "0-100"), ("core", "contradicted_ratio", "0-100"),
             ("core", "citations_per_claim", "ratio"), ("tvir", "cs", "0-100")]
    judged = {"supported_ratio", "contradicted_ratio", "cs"}
    return [not_available(s, m, scale, reason, detail, judge if m in judged else "none") for s, m, scale in specs]
