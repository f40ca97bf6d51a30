"""TVIR-Bench (methods/tvir.md): the textual assessment (CS, IA, WQ, ADB, FLC; AEC), the visual one
(FQ, MC, FCQ, FCI, CSC: visual_scores.py) and the published aggregation TA = mean(CS, IA, WQ, ADB, FLC),
VA = mean(FQ, MC, FCQ, FCI, CSC), Overall = mean(TA, VA). A report without figures scores 0 on each
visual metric (App. B); a system without a figure in any report is not applicable for VA and Overall."""
from __future__ import annotations

from dataclasses import replace

from ...core.metrics import MERGE_POLICY, MetricValue, not_available
from ..evidence import NOTHING_JUDGED_RULE, UNREAD_RULE, ReportEvidence, unread
from ..suite import Composite, MetricSpec, Suite, checklist_carried, judged_checklist, judgment_failure, mean_of_all
from .formulas import csc_score, dimension_mean, run_count  # noqa: F401 (csc_score: TVIR's published table, kept here too)
from .visual_scores import VISUAL_PARTS, no_figure_anywhere, visual_parts

CREDIT = {"supported": 1.0, "partial": 0.5}  # unsupported, contradicted, unknown score 0
POLICY = (f"facts deduplicated; figure captions excluded; unknown counts 0; no pairs => 0 (paper); "
          f"{NOTHING_JUDGED_RULE}; {MERGE_POLICY}")


def fact_credits(evidence: ReportEvidence) -> tuple[list[float], int]:
    """Per distinct fact with citations: 1 / 0.5 / 0; and how many were unknown."""
    distinct = [c for c in evidence.facts if not evidence.is_repeat(c)]
    labels = [c.merged() or "unknown" for c in distinct]
    return [CREDIT.get(v, 0.0) for v in labels], labels.count("unknown")


# Judged in TVIR's own report judgment, whose runs are averaged (policy tvir.judge_runs); CS and AEC
# rest on the shared claim verdicts (one run).
RUNS_AVERAGED = frozenset({"ia", "wq", "adb", "flc", "fq", "mc", "fcq", "fci", "csc"})
RUNS_POLICY = "tvir.judge_runs"


def compute(evidence: ReportEvidence) -> list[MetricValue]:
    values = [
        instruction_alignment(evidence),
        rubric_metric(evidence, "wq", "tvir.wq"),
        rubric_metric(evidence, "adb", "tvir.adb"),
        contradiction_metric(evidence),
        *citation_support(evidence),
        *visual_parts(evidence),
    ]
    runs = (f"judge runs averaged per item: {RUNS_POLICY}={evidence.policy(RUNS_POLICY)} "
            f"(the offline judge is asked once)")
    return [replace(v, policy=f"{v.policy}; {runs}" if v.policy else runs) if v.metric in RUNS_AVERAGED else v
            for v in values]


def citation_support(evidence: ReportEvidence) -> list[MetricValue]:
    """CS and AEC; no pair scores 0 (the paper's rule), but pairs none of which could be judged are N/A;
    a fact whose every source went unread is left out (carried in the judged share), never scored 0."""
    j = evidence.judge
    distinct = [c for c in evidence.facts if not evidence.is_repeat(c)]
    coverage = evidence.coverage(distinct)
    if coverage.nothing_judged:
        return [coverage.not_available("tvir", "cs", "0-100", j), coverage.not_available("tvir", "aec", "count", j)]
    judged = [c for c in distinct if not unread(c.cited_verdicts())]  # every source unread: left out
    credits, unknown = fact_credits(replace(evidence, claims=judged))
    detail = f"pairs={len(credits)}, unknown={unknown}; {coverage.text()}" if credits else "no fact-citation pairs"
    cs = 100.0 * sum(credits) / len(credits) if credits else 0.0
    return [coverage.carried(row) for row in (
        MetricValue("tvir", "cs", cs, "0-100", len(credits), detail=detail, policy=f"{POLICY}; {UNREAD_RULE}",
                    judge=j),
        MetricValue("tvir", "aec", sum(credits), "count", len(credits), detail=detail,
                    policy=f"sum of CS credits of the task's facts (AEC = mean over tasks); {NOTHING_JUDGED_RULE}; "
                           f"{UNREAD_RULE}", judge=j))]


def instruction_alignment(evidence: ReportEvidence) -> MetricValue:
    """IA: mean checklist credit, x100; items a judge could not answer are left out and counted."""
    scored, missing = judged_checklist(evidence, "tvir", "ia")
    if missing:
        return missing
    return checklist_carried(evidence, MetricValue(
        "tvir", "ia", 100 * checklist_alignment(scored), "0-100", len(scored),
        detail=f"items={len(evidence.checklist)}, judged={len(scored)}",
        policy="1 / 0.5 / 0 per item; placeholders and method-only text do not count", judge=evidence.judge))


