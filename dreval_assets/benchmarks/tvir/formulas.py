"""TVIR's per-item formulas that the textual and the visual assessment share, and the visual ones
(../shared/methods/tvir.md, "Visual assessment"). Pure; every value in [0, 1]."""
from __future__ import annotations

from typing import Sequence

from ...core.images import duplicate_penalty


def dimension_mean(scores_1_to_10: Sequence[float]) -> float:
    """WQ / ADB / MC, and FCQ / FCI per figure: sum of 1-10 dimension scores over 10 x dimensions."""
    if not scores_1_to_10:
        raise ValueError("no dimension scores")
    return sum(scores_1_to_10) / (10 * len(scores_1_to_10))


def run_count(mean_count: float) -> int:
    """A contradiction count averaged over judge runs (policy tvir.judge_runs), rounded half up before
    the published table (one run's count is returned as it is)."""
    return int(mean_count + 0.5)


def csc_score(contradictions: int) -> float:
    """CSC per chart: 0 -> 10, 1 -> 9, ... 8 -> 2, >= 9 -> 1; then /10."""
    if contradictions < 0:
        raise ValueError("a contradiction count cannot be negative")
    return max(1, 10 - contradictions) / 10


def image_quality(qualities: Sequence[float], n_duplicates: int) -> float:
    """IQ = mean Q over the report's images x (1 - p_dup), p_dup = min(0.5, 0.8 x duplicate ratio)."""
    if not qualities:
        raise ValueError("no images")
    if not 0 <= n_duplicates <= len(qualities):
        raise ValueError(f"{n_duplicates} duplicates among {len(qualities)} images")
    return sum(qualities) / len(qualities) * (1 - duplicate_penalty(len(qualities), n_duplicates))


def chart_quality(checks_per_chart: Sequence[Sequence[float]]) -> float:
    """CQ = mean over charts of the share of the ten binary checks each passes (a check passed in
    some of the averaged judge runs counts that share)."""
    if not checks_per_chart or any(not checks for checks in checks_per_chart):
        raise ValueError("no charts, or a chart without checks")
    return sum(sum(map(float, checks)) / len(checks) for checks in checks_per_chart) / len(checks_per_chart)


def figure_quality(n_images: int, iq: float | None, n_charts: int, cq: float | None) -> float:
    """FQ = (N_img x IQ + N_chart x CQ) / (N_img + N_chart): image and chart quality weighted by count."""
    if n_images + n_charts == 0:
        raise ValueError("no figures")
    if (n_images and iq is None) or (n_charts and cq is None):
        raise ValueError("a group with figures has no quality")
    return ((n_images * iq if n_images else 0.0) + (n_charts * cq if n_charts else 0.0)) / (n_images + n_charts)


def figure_mean(per_figure: Sequence[float]) -> float:
    """FCQ / FCI / CSC: the mean over the report's figures (or charts) of their [0, 1] scores."""
    if not per_figure:
        raise ValueError("no figures")
    return sum(per_figure) / len(per_figure)
