"""MMDeepResearch-Bench (methods/mmdr.md): FLAE, TRACE (EVI from CON, COV, FID; VEF) and the published
Overall = 0.2 FLAE + 0.5 TRACE + 0.3 MOSAIC, MOSAIC counting only when FLAE and TRACE are > 0.

FLAE: READ, INSH, STRU each fused as alpha_det * formula + (1 - alpha_det) * judge (formula channel
in core/flae_features.py), weighted by the judge's task-adaptive weights, x100.

CON = supported / judged cited claims; COV = supported claims / all claims (key claims backed);
FID = 1 - contradicted / judged cited claims (no inverted or invented specifics). "Judged" excludes
claims no source of which was decided (unreadable page, failed call): ours, not the report's, so COV
leaves them out of its denominator too (`unjudged`), and CON, COV, FID, EVI carry the judged share of
the sources (`JudgedCoverage.carried`) into validity. A claim citing an index with no URL stays the
report's fault: COV counts it as not backed. EVI = 100 * sum_k W_k * E_k (task-adaptive weights);
TRACE = 0.6 EVI + 0.4 VEF (`trace_total`). VEF, MOSAIC and its SEM, ACC, VQA are read from their
report judgments in `visual_metrics.py`: a report with no visual item scores MOSAIC 0 (the paper's task
scores and leaderboard count that 0), and SEM, ACC, VQA apply only to the items of their types.

The gate (paper, Overall score: MOSAIC runs only if FLAE >= tau_F and TRACE >= tau_T, tau = 0): with
FLAE = 0 or TRACE = 0, `compute` scores MOSAIC 0 without reading its judgments, and SEM, ACC, VQA do
not apply. The judgments stage skips MOSAIC's vision calls when it already knows TRACE = 0 (no cited
claim, so EVI = 0, and VEF FAIL: `mosaic.judge_visual`); FLAE and judged EVI are known only later.
"""
from __future__ import annotations

from ...core.metrics import MERGE_POLICY, MetricValue, not_available
from ..evidence import NOTHING_JUDGED_RULE, ClaimEvidence, ReportEvidence, most_retryable
from ..suite import Composite, MetricSpec, Suite, judgment_failure
from .visual_metrics import gate_closed_rows, mosaic_item, mosaic_metrics, vef_metric

__all__ = ["mosaic_item"]  # the item formula lives with MOSAIC's rows; kept importable here

LAMBDA_VEF = 0.4
EQUAL_WEIGHTS = {"con": 1 / 3, "cov": 1 / 3, "fid": 1 / 3}  # policy mmdr.trace.weights = equal (ours)


def normalise_weights(weights: dict[str, float]) -> dict[str, float]:
    """The weights over CON, COV, FID summing to 1; weights that sum to 0 weigh nothing (ValueError)."""
    clean = {k: max(0.0, float(weights.get(k) or 0.0)) for k in EQUAL_WEIGHTS}
    total = sum(clean.values())
    if total <= 0:
        raise ValueError("TRACE's weights sum to 0: nothing to weigh CON, COV and FID by")
    return {k: v / total for k, v in clean.items()}


def evidence_score(con: float, cov: float, fid: float, weights: dict[str, float]) -> float:
    """EVI = 100 * sum_k W_k E_k over CON, COV, FID (inputs in [0, 1], weights normalised)."""
    w = normalise_weights(weights)
    return 100 * (w["con"] * con + w["cov"] * cov + w["fid"] * fid)


def trace_from_parts(evi: float, vef: float) -> float:
    """TRACE = λ·VEF + (1-λ)·EVI with λ = 0.4, both on 0-100."""
    return LAMBDA_VEF * vef + (1 - LAMBDA_VEF) * evi


def trace_total(vef: float, con: float, cov: float, fid: float, weights: dict[str, float]) -> float:
    """TRACE = 100 * [λ·VEF + (1-λ)·Σ W_k E_k], inputs in [0, 1]."""
    return trace_from_parts(evidence_score(con, cov, fid, weights), 100 * vef)


def mosaic_gate_open(flae: float, trace: float) -> bool:
    """MOSAIC counts only when FLAE >= τ_F and TRACE >= τ_T with τ = 0, i.e. both valid and non-zero."""
    return flae > 0 and trace > 0


def overall(flae: float, trace: float, mosaic: float) -> float:
    """Overall = 0.2·FLAE + 0.5·TRACE + 0.3·MOSAIC; MOSAIC counts only when FLAE and TRACE are > 0."""
    gated = mosaic if mosaic_gate_open(flae, trace) else 0.0
    return 0.2 * flae + 0.5 * trace + 0.3 * gated


