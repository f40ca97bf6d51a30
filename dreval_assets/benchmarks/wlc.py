"""Wiki Live Challenge reference metrics (methods/wlc.md): Ref. Acc., Ref. Conf., leakage."""
from __future__ import annotations

from urllib.parse import urlsplit

from ..core.metrics import MERGE_POLICY, MetricValue, not_available
from .evidence import ReportEvidence
from .suite import MetricSpec, Suite


def cites_wikipedia(urls: tuple[str, ...]) -> bool:
    for url in urls:
        host = (urlsplit(url).hostname or "").lower()
        if host == "wikipedia.org" or host.endswith(".wikipedia.org"):
            return True
    return False


def compute(evidence: ReportEvidence) -> list[MetricValue]:
    j = evidence.judge
    statements = [c for c in evidence.cited_claims if c.kind in ("sentence", "table_row")]
    if not statements:
        reason = ("a bibliography but no inline citations" if evidence.citation_style == "bibliography_only"
                  else "no statement carries a citation")
        return [not_available("wlc", m, "0-100", "model_failure", reason, j if m != "leakage" else "none")
                for m in ("ref_acc", "ref_conf", "leakage")]
    leaked = sum(1 for c in statements if cites_wikipedia(c.urls))
    leakage = MetricValue("wlc", "leakage", 100 * leaked / len(statements), "0-100", len(statements),
                          detail=f"{leaked} of {len(statements)} statements cite Wikipedia",
                          policy="host wikipedia.org or a subdomain")
    labels = [c.merged() or "unknown" for c in statements]
    denominator = evidence.policy("wlc.ref_acc.denominator", "drop_unreachable")
    evaluated = [v for v in labels if v != "unknown"] if denominator == "drop_unreachable" else labels
    policy = (f"denominator: {denominator} (wlc.ref_acc.denominator = drop_unreachable | all); "
              f"only 'supported' counts as fully supported; {MERGE_POLICY}")
    if not evaluated:
        reason = "every cited source was unreachable"
        return [not_available("wlc", "ref_acc", "0-100", "data_accessibility", reason, j),
                not_available("wlc", "ref_conf", "0-100", "data_accessibility", reason, j), leakage]
    detail = f"evaluated={len(evaluated)} of {len(statements)} statements"
    return [
        MetricValue("wlc", "ref_acc", 100 * evaluated.count("supported") / len(evaluated), "0-100", len(evaluated),
                    detail=detail, policy=policy, judge=j),
        MetricValue("wlc", "ref_conf", 100 * evaluated.count("contradicted") / len(evaluated), "0-100",
                    len(evaluated), detail=detail, policy=policy, judge=j),
        leakage,
    ]


SUITE = Suite(
    "wlc", "Wiki Live Challenge (reference metrics)",
    (MetricSpec("ref_acc", "0-100", True, "share of evaluated statements fully supported by their citations"),
     MetricSpec("ref_conf", "0-100", True, "share of evaluated statements contradicting their own citation"),
     MetricSpec("leakage", "0-100", False, "share of statements citing Wikipedia despite the ban")),
    compute, headline=("ref_acc", "ref_conf", "leakage"))


def combine_orders(first_order: str, swapped_order: str) -> str:
    """Both-orders policy: a win counts only when both presentations agree, otherwise a tie.

    Each argument is the winner as judged in that order: "generated", "reference" or "tie"."""
    return first_order if first_order == swapped_order else "tie"


def win_rates(outcomes: dict[str, list[str]]) -> dict[str, float]:
    """Per category and overall (micro: all wins over all criteria, as released) generated-win rates."""
    rates = {cat: sum(o == "generated" for o in results) / len(results) for cat, results in outcomes.items() if results}
    every = [o for results in outcomes.values() for o in results]
    if not every:
        raise ValueError("no criterion outcomes")
    rates["overall"] = sum(o == "generated" for o in every) / len(every)
    return rates
