"""MMDR MOSAIC (methods/mmdr.md): the report's figures (`JudgmentContext.figures`) are its multimodal
items; each is judged in one vision call with its image, caption and the claim the report makes of it.
The suite scores the items (`visual_metrics.py`).

Routing looks at the image, never at caption words alone (the paper: a bus photo captioned with a line
name is a PHOTO). With a vision judge the judge routes: the item's prompt lists the four types with the
parts each is scored on, and the judge names the type it sees and scores that type's parts. Before the
call, and offline (the offline judge cannot see images), the route is measured (`measured_type`): an
image whose commonest colour covers under FLAT_SHARE of it (`core/images.background_share`) is a photo,
PHOTO; a drawn graphic is a table (OCRCHART) or a diagram (DIAGRAM) when the parser's kind or the
caption's table/OCR words say so, else a DATACHART. An item without a usable image falls back to rule
cues (`route`: table/OCR words, then the parser's kind). The `image_ok` row says who routed it.
The claim (`item_claim`): the nearest sentences around the figure that refer to it (Figure n, chart,
shows, ...) or repeat a value of its caption, else the sentence on each side.

report_judgments rows, kind `mosaic`, item ids `mmdr.mosaic.i<k>.<type>.<part>` (k = the figure's
number in parsed_reports.figures, from 1): `image_ok` 1 for a usable image and the judge's values of
the type's parts (sem/acc/vqa/h and f, in [0, 1]) or their N/A; an unusable image has one row
`image_<why>` (missing, unreadable, pseudo_visual, invalid) scoring 0, its reason beside it, and no
call; an image we could not get (a remote image while fetching is off, a failed download: its bucket is
not model_failure) is N/A with that bucket, never a 0. A paragraph that cites an image URL without
embedding it is an item too (`report_images` origin `cited`, the paragraph as its context).

A judge's answer missing a part of the type it named is N/A `pipeline_failure` (the judge's, never the
report's; the suite scores such an item 0, MMDR's rule). The offline judge cannot see images: every
usable item is N/A `pipeline_failure` "judge limit: ..." (MOSAIC N/A with that marker), routed by the
measurement; a report whose every image is unusable still scores its failed items 0, as the paper does.

The gate (paper: MOSAIC runs only if FLAE > 0 and TRACE > 0): `judge_visual` judges VEF first, and a
report with no cited claim (EVI = 0 by the protocol) whose VEF is FAIL has TRACE = 0, so its items are
not judged: one row `mmdr.mosaic.gate` (score 0) says why. FLAE and a judged EVI are known only after
this stage (claim_verdicts runs beside it), so a gate they close is applied by the suite, after the calls.
"""
from __future__ import annotations

import re
from typing import Any, Literal, Mapping

import polars as pl
from pydantic import BaseModel, Field

from ...core.images import background_share
from ...judges.base import JudgmentRequest
from ...judges.prompts import fence_untrusted, load_template, one_line
from ...judges.readable import NotRead
from ...stages.frames import frame
from ..judging import FigureImage, JudgmentContext, readable_reports
from .vef import vef
from .visual_metrics import DIMENSIONS, GATE_CLOSED, MOSAIC_PREFIX, VEF_PREFIX, item_parts

TEMPLATE = "mmdr/mosaic_item"
CLAIM_CHARS = 1_200
CLAIM_SENTENCES = 2  # sentences about the figure kept on each side of it
CONTEXT_CHARS = 2_500
# share of an image's pixels in its commonest colour at or above which it is a drawn graphic, not a photo
# (ours, measured: the demo's charts 0.68-0.75, its photos under 0.07; the same cut as TVIR's classifier)
FLAT_SHARE = 0.4
KIND_TYPES = {"chart": "DATACHART", "table": "OCRCHART", "diagram": "DIAGRAM", "photo": "PHOTO"}
_OCR_CUES = re.compile(r"\b(?:tables?|tabular|spreadsheets?|ocr|scanned)\b|表格|数据表", re.I)
_REFERS = re.compile(r"\b(?:fig(?:ure)?\.?\s*\d+|figures?|charts?|graphs?|plots?|images?|photos?|pictures?|"
                     r"diagrams?|tables?|shown|shows|illustrat\w*|depict\w*)\b|如图|图\s*\d|表\s*\d", re.I)
