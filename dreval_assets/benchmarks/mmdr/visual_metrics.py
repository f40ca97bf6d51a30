"""MMDR's visual metrics from their report judgments (methods/mmdr.md): VEF, MOSAIC and its SEM, ACC, VQA.

VEF (`vef.py` judges it): per report PASS or FAIL against the task's visual ground truth; PASS only
when the judge's score is >= 6 of 10, its verdict is PASS and it found no wrong visual identity and
no false presence. The task row is 100 for PASS, 0 for FAIL, so a system's mean is 100 x PASS share.

MOSAIC (`mosaic.py` judges it): each figure of the report is an item routed to PHOTO, DATACHART,
OCRCHART or DIAGRAM and scored by the paper's weights (`mosaic_item`); MOSAIC = 100 x mean item score.
An unusable image (missing, unreadable, a pseudo-visual) is a failed item: 0, and 0 in each of its
type's dimensions. SEM, ACC and VQA are the means over the items they apply to. Every usable item
must be judged: one that is not makes MOSAIC N/A with its reason (items are few, and a mean over the
rest would move the number by a whole item). A report with no figure scores 0 (the paper counts it).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...core.metrics import MetricValue, not_available
from ..evidence import FAILURE_PRIORITY, ReportEvidence

VEF_PASS_SCORE = 6  # a judge score under this is FAIL whatever the verdict (paper)
VEF_PREFIX = "mmdr.vef"
MOSAIC_PREFIX = "mmdr.mosaic"
VISUAL_TYPES = ("PHOTO", "DATACHART", "OCRCHART", "DIAGRAM")
# What the judge scores per visual type (besides the formatting factor f, which applies to all).
DIMENSIONS = {"PHOTO": ("sem", "vqa"), "DATACHART": ("acc", "vqa"), "OCRCHART": ("acc", "vqa"),
              "DIAGRAM": ("vqa", "h")}
MOSAIC_PARTS = ("sem", "acc", "vqa")  # the sub-metrics reported beside MOSAIC
VEF_POLICY = (f"PASS only when the judge's score >= {VEF_PASS_SCORE}/10, its verdict is PASS and no wrong identity "
              "or false presence was found; task row 100 for PASS, 0 for FAIL (VEF = 100 x PASS share, paper)")
MOSAIC_POLICY = ("MOSAIC = 100 x mean item score; DATACHART/OCRCHART f(0.9 ACC + 0.1 VQA), PHOTO f(0.5 SEM + 0.5 VQA), "
                 "DIAGRAM f(0.5 VQA + 0.5 (1 - h)) (paper); an unusable image is a failed item scoring 0; "
                 "every usable item judged, else N/A")


def mosaic_item(visual_type: str, sem: float, acc: float, vqa: float, f: float, h: float = 0.0) -> float:
    """MOSAIC item score by visual type (inputs in [0, 1])."""
    if visual_type in ("DATACHART", "OCRCHART"):
        return f * (0.9 * acc + 0.1 * vqa)
    if visual_type == "PHOTO":
        return f * (0.5 * sem + 0.5 * vqa)
    if visual_type == "DIAGRAM":
        return f * (0.5 * vqa + 0.5 * (1 - h))
    raise ValueError(f"unknown visual type {visual_type!r}")


def item_parts(visual_type: str) -> tuple[str, ...]:
    """The values the judge gives an item of this type: its dimensions and f."""
    return (*DIMENSIONS[visual_type], "f")


def vef_passes(score: float, verdict: str, wrong_identity: bool = False, false_presence: bool = False) -> bool:
    """The paper's strict rule: score < 6 is FAIL even when the verdict says PASS; a wrong visual identity
    or a false presence is FAIL; otherwise the verdict stands (missing details alone do not fail)."""
    return score >= VEF_PASS_SCORE and verdict.upper() == "PASS" and not wrong_identity and not false_presence


def vef_metric(evidence: ReportEvidence) -> MetricValue:
    j = evidence.judge
    parts = evidence.rubric(VEF_PREFIX)
    if parts.get("pass") is None:
        found = evidence.judgment_failure(VEF_PREFIX)
        bucket, why = found or ("pipeline_failure", "VEF was not judged")
        return not_available("mmdr", "vef", "0-100", bucket, f"VEF: {why}"[:500], j)
    passed = parts["pass"] >= 1
    failure = next((k.split(".", 1)[1].upper() for k, v in parts.items() if k.startswith("failure.") and v), "-")
    flags = [name.replace("_", " ") for name in ("wrong_identity", "false_presence") if parts.get(name)]
    score = parts.get("score")
    detail = (f"{'PASS' if passed else 'FAIL'}: judge score {'?' if score is None else f'{score:.0f}'}/10, verdict "
              f"{'PASS' if parts.get('verdict') else 'FAIL'}, failure type {failure}"
              + (f", {' and '.join(flags)}" if flags else "")
              + f"; visual GT {evidence.inputs.get('mmdr.visual_gt_version') or 'version unknown'}")
    return MetricValue("mmdr", "vef", 100.0 if passed else 0.0, "0-100", 1, detail=detail, policy=VEF_POLICY, judge=j)


_ITEM_KEY = re.compile(r"^i(\d+)\.([a-z]+)\.([a-z_]+)$")


@dataclass
class MosaicItem:
    """One judged figure as the report judgments hold it (item ids `mmdr.mosaic.i<k>.<type>.<part>`)."""
    number: int
    visual_type: str
    values: dict[str, float | None] = field(default_factory=dict)
    failures: list[tuple[str, str]] = field(default_factory=list)  # (bucket, why) of parts with no value
    unusable: str = ""  # why its image could not be used (part `image_<why>`, e.g. image_missing), else ""

    @property
    def usable(self) -> bool:
        return not self.unusable

    def missing(self) -> list[str]:
        return [p for p in item_parts(self.visual_type) if self.values.get(p) is None]

    def dimension(self, part: str) -> float | None:
        """A dimension's value for the sub-metrics: 0 for a failed item, None when not judged."""
        return 0.0 if not self.usable else self.values.get(part)

    def score(self) -> float | None:
        if not self.usable:
            return 0.0
        if self.missing():
            return None
        v = self.values
        return mosaic_item(self.visual_type, v.get("sem") or 0.0, v.get("acc") or 0.0, v.get("vqa") or 0.0,
                           v["f"], v.get("h") or 0.0)


