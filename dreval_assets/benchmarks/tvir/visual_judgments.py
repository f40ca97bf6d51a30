"""TVIR visual assessment, judged (../shared/methods/tvir.md, "Visual assessment"): per report with
figures (`JudgmentContext.figures`), the rows FQ, MC, FCQ, FCI and CSC are computed from. `judgments.py`
runs the rounds, with the textual judgments in the second.

Sanitising first: an invalid figure (missing or unreadable file, a pseudo-visual) does not count as a
figure; it gets its `figure` row and nothing else, and is taken out, caption and all, of the corrected
report the text judgments read (`visual_text.corrected_report`). Measured (no judge): each image's Q
and the near-duplicates among images. Then two rounds of calls:
1. `caption_round`: per chart its ten checks (`tvir/chart_checks`, with the image) and per captioned
   figure its caption (`tvir/caption_quality`, with the image; a dimension <= 6 brings a revised
   caption, which replaces the caption in every later judgment and is kept as a `caption_revision` row);
2. `visual_round`: per report its composition on the corrected report (`tvir/composition`), per figure
   with context its integration (`tvir/figure_integration`, with the image) and per chart with readable
   cited pages its contradictions with them (`tvir/chart_source`, with the image and the pages' best
   passages).

report_judgments rows, item ids under `tvir_visual.` (fNN: the parser's figure number, from 1):
- kind `figure` `figure.fNN`: score 1 valid / 0 invalid (the report's fault), the kind (photo or chart
  decided by the image: `tvir_kind`) and measured size, or the reason, in `reason`; N/A with its bucket
  when the image could not be had through our failure;
- kind `figure_quality` `fq.image.fNN`: the image's Q in [0, 1]; `fq.duplicates`: near-duplicate images;
- kind `chart_check` `fq.chart.fNN.<check>`: 1 pass / 0 fail;
- kind `composition` `mc.<dimension>`: 1-10;
- kind `caption_quality` `fcq.fNN.<dimension>` 1-10, or `fcq.fNN.missing` 0 (no caption: 0, paper);
- kind `caption_revision` `revised.fNN`: the revised caption in `item`, score = its lowest dimension;
- kind `figure_integration` `fci.fNN.<dimension>` 1-10, or `fci.fNN.missing` 0 (no context: 0, paper);
- kind `chart_source` `csc.fNN.contradictions` (count), `csc.fNN.unsourced` 0 (no cited source with a
  URL: 0, paper) or `csc.fNN.unreadable` N/A with the fetch's reason (cited pages could not be read).
A judged item with no value is N/A with the judgment's bucket (the offline judge cannot see images:
`model_failure`)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterator, Sequence

from pydantic import BaseModel

from ...core.images import aspect_score, background_share, image_quality, resolution_score
from ...core.language import detect_language, has_han
from ...core.passages import select_passages
from ...judges.base import Judge, Judgment, JudgmentRequest
from ...judges.prompts import fence_untrusted, load_template, one_line
from ..cited_sources import CitedSource
from ..judging import FigureImage, JudgmentContext, readable_reports, report_for_judge
from .visual_models import (CAPTION_DIMENSIONS, CAPTION_TEMPLATE, CHART_CHECKS, CHART_CHECKS_TEMPLATE, CHART_KINDS,
                            CHART_SOURCE_TEMPLATE, COMPOSITION_DIMENSIONS, COMPOSITION_TEMPLATE, DRAWN_SHARE,
                            INTEGRATION_DIMENSIONS, INTEGRATION_TEMPLATE, PREFIX, REVISION_AT_OR_BELOW, CaptionQuality,
                            ChartChecks, ChartSourceCheck, CompositionScores, FigureIntegration)
from .visual_text import composition_facts, corrected_report

SOURCE_TOKENS = 1_500  # passages of one cited page shown with a chart (or the judge's own budget, if smaller)
MAX_SOURCES = 5  # cited pages shown per chart
CONTEXT_CHARS = 4_000
LANGUAGES = {"zh": "Chinese", "en": "English"}


@dataclass
class Plan:
    system: str
    task: str
    query: str
    report: str
    figures: list[FigureImage]
    captions: dict[int, str] = field(default_factory=dict)  # figure -> caption shown (revised when revised)
    run: int = 1  # which of the averaged judge runs (policy tvir.judge_runs) these judgments belong to

    @property
    def valid(self) -> list[FigureImage]:
        return [f for f in self.figures if f.status == "ok" and f.image is not None]

    def corrected(self) -> str:
        """The report the text judgments read: sanitised, with the captions revised so far."""
        return corrected_report(self.report, self.figures, self.captions)


def fid(figure: FigureImage) -> str:
    return f"f{figure.figure + 1:02d}"


def is_chart(figure: FigureImage) -> bool:
    return figure.kind in CHART_KINDS


def tvir_kind(figure: FigureImage) -> FigureImage:
    """TVIR splits images (IQ) from code-drawn charts (CQ); the caption's words (`kind`) often miss
    which one a figure is ("Line" in a bus line's name, a chart captioned by what it shows), so the
    image decides between photo and chart. Tables and diagrams keep their kind."""
    if figure.kind not in ("photo", "chart") or figure.image is None:
        return figure
    share = background_share(figure.image.data, figure.image.sha256)
    return replace(figure, kind="chart" if share >= DRAWN_SHARE else "photo")


class Rows:
    """The rows of one judgment run, with the judge's provenance on each."""

    def __init__(self, judge: Judge) -> None:
        self.judge, self.rows = judge, []

    def add(self, plan: Plan, kind: str, item_id: str, item: str, *, score: float | None = None, reason: str = "",
            na_reason: str | None = None, template: str = "", judgment: Judgment | None = None) -> None:
        self.rows.append({
            "system": plan.system, "task": plan.task, "kind": kind, "item_id": f"{PREFIX}.{item_id}",
            "item": item[:2000], "credit": None, "score": score, "reason": reason[:1000], "na_reason": na_reason,
            "judge": self.judge.judge_id, "template": template,
            "template_hash": load_template(template)[1] if template else "",
            "cache_key": (judgment.provenance.cache_key or None) if judgment else None})

    def failed(self, plan: Plan, kind: str, item_id: str, item: str, template: str, judgment: Judgment) -> None:
        self.add(plan, kind, item_id, item, template=template, judgment=judgment,
                 na_reason=judgment.na_reason or "pipeline_failure", reason=judgment.error or "no answer")


AskedItem = tuple["Plan", "FigureImage | None", str, JudgmentRequest]  # (plan, figure, what, request)
Asked = list[AskedItem]


def caption_round(ctx: JudgmentContext, plans: Sequence[Plan], out: Rows) -> Iterator[AskedItem]:
    """Round 1, made as it is taken: per chart its ten checks, per captioned figure its caption (no
    caption: 0, written as it is reached)."""
    for plan in plans:
        for figure in plan.valid:
            if is_chart(figure):
                yield (plan, figure, "checks", _request(ctx, plan, CHART_CHECKS_TEMPLATE, {
                    "checks": _listing(CHART_CHECKS), "caption": fence_untrusted(figure.caption or "(none)")},
                    ChartChecks, figure))
            if figure.caption.strip():
                yield (plan, figure, "caption", _request(ctx, plan, CAPTION_TEMPLATE, {
                    "dimensions": _listing(CAPTION_DIMENSIONS), "caption": fence_untrusted(figure.caption),
                    "section": fence_untrusted(one_line(figure.section)) or "(none)",
                    "language": _language(figure.caption, plan.report)}, CaptionQuality, figure))
            else:
                out.add(plan, "caption_quality", f"fcq.{fid(figure)}.missing", "no caption", score=0.0,
                        reason="the figure has no caption: 0 (paper)")


def visual_round(ctx: JudgmentContext, plans: Sequence[Plan], out: Rows) -> Iterator[AskedItem]:
    """Round 2, after the captions were revised, made as it is taken: per report its composition on the
    corrected report, per figure with context its integration, per chart with readable cited pages its
    contradictions."""
    for plan in plans:
        if plan.valid:
            yield (plan, None, "composition", _request(ctx, plan, COMPOSITION_TEMPLATE, {
                "dimensions": _listing(COMPOSITION_DIMENSIONS), "query": plan.query, "n_figures": len(plan.valid),
                "report": report_for_judge(plan.corrected(), ctx.judge),
                "facts_map": composition_facts(plan.report, plan.figures)}, CompositionScores))
        for figure in plan.valid:
            caption = plan.captions.get(figure.figure, figure.caption)
            context = " ".join(figure.context.replace("<figure>", " ").split())
            if context:
                yield (plan, figure, "integration", _request(ctx, plan, INTEGRATION_TEMPLATE, {
                    "dimensions": _listing(INTEGRATION_DIMENSIONS), "caption": fence_untrusted(caption or "(none)"),
                    "context": fence_untrusted(figure.context[:CONTEXT_CHARS])}, FigureIntegration, figure))
            else:
                out.add(plan, "figure_integration", f"fci.{fid(figure)}.missing", "no context", score=0.0,
                        reason="no text around the figure: 0 (paper)")
            if is_chart(figure):
                request = _chart_source_request(ctx, plan, figure, caption, out)
                if request is not None:
                    yield (plan, figure, "source", request)


def answer_round(asked: Asked, judgments: Sequence[Judgment], out: Rows) -> None:
    """The rows of a round's answers (a caption answer may revise its caption for the next round)."""
    handlers = {"checks": _chart_check_rows, "caption": _caption_rows, "composition": _composition_rows,
                "integration": _integration_rows, "source": _chart_source_rows}
    for (plan, figure, what, _), judgment in zip(asked, judgments, strict=True):
        handlers[what](plan, figure, judgment, out)


def report_plans(ctx: JudgmentContext) -> list[Plan]:
    """One plan per readable report scored under TVIR, with its figures (none for a text-only report),
    for the first judge run (a later run takes a copy with its own run number and captions)."""
    found = []
    for system, task, row, report in readable_reports(ctx, "tvir"):
        figures = [tvir_kind(f) for f in sorted(ctx.figures.get((system, task), ()), key=lambda f: f.figure)
                   if f.origin != "cited"]  # a cited image URL is a source, not one of the report's figures
        found.append(Plan(system, task, row["query"] or "", report["text"] or "", figures))
    return found


def _request(ctx: JudgmentContext, plan: Plan, template: str, variables: dict, model: type[BaseModel],
             figure: FigureImage | None = None) -> JudgmentRequest:
    labels = {**ctx.labels, "system": plan.system, "task": plan.task}
    if figure is not None:
        variables = {**variables, "figure": fid(figure), "kind": figure.kind}
    return JudgmentRequest(template, variables, model, labels, images=(figure.image,) if figure else (), run=plan.run)


def _listing(items: Sequence[tuple[str, str]]) -> str:
    return "\n".join(f"- [{key}] {what}" for key, what in items)


def _language(caption: str, report: str) -> str:
    """The language a revised caption is written in: a caption with Chinese characters is Chinese
    (too short for the detector, often), else what the caption or the report is written in."""
    found = "zh" if has_han(caption) else detect_language(caption) or detect_language(report[:4000])
    return LANGUAGES.get(found or "", "the same language")


def measured_rows(plan: Plan, out: Rows) -> None:
    """The sanitising verdict of every figure, and each image's measured quality (charts are judged)."""
    images = [f for f in plan.valid if not is_chart(f)]
    for figure in plan.figures:
        caption = figure.caption or figure.src
        if figure.status != "ok" or figure.image is None:
            why = f"invalid, not counted: {figure.invalid_reason or figure.status}"
            if (figure.invalid_bucket or "model_failure") == "model_failure":  # the report's own: counts as none
                out.add(plan, "figure", f"figure.{fid(figure)}", caption, score=0.0, reason=why)
            else:  # we could not get the image: left out too, but never a 0 of the report's
                out.add(plan, "figure", f"figure.{fid(figure)}", caption, na_reason=figure.invalid_bucket, reason=why)
            continue
        m = figure.measure
        size = f"{m.width}x{m.height} {m.mime}, {m.n_bytes:,} bytes" if m else "not measured"
        out.add(plan, "figure", f"figure.{fid(figure)}", caption, score=1.0, reason=f"{figure.kind}; {size}")
    for figure in images:
        m = figure.measure
        if m is None:
            continue
        again = f"; repeats f{figure.duplicate_of + 1:02d}" if figure.duplicate_of is not None else ""
        out.add(plan, "figure_quality", f"fq.image.{fid(figure)}", figure.caption or figure.src,
                score=round(image_quality(m), 4),
                reason=(f"resolution {resolution_score(m.width, m.height):.2f}, "
                        f"aspect {aspect_score(m.width, m.height):.2f}, sharpness {m.sharpness:.0f}, "
                        f"contrast {m.contrast:.3f}{again}"))
    if images:
        dups = [f"{fid(f)} repeats f{f.duplicate_of + 1:02d}" for f in images if f.duplicate_of is not None]
        out.add(plan, "figure_quality", "fq.duplicates", "near-duplicate images", score=float(len(dups)),
                reason=("perceptual-hash repeats: " + ", ".join(dups)) if dups else "no near-duplicate image")


def _chart_check_rows(plan: Plan, figure: FigureImage, judgment: Judgment, out: Rows) -> None:
    answer = judgment.answer if isinstance(judgment.answer, ChartChecks) else None
    for check, what in CHART_CHECKS:
        item_id = f"fq.chart.{fid(figure)}.{check}"
        if answer is None:
            out.failed(plan, "chart_check", item_id, what, CHART_CHECKS_TEMPLATE, judgment)
            continue
        passed = bool(getattr(answer, check))
        out.add(plan, "chart_check", item_id, what, score=float(passed), template=CHART_CHECKS_TEMPLATE,
                judgment=judgment, reason="pass" if passed else (answer.problems or "fail"))


def _caption_rows(plan: Plan, figure: FigureImage, judgment: Judgment, out: Rows) -> None:
    _dimension_rows(plan, judgment, out, CaptionQuality, "caption_quality", f"fcq.{fid(figure)}",
                    CAPTION_DIMENSIONS, CAPTION_TEMPLATE)
    answer = judgment.answer if isinstance(judgment.answer, CaptionQuality) else None
    if answer is None:
        return
    lowest = min(getattr(answer, dim).score for dim, _ in CAPTION_DIMENSIONS)
    revised = " ".join(answer.revised_caption.split())
    if lowest <= REVISION_AT_OR_BELOW and revised:
        plan.captions[figure.figure] = revised
        out.add(plan, "caption_revision", f"revised.{fid(figure)}", revised, score=float(lowest),
                template=CAPTION_TEMPLATE, judgment=judgment,
                reason=f"a dimension scored {lowest} (<= {REVISION_AT_OR_BELOW}): replaces the caption "
                       f"{figure.caption!r} in the composition, integration and chart-source judgments")


def _dimension_rows(plan: Plan, judgment: Judgment, out: Rows, model: type[BaseModel], kind: str, prefix: str,
                    dimensions: Sequence[tuple[str, str]], template: str) -> None:
    answer = judgment.answer if isinstance(judgment.answer, model) else None
    for dim, what in dimensions:
        if answer is None:
            out.failed(plan, kind, f"{prefix}.{dim}", what, template, judgment)
            continue
        got = getattr(answer, dim)
        out.add(plan, kind, f"{prefix}.{dim}", what, score=float(got.score), reason=got.reason, template=template,
                judgment=judgment)


def _composition_rows(plan: Plan, figure: None, judgment: Judgment, out: Rows) -> None:
    _dimension_rows(plan, judgment, out, CompositionScores, "composition", "mc", COMPOSITION_DIMENSIONS,
                    COMPOSITION_TEMPLATE)


def _integration_rows(plan: Plan, figure: FigureImage, judgment: Judgment, out: Rows) -> None:
    _dimension_rows(plan, judgment, out, FigureIntegration, "figure_integration", f"fci.{fid(figure)}",
                    INTEGRATION_DIMENSIONS, INTEGRATION_TEMPLATE)


def _chart_source_request(ctx: JudgmentContext, plan: Plan, figure: FigureImage, caption: str,
                          out: Rows) -> JudgmentRequest | None:
    """The chart-source request, or None after writing why this chart scores 0 or cannot be judged."""
    if not figure.citation_indices:
        out.add(plan, "chart_source", f"csc.{fid(figure)}.unsourced", caption or figure.src, score=0.0,
                reason="the chart's caption cites no source: 0 (paper)")
        return None
    if ctx.cited_sources is None:
        out.add(plan, "chart_source", f"csc.{fid(figure)}.unreadable", caption or figure.src,
                na_reason="pipeline_failure", reason="the cited pages were not given to the judgment")
        return None
    sources = ctx.cited_sources.of(plan.system, plan.task, figure.citation_indices)
    readable = [s for s in sources if s.text][:MAX_SOURCES]
    if not readable:
        unread = [s for s in sources if s.url]
        why = "; ".join(f"[{s.index}] {s.na_reason}: {s.detail}" for s in sources)[:900]
        if unread:  # cited with a URL that could not be read: not the report's fault alone
            out.add(plan, "chart_source", f"csc.{fid(figure)}.unreadable", caption or figure.src,
                    na_reason=unread[0].na_reason or "data_accessibility", reason=f"no cited page could be read: {why}")
        else:
            out.add(plan, "chart_source", f"csc.{fid(figure)}.unsourced", caption or figure.src, score=0.0,
                    reason=f"no usable cited source: 0 (paper); {why}")
        return None
    budget = min(SOURCE_TOKENS, ctx.judge.source_token_budget or SOURCE_TOKENS)
    queries = [q for q in (caption, figure.context.replace("<figure>", " ")) if q.strip()]
    shown = [(s, select_passages(s.text or "", queries, budget).text) for s in readable]
    return _request(ctx, plan, CHART_SOURCE_TEMPLATE, {
        "caption": fence_untrusted(caption or "(none)"),
        "sources": fence_untrusted("\n\n".join(_shown_source(s, text) for s, text in shown)),
        "source_list": [{"index": s.index, "url": s.url, "text": text} for s, text in shown]}, ChartSourceCheck, figure)


def _shown_source(source: CitedSource, passages: str) -> str:
    return f"[{source.index}] {source.title or source.url}\n{source.url}\n{passages}"


def _chart_source_rows(plan: Plan, figure: FigureImage, judgment: Judgment, out: Rows) -> None:
    item_id, what = f"csc.{fid(figure)}.contradictions", figure.caption or figure.src
    answer = judgment.answer if isinstance(judgment.answer, ChartSourceCheck) else None
    if answer is None:
        out.failed(plan, "chart_source", item_id, what, CHART_SOURCE_TEMPLATE, judgment)
        return
    found = "; ".join(f"[{c.source}] chart {c.chart_shows} / source {c.source_says}" for c in answer.contradictions)
    out.add(plan, "chart_source", item_id, what, score=float(len(answer.contradictions)),
            reason=found or answer.reason or "no contradiction", template=CHART_SOURCE_TEMPLATE, judgment=judgment)