_SENTENCES = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_NUMBERS = re.compile(r"\d[\d,.]*\d|\d")
_MARKER = re.compile(r"\[\d+(?:\s*[-,–]\s*\d+)*\]")
_LABEL = re.compile(r"^\s*(?:fig(?:ure)?|table|chart|图|表)\.?\s*\d+\s*[:.：]?", re.I)  # "Figure 1:" is no value

# What the judge is asked to score for each type (the paper's dimensions of that type).
GUIDANCE = {
    "sem": "sem: visual-semantic alignment: does the caption and claim describe what the image actually shows?",
    "acc": "acc: data-reading accuracy: are the values, labels, units and trends the report reads off the image "
           "exactly those the image shows?",
    "vqa": "vqa: ask yourself two or three short questions the image answers (what it shows, a key value or "
           "label, the main trend or relation); the share the report's caption and claim answer correctly",
    "h": "h: hallucination: the share of the structure (nodes, arrows, steps, relations) the report attributes "
         "to the diagram that the diagram does not show (0: none)",
}


VisualType = Literal["PHOTO", "DATACHART", "OCRCHART", "DIAGRAM"]


class MosaicItemScores(BaseModel):
    """MMDR MOSAIC: one visual item of a report, routed by the judge from the image and scored on that
    type's dimensions."""

    visual_type: VisualType  # what the judge sees the image to be
    sem: float | None = Field(default=None, ge=0, le=1)
    acc: float | None = Field(default=None, ge=0, le=1)
    vqa: float | None = Field(default=None, ge=0, le=1)
    h: float | None = Field(default=None, ge=0, le=1)
    f: float | None = Field(default=None, ge=0, le=1)
    questions: list[str] = Field(default_factory=list)  # the questions asked of the image for VQA
    reason: str = ""


def route(kind: str, caption: str) -> str:
    """Rule cues, the fallback for an item without a usable image: table/OCR words in the caption, then
    the parser's kind of the figure."""
    if _OCR_CUES.search(caption or ""):
        return "OCRCHART"
    return KIND_TYPES.get(kind, "PHOTO")


def flat_graphic(data: bytes) -> bool:
    """A drawn graphic rather than a photo: its commonest colour (the background) covers FLAT_SHARE or more."""
    return background_share(data) >= FLAT_SHARE


def measured_type(fig: FigureImage) -> tuple[str, str]:
    """The item's type from its image (see the module's doc), and how it was decided."""
    if fig.image is None:
        return route(fig.kind, fig.caption), f"rule cues (no usable image: kind {fig.kind})"
    share = background_share(fig.image.data, fig.image.sha256)
    measured = f"measured: background share {share:.2f}"
    if share < FLAT_SHARE:
        return "PHOTO", f"{measured}, a photo"
    drawn = route(fig.kind, fig.caption)
    return ("DATACHART" if drawn == "PHOTO" else drawn), f"{measured}, a drawn graphic ({fig.kind} by its caption)"


def visual_type_of(fig: FigureImage) -> str:
    return measured_type(fig)[0]


def unusable_part(reason: str) -> str:
    """The row part naming why an image is unusable (its full reason goes in the row's reason)."""
    low = reason.lower()
    if any(w in low for w in ("missing", "not found", "no such", "no file", "does not exist")):
        return "image_missing"
    if "unreadable" in low or "not a readable" in low or "cannot decode" in low:
        return "image_unreadable"
    if any(w in low for w in ("pseudo", "ascii", "mermaid")):
        return "image_pseudo_visual"
    return "image_invalid"


def _bare(text: str) -> str:
    return " ".join(_MARKER.sub("", text).split())


def _values(text: str) -> set[str]:
    """Numbers other than years, figure labels and citation markers, without thousands separators."""
    found = {n.replace(",", "") for n in _NUMBERS.findall(_LABEL.sub("", _MARKER.sub(" ", text)))}
    return {n for n in found if not (len(n) == 4 and n.isdigit() and 1800 <= int(n) <= 2100)}


