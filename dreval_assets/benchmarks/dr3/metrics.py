"""DR³-Eval (methods/dr3.md): FA over claim-source pairs, CC over the necessary docs, IF, DQ, and the
published Avg = equal-weight mean of IR, CC, FA, IF, DQ. IR_UF / IR_SC: share of the gold insights from
the user files / the sandbox the report covers (judged in judgments.py); IR = their mean."""
from __future__ import annotations

from dataclasses import replace

from ...core.metrics import MetricValue, not_applicable, not_available
from ...fetch.urls import normalise_title, url_key
from ..evidence import NOTHING_JUDGED_RULE, ReportEvidence, judged_coverage, most_retryable
from ..suite import Breakdown, Composite, MetricSpec, Suite, checklist_carried, judged_checklist, judgment_failure, \
    mean_of_all


NO_PAIR_RULE = ("no claim-citation pair => 0 (ours where the paper is silent, as TVIR CS); pairs none of which "
                "could be judged => N/A")


def factual_accuracy(evidence: ReportEvidence) -> MetricValue:
    """FA: 1 per supported (claim, source) pair, else 0; pairs the judge decided unknown count by
    policy (default 0); pairs never judged (unread page, failed call) are left out, never 0. A report
    citing nothing scores 0, so one lucky citation cannot make 100 from one pair."""
    pairs = [v for c in evidence.cited_claims for v in c.cited_verdicts() if not v.source.startswith("[")]
    policy = evidence.policy("dr3.fa.unknown")
    rules = f"unknown pairs: {policy} (dr3.fa.unknown = zero | exclude); {NO_PAIR_RULE}; {NOTHING_JUDGED_RULE}"
    if not pairs:
        return MetricValue("dr3", "fa", 0.0, "0-100", 0, detail="no claim-citation pairs", policy=rules,
                           judge=evidence.judge)
    coverage = judged_coverage(pairs)
    if coverage.nothing_judged:
        return coverage.not_available("dr3", "fa", "0-100", evidence.judge)
    judged = [v for v in pairs if v.na_reason is None]
    counted = judged if policy == "zero" else [v for v in judged if v.verdict != "unknown"]
    unknown = sum(1 for v in judged if v.verdict == "unknown")
    if not counted:  # the judge found every page unreadable (its "unknown"), and those are excluded
        return not_available("dr3", "fa", "0-100", "data_accessibility", "the judge decided no pair (all unknown: "
                             f"pages it could not read) and unknown pairs are excluded; {coverage.text()}",
                             evidence.judge)
    value = 100 * sum(1 for v in counted if v.verdict == "supported") / len(counted)
    return coverage.carried(MetricValue("dr3", "fa", value, "0-100", len(counted),
                                        detail=f"pairs={len(pairs)}, unknown={unknown}; {coverage.text()}",
                                        policy=rules, judge=evidence.judge))


def corpus_composition(evidence: ReportEvidence) -> str:
    """`corpus 128k: 5 supportive, 0 distractor, 120 noise`: the documents of each role in the corpus
    this run searched (every corpus of the task when it names none)."""
    docs = [d for d in evidence.sandbox if not evidence.corpus or not d.corpora or evidence.corpus in d.corpora]
    counts = ", ".join(f"{sum(1 for d in docs if d.role == role)} {role}" for role in ("supportive", "distractor", "noise"))
    return f"corpus {evidence.corpus or 'all sizes (the run names none)'}: {counts}"