def _trace_row(parts) -> float | None:
    return None if parts["evi"] is None or parts["vef"] is None else trace_from_parts(parts["evi"], parts["vef"])


def _overall_row(parts) -> float | None:
    """The gate first: with FLAE and TRACE known and one of them 0, MOSAIC does not count, so a missing
    MOSAIC does not make Overall N/A."""
    flae_value, trace_value, mosaic = parts["flae"], parts["trace"], parts["mosaic"]
    if flae_value is None or trace_value is None:
        return None
    if not mosaic_gate_open(flae_value, trace_value):
        return overall(flae_value, trace_value, 0.0)
    return None if mosaic is None else overall(flae_value, trace_value, mosaic)


def closed_gate(flae_value: float | None, evi: float | None, vef: float | None) -> str:
    """Why MOSAIC's gate is closed, "" when it is open or not known: FLAE = 0, or TRACE = 0 (paper)."""
    if flae_value is not None and not flae_value > 0:
        return f"FLAE = {flae_value:.2f}"
    if evi is not None and vef is not None and not trace_from_parts(evi, vef) > 0:
        return f"TRACE = 0.6 EVI {evi:.2f} + 0.4 VEF {vef:.2f} = 0"
    return ""


def compute(evidence: ReportEvidence) -> list[MetricValue]:
    """FLAE, TRACE's parts and VEF first: they decide MOSAIC's gate, and a closed gate scores MOSAIC 0
    without its judgments (`mosaic.judge_visual` skips the vision calls where it can know beforehand)."""
    rows = flae_metrics(evidence) + trace_metrics(evidence) + [vef_metric(evidence)]
    # EVI as computed here: for a system released without citations `Suite.score` later makes it N/A, but
    # an uncited report's EVI is 0 by the paper, and the judgments stage decided its gate the same way
    found = {v.metric: v.value for v in rows}
    why = closed_gate(found["flae"], found["evi"], found["vef"])
    return rows + (gate_closed_rows(why, evidence.judge) if why else mosaic_metrics(evidence))


def flae_metrics(evidence: ReportEvidence) -> list[MetricValue]:
    """READ, INSH, STRU fused by alpha_det, and FLAE with the judge's task-adaptive weights."""
    j = evidence.judge
    parts = evidence.rubric("mmdr.flae")
    dims = ("read", "insh", "stru")
    if not parts:
        return [not_available("mmdr", m, "0-100", "pipeline_failure", "FLAE was not judged", j) for m in (*dims, "flae")]
    judge_part = {d: parts.get(f"{d}_judge") for d in dims}
    if any(v is None for v in judge_part.values()):
        failed = judgment_failure(evidence, "mmdr.flae", "the FLAE judge channel failed")
        return [not_available("mmdr", m, "0-100", *failed, j) for m in (*dims, "flae")]
    formula = {d: parts[f"{d}_form"] for d in dims}
    alpha_failed = evidence.judgment_failures.get("mmdr.flae.alpha_judge")
    if alpha_failed and evidence.policy("mmdr.flae.alpha") == "judge":
        # a failed alpha call is not "the judge set none": alpha_det in its place would be another number
        bucket, why = alpha_failed
        return [not_available("mmdr", m, "0-100", bucket, f"the judge's alpha call failed: {why}", j)
                for m in (*dims, "flae")]
    alpha, alpha_text = flae_alpha(parts, evidence.policy("mmdr.flae.alpha"))
    proposed = {d: parts.get(f"weight_{d}") for d in dims}
    protocol = evidence.policy("mmdr.flae.protocol")
    policy = f"{alpha_text}; weights proposed by the judge; asked as mmdr.flae.protocol = {protocol}"
    rows = [MetricValue("mmdr", d, 100 * (alpha * formula[d] + (1 - alpha) * judge_part[d]), "0-100", 1,
                        detail=f"formula={formula[d]:.3f}, judge={judge_part[d]:.3f}", policy=policy, judge=j)
            for d in dims]
    if any(w is None for w in proposed.values()):  # the weights call failed: its own reason
        failed = judgment_failure(evidence, "mmdr.flae", "the task-adaptive weights were not set")
        return rows + [not_available("mmdr", "flae", "0-100", *failed, j)]
    weights = {d: w or 0.0 for d, w in proposed.items()}
    try:
        value = flae(formula, judge_part, alpha, weights)
    except ValueError as exc:
        return rows + [not_available("mmdr", "flae", "0-100", "pipeline_failure", str(exc), j)]
    w_text = ", ".join(f"{d}={w:.2f}" for d, w in weights.items())
    return rows + [MetricValue("mmdr", "flae", value, "0-100", 3, detail=f"weights {w_text}", policy=policy, judge=j)]