def item_claim(context: str, caption: str) -> str:
    """The sentences of `context` (the text around the figure, `<figure>` where it stands) that refer to
    the figure (Figure n, chart, shows, ...) or repeat a value of its caption, at most CLAIM_SENTENCES on
    each side, the nearest first; else the sentence just before and just after it. Headings and the
    caption itself are not claims."""
    before, _, after = (context or "").partition("<figure>")
    caption_bare, caption_values = _bare(caption), _values(caption or "")

    def sentences(text: str) -> list[str]:
        found = [" ".join(s.split()) for s in _SENTENCES.split(text)]
        return [s for s in found if s and not s.startswith("#") and _bare(s) != caption_bare
                and not caption_bare.startswith(_bare(s))]

    def refers(sentence: str) -> bool:
        return bool(_REFERS.search(sentence) or caption_values & _values(sentence))

    near_before, near_after = sentences(before), sentences(after)
    chosen = [s for s in near_before if refers(s)][-CLAIM_SENTENCES:] + [s for s in near_after if refers(s)][
        :CLAIM_SENTENCES]
    if not chosen:
        chosen = near_before[-1:] + near_after[:1]
    text = " ".join(dict.fromkeys(chosen))
    return text if len(text) <= CLAIM_CHARS else text[:CLAIM_CHARS] + " [...]"


def _row(system: str, task: str, fig: FigureImage, visual_type: str, part: str, ctx: JudgmentContext, *,
         score: float | None = None, reason: str = "", na_reason: str | None = None,
         cache_key: str | None = None) -> dict:
    return {"system": system, "task": task, "kind": "mosaic",
            "item_id": f"{MOSAIC_PREFIX}.i{fig.figure + 1:02d}.{visual_type.lower()}.{part}",
            "item": f"{visual_type} {fig.src}: {fig.caption}"[:500], "credit": None, "score": score,
            "reason": reason[:1000], "na_reason": na_reason, "judge": ctx.judge.judge_id, "template": TEMPLATE,
            "template_hash": load_template(TEMPLATE)[1], "cache_key": cache_key}


def _gate_row(system: str, task: str, why: str, ctx: JudgmentContext) -> dict:
    return {"system": system, "task": task, "kind": "mosaic", "item_id": f"{MOSAIC_PREFIX}.gate", "item": "gate",
            "credit": None, "score": 0.0, "reason": f"{GATE_CLOSED}: {why}", "na_reason": None,
            "judge": ctx.judge.judge_id, "template": TEMPLATE, "template_hash": load_template(TEMPLATE)[1],
            "cache_key": None}


TYPE_GUIDE = {"PHOTO": "a photo or screenshot", "DATACHART": "a chart whose values are read from its marks",
              "OCRCHART": "a table or chart read from its printed text", "DIAGRAM": "a flow, structure or process "
              "drawing"}


def types_text() -> str:
    """The four types, what each is and the parts it is scored on, as the item prompt lists them."""
    return "\n".join(f"- {t}: {TYPE_GUIDE[t]}; score {', '.join(DIMENSIONS[t])} and f" for t in TYPE_GUIDE)


def item_request(fig: FigureImage, query: str, ctx: JudgmentContext) -> JudgmentRequest:
    claim = item_claim(fig.context, fig.caption)
    context = fig.context if len(fig.context) <= CONTEXT_CHARS else fig.context[:CONTEXT_CHARS] + " [...]"
    variables = {"query": query, "types": types_text(), "parts": "\n".join(f"- {GUIDANCE[p]}" for p in GUIDANCE),
                 "image_name": fence_untrusted(one_line(fig.src)), "caption": fence_untrusted(fig.caption or "(no caption)"),
                 "citations": ", ".join(f"[{i}]" for i in fig.citation_indices) or "none",
                 "claim": fence_untrusted(claim or "(the report says nothing about it)"),
                 "context": fence_untrusted(context or "(none)")}
    return JudgmentRequest(TEMPLATE, variables, MosaicItemScores,
                           {**ctx.labels, "system": fig.system, "task": fig.task}, images=(fig.image,))