def citation_coverage(evidence: ReportEvidence) -> MetricValue:
    """CC: share of the supportive sandbox documents the report cites, by URL then normalised title. The
    run's corpus (its sandbox size) must hold them all, as every published size does; one that lacks some
    is not the published sandbox: N/A data_accessibility, naming them."""
    necessary = [d for d in evidence.sandbox if d.role == "supportive"]
    if not necessary and evidence.benchmark != "dr3":  # another benchmark's task (DREVAL_SUITES): no sandbox
        return not_applicable("dr3", "cc", "0-100", f"a {evidence.benchmark} task has no DR³ supportive documents")
    if not necessary:
        return not_available("dr3", "cc", "0-100", "pipeline_failure",
                             "the task has no supportive documents to cover")
    absent = [d for d in necessary if evidence.corpus and d.corpora and evidence.corpus not in d.corpora]
    if absent:
        return not_available("dr3", "cc", "0-100", "data_accessibility",
                             f"the {evidence.corpus} corpus this run searched lacks {len(absent)} of {len(necessary)} "
                             f"supportive documents (every published size holds them all): "
                             f"{', '.join(repr(d.title) for d in absent[:3])}; {corpus_composition(evidence)}"[:500])
    cited_urls = {url_key(r["url"]) for r in evidence.references if r.get("url")}
    cited_urls |= {url_key(u) for c in evidence.claims for u in c.urls}
    cited_titles = {normalise_title(r.get("title") or "") for r in evidence.references} - {""}
    covered = [d for d in necessary
               if url_key(d.url) in cited_urls or (d.title and normalise_title(d.title) in cited_titles)]
    return MetricValue("dr3", "cc", 100 * len(covered) / len(necessary), "0-100", len(necessary),
                       detail=f"cited {len(covered)} of {len(necessary)} supportive documents; "
                              f"{corpus_composition(evidence)}",
                       policy="match by normalised URL, then normalised title; no judge")


def instruction_following(evidence: ReportEvidence) -> MetricValue:
    """IF: share of checklist items satisfied; a half-met item counts by policy (default 0)."""
    scored, missing = judged_checklist(evidence, "dr3", "if")
    if missing:
        return missing
    partial = evidence.policy("dr3.if.partial")
    credit = {1.0: 1.0, 0.5: 0.5 if partial == "half" else 0.0}
    value = 100 * sum(credit.get(c, 0.0) for c in scored) / len(scored)
    return checklist_carried(evidence, MetricValue(
        "dr3", "if", value, "0-100", len(scored), detail=f"items={len(evidence.checklist)}, judged={len(scored)}",
        policy=f"satisfied = fully met; partial counts {partial} (dr3.if.partial = zero | half)", judge=evidence.judge))


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


SOURCE_NAMES = {"uf": "the user files", "sc": "the sandbox corpus"}


def recall_of_source(evidence: ReportEvidence, source: str) -> MetricValue:
    """IR_UF / IR_SC: 100 x the credited share of this source's judged insights. By default only a
    full 1 counts (the reference code asks 1 / 0.5 / 0 and counts the 1s); policy dr3.ir.partial =
    half counts a 0.5 as half. No insight of this source: N/A data_accessibility, never 100."""
    metric, where = f"ir_{source}", SOURCE_NAMES[source]
    n_gold = (evidence.inputs.get("dr3.insights") or {}).get(source, 0)
    if not n_gold:
        return not_available("dr3", metric, "0-100", "data_accessibility",
                             f"the task has no gold insights from {where}", evidence.judge)
    credits = evidence.rubric(f"dr3.ir.{source}")
    scored = [c for c in credits.values() if c is not None]
    if not scored:
        what = f"no insight from {where} was judged"
        reason, detail = (judgment_failure(evidence, f"dr3.ir.{source}", what) if credits
                          else ("pipeline_failure", f"{what} (no insight_recall judgments)"))
        return not_available("dr3", metric, "0-100", reason, detail, evidence.judge)
    partial = evidence.policy("dr3.ir.partial")
    weight = {1.0: 1.0, 0.5: 0.5 if partial == "half" else 0.0}
    value = 100 * sum(weight.get(c, 0.0) for c in scored) / len(scored)
    full, half = sum(1 for c in scored if c == 1.0), sum(1 for c in scored if c == 0.5)
    unjudged = f", {n_gold - len(scored)} not judged" if len(scored) < n_gold else ""
    bucket = judgment_failure(evidence, f"dr3.ir.{source}", "", "pipeline_failure")[0]
    row = MetricValue("dr3", metric, value, "0-100", len(scored),
                      detail=f"insights from {where}: {full} covered, {half} partly, "
                             f"{len(scored) - full - half} not, of {len(scored)} judged{unjudged}",
                      policy=f"covered = credit 1; partly counts {partial} (dr3.ir.partial = zero | half); "
                             "no gold => N/A, never 100", judge=evidence.judge)
    return row.partly_judged(len(scored), n_gold, bucket)