def flae_alpha(parts: dict[str, float | None], choice: str) -> tuple[float, str]:
    """The fusion weight and how it was chosen. Policy `mmdr.flae.alpha`: `judge` (default, the paper's:
    the judge-set alpha; alpha_det when the judge set none) or `det` (alpha_det from the observables)."""
    alpha_det_value = parts["alpha"]
    if choice == "judge":
        judged = parts.get("alpha_judge")
        if judged is not None:
            return judged, f"alpha = {judged:.3f} set by the judge (alpha_det would be {alpha_det_value:.3f})"
        return alpha_det_value, f"alpha_det = {alpha_det_value:.3f} stands (fallback): the judge set no alpha"
    return alpha_det_value, f"alpha_det = {alpha_det_value:.3f} (deterministic variant)"


def unjudged(claim: ClaimEvidence) -> bool:
    """A cited claim no URL source of which was decided (unreadable page, failed call, no verdict): not
    the report's fault, so never counted as unsupported. One citing an index with no URL stays the report's."""
    return bool(claim.urls) and not claim.unresolved and (claim.merged() or "unknown") == "unknown"


def trace_weights(evidence: ReportEvidence) -> tuple[dict[str, float] | None, str, tuple[str, str] | None]:
    """TRACE's weights over CON, COV, FID, what to say of them, or the failure (bucket, why) when they
    could not be had: set per report by the judge (policy `mmdr.trace.weights = judge`, the paper's), or
    equal thirds (`equal`, ours). Never a silent fallback."""
    if evidence.policy("mmdr.trace.weights") == "equal":
        return dict(EQUAL_WEIGHTS), "equal thirds (mmdr.trace.weights = equal, ours)", None
    parts = evidence.rubric("mmdr.trace")
    proposed = {k: parts.get(f"weight_{k}") for k in EQUAL_WEIGHTS}
    if any(v is None for v in proposed.values()):
        failed = evidence.judgment_failure("mmdr.trace") or (
            "pipeline_failure", "TRACE's task-adaptive weights were not judged")
        return None, "", (failed[0], f"TRACE weights: {failed[1]}"[:500])
    try:
        return normalise_weights(proposed), "set by the judge for this task and report", None
    except ValueError as exc:
        return None, "", ("pipeline_failure", str(exc))


def trace_metrics(evidence: ReportEvidence) -> list[MetricValue]:
    j = evidence.judge
    weights, weight_note, weights_failed = trace_weights(evidence)
    cited = [c.merged() or "unknown" for c in evidence.cited_claims]
    judged = [v for v in cited if v != "unknown"]
    n_all = len(evidence.claims)
    if not cited:
        detail = "no cited claims: the MMDR protocol requires [n] after each factual claim"
        zero = dict(scale="0-100", n_items=n_all, detail=detail, policy="uncited report scores 0", judge=j)
        return [MetricValue("mmdr", m, 0.0, **zero) for m in ("con", "cov", "fid", "evi")]
    coverage = evidence.coverage()
    if coverage.nothing_judged:
        return [coverage.not_available("mmdr", m, "0-100", j) for m in ("con", "cov", "fid", "evi")]
    left_out = sum(1 for c in evidence.cited_claims if unjudged(c))
    n_cov = n_all - left_out  # COV's denominator: every claim but those no source could be judged for
    cov_policy = "supported claims / all claims, claims with no judged source left out"
    if not judged:
        if left_out:  # the judge found the pages unreadable ("unknown"), or their calls failed: ours
            bucket = most_retryable(coverage.failures, "data_accessibility")
            reason = f"no cited claim was decided ({left_out} with no readable source); {coverage.text()}"
        else:  # every undecided claim cites an index with no URL: the report's own fault
            bucket = "model_failure"
            reason = f"no cited claim was decided (their indices have no URL); {coverage.text()}"
        cov = (MetricValue("mmdr", "cov", 0.0, "0-100", n_cov, detail=reason, judge=j, policy=cov_policy) if n_cov
               else not_available("mmdr", "cov", "0-100", bucket, reason, j))
        return [not_available("mmdr", m, "0-100", bucket, reason, j) for m in ("con", "fid", "evi")] + [
            coverage.carried(cov)]
    con = judged.count("supported") / len(judged)
    fid = 1 - judged.count("contradicted") / len(judged)
    cov = sum(1 for c in evidence.claims if c.merged() == "supported") / n_cov
    policy = (f"judged = cited claims with a readable source; COV leaves out claims with none; {MERGE_POLICY}; "
              f"{NOTHING_JUDGED_RULE}")
    detail = (f"judged={len(judged)}, cited={len(cited)}, claims={n_all}"
              + (f" ({left_out} with no judged source left out of COV)" if left_out else "") + f"; {coverage.text()}")
    parts = [MetricValue("mmdr", "con", 100 * con, "0-100", len(judged), detail=detail, policy=policy, judge=j),
             MetricValue("mmdr", "cov", 100 * cov, "0-100", n_cov, detail=detail, policy=policy, judge=j),
             MetricValue("mmdr", "fid", 100 * fid, "0-100", len(judged), detail=detail, policy=policy, judge=j)]
    if weights is None:  # CON, COV and FID stand; EVI needs the weights the paper derives
        return [coverage.carried(v) for v in parts] + [not_available("mmdr", "evi", "0-100", *weights_failed, j)]
    evi = evidence_score(con, cov, fid, weights)
    w_text = ", ".join(f"{k}={v:.3f}" for k, v in weights.items())
    return [coverage.carried(v) for v in (
        *parts,
        MetricValue("mmdr", "evi", evi, "0-100", len(judged),
                    detail=f"weights {w_text} ({weight_note}); {coverage.text()}",
                    policy="EVI = 100 * sum_k W_k E_k over CON, COV, FID (task-adaptive weights per report)",
                    judge=j))]


