"""MMDeepResearch-Bench (methods/mmdr.md): FLAE, and TRACE's text part (CON, COV, FID).

FLAE: READ, INSH, STRU each fused as alpha_det * formula + (1 - alpha_det) * judge (formula channel
in core/flae_features.py), weighted by the judge's task-adaptive weights, x100.

CON = supported / judged cited claims; COV = supported claims / all claims (key claims backed);
FID = 1 - contradicted / judged cited claims (no inverted or invented specifics). "Judged" excludes
claims whose every source was unreadable. TRACE here is its citation part, 100 * sum_k W_k * E_k,
with VEF N/A until visual evidence fidelity is built; the full formula is `trace_total`.
"""
from __future__ import annotations

from ...core.metrics import MERGE_POLICY, MetricValue, not_available
from ..evidence import NOTHING_JUDGED_RULE, ReportEvidence
from ..suite import MetricSpec, Suite, judgment_failure

LAMBDA_VEF = 0.4
FALLBACK_WEIGHTS = {"con": 1 / 3, "cov": 1 / 3, "fid": 1 / 3}


def normalise_weights(weights: dict[str, float]) -> dict[str, float]:
    clean = {k: max(0.0, float(weights.get(k, 0.0))) for k in FALLBACK_WEIGHTS}
    total = sum(clean.values())
    return {k: v / total for k, v in clean.items()} if total > 0 else dict(FALLBACK_WEIGHTS)


def trace_total(vef: float, con: float, cov: float, fid: float, weights: dict[str, float]) -> float:
    """TRACE = 100 * [λ·VEF + (1-λ)·Σ W_k E_k], inputs in [0, 1]."""
    w = normalise_weights(weights)
    return 100 * (LAMBDA_VEF * vef + (1 - LAMBDA_VEF) * (w["con"] * con + w["cov"] * cov + w["fid"] * fid))


def overall(flae: float, trace: float, mosaic: float) -> float:
    """Overall = 0.2·FLAE + 0.5·TRACE + 0.3·MOSAIC; MOSAIC counts only when FLAE and TRACE are > 0."""
    gated = mosaic if flae > 0 and trace > 0 else 0.0
    return 0.2 * flae + 0.5 * trace + 0.3 * gated


def compute(evidence: ReportEvidence) -> list[MetricValue]:
    return flae_metrics(evidence) + trace_metrics(evidence)


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
    alpha, alpha_text = flae_alpha(parts, evidence.policy("mmdr.flae.alpha"))
    weights = {d: parts.get(f"weight_{d}") or 0.0 for d in dims}
    policy = f"{alpha_text}; weights proposed by the judge"
    rows = [MetricValue("mmdr", d, 100 * (alpha * formula[d] + (1 - alpha) * judge_part[d]), "0-100", 1,
                        detail=f"formula={formula[d]:.3f}, judge={judge_part[d]:.3f}", policy=policy, judge=j)
            for d in dims]
    try:
        value = flae(formula, judge_part, alpha, weights)
    except ValueError as exc:
        return rows + [not_available("mmdr", "flae", "0-100", "pipeline_failure", str(exc), j)]
    w_text = ", ".join(f"{d}={w:.2f}" for d, w in weights.items())
    return rows + [MetricValue("mmdr", "flae", value, "0-100", 3, detail=f"weights {w_text}", policy=policy, judge=j)]


def flae_alpha(parts: dict[str, float | None], choice: str) -> tuple[float, str]:
    """The fusion weight and how it was chosen. Policy `mmdr.flae.alpha`: `det` (default, the paper's
    alpha_det from observables) or `judge` (the judge-set alpha; alpha_det when the judge set none)."""
    alpha_det_value = parts["alpha"]
    if choice == "judge":
        judged = parts.get("alpha_judge")
        if judged is not None:
            return judged, f"alpha = {judged:.3f} set by the judge (alpha_det would be {alpha_det_value:.3f})"
        return alpha_det_value, f"alpha_det = {alpha_det_value:.3f}: the judge set no alpha (policy asked for it)"
    return alpha_det_value, f"alpha_det = {alpha_det_value:.3f} (deterministic variant)"