def rubric_metric(evidence: ReportEvidence, metric: str, rubric_id: str) -> MetricValue:
    """WQ / ADB: sum of 1-10 dimension scores over 10 x the dimensions that scored, x100."""
    dims = evidence.rubric(rubric_id)
    scored = [v for v in dims.values() if v is not None]
    if not dims:
        return not_available("tvir", metric, "0-100", "pipeline_failure", "the rubric was not judged", evidence.judge)
    if not scored:
        return not_available("tvir", metric, "0-100", *judgment_failure(evidence, rubric_id, "no dimension was scored"),
                             evidence.judge)
    detail = ", ".join(f"{d}={v:g}" if v is not None else f"{d}=N/A" for d, v in dims.items())
    value = MetricValue("tvir", metric, 100 * dimension_mean(scored), "0-100", len(scored), detail=detail,
                        policy="sum / (10 x dimensions scored)", judge=evidence.judge)
    return value.partly_judged(len(scored), len(dims), judgment_failure(evidence, rubric_id, "")[0])


def contradiction_metric(evidence: ReportEvidence) -> MetricValue:
    count = evidence.rubric("tvir.flc").get("count")
    if count is None:
        return not_available("tvir", "flc", "0-100", *judgment_failure(evidence, "tvir.flc", "contradictions were not "
                                                                       "counted", "pipeline_failure"), evidence.judge)
    counted = run_count(count)
    shown = f"{counted}" if counted == count else f"{counted} (mean over judge runs {count:.2f})"
    return MetricValue("tvir", "flc", 100 * flc_score(counted), "0-100", 1, detail=f"contradictions={shown}",
                       policy="count mapped by the published table (0->10, 1-2->9, ..., >=18->1), /10", judge=evidence.judge)


def textual_average(cs: float, ia: float, wq: float, adb: float, flc: float) -> float:
    """TA = mean(CS, IA, WQ, ADB, FLC)."""
    return (cs + ia + wq + adb + flc) / 5


def visual_average(fq: float, mc: float, fcq: float, fci: float, csc: float) -> float:
    """VA = mean(FQ, MC, FCQ, FCI, CSC)."""
    return (fq + mc + fcq + fci + csc) / 5


def overall(ta: float, va: float | None) -> float | None:
    """Overall = mean(TA, VA); a text-only report has no VA and so no Overall."""
    return None if va is None else (ta + va) / 2


SUITE = Suite(
    "tvir", "TVIR-Bench",
    (MetricSpec("ia", "0-100", True, "instruction alignment: checklist credit 1 / 0.5 / 0, mean"),
     MetricSpec("wq", "0-100", True, "writing quality: 4 dimensions 1-10"),
     MetricSpec("adb", "0-100", True, "analytical depth and breadth: 5 dimensions 1-10"),
     MetricSpec("flc", "0-100", True, "factual and logical consistency: contradictions mapped by the table"),
     MetricSpec("cs", "0-100", True, "citation support: 1 / 0.5 / 0 per fact-citation pair, mean", cites=True,
                claims=True),
     MetricSpec("aec", "count", True, "effective citations: sum of CS credits per task", cites=True, claims=True),
     MetricSpec("fq", "0-100", True, "figure quality: image and chart quality, count-weighted"),
     MetricSpec("mc", "0-100", True, "multimodal composition: 2 dimensions 1-10"),
     MetricSpec("fcq", "0-100", True, "figure caption quality: 3 dimensions 1-10 per figure"),
     MetricSpec("fci", "0-100", True, "figure-context integration: 3 dimensions 1-10 per figure"),
     MetricSpec("csc", "0-100", True, "chart-source consistency: contradictions mapped by the table"),
     MetricSpec("ta", "0-100", True, "textual assessment: mean(CS, IA, WQ, ADB, FLC)", aggregate="of_parts"),
     MetricSpec("va", "0-100", True, "visual assessment: mean(FQ, MC, FCQ, FCI, CSC)", aggregate="of_parts"),
     MetricSpec("overall", "0-100", True, "TVIR Overall: mean(TA, VA); not applicable to a system with no figure",
                aggregate="of_parts")),
    compute, headline=("overall", "ta", "va", "cs", "ia", "wq", "adb", "flc", "fq", "mc", "fcq", "fci", "csc", "aec"),
    composites=(
        Composite("ta", ("cs", "ia", "wq", "adb", "flc"), mean_of_all, "TA = mean(CS, IA, WQ, ADB, FLC) (paper)"),
        Composite("va", VISUAL_PARTS, mean_of_all, "VA = mean(FQ, MC, FCQ, FCI, CSC) (paper)"),
        Composite("overall", ("ta", "va"), mean_of_all, "Overall = mean(TA, VA) (paper)")),
    system_rule=no_figure_anywhere)


# FLC: distinct internal contradictions -> score out of 10 (methods/tvir.md), then /10.
FLC_TABLE = ((0, 0, 10), (1, 2, 9), (3, 4, 8), (5, 6, 7), (7, 8, 6), (9, 10, 5), (11, 12, 4), (13, 14, 3), (15, 17, 2))


def flc_score(contradictions: int) -> float:
    """FLC in [0, 1] from the number of distinct contradictions (0 -> 1.0, >= 18 -> 0.1)."""
    if contradictions < 0:
        raise ValueError("a contradiction count cannot be negative")
    for low, high, score in FLC_TABLE:
        if low <= contradictions <= high:
            return score / 10
    return 0.1


def checklist_alignment(credits: list[float]) -> float:
    """IA: mean of per-item 1 / 0.5 / 0 credits."""
    if not credits:
        raise ValueError("no checklist items")
    return sum(credits) / len(credits)
