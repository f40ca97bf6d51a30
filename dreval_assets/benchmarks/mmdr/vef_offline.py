"""VEF as the offline judge measures it: the checkable elements of the visual ground truth (numbers,
years, names) against the report. Deterministic; labelled by the heuristic judge's id.

- A number is *stated* when the report has the same value (thousands commas dropped).
- A number is *contradicted* when the report has a different value in the same slot: in the same
  sentence, the words around it (ANCHOR tokens each side, `checklist_match.key_words`) share at least
  SLOT_WORDS words with the words around the ground truth's value, the periods around the two do not
  disagree (years; quarter ordinals, Q1-Q4, H1/H2 and months: when both name one of a kind, they share
  one), both are percentages or neither, both are changes ("+600") or neither, they are within a factor
  of MAGNITUDE, and the report's value is none of the ground truth's own values (then it is another slot
  stated correctly). Every place the ground truth states the value is tried; a report value contradicts
  at most one ground-truth value (the one sharing most words, then the closest in size).
  Citation markers and figure labels ("[2]", "Figure 1") are not values.
- Years and names (capitalised word sequences, acronyms) are stated when the report has them.

Verdict: a contradicted number is FAIL (DTE, detail extraction error); no element stated is FAIL (STO:
the report does not use the image); otherwise PASS, score 6 + 4 x the share of elements stated (missing
details alone do not fail). It cannot tell a false presence or a wrong identity beyond names: those need
a judge. Reads Latin-script text (English word lists weigh the anchors).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ...core.checklist_match import key_words
from ...judges.readable import require_readable

READS = frozenset({"en", "latn"})
ANCHOR = 5  # tokens each side of a value that say which slot it fills
SLOT_WORDS = 2
MAGNITUDE = 5  # a value more than this many times larger or smaller is another quantity
_TOKEN = re.compile(r"(?:(?<=[\s(])[+\u2212])?\d(?:[\d,]*\d)?(?:\.\d+)?%?|[A-Za-z][A-Za-z'-]*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])|\n+")
_NOT_VALUES = re.compile(r"\[\d+(?:\s*[-,\u2013]\s*\d+)*\]|\b(?:fig(?:ure)?|table|chart)\.?\s*\d+\b", re.I)
_ORDINALS = frozenset("first second third fourth q1 q2 q3 q4 h1 h2 january february march april may june july "
                      "august september october november december".split())
_NAME = re.compile(r"\b(?:[A-Z][a-z]+(?:[ -][A-Z][a-z0-9]+)+|[A-Z]{2,}[0-9-]*[A-Z0-9]*)\b")


@dataclass(frozen=True)
class Value:
    text: str  # normalised: no thousands commas
    percent: bool
    year: bool
    anchor: frozenset[str]  # key words around it
    years: frozenset[str]  # years around it
    ordinals: frozenset[str]  # quarter, half and month words around it


@dataclass(frozen=True)
class VefMeasure:
    stated: int
    elements: int
    contradicted: tuple[str, ...]  # "GT 5600 vs report 6500 (fourth, quarter)"

    @property
    def share(self) -> float:
        return self.stated / self.elements if self.elements else 0.0


def _is_year(token: str) -> bool:
    return token.isdigit() and len(token) == 4 and 1800 <= int(token) <= 2100


def values(text: str) -> list[Value]:
    found = []
    for sentence in _SENTENCE.split(_NOT_VALUES.sub(" ", text)):
        tokens = _TOKEN.findall(sentence)
        for i, token in enumerate(tokens):
            if not token[-1].isdigit() and not token.endswith("%"):
                continue
            around = tokens[max(0, i - ANCHOR):i] + tokens[i + 1:i + 1 + ANCHOR]
            words = key_words(" ".join(t for t in around if t[0].isalpha()))
            years = frozenset(t for t in around if _is_year(t))
            ordinals = frozenset(p for t in around for p in t.lower().split("-") if p in _ORDINALS)
            number = token.rstrip("%").replace(",", "").replace("\u2212", "-").rstrip(".")
            found.append(Value(number, token.endswith("%"), _is_year(token), frozenset(words), years, ordinals))
    return found


def names(text: str) -> set[str]:
    return {m.lower() for m in _NAME.findall(text)}


def _magnitude(value: Value) -> float | None:
    try:
        return abs(float(value.text))
    except ValueError:
        return None


def _same_slot(gt: Value, said: Value) -> bool:
    if gt.percent != said.percent or said.year or gt.text[0].isdigit() != said.text[0].isdigit():
        return False  # another kind: a percentage, a year, a change (+600) against a level
    a, b = _magnitude(gt), _magnitude(said)
    if not a or not b or max(a, b) > MAGNITUDE * min(a, b):
        return False
    for a, b in ((gt.years, said.years), (gt.ordinals, said.ordinals)):
        if a and b and not a & b:
            return False  # another period
    return len(gt.anchor & said.anchor) >= SLOT_WORDS


def _closeness(gt: Value, said: Value) -> tuple[int, float]:
    return len(gt.anchor & said.anchor), -abs(math.log((_magnitude(gt) or 1) / (_magnitude(said) or 1)))


def measure_vef(gt: str, report: str) -> VefMeasure:
    require_readable(READS, visual_ground_truth=gt, report=report)
    gt_values, said = values(gt), values(report)
    gt_numbers = {v.text for v in gt_values}
    report_numbers = {v.text for v in said}
    stated = sum(1 for number in gt_numbers if number in report_numbers)
    # Each report value contradicts at most one ground-truth value: the one sharing most words, then
    # the closest in size (a misread 5,600 -> 6,500 rather than 2,100 -> 6,500).
    best: dict[int, tuple[Value, Value]] = {}
    for v in gt_values:
        if v.text in report_numbers or v.year:
            continue
        for k, s in enumerate(said):
            if s.text in gt_numbers or not _same_slot(v, s):
                continue
            if k not in best or _closeness(v, s) > _closeness(*best[k]):
                best[k] = (v, s)
    clashes: dict[str, str] = {}  # ground-truth value -> what the report says instead, in ground-truth order
    for v, clash in sorted(best.values(), key=lambda pair: gt_values.index(pair[0])):
        sign = "%" if v.percent else ""
        clashes.setdefault(v.text, f"ground truth {v.text}{sign} vs report {clash.text}{sign} "
                                   f"({', '.join(sorted(v.anchor & clash.anchor)[:3])})")
    contradicted = list(clashes.values())
    gt_names = names(gt)
    lowered = report.lower()
    stated += sum(1 for n in gt_names if n in lowered)
    return VefMeasure(stated, len(gt_numbers) + len(gt_names), tuple(contradicted))