def answer_rows(fig: FigureImage, measured: tuple[str, str], judgment, ctx: JudgmentContext) -> list[dict]:
    """The item's rows under the type the judge saw (the measured one when it gave no answer): `image_ok`
    saying who routed it, then each part of that type, valued or N/A."""
    answer = judgment.answer if isinstance(judgment.answer, MosaicItemScores) else None
    cache_key = judgment.provenance.cache_key or None
    visual_type = answer.visual_type if answer is not None else measured[0]
    routed = (f"routed {visual_type} by the judge from the image ({measured[1]} -> {measured[0]})"
              if answer is not None else f"routed {visual_type}, {measured[1]} (no judge's answer)")
    rows = [_row(fig.system, fig.task, fig, visual_type, "image_ok", ctx, score=1.0,
                 reason=f"{fig.image.mime}, {len(fig.image.data):,} bytes sent; {routed}"
                        + (f"; same image as figure {fig.duplicate_of + 1}" if fig.duplicate_of is not None else ""))]
    for part in item_parts(visual_type):
        value = getattr(answer, part) if answer is not None else None
        if value is not None:
            why = answer.reason + (f" (questions: {'; '.join(answer.questions[:5])})" if answer.questions else "")
            rows.append(_row(fig.system, fig.task, fig, visual_type, part, ctx, score=float(value), reason=why,
                             cache_key=cache_key))
        else:
            why = (judgment.error or "no answer") if answer is None else \
                f"the judge gave no {part} for a {visual_type} item: {answer.reason}"
            # a part left out is the judge's failure, never the report's
            bucket = (judgment.na_reason if answer is None else None) or "pipeline_failure"
            rows.append(_row(fig.system, fig.task, fig, visual_type, part, ctx, reason=why, na_reason=bucket,
                             cache_key=cache_key))
    return rows


def closed_before_judging(ctx: JudgmentContext, vef_rows: pl.DataFrame) -> dict[tuple[str, str], str]:
    """The reports whose TRACE is already known to be 0: no cited claim (EVI = 0) and VEF FAIL."""
    if ctx.claims is None:
        return {}
    failed = {(r["system"], r["task"]) for r in vef_rows.iter_rows(named=True)
              if r["item_id"] == f"{VEF_PREFIX}.pass" and r["score"] == 0.0}
    cited = {(r["system"], r["task"]) for r in ctx.claims.iter_rows(named=True)
             if r["urls"] or r["unresolved_indices"]}
    return {key: "TRACE = 0: no cited claim (EVI = 0) and VEF FAIL" for key in failed - cited}


def judge_visual(ctx: JudgmentContext) -> pl.DataFrame:
    """VEF, then MOSAIC's items of the reports whose gate is not known to be closed."""
    vef_rows = vef(ctx)
    return pl.concat([vef_rows, mosaic(ctx, closed_before_judging(ctx, vef_rows))])


def mosaic(ctx: JudgmentContext, closed: Mapping[tuple[str, str], str] | None = None) -> pl.DataFrame:
    """MOSAIC's item rows; `closed`: reports whose gate is closed (why), given one gate row and no call."""
    closed = closed or {}
    rows, asked = [], []
    for system, task, task_row, _ in readable_reports(ctx, "mmdr"):
        if (system, task) in closed and ctx.figures.get((system, task)):
            rows.append(_gate_row(system, task, closed[(system, task)], ctx))
            continue
        for fig in ctx.figures.get((system, task), ()):
            measured = measured_type(fig)
            visual_type = measured[0]
            if fig.status != "ok" or fig.image is None:
                why = fig.invalid_reason or "the image is not usable"
                if fig.invalid_bucket not in (None, "model_failure"):  # not the report's fault: no 0
                    rows += [_row(system, task, fig, visual_type, part, ctx, na_reason=fig.invalid_bucket,
                                  reason=f"image not available to judge: {why}") for part in item_parts(visual_type)]
                    continue
                rows.append(_row(system, task, fig, visual_type, unusable_part(why), ctx, score=0.0,
                                 reason=f"failed item (paper: an unusable image scores 0): {why}"))
                continue
            asked.append((fig, measured, item_request(fig, task_row.get("query") or "", ctx)))
    judgments = ctx.judge.judge_many([request for _, _, request in asked])
    for (fig, measured, _), judgment in zip(asked, judgments, strict=True):
        rows += answer_rows(fig, measured, judgment, ctx)
    return frame("report_judgments", rows)


def answer_mosaic_item(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`mmdr/mosaic_item` offline: nothing it measures stands for SEM, ACC, VQA or f, so no answer."""
    raise NotRead(f"the offline judge cannot see images: MOSAIC's item {variables.get('image_name', '')} needs a "
                  "vision judge for its type and scores")
