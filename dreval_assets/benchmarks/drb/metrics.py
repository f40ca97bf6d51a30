"""DeepResearch Bench (methods/drb.md): RACE against the reference report, and FACT citation
accuracy and effective citations.

RACE: per dimension the criteria-weighted means t_d (report) and r_d (reference) of the 0-10
criterion scores; per-dimension score t_d / (t_d + r_d); RACE = T / (T + R) with T = sum W_d t_d.
Stored x100 (0.5 = parity with the reference becomes 50)."""
from __future__ import annotations

from ...core.metrics import MetricValue, not_available
from ..evidence import NOTHING_JUDGED_RULE, ReportEvidence
from ..suite import MetricSpec, Suite, judgment_failure

TO_FACT = {"supported": "supported", "partial": "unsupported", "unsupported": "unsupported",
           "contradicted": "unsupported", "unknown": "unknown"}


def statement_url_pairs(evidence: ReportEvidence) -> list[str]:
    """FACT labels of distinct (statement, URL) pairs: statements deduplicated per URL. A pair never
    judged (unread page, failed call) is `unread`: like `unknown` it stays out of the accuracy."""
    seen: set[tuple[str, str]] = set()  # (representative claim, URL)
    labels = []
    for claim in evidence.cited_claims:
        first = evidence.duplicate_of.get(claim.claim_id, claim.claim_id)
        for v in claim.cited_verdicts():
            if not v.source.startswith("[") and (first, v.source) not in seen:
                seen.add((first, v.source))
                labels.append("unread" if v.na_reason else TO_FACT[v.verdict])
    return labels


DIMENSIONS = ("comprehensiveness", "insight", "instruction_following", "readability")


def compute(evidence: ReportEvidence) -> list[MetricValue]:
    return race_metrics(evidence) + fact_metrics(evidence)


def race_metrics(evidence: ReportEvidence) -> list[MetricValue]:
    j = evidence.judge
    names = (*DIMENSIONS, "race")

    def all_na(bucket: str, reason: str) -> list[MetricValue]:
        return [not_available("drb", m, "0-100", bucket, reason, j) for m in names]

    criteria = evidence.inputs.get("drb.race_criteria")
    if criteria is None:
        return all_na("pipeline_failure", "the task has no RACE criteria")
    if not evidence.has_reference:
        return all_na("pipeline_failure", "the task has no reference report")
    scores = evidence.rubric("drb.race")
    if not scores:
        return all_na("pipeline_failure", "RACE was not judged")
    target, reference = {}, {}
    for dim in criteria.dimension_weights:
        listed = criteria.criteria.get(dim, [])
        ids = [f"{dim}.c{n}" for n in range(1, len(listed) + 1)]
        t = [scores.get(f"{i}.target") for i in ids]
        r = [scores.get(f"{i}.reference") for i in ids]
        weights = [c.weight for c in listed]
        if sum(weights) <= 0 or any(v is None for v in (*t, *r)):
            continue
        target[dim], reference[dim] = weighted_criteria(t, weights), weighted_criteria(r, weights)
    text = {1.0: "the release's cleaned article", 0.0: "citations stripped by our parser"}.get(
        scores.get("target_text"), "not recorded")
    policy = (f"T/(T+R) x100 over criteria-weighted dimension means; order: "
              f"{evidence.policy('drb.race.position_bias')}; report text scored: {text}")
    rows = []
    for dim in names[:-1]:
        if dim not in target:
            rows.append(not_available("drb", dim, "0-100", *_unscored(dim, criteria, evidence), j))
        elif target[dim] + reference[dim] == 0:
            rows.append(not_available("drb", dim, "0-100", "pipeline_failure",
                                      "report and reference both score 0: the ratio is undefined", j))
        else:
            rows.append(MetricValue("drb", dim, 100 * target[dim] / (target[dim] + reference[dim]), "0-100",
                                    len(criteria.criteria.get(dim, [])),
                                    detail=f"t={target[dim]:.2f}, r={reference[dim]:.2f}", policy=policy, judge=j))
    missing = [d for d in criteria.dimension_weights if d not in target]
    if missing:
        return rows + [not_available("drb", "race", "0-100", *judgment_failure(
            evidence, "drb.race", f"dimension(s) not fully scored: {', '.join(missing)}"), j)]
    try:
        value = race_score(target, reference, criteria.dimension_weights)
    except ValueError as exc:
        return rows + [not_available("drb", "race", "0-100", "pipeline_failure", str(exc), j)]
    weights = ", ".join(f"{d}={w:.2f}" for d, w in criteria.dimension_weights.items())
    return rows + [MetricValue("drb", "race", 100 * value, "0-100", sum(len(v) for v in criteria.criteria.values()),
                               detail=f"dimension weights {weights}", policy=policy, judge=j)]