def trace_metrics(evidence: ReportEvidence) -> list[MetricValue]:
    j = evidence.judge
    weights = normalise_weights(evidence.inputs.get("mmdr.trace_weights") or FALLBACK_WEIGHTS)
    weight_note = evidence.inputs.get("mmdr.trace_weights_source") or "fixed fallback 1/3 each"
    cited = [c.merged() or "unknown" for c in evidence.cited_claims]
    judged = [v for v in cited if v != "unknown"]
    n_all = len(evidence.claims)
    vef = not_available("mmdr", "vef", "0-100", "pipeline_failure",
                        "visual evidence fidelity is not built yet (needs the task's visual ground truth judge)", j)
    if not cited:
        detail = "no cited claims: the MMDR protocol requires [n] after each factual claim"
        zero = dict(scale="0-100", n_items=n_all, detail=detail, policy="uncited report scores 0", judge=j)
        return [MetricValue("mmdr", m, 0.0, **zero) for m in ("con", "cov", "fid", "trace")] + [vef]
    coverage = evidence.coverage()
    if coverage.nothing_judged:
        return [coverage.not_available("mmdr", m, "0-100", j) for m in ("con", "cov", "fid", "trace")] + [vef]
    if not judged:
        reason = f"no cited claim was decided (every judged source left its claim unknown); {coverage.text()}"
        return [not_available("mmdr", m, "0-100", "model_failure", reason, j)
                for m in ("con", "fid", "trace")] + [
            MetricValue("mmdr", "cov", 0.0, "0-100", n_all, detail=reason, judge=j,
                        policy="supported claims / all claims"), vef]
    con = judged.count("supported") / len(judged)
    fid = 1 - judged.count("contradicted") / len(judged)
    cov = sum(1 for c in evidence.claims if c.merged() == "supported") / n_all
    policy = f"judged = cited claims with a readable source; {MERGE_POLICY}; {NOTHING_JUDGED_RULE}"
    detail = f"judged={len(judged)}, cited={len(cited)}, claims={n_all}; {coverage.text()}"
    trace = 100 * (weights["con"] * con + weights["cov"] * cov + weights["fid"] * fid)
    w_text = ", ".join(f"{k}={v:.3f}" for k, v in weights.items())
    return [
        MetricValue("mmdr", "con", 100 * con, "0-100", len(judged), detail=detail, policy=policy, judge=j),
        MetricValue("mmdr", "cov", 100 * cov, "0-100", n_all, detail=detail, policy=policy, judge=j),
        MetricValue("mmdr", "fid", 100 * fid, "0-100", len(judged), detail=detail, policy=policy, judge=j),
        MetricValue("mmdr", "trace", trace, "0-100", len(judged), detail=f"weights {w_text} ({weight_note})",
                    policy="citation part only: 100*sum W_k E_k; VEF N/A (full TRACE adds lambda=0.4 VEF)", judge=j),
        vef,
    ]


SUITE = Suite(
    "mmdr", "MMDeepResearch-Bench (FLAE; TRACE citation part)",
    (MetricSpec("read", "0-100", True, "readability: formula and judge channels fused by alpha_det"),
     MetricSpec("insh", "0-100", True, "insightfulness, fused"),
     MetricSpec("stru", "0-100", True, "structural completeness, fused"),
     MetricSpec("flae", "0-100", True, "FLAE: task-weighted READ, INSH, STRU"),
     MetricSpec("con", "0-100", True, "consistency: supported share of judged cited claims", cites=True),
     MetricSpec("cov", "0-100", True, "coverage: supported share of all claims", cites=True),
     MetricSpec("fid", "0-100", True, "fidelity: share of judged cited claims not contradicted", cites=True),
     MetricSpec("trace", "0-100", True, "TRACE citation part with task-adaptive weights", cites=True),
     MetricSpec("vef", "0-100", True, "visual evidence fidelity (not built yet)")),
    compute, headline=("trace", "flae", "con", "cov", "fid", "read", "insh", "stru", "vef"))


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


def mosaic_item(visual_type: str, sem: float, acc: float, vqa: float, f: float, h: float = 0.0) -> float:
    """MOSAIC item score by visual type (inputs in [0, 1])."""
    if visual_type in ("DATACHART", "OCRCHART"):
        return f * (0.9 * acc + 0.1 * vqa)
    if visual_type == "PHOTO":
        return f * (0.5 * sem + 0.5 * vqa)
    if visual_type == "DIAGRAM":
        return f * (0.5 * vqa + 0.5 * (1 - h))
    raise ValueError(f"unknown visual type {visual_type!r}")