def information_recall(evidence: ReportEvidence) -> list[MetricValue]:
    """IR_UF, IR_SC and IR = their mean. A source with no gold insights leaves IR to the other (said in
    the row); a source that has insights but could not be judged makes IR N/A with its reason."""
    uf, sc = recall_of_source(evidence, "uf"), recall_of_source(evidence, "sc")
    policy = "IR = mean(IR_UF, IR_SC) (paper); a source with no gold insights: IR is the other's"
    parts = {"ir_uf": uf, "ir_sc": sc}
    present = {m: v for m, v in parts.items() if v.value is not None}
    no_gold = {m: v for m, v in parts.items() if v.value is None and v.na_reason == "data_accessibility"}
    failed = {m: v for m, v in parts.items() if v.value is None and m not in no_gold}
    if failed or not present:
        missing = failed or no_gold
        bucket = most_retryable(v.na_reason for v in missing.values())
        why = "; ".join(f"{m} N/A ({v.na_reason}: {v.detail})" for m, v in missing.items())
        ir = not_available("dr3", "ir", "0-100", bucket, f"needs {', '.join(missing)}: {why}"[:500], evidence.judge)
        return [uf, sc, replace(ir, policy=policy)]
    value = sum(v.value for v in present.values()) / len(present)
    detail = ", ".join(f"{m}={v.value:.2f}" for m, v in present.items())
    if no_gold:
        detail += "; " + "; ".join(f"{m} N/A (no gold insights), so IR is {next(iter(present))}'s alone"
                                   for m in no_gold)
    # the judged share of the insights of both sources, pooled
    judged = sum(v.n_items for v in present.values())
    gold = sum((evidence.inputs.get("dr3.insights") or {}).get(m.removeprefix("ir_"), 0) for m in present)
    unjudged = most_retryable(v.unjudged_reason for v in present.values())
    return [uf, sc, MetricValue("dr3", "ir", value, "0-100", judged, detail=detail, policy=policy,
                                judge=evidence.judge).partly_judged(judged, gold, unjudged)]


SUITE = Suite(
    "dr3", "DR³-Eval",
    (MetricSpec("fa", "0-100", True, "factual accuracy: supported share of claim-source pairs", cites=True,
                claims=True),
     MetricSpec("cc", "0-100", False, "citation coverage: cited share of the necessary documents", cites=True),
     MetricSpec("if", "0-100", True, "instruction following: share of checklist items satisfied"),
     MetricSpec("dq", "0-100", True, "depth quality: depth rubric 1-10, x10"),
     MetricSpec("ir_uf", "0-100", True, "information recall: covered share of the gold insights from the user files"),
     MetricSpec("ir_sc", "0-100", True, "information recall: covered share of the sandbox corpus's gold insights"),
     MetricSpec("ir", "0-100", True, "information recall: mean of IR_UF and IR_SC"),
     MetricSpec("avg", "0-100", True, "DR³ Avg: equal-weight mean of IR, CC, FA, IF, DQ", aggregate="of_parts")),
    compute, headline=("avg", "avg.en", "avg.zh", "ir", "cc", "fa", "if", "dq", "ir_uf", "ir_sc"),
    composites=(Composite("avg", ("ir", "cc", "fa", "if", "dq"), mean_of_all,
                          "Avg = mean(IR, CC, FA, IF, DQ), equal weights (paper)"),),
    # the release's two sets are its languages (datasets_en, datasets_zh), evaluated apart; its sandbox
    # sizes are the systems themselves (`<model>-<size>`), so each size is a row of every table
    breakdowns=(Breakdown("language", ("avg", "ir", "cc", "fa", "if", "dq", "ir_uf", "ir_sc"), ("en", "zh")),))
