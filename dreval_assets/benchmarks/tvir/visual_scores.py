"""TVIR's five visual metrics (FQ, MC, FCQ, FCI, CSC, 0-100) from the `tvir_visual.` report_judgments
rows (`visual_judgments.py` says what each row is). The paper's rules (App. B): "if no figure/image/chart
is present, the score is set to 0" for every visual metric, so a report without figures scores 0 on
each (deleting figures never pays); invalid figures do not count, and a report whose figures are all
invalid counts nothing, so each part is 0 - unless an image was invalid through our failure (not
fetched), then N/A with that bucket. A *system* with no figure in any report is not applicable for VA
and Overall (the paper's Gemini-3-Pro row): `system_rule`, applied by the leaderboard. A part that
needs a judgment which gave no value is N/A with that judgment's bucket (the offline judge cannot see
images: a judge limit, `pipeline_failure`), never a number made without it."""
from __future__ import annotations

from typing import Callable, Mapping, Sequence

from ...core.images import duplicate_penalty
from ...core.metrics import MetricValue, not_available
from ..aggregation import TaskValue
from ..evidence import ReportEvidence, most_retryable
from .formulas import chart_quality, csc_score, dimension_mean, figure_mean, figure_quality, image_quality, run_count
from .visual_models import CAPTION_DIMENSIONS, CHART_CHECKS, COMPOSITION_DIMENSIONS, INTEGRATION_DIMENSIONS, PREFIX

VISUAL_PARTS = ("fq", "mc", "fcq", "fci", "csc")
NO_FIGURE = "no figure in the report"
NO_FIGURE_RULE = f"{NO_FIGURE}: 0 (TVIR App. B: no figure/image/chart => 0)"
NO_FIGURE_ANYWHERE = ("the system has no figure in any report: TVIR's visual assessment does not apply "
                      "(the paper's Gemini-3-Pro row)")
POLICIES = {
    "fq": "FQ = (N_img x IQ + N_chart x CQ) / (N_img + N_chart); IQ = mean Q x (1 - min(0.5, 0.8 x duplicate "
          "ratio)), measured; CQ = share of 10 checks passed, mean over charts; invalid figures not counted",
    "mc": "2 dimensions 1-10 on the text form (invalid figures blanked, revised captions), sum / (10 x scored); "
          "no valid figure => 0",
    "fcq": "3 dimensions 1-10 per valid figure, sum / 30; no caption => 0; mean over figures",
    "fci": "3 dimensions 1-10 per valid figure, sum / 30; no context => 0; mean over figures",
    "csc": "per chart: contradictions with its cited sources 0->10, 1->9, ... 8->2, >=9->1, /10; no usable cited "
           "source => 0; no chart => 0; unreadable cited pages count 0, N/A when no chart could be judged",
}


class Items:
    """The `tvir_visual.` rows of one report: scores by relative item id, and why N/A ones are N/A."""

    def __init__(self, evidence: ReportEvidence) -> None:
        self.evidence = evidence
        self.scores = evidence.rubric(PREFIX)

    def under(self, part: str) -> dict[str, float | None]:
        return {k[len(part) + 1:]: v for k, v in self.scores.items() if k.startswith(part + ".")}

    def per_figure(self, part: str) -> dict[str, dict[str, float | None]]:
        """`<part>.fNN.<sub>` rows as fNN -> sub -> score."""
        grouped: dict[str, dict[str, float | None]] = {}
        for key, value in self.under(part).items():
            figure, _, sub = key.partition(".")
            grouped.setdefault(figure, {})[sub] = value
        return grouped

    def failure(self, part: str, what: str) -> tuple[str, str]:
        """The most retryable bucket among the N/A rows under `part`, with one of its reasons."""
        found = [v for k, v in self.evidence.judgment_failures.items() if k.startswith(f"{PREFIX}.{part}.")]
        if not found:
            return "pipeline_failure", f"{what}: not judged"
        bucket = most_retryable(f[0] for f in found)
        why = next(f[1] for f in found if f[0] == bucket)
        return bucket, f"{what}: {why}"[:500]


def visual_parts(evidence: ReportEvidence) -> list[MetricValue]:
    j = evidence.judge
    if not evidence.figures:
        return [MetricValue("tvir", m, 0.0, "0-100", 0, detail=NO_FIGURE_RULE, policy=POLICIES[m], judge=j)
                for m in VISUAL_PARTS]
    items = Items(evidence)
    flags = items.under("figure")
    if not flags:
        why = f"the report's {len(evidence.figures)} figure(s) were not assessed (no {PREFIX} judgments)"
        return [not_available("tvir", m, "0-100", "pipeline_failure", why, j) for m in VISUAL_PARTS]
    valid = sorted(f for f, v in flags.items() if v == 1)
    invalid = sum(1 for v in flags.values() if v == 0)
    unfetched = len(flags) - len(valid) - invalid  # images we could not get (N/A rows): not the report's fault
    if not valid and unfetched:
        bucket, why = items.failure("figure", f"no valid figure; {unfetched} image(s) could not be read")
        return [not_available("tvir", m, "0-100", bucket, why, j) for m in VISUAL_PARTS]
    if not valid:
        why = f"no valid figure: {invalid} found, all invalid (see {PREFIX}.figure rows); nothing counts 0 (paper)"
        return [MetricValue("tvir", m, 0.0, "0-100", 0, detail=why, policy=POLICIES[m], judge=j) for m in VISUAL_PARTS]
    note = f"; {invalid} invalid figure(s) not counted" if invalid else ""
    note += f"; {unfetched} image(s) we could not read left out" if unfetched else ""
    makers: dict[str, Callable[[Items, list[str]], tuple[float, int, str] | tuple[str, str]]] = {
        "fq": _figure_quality, "mc": _composition, "fcq": _per_figure("fcq", CAPTION_DIMENSIONS, "caption"),
        "fci": _per_figure("fci", INTEGRATION_DIMENSIONS, "context"), "csc": _chart_source}
    values = []
    for metric, make in makers.items():
        got = make(items, valid)
        if isinstance(got[0], str):
            values.append(not_available("tvir", metric, "0-100", got[0], got[1], j))
        else:
            value, n, detail = got
            values.append(MetricValue("tvir", metric, 100 * value, "0-100", n, detail=(detail + note)[:500],
                                      policy=POLICIES[metric], judge=j))
    return values