def mosaic_items(evidence: ReportEvidence) -> list[MosaicItem]:
    items: dict[int, MosaicItem] = {}
    for key, value in evidence.rubric(MOSAIC_PREFIX).items():
        match = _ITEM_KEY.match(key)
        if not match or match[2].upper() not in VISUAL_TYPES:
            continue
        item = items.setdefault(int(match[1]), MosaicItem(int(match[1]), match[2].upper()))
        part = match[3]
        if part.startswith("image_") and part != "image_ok":
            item.unusable = part.removeprefix("image_").replace("_", " ")
            continue
        item.values[part] = value
        failed = evidence.judgment_failures.get(f"{MOSAIC_PREFIX}.{key}")
        if failed and value is None:
            item.failures.append(failed)
    return [items[k] for k in sorted(items)]


def _worst(failures: list[tuple[str, str]]) -> tuple[str, str]:
    """The most retryable bucket among the failures, with its first reason."""
    for bucket in FAILURE_PRIORITY:
        why = next((w for b, w in failures if b == bucket), None)
        if why is not None:
            return bucket, why
    return "pipeline_failure", "the judge gave no value"


def mosaic_metrics(evidence: ReportEvidence) -> list[MetricValue]:
    j = evidence.judge
    items = mosaic_items(evidence)
    if not items and not evidence.figures:
        none = "no visual item in the report"
        return [MetricValue("mmdr", "mosaic", 0.0, "0-100", 0, detail=none,
                            policy="no scorable visual item => MOSAIC 0, counted in Overall and the mean (paper)",
                            judge=j)] + [
            not_available("mmdr", m, "0-100", "model_failure", f"not applicable: {none}", j) for m in MOSAIC_PARTS]
    if not items:
        why = (f"{len(evidence.figures)} figure(s) found but none was judged (their images were not resolved for "
               "the report judgments)")
        return [not_available("mmdr", m, "0-100", "pipeline_failure", why, j) for m in ("mosaic", *MOSAIC_PARTS)]
    return [_mosaic_row(items, j)] + [_part_row(items, part, j) for part in MOSAIC_PARTS]


def _item_text(item: MosaicItem) -> str:
    score = item.score()
    state = f"failed ({item.unusable} image)" if not item.usable else "not judged" if score is None else f"{score:.2f}"
    return f"i{item.number:02d} {item.visual_type} {state}"


def _mosaic_row(items: list[MosaicItem], judge: str) -> MetricValue:
    unjudged = [i for i in items if i.score() is None]
    shown = "; ".join(_item_text(i) for i in items)
    if unjudged:
        bucket, why = _worst([f for i in unjudged for f in i.failures])
        return not_available("mmdr", "mosaic", "0-100", bucket,
                             f"{len(unjudged)} of {len(items)} visual items not judged ({why}); {shown}"[:500], judge)
    scores = [i.score() for i in items]
    failed = sum(1 for i in items if not i.usable)
    detail = f"{len(items)} item(s), {failed} with an unusable image (scored 0): {shown}"
    return MetricValue("mmdr", "mosaic", 100 * sum(scores) / len(scores), "0-100", len(items), detail=detail[:500],
                       policy=MOSAIC_POLICY, judge=judge)


def _part_row(items: list[MosaicItem], part: str, judge: str) -> MetricValue:
    applies = [i for i in items if part in DIMENSIONS[i.visual_type]]
    if not applies:
        kinds = "PHOTO" if part == "sem" else "DATACHART or OCRCHART" if part == "acc" else "visual"
        return not_available("mmdr", part, "0-100", "model_failure", f"not applicable: no {kinds} item in the report",
                             judge)
    values = [i.dimension(part) for i in applies]
    if any(v is None for v in values):
        bucket, why = _worst([f for i in applies if i.dimension(part) is None for f in i.failures])
        missing = sum(1 for v in values if v is None)
        return not_available("mmdr", part, "0-100", bucket,
                             f"{missing} of {len(applies)} items not judged on {part.upper()} ({why})"[:500], judge)
    failed = sum(1 for i in applies if not i.usable)
    detail = f"mean over {len(applies)} item(s) it applies to" + (f", {failed} unusable scored 0" if failed else "")
    return MetricValue("mmdr", part, 100 * sum(values) / len(values), "0-100", len(applies), detail=detail,
                       policy=MOSAIC_POLICY, judge=judge)
