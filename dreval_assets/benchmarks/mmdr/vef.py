"""MMDR VEF (visual evidence fidelity, methods/mmdr.md): one vision call per report decides it from the
task's images together with the textual visual ground truth (`tasks.visual_ground_truth`, version in
`visual_ground_truth_version`) and the task's Daily/Research segment (paper A.1.2).

What the judge is shown: the task, its segment (`set` as released; else from an MMDR id, Q0-Q99 Research
and Q100-Q139 Daily; else "not given"), the ground truth, the report, and every image of the task
(`JudgmentContext.task_images`) after the text. A task that lists images of which none could be loaded
(a remote image, an unreadable file) is N/A `data_accessibility`, never judged blind; some loaded: judged
on those, the rows saying which were missing. A task listing no image at all is judged on the ground
truth alone, and the rows say so. A text-only judge model refusing the images is the judge's limit
(N/A, "judge limit: ..."). The offline judge cannot see images: it measures the report against the
ground truth's text (`offline_vef`, `vef_offline.py`), a fallback its reason names.

report_judgments rows, kind `vef`, item ids under `mmdr.vef.`:
- `pass`: 1 PASS / 0 FAIL by the paper's strict rule (`visual_metrics.vef_passes`), the reason naming the
  judge's verdict, score, failure type, the images shown and the ground truth's version; N/A with its
  bucket when there is no ground truth or no image to show (`data_accessibility`) or the call failed;
- `score` (0-10), `verdict` (1 when the judge said PASS), `wrong_identity`, `false_presence` (1 / 0);
- `failure.<type>` = 1 for a FAIL's type in the paper's taxonomy (EMI, RMD, DTE, LKC, STO).

The offline measurement: the ground truth's numbers, years and names against the report; a number the
report contradicts in the same slot is a FAIL (DTE), a report stating none of them is a FAIL (STO: it
does not use the image), otherwise PASS with a score from 6 up by the share it states (missing details
alone do not fail).
"""
from __future__ import annotations

from typing import Any, Literal, Mapping, Sequence

import json
import re

import polars as pl
from pydantic import BaseModel, Field

from ...judges.base import ImageInput, JudgmentRequest
from ...judges.prompts import for_judge, load_template
from ...releases.attachment_images import is_image
from ...stages.frames import frame
from ..judging import JudgmentContext, readable_reports, report_for_judge
from .loader import gt_version
from .vef_offline import measure_vef
from .visual_metrics import VEF_PASS_SCORE, VEF_PREFIX, vef_passes

TEMPLATE = "mmdr/vef"
GT_CHARS = 12_000  # an LLM judge reads the visual ground truth up to here
FAILURE_TYPES = ("EMI", "RMD", "DTE", "LKC", "STO")
SEGMENTS = {"research": "Research (charts, tables, diagrams: read values, labels, axes and trends exactly)",
            "daily": "Daily (screenshots, interfaces, photos: identify entities, interface states and text exactly)"}
_MMDR_ID = re.compile(r"^Q(\d+)$")
OFFLINE_NOTE = "offline judge: measured against the ground truth's text, the task's images unseen"


class VefJudgment(BaseModel):
    """MMDR VEF: the report against the task's visual ground truth."""

    score: int = Field(ge=0, le=10)
    verdict: Literal["PASS", "FAIL"]
    failure_type: Literal["EMI", "RMD", "DTE", "LKC", "STO", "NONE"] = "NONE"
    wrong_identity: bool = False  # the report names a different entity than the image shows
    false_presence: bool = False  # the report claims the image shows something it does not
    reason: str = ""


def version_of(task_row: Mapping[str, Any]) -> str:
    """The ground truth's version as loaded, or its content hash when the release gave none."""
    gt = task_row.get("visual_ground_truth") or ""
    return task_row.get("visual_ground_truth_version") or f"{gt_version(gt)} (computed)"


def segment_of(task_row: Mapping[str, Any]) -> tuple[str, str]:
    """The task's Daily/Research segment as the prompt shows it, and where it came from."""
    attributes = json.loads(task_row.get("attributes") or "{}")
    given = str(attributes.get("set") or "").strip().lower()
    if given in SEGMENTS:
        return SEGMENTS[given], "the release's set"
    match = _MMDR_ID.match(str(task_row.get("original_id") or ""))
    if match and int(match[1]) < 140:  # the release's numbering: Q0-Q99 research, Q100-Q139 daily
        segment = SEGMENTS["research" if int(match[1]) < 100 else "daily"]
        return segment, "the task id (Q0-Q99 research, Q100-Q139 daily)"
    return "not given", "not given"


def listed_images(task_row: Mapping[str, Any]) -> list[str]:
    """The images the task lists (image attachments, and remote image URLs as MMDR releases give them)."""
    return [a for a in task_row.get("attachments") or []
            if is_image(a) or a.lower().startswith(("http://", "https://"))]


def _row(system: str, task: str, part: str, ctx: JudgmentContext, *, score: float | None = None, reason: str = "",
         na_reason: str | None = None, item: str = "", cache_key: str | None = None) -> dict:
    return {"system": system, "task": task, "kind": "vef", "item_id": f"{VEF_PREFIX}.{part}", "item": item or part,
            "credit": None, "score": score, "reason": reason[:1000], "na_reason": na_reason,
            "judge": ctx.judge.judge_id,
            "template": TEMPLATE, "template_hash": load_template(TEMPLATE)[1], "cache_key": cache_key}