def _figure_quality(items: Items, valid: list[str]):
    images = {f[len("image."):]: q for f, q in items.under("fq").items() if f.startswith("image.")}
    charts = items.per_figure("fq.chart")
    if any(v is None for checks in charts.values() for v in checks.values()):
        return items.failure("fq.chart", "chart quality (CQ)")
    if not images and not charts:
        return "pipeline_failure", "no image quality or chart check was recorded for the valid figures"
    n_dup = int(items.scores.get("fq.duplicates") or 0)
    iq = image_quality(list(images.values()), n_dup) if images else None
    cq = chart_quality([[float(v) for v in checks.values()] for checks in charts.values()]) if charts else None
    parts = []
    if images:
        parts.append(f"images={len(images)} IQ={iq:.3f} (duplicates={n_dup}, "
                     f"p_dup={duplicate_penalty(len(images), n_dup):.2f})")
    if charts:
        failed = sum(1 - v for checks in charts.values() for v in checks.values())
        parts.append(f"charts={len(charts)} CQ={cq:.3f} ({failed:g} of {len(charts) * len(CHART_CHECKS)} checks failed)")
    return figure_quality(len(images), iq, len(charts), cq), len(images) + len(charts), "; ".join(parts)


def _composition(items: Items, valid: list[str]):
    dims = items.under("mc")
    scored = [v for v in dims.values() if v is not None]
    if not scored:
        return items.failure("mc", "multimodal composition") if dims else ("pipeline_failure",
                                                                          "multimodal composition was not judged")
    detail = ", ".join(f"{d}={dims[d]:g}" if dims.get(d) is not None else f"{d}=N/A" for d, _ in COMPOSITION_DIMENSIONS)
    return dimension_mean(scored), len(scored), f"{detail}; valid figures={len(valid)}"


def _per_figure(part: str, dimensions, missing_what: str):
    def make(items: Items, valid: list[str]):
        grouped = items.per_figure(part)
        scores, zeros = [], []
        for figure in valid:
            got = grouped.get(figure, {})
            if "missing" in got:
                scores.append(0.0)
                zeros.append(figure)
                continue
            dims = [got.get(d) for d, _ in dimensions]
            if not got or any(v is None for v in dims):
                return items.failure(f"{part}.{figure}", f"{part} of {figure}") if got else (
                    "pipeline_failure", f"{part} of {figure}: not judged")
            scores.append(dimension_mean(dims))
        detail = ", ".join(f"{f}={100 * s:.0f}" for f, s in zip(valid, scores, strict=True))
        if zeros:
            detail += f"; no {missing_what} (0): {', '.join(zeros)}"
        return figure_mean(scores), len(scores), f"figures={len(valid)}: {detail}"
    return make


def _chart_source(items: Items, valid: list[str]):
    charts = {f: got for f, got in items.per_figure("csc").items() if f in valid}
    if not charts:
        return 0.0, 0, f"no chart among the {len(valid)} valid figure(s): no chart backs its data with a source (0)"
    scores, counts, unsourced, unreadable = [], [], [], []
    for figure, got in sorted(charts.items()):
        if "unsourced" in got:
            scores.append(0.0)
            unsourced.append(figure)
        elif "unreadable" in got:
            scores.append(0.0)
            unreadable.append(figure)
        elif got.get("contradictions") is None:
            return items.failure(f"csc.{figure}", f"chart-source consistency of {figure}")
        else:
            n = run_count(got["contradictions"])
            scores.append(csc_score(n))
            counts.append(f"{figure}={n}")
    if not counts and unreadable:  # nothing judged: the pages' failure, not a 0 (as CS does)
        bucket, why = items.failure("csc", "no chart's cited pages could be read")
        return bucket, why
    detail = f"charts={len(charts)}; contradictions {', '.join(counts) or 'none judged'}"
    if unsourced:
        detail += f"; no usable cited source (0): {', '.join(unsourced)}"
    if unreadable:
        detail += f"; cited pages unreadable (0): {', '.join(unreadable)}"
    return figure_mean(scores), len(scores), detail


def no_figure_anywhere(rows_by_metric: Mapping[str, Sequence[TaskValue]]) -> dict[str, str]:
    """The system-level rule: VA and Overall do not apply to a system none of whose reports has a
    figure (every FQ row says so)."""
    rows = [r for r in rows_by_metric.get("fq", ()) if r.applies]
    if rows and all(r.detail.startswith(NO_FIGURE) for r in rows):
        return {"va": NO_FIGURE_ANYWHERE, "overall": NO_FIGURE_ANYWHERE}
    return {}
