"""Wiki Live Challenge reference metrics (methods/wlc.md): Ref. Acc., Ref. Conf., leakage."""
from __future__ import annotations

from urllib.parse import urlsplit

from ...core.metrics import MERGE_POLICY, MetricValue, not_available
from ..evidence import NOTHING_JUDGED_RULE, ReportEvidence
from ..suite import MetricSpec, Suite, judgment_failure


def cites_wikipedia(urls: tuple[str, ...]) -> bool:
    for url in urls:
        host = (urlsplit(url).hostname or "").lower()
        if host == "wikipedia.org" or host.endswith(".wikipedia.org"):
            return True
    return False


def writing_metrics(evidence: ReportEvidence) -> list[MetricValue]:
    """Win rates of the report against the reference article per category, and overall (micro)."""
    j = evidence.judge
    names = ("well_written", "broad", "neutral", "writing")
    outcomes: dict[str, list[str]] = {}
    missing = 0
    for key, score in evidence.rubric_scores.items():
        parts = key.split(".")
        if len(parts) == 3 and parts[0] == "wlc" and parts[1] in ("well_written", "broad", "neutral"):
            if score is None:
                missing += 1
                continue
            outcomes.setdefault(parts[1], []).append({1.0: "generated", 0.0: "reference"}.get(score, "tie"))
    if not outcomes:
        reason, detail = (judgment_failure(evidence, "wlc", "no criterion was judged") if missing
                          else ("pipeline_failure", "no reference article to compare with"))
        return [not_available("wlc", m, "0-100", reason, detail, j) for m in names]
    rates = win_rates(outcomes)
    policy = "generated wins / criteria judged; overall micro-averaged; ties count as no win"
    counts = {c: len(v) for c, v in outcomes.items()}
    rows = [MetricValue("wlc", c, 100 * rates[c], "0-100", counts[c], detail=f"unjudged={missing}", policy=policy, judge=j)
            if c in rates
            else not_available("wlc", c, "0-100", *judgment_failure(evidence, f"wlc.{c}", "no criterion judged"), j)
            for c in ("well_written", "broad", "neutral")]
    return rows + [MetricValue("wlc", "writing", 100 * rates["overall"], "0-100", sum(counts.values()),
                               detail=f"unjudged={missing}", policy=policy, judge=j)]


def compute(evidence: ReportEvidence) -> list[MetricValue]:
    return writing_metrics(evidence) + reference_metrics(evidence)


def reference_metrics(evidence: ReportEvidence) -> list[MetricValue]:
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
    coverage = evidence.coverage(statements)
    if coverage.nothing_judged:
        return [coverage.not_available("wlc", m, "0-100", j) for m in ("ref_acc", "ref_conf")] + [leakage]
    labels = [c.merged() or "unknown" for c in statements]
    denominator = evidence.policy("wlc.ref_acc.denominator")
    evaluated = [v for v in labels if v != "unknown"] if denominator == "drop_unreachable" else labels
    policy = (f"denominator: {denominator} (wlc.ref_acc.denominator = drop_unreachable | all); "
              f"only 'supported' counts as fully supported; {NOTHING_JUDGED_RULE}; {MERGE_POLICY}")
    if not evaluated:
        reason = f"no statement was decided and undecided ones are dropped; {coverage.text()}"
        return [not_available("wlc", "ref_acc", "0-100", "model_failure", reason, j),
                not_available("wlc", "ref_conf", "0-100", "model_failure", reason, j), leakage]
    detail = f"evaluated={len(evaluated)} of {len(statements)} statements; {coverage.text()}"
    return [
        MetricValue("wlc", "ref_acc", 100 * evaluated.count("supported") / len(evaluated), "0-100", len(evaluated),
                    detail=detail, policy=policy, judge=j),
        MetricValue("wlc", "ref_conf", 100 * evaluated.count("contradicted") / len(evaluated), "0-100",
                    len(evaluated), detail=detail, policy=policy, judge=j),
        leakage,
    ]


SUITE = Suite(
    "wlc", "Wiki Live Challenge (reference metrics)",
    (MetricSpec("well_written", "0-100", True, "win rate against the reference on the 21 well-written criteria"),
     MetricSpec("broad", "0-100", True, "win rate on the 8 broad-coverage criteria"),
     MetricSpec("neutral", "0-100", True, "win rate on the 10 neutrality criteria"),
     MetricSpec("writing", "0-100", True, "win rate over all 39 criteria (micro)"),
     MetricSpec("ref_acc", "0-100", True, "share of evaluated statements fully supported by their citations", cites=True),
     MetricSpec("ref_conf", "0-100", True, "share of evaluated statements contradicting their own citation", cites=True, better=-1),
     MetricSpec("leakage", "0-100", False, "share of statements citing Wikipedia despite the ban", cites=True, better=-1)),
    compute, headline=("writing", "well_written", "broad", "neutral", "ref_acc", "ref_conf", "leakage"))


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
