"""MMDR's visual metrics from their report judgments (methods/mmdr.md): VEF, MOSAIC and its SEM, ACC, VQA.

VEF (`vef.py` judges it): per report PASS or FAIL against the task's visual ground truth; PASS only
when the judge's score is >= 6 of 10, its verdict is PASS and it found no wrong visual identity and
no false presence. The task row is 100 for PASS, 0 for FAIL, so a system's mean is 100 x PASS share.

MOSAIC (`mosaic.py` judges it): each figure of the report is an item routed to PHOTO, DATACHART,
OCRCHART or DIAGRAM and scored by the paper's weights (`mosaic_item`); MOSAIC = 100 x mean item score.
SEM, ACC and VQA are the means over the items they apply to; with no item of their kind they do not
apply (`not_applicable`). A report with no figure scores MOSAIC 0 (the paper's task scores count it).
Who is at fault for an item without the judge's values (MMDR's reason-aware rule, methods/README.md):
- an unusable image (missing, unreadable, a pseudo-visual: the report's own) is a failed item: 0, and
  0 in each of its type's dimensions; it was decided, so it does not lower the judged share;
- an item the judge answered unusably (a part left out, an answer failing validation: pipeline_failure
  from a real judge) counts 0 too, as MMDR floors what it cannot score, said in the detail; the row
  carries the judged share k/n (`partly_judged`, bucket pipeline_failure) so validity shows it;
- an item that failed at the provider (retried by the next run), an image we could not fetch
  (data_accessibility) and our judge's limit (the offline judge cannot see images: "judge limit: ")
  are never a 0: MOSAIC is N/A with that reason, so a blind judge ranks no system.
The gate (`metrics.compute`): with FLAE = 0 or TRACE = 0, MOSAIC is 0 and not judged (`gate_closed_rows`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from ...core.metrics import MetricValue, is_judge_limit, not_applicable, not_available
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
                 "an item the judge answered unusably scores 0; one failed at the provider, an image not fetched or "
                 "the judge's limit makes MOSAIC N/A")
GATE_CLOSED = "gate closed (FLAE or TRACE = 0): MOSAIC 0, not judged (MMDR)"
GATE_POLICY = "MOSAIC runs only if FLAE > 0 and TRACE > 0 (tau_F = tau_T = 0), else MOSAIC = 0 (paper, Overall score)"
UNUSABLE_ANSWER = "pipeline_failure"  # the bucket of an item the judge answered unusably: ours, never the report's


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


def _blocks(failure: tuple[str, str]) -> bool:
    """A failure that keeps an item N/A, never 0: a retry may fix it, or our judge cannot judge it."""
    bucket, why = failure
    return bucket in ("provider_failure", "data_accessibility") or is_judge_limit(why)


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

    @property
    def blocked(self) -> list[tuple[str, str]]:
        """The failures that leave this item N/A; a value missing with no reason recorded too (no 0 from a
        missing row)."""
        if not self.usable or not self.missing():
            return []
        found = [f for f in self.failures if _blocks(f)]
        return found or ([] if self.failures else [("pipeline_failure", "the judge gave no value")])

    @property
    def unusable_answer(self) -> bool:
        """The judge answered, but unusably: MMDR counts the item 0."""
        return self.usable and bool(self.missing()) and not self.blocked

    def dimension(self, part: str) -> float | None:
        """A dimension's value for the sub-metrics: 0 for a failed item or a part the judge left out, None
        when not judged."""
        if not self.usable:
            return 0.0
        value = self.values.get(part)
        return value if value is not None or self.blocked else 0.0

    def score(self) -> float | None:
        if not self.usable or self.unusable_answer:
            return 0.0
        if self.blocked:
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


def gate_closed_rows(why: str, judge: str) -> list[MetricValue]:
    """MOSAIC 0 without judging when FLAE or TRACE is 0 (the paper's gate); its parts then do not apply."""
    return [MetricValue("mmdr", "mosaic", 0.0, "0-100", 0, detail=f"{GATE_CLOSED}; {why}"[:500], policy=GATE_POLICY,
                        judge=judge)] + [not_applicable("mmdr", m, "0-100", f"{GATE_CLOSED}: no item scored", judge)
                                         for m in MOSAIC_PARTS]


def mosaic_metrics(evidence: ReportEvidence) -> list[MetricValue]:
    """MOSAIC and its parts with the gate open (or not known)."""
    j = evidence.judge
    if evidence.rubric(MOSAIC_PREFIX).get("gate") is not None:  # judged as closed, scored as open: stale rows
        why = "report_judgments found the gate closed and judged no item, but the scores find it open: judge again"
        return [not_available("mmdr", m, "0-100", "pipeline_failure", why, j) for m in ("mosaic", *MOSAIC_PARTS)]
    items = mosaic_items(evidence)
    if not items and not evidence.figures:
        none = "no visual item in the report"
        return [MetricValue("mmdr", "mosaic", 0.0, "0-100", 0, detail=none,
                            policy="no scorable visual item => MOSAIC 0, counted in Overall and the mean (paper)",
                            judge=j)] + [not_applicable("mmdr", m, "0-100", none, j) for m in MOSAIC_PARTS]
    if not items:
        why = (f"{len(evidence.figures)} figure(s) found but none was judged (their images were not resolved for "
               "the report judgments)")
        return [not_available("mmdr", m, "0-100", "pipeline_failure", why, j) for m in ("mosaic", *MOSAIC_PARTS)]
    return [_mosaic_row(items, j)] + [_part_row(items, part, j) for part in MOSAIC_PARTS]


def _item_text(item: MosaicItem) -> str:
    score = item.score()
    state = (f"failed ({item.unusable} image)" if not item.usable else "judge's answer unusable, 0"
             if item.unusable_answer else "not judged" if score is None else f"{score:.2f}")
    return f"i{item.number:02d} {item.visual_type} {state}"


def _not_judged(items: list[MosaicItem], total: int, metric: str, judge: str) -> MetricValue:
    """N/A naming the most retryable failure of the blocked items (the judge's limit marker kept in `why`)."""
    bucket, why = _worst([f for i in items for f in i.blocked])
    return not_available("mmdr", metric, "0-100", bucket,
                         f"{len(items)} of {total} visual items not judged ({why})"[:500], judge)


def _mosaic_row(items: list[MosaicItem], judge: str) -> MetricValue:
    shown = "; ".join(_item_text(i) for i in items)
    blocked = [i for i in items if i.blocked]
    if blocked:
        row = _not_judged(blocked, len(items), "mosaic", judge)
        return replace(row, detail=f"{row.detail}; {shown}"[:500])
    scores = [i.score() for i in items]
    failed = sum(1 for i in items if not i.usable)
    answers = sum(1 for i in items if i.unusable_answer)
    detail = (f"{len(items)} item(s), {failed} with an unusable image (scored 0)"
              + (f", {answers} the judge answered unusably (scored 0, MMDR)" if answers else "") + f": {shown}")
    value = MetricValue("mmdr", "mosaic", 100 * sum(scores) / len(scores), "0-100", len(items), detail=detail[:500],
                        policy=MOSAIC_POLICY, judge=judge)
    return value.partly_judged(len(items) - answers, len(items), UNUSABLE_ANSWER)


def _part_row(items: list[MosaicItem], part: str, judge: str) -> MetricValue:
    applies = [i for i in items if part in DIMENSIONS[i.visual_type]]
    if not applies:
        kinds = "PHOTO" if part == "sem" else "DATACHART or OCRCHART" if part == "acc" else "visual"
        return not_applicable("mmdr", part, "0-100", f"no {kinds} item in the report", judge)
    values = [i.dimension(part) for i in applies]
    if any(v is None for v in values):
        return _not_judged([i for i in applies if i.dimension(part) is None], len(applies), part, judge)
    failed = sum(1 for i in applies if not i.usable)
    answers = sum(1 for i in applies if i.unusable_answer and i.values.get(part) is None)
    detail = (f"mean over {len(applies)} item(s) it applies to" + (f", {failed} unusable scored 0" if failed else "")
              + (f", {answers} the judge answered unusably scored 0" if answers else ""))
    value = MetricValue("mmdr", part, 100 * sum(values) / len(values), "0-100", len(applies), detail=detail,
                        policy=MOSAIC_POLICY, judge=judge)
    return value.partly_judged(len(applies) - answers, len(applies), UNUSABLE_ANSWER)
