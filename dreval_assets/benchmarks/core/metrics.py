"""Our own suite `core`: the claim counts and ratios every report gets, whatever its benchmark."""
from __future__ import annotations

from ...core.metrics import MERGE_POLICY, MetricValue, not_available
from ...core.models import VERDICTS
from ..evidence import NOTHING_JUDGED_RULE, UNREAD_RULE, ReportEvidence, unread
from ..suite import MetricSpec, Suite

def compute(evidence: ReportEvidence) -> list[MetricValue]:
    j = evidence.judge
    claims = evidence.claims
    n = len(claims)
    unresolved = {i for c in claims for i in c.unresolved}
    rows = [
        MetricValue("core", "n_claims", float(n), "count", n, policy="parser claims of every kind"),
        MetricValue("core", "unresolved_citations", float(len(unresolved)), "count", len(unresolved),
                    policy="distinct cited indices with no URL"),
    ]
    if n == 0:
        reason = "the report has no claims to check"
        return rows + [not_available("core", "supported_ratio", "0-100", "model_failure", reason, j),
                       not_available("core", "contradicted_ratio", "0-100", "model_failure", reason, j),
                       not_available("core", "citations_per_claim", "ratio", "model_failure", reason)]
    targets = sum(len(set(c.urls)) + len(set(c.unresolved)) for c in claims)
    per_claim = MetricValue("core", "citations_per_claim", targets / n, "ratio", n,
                            policy="distinct cited targets per claim, all claims")
    coverage = evidence.coverage()
    if coverage.nothing_judged:
        return rows + [coverage.not_available("core", m, "0-100", j)
                       for m in ("supported_ratio", "contradicted_ratio")] + [per_claim]
    counted = [c for c in claims if not unread(c.cited_verdicts())]
    merged = [c.merged() for c in counted]
    counts = {v: merged.count(v) for v in VERDICTS}
    policy = f"denominator=all claims incl. uncited; {UNREAD_RULE}; {MERGE_POLICY}; {NOTHING_JUDGED_RULE}"
    detail = (", ".join(f"{v}={counts[v]}" for v in VERDICTS) + f", uncited={merged.count(None)}, "
              f"not judged={n - len(counted)}; " + coverage.text())
    k = len(counted)
    return rows + [
        coverage.carried(MetricValue("core", "supported_ratio", 100 * counts["supported"] / k, "0-100", k,
                                     detail=detail, policy=policy, judge=j)),
        coverage.carried(MetricValue("core", "contradicted_ratio", 100 * counts["contradicted"] / k, "0-100", k,
                                     detail=detail, policy=policy, judge=j)),
        per_claim,
    ]


SUITE = Suite(
    "core", "dreval core",
    (MetricSpec("n_claims", "count", False, "claims (the parser's sentences, or the judge's statements)", better=0,
                claims=True),
     MetricSpec("unresolved_citations", "count", False, "distinct cited indices with no URL", cites=True, better=-1),
     MetricSpec("supported_ratio", "0-100", True, "supported claims / all claims", cites=True, claims=True),
     MetricSpec("contradicted_ratio", "0-100", True, "contradicted claims / all claims", cites=True, better=-1,
                claims=True),
     MetricSpec("citations_per_claim", "ratio", False, "distinct cited targets per claim", cites=True, better=0,
                claims=True)),
    compute, headline=("supported_ratio", "contradicted_ratio", "n_claims", "citations_per_claim",
                       "unresolved_citations"))
