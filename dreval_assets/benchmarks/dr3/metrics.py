"""DR³-Eval (methods/dr3.md): FA over claim-source pairs, CC over the necessary docs, IF, DQ, and the
published Avg = equal-weight mean of IR, CC, FA, IF, DQ. IR (information recall against the gold
insights) is N/A until it is built, so Avg says it lacks IR."""
from __future__ import annotations

from ...core.metrics import MetricValue, not_available
from ...fetch.urls import normalise_title, url_key
from ..evidence import NOTHING_JUDGED_RULE, ReportEvidence, judged_coverage
from ..suite import Composite, MetricSpec, Suite, judged_checklist, judgment_failure, mean_of_all


def factual_accuracy(evidence: ReportEvidence) -> MetricValue:
    """FA: 1 per supported (claim, source) pair, else 0; unknown pairs count 0 by default."""
    pairs = [v for c in evidence.cited_claims for v in c.cited_verdicts() if not v.source.startswith("[")]
    if not pairs:
        return not_available("dr3", "fa", "0-100", "model_failure", "no claim-source pairs to check", evidence.judge)
    coverage = judged_coverage(pairs)
    if coverage.nothing_judged:
        return coverage.not_available("dr3", "fa", "0-100", evidence.judge)
    policy = evidence.policy("dr3.fa.unknown")
    counted = pairs if policy == "zero" else [v for v in pairs if v.verdict != "unknown"]
    unknown = sum(1 for v in pairs if v.verdict == "unknown")
    if not counted:
        return not_available("dr3", "fa", "0-100", "model_failure", "the judge decided no pair (all unknown) and "
                             "unknown pairs are excluded", evidence.judge)
    value = 100 * sum(1 for v in counted if v.verdict == "supported") / len(counted)
    return MetricValue("dr3", "fa", value, "0-100", len(counted),
                       detail=f"pairs={len(pairs)}, unknown={unknown}; {coverage.text()}",
                       policy=f"unknown pairs: {policy} (dr3.fa.unknown = zero | exclude); {NOTHING_JUDGED_RULE}",
                       judge=evidence.judge)


def citation_coverage(evidence: ReportEvidence) -> MetricValue:
    """CC: share of the supportive sandbox documents the report cites, by URL then normalised title."""
    necessary = [d for d in evidence.sandbox if d.role == "supportive"]
    if not necessary:
        return not_available("dr3", "cc", "0-100", "pipeline_failure",
                             "the task has no supportive documents to cover")
    cited_urls = {url_key(r["url"]) for r in evidence.references if r.get("url")}
    cited_urls |= {url_key(u) for c in evidence.claims for u in c.urls}
    cited_titles = {normalise_title(r.get("title") or "") for r in evidence.references} - {""}
    covered = [d for d in necessary
               if url_key(d.url) in cited_urls or (d.title and normalise_title(d.title) in cited_titles)]
    return MetricValue("dr3", "cc", 100 * len(covered) / len(necessary), "0-100", len(necessary),
                       detail=f"cited {len(covered)} of {len(necessary)} supportive documents",
                       policy="match by normalised URL, then normalised title; no judge")


def instruction_following(evidence: ReportEvidence) -> MetricValue:
    """IF: share of checklist items satisfied; a half-met item counts by policy (default 0)."""
    scored, missing = judged_checklist(evidence, "dr3", "if")
    if missing:
        return missing
    partial = evidence.policy("dr3.if.partial")
    credit = {1.0: 1.0, 0.5: 0.5 if partial == "half" else 0.0}
    value = 100 * sum(credit.get(c, 0.0) for c in scored) / len(scored)
    return MetricValue("dr3", "if", value, "0-100", len(scored), detail=f"items={len(evidence.checklist)}",
                       policy=f"satisfied = fully met; partial counts {partial} (dr3.if.partial = zero | half)",
                       judge=evidence.judge)


def depth_quality(evidence: ReportEvidence) -> MetricValue:
    """DQ: the depth rubric's 1-10 score, x10."""
    score = evidence.rubric("dr3.dq").get("depth")
    if score is None:
        what = "the depth rubric was not scored"
        reason, detail = (judgment_failure(evidence, "dr3.dq", what) if evidence.rubric("dr3.dq")
                          else ("pipeline_failure", what))
        return not_available("dr3", "dq", "0-100", reason, detail, evidence.judge)
    return MetricValue("dr3", "dq", 10 * score, "0-100", 1, policy="1-10 -> 0-100 (x10)", judge=evidence.judge)


def compute(evidence: ReportEvidence) -> list[MetricValue]:
    return [factual_accuracy(evidence), citation_coverage(evidence), instruction_following(evidence),
            depth_quality(evidence), *information_recall(evidence)]


def information_recall(evidence: ReportEvidence) -> list[MetricValue]:
    """IR_UF, IR_SC and IR: N/A until recall against the gold insights is judged."""
    why = "information recall against the task's gold insights is not built yet"
    return [not_available("dr3", m, "0-100", "pipeline_failure", why, evidence.judge) for m in ("ir_uf", "ir_sc", "ir")]


SUITE = Suite(
    "dr3", "DR³-Eval",
    (MetricSpec("fa", "0-100", True, "factual accuracy: supported share of claim-source pairs", cites=True,
                claims=True),
     MetricSpec("cc", "0-100", False, "citation coverage: cited share of the necessary documents", cites=True),
     MetricSpec("if", "0-100", True, "instruction following: share of checklist items satisfied"),
     MetricSpec("dq", "0-100", True, "depth quality: depth rubric 1-10, x10"),
     MetricSpec("ir_uf", "0-100", True, "information recall of the insights from the user files (not built)"),
     MetricSpec("ir_sc", "0-100", True, "information recall of the insights from the sandbox corpus (not built)"),
     MetricSpec("ir", "0-100", True, "information recall: mean of IR_UF and IR_SC (not built)"),
     MetricSpec("avg", "0-100", True, "DR³ Avg: equal-weight mean of IR, CC, FA, IF, DQ", aggregate="of_parts")),
    compute, headline=("avg", "ir", "cc", "fa", "if", "dq", "ir_uf", "ir_sc"),
    composites=(Composite("avg", ("ir", "cc", "fa", "if", "dq"), mean_of_all,
                          "Avg = mean(IR, CC, FA, IF, DQ), equal weights (paper)"),))