def _unscored(dim: str, criteria, evidence: ReportEvidence) -> tuple[str, str]:
    """(bucket, reason) for a dimension without a score."""
    if dim not in criteria.dimension_weights:
        return "pipeline_failure", "the task's criteria have no such dimension"
    if sum(c.weight for c in criteria.criteria.get(dim, [])) <= 0:
        return "pipeline_failure", "the dimension has no criteria with positive weight"
    return judgment_failure(evidence, f"drb.race.{dim}", "the judge did not score every criterion of this dimension")


def fact_metrics(evidence: ReportEvidence) -> list[MetricValue]:
    j = evidence.judge
    coverage = evidence.coverage(evidence.cited_claims)
    if coverage.nothing_judged:
        return [coverage.not_available("drb", m, scale, j)
                for m, scale in (("fact_accuracy", "0-100"), ("effective_citations", "count"))]
    labels = statement_url_pairs(evidence)
    supported, unsupported = labels.count("supported"), labels.count("unsupported")
    pairs = (f"pairs={len(labels)}, unknown={labels.count('unknown')}, unread={labels.count('unread')}; "
             f"{coverage.text()}")
    effective = coverage.carried(MetricValue(
        "drb", "effective_citations", float(supported), "count", len(labels), detail=pairs,
        policy="supported statement-URL pairs of this task (a task with no pair counts 0 items: the reference "
               "code's mean leaves it out, policy drb.effective_citations.aggregate); "
               f"{NOTHING_JUDGED_RULE}", judge=j))
    if supported + unsupported == 0:
        if evidence.citation_style == "bibliography_only":  # the system's: it marks no statement
            bucket, reason = "model_failure", ("a bibliography but no inline citations: no statement-URL pairs "
                                               "(reference code scores 0)")
        elif not labels:  # cites only indices with no URL, or nothing at all
            bucket, reason = "model_failure", "no statement-URL pairs"
        else:  # the judge's "unknown": pages it could not read
            bucket, reason = "data_accessibility", f"no statement-URL pair was decided (all unknown); {pairs}"
        return [not_available("drb", "fact_accuracy", "0-100", bucket, reason, j), effective]
    accuracy = MetricValue("drb", "fact_accuracy", 100 * supported / (supported + unsupported), "0-100",
                           supported + unsupported,
                           detail=f"supported={supported}, unsupported={unsupported}; {pairs}",
                           policy="supported / (supported + unsupported); unknown and unread left out; partial and "
                                  "contradicted count as unsupported", judge=j)
    return [coverage.carried(accuracy), effective]


SUITE = Suite(
    "drb", "DeepResearch Bench RACE + FACT",
    (*(MetricSpec(d, "0-100", True, f"RACE {d.replace('_', ' ')}: t/(t+r) against the reference report")
       for d in DIMENSIONS),
     MetricSpec("race", "0-100", True, "T/(T+R) over the task's weighted dimensions (50 = parity with the reference)"),
     MetricSpec("fact_accuracy", "0-100", True, "supported / (supported + unsupported) statement-URL pairs", cites=True,
                aggregate="micro", aggregate_policy="drb.fact_accuracy.aggregate", claims=True),
     MetricSpec("effective_citations", "count", True, "supported statement-URL pairs per task with citations",
                cites=True, aggregate="mean_with_items", aggregate_policy="drb.effective_citations.aggregate",
                claims=True)),
    compute, headline=("race", "fact_accuracy", "effective_citations"))


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