SUITE = Suite(
    "mmdr", "MMDeepResearch-Bench",
    (MetricSpec("read", "0-100", True, "readability: formula and judge channels fused by alpha_det"),
     MetricSpec("insh", "0-100", True, "insightfulness, fused"),
     MetricSpec("stru", "0-100", True, "structural completeness, fused"),
     MetricSpec("flae", "0-100", True, "FLAE: task-weighted READ, INSH, STRU"),
     MetricSpec("con", "0-100", True, "consistency: supported share of judged cited claims", cites=True, claims=True),
     MetricSpec("cov", "0-100", True, "coverage: supported share of all claims", cites=True, claims=True),
     MetricSpec("fid", "0-100", True, "fidelity: share of judged cited claims not contradicted", cites=True,
                claims=True),
     MetricSpec("evi", "0-100", True, "EVI: CON, COV, FID with task-adaptive weights", cites=True, claims=True),
     MetricSpec("vef", "0-100", True, "visual evidence fidelity: PASS share against the visual ground truth"),
     MetricSpec("trace", "0-100", True, "TRACE = 0.6 EVI + 0.4 VEF", cites=True),
     MetricSpec("mosaic", "0-100", True, "MOSAIC: mean visual item score; 0 without visual items"),
     MetricSpec("sem", "0-100", True, "visual-semantic alignment of the items (where it applies)"),
     MetricSpec("acc", "0-100", True, "data-reading accuracy of chart items (where it applies)"),
     MetricSpec("vqa", "0-100", True, "questions about the image answered (where it applies)"),
     MetricSpec("overall", "0-100", True, "MMDR Overall = 0.2 FLAE + 0.5 TRACE + 0.3 MOSAIC (gated)")),
    compute, headline=("overall", "flae", "trace", "mosaic", "evi", "vef", "con", "cov", "fid", "read", "insh", "stru",
                       "sem", "acc", "vqa"),
    composites=(
        Composite("trace", ("evi", "vef"), _trace_row, "TRACE = 0.6 EVI + 0.4 VEF (lambda = 0.4, paper)"),
        Composite("overall", ("flae", "trace", "mosaic"), _overall_row,
                  "Overall = 0.2 FLAE + 0.5 TRACE + 0.3 MOSAIC; MOSAIC counts only when FLAE > 0 and TRACE > 0 "
                  "(paper)")))


def alpha_det(length_completeness: float, heading_coverage: float, citation_compliance: float,
              reference_validity: float) -> float:
    """FLAE's deterministic fusion weight: clip(1 - (0.35 L + 0.35 H + 0.20 C + 0.10 Ref), 0, 1).

    Short, badly structured or non-compliant reports lean on the formula channel (alpha near 1)."""
    value = 1 - (0.35 * length_completeness + 0.35 * heading_coverage + 0.20 * citation_compliance
                 + 0.10 * reference_validity)
    return min(1.0, max(0.0, value))


def flae(formula: dict[str, float], judge: dict[str, float], alpha: float, weights: dict[str, float]) -> float:
    """FLAE = 100 * sum_d W_d * (alpha * s_form + (1 - alpha) * s_judge) over READ, INSH, STRU."""
    dims = ("read", "insh", "stru")
    total = sum(max(0.0, weights.get(d, 0.0)) for d in dims)
    if total <= 0:
        raise ValueError("FLAE weights must have a positive sum")
    return 100 * sum(weights.get(d, 0.0) / total * (alpha * formula[d] + (1 - alpha) * judge[d]) for d in dims)