def answer_rows(system: str, task: str, answer: VefJudgment, version: str, ctx: JudgmentContext,
                cache_key: str | None) -> list[dict]:
    passed = vef_passes(answer.score, answer.verdict, answer.wrong_identity, answer.false_presence)
    failure = answer.failure_type if not passed and answer.failure_type != "NONE" else None
    why = (f"{'PASS' if passed else 'FAIL'} (judge verdict {answer.verdict}, score {answer.score}/10"
           + (f", {failure}" if failure else "") + f"): {answer.reason}; visual GT {version}")
    if answer.verdict == "PASS" and not passed:
        why = f"{why} [rule: score >= {VEF_PASS_SCORE}, no wrong identity or false presence]"
    kw = {"ctx": ctx, "cache_key": cache_key}
    rows = [_row(system, task, "pass", score=float(passed), reason=why, item="PASS" if passed else "FAIL", **kw),
            _row(system, task, "score", score=float(answer.score), reason=answer.reason, **kw),
            _row(system, task, "verdict", score=float(answer.verdict == "PASS"), item=answer.verdict, **kw),
            _row(system, task, "wrong_identity", score=float(answer.wrong_identity), **kw),
            _row(system, task, "false_presence", score=float(answer.false_presence), **kw)]
    if failure:
        rows.append(_row(system, task, f"failure.{failure.lower()}", score=1.0, item=failure, **kw))
    return rows


def vef(ctx: JudgmentContext) -> pl.DataFrame:
    rows, asked, requests = [], [], []
    for system, task, task_row, report in readable_reports(ctx, "mmdr"):
        gt = (task_row.get("visual_ground_truth") or "").strip()
        if not gt:
            rows.append(_row(system, task, "pass", ctx=ctx, na_reason="data_accessibility",
                             reason="the task has no visual ground truth (tasks.visual_ground_truth is empty)"))
            continue
        images, shown = _images(task_row, ctx.task_images.get(task, ()))
        if images is None:
            rows.append(_row(system, task, "pass", ctx=ctx, na_reason="data_accessibility", reason=shown))
            continue
        segment, _ = segment_of(task_row)
        version = version_of(task_row)
        asked.append((system, task, f"{version}; {shown}"))
        requests.append(JudgmentRequest(TEMPLATE, {
            "query": task_row.get("query") or "", "segment": segment,
            "images": "\n".join(f"- image {i}: {image.name}" for i, image in enumerate(images, 1))
                      or "(the task lists no image: judge from the ground truth alone)",
            "visual_ground_truth": for_judge(gt, ctx.judge.source_token_budget, GT_CHARS, "visual ground truth cut")[0],
            "report": report_for_judge(report["text"], ctx.judge)},
            VefJudgment, {**ctx.labels, "system": system, "task": task}, images=tuple(images)))
    for (system, task, version), judgment in zip(asked, ctx.judge.judge_many(requests), strict=True):
        cache_key = judgment.provenance.cache_key or None
        if isinstance(judgment.answer, VefJudgment):
            rows += answer_rows(system, task, judgment.answer, version, ctx, cache_key)
        else:
            rows.append(_row(system, task, "pass", ctx=ctx, na_reason=judgment.na_reason or "pipeline_failure",
                             reason=f"{judgment.error or 'no answer'}; visual GT {version}", cache_key=cache_key))
    return frame("report_judgments", rows)


def _images(task_row: Mapping[str, Any], loaded: Sequence[ImageInput]) -> tuple[list[ImageInput] | None, str]:
    """The task's images to show and what the rows say of them; None when it lists images and none loaded."""
    listed = listed_images(task_row)
    names = {image.name for image in loaded}
    missing = [name for name in listed if name not in names]
    if not loaded and listed:
        return None, (f"none of the task's {len(listed)} image(s) could be shown to the judge "
                      f"({', '.join(missing[:3])}: not loaded with the task); VEF is decided from the images")
    if not loaded:
        return [], "the task lists no image: judged on the ground truth alone"
    note = f"{len(loaded)} task image(s) shown"
    return list(loaded), note + (f", {len(missing)} not loaded ({', '.join(missing[:3])})" if missing else "")


# --- the offline judge: measured from the ground truth's text (vef_offline.py) --------------------

def offline_vef(gt: str, report: str) -> VefJudgment:
    m = measure_vef(gt, report)
    counts = f"{m.stated} of {m.elements} ground-truth numbers, years and names stated"
    if m.contradicted:
        return VefJudgment(score=max(0, VEF_PASS_SCORE - 1 - len(m.contradicted)), verdict="FAIL", failure_type="DTE",
                           reason=f"measured: {len(m.contradicted)} contradicted: {'; '.join(m.contradicted[:3])}; "
                                  f"{counts}")
    if m.stated == 0:
        return VefJudgment(score=0, verdict="FAIL", failure_type="STO",
                           reason=f"measured: {counts}: the report does not use what the image shows")
    return VefJudgment(score=VEF_PASS_SCORE + round((10 - VEF_PASS_SCORE) * m.share), verdict="PASS",
                       reason=f"measured: {counts}, none contradicted; missing details alone do not fail")


def answer_vef(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`mmdr/vef` offline: `offline_vef` on the ground truth and the report (it reads both whole); it cannot
    see the task's images, and its reason says so (a labelled fallback, `fallback` in the judgment)."""
    answer = offline_vef(str(variables.get("visual_ground_truth") or ""), str(variables.get("report") or ""))
    return answer.model_copy(update={"reason": f"{OFFLINE_NOTE}; {answer.reason}"}), {"fallback": True}
