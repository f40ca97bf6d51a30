"""Stand-in answers of the loopback model for TVIR's own templates, deterministic from the prompt
text (it cannot look at the image parts): chart checks and caption scores from the caption's length
and numbers, composition from the placeholders of the corrected report, integration from the words the
caption shares with its context, chart-source contradictions from the caption's numbers that the
cited passages do not state; WQ and ADB by the offline measures of their rubrics (the checklist and
the contradictions are answered by judge_answers.py's shared stand-ins)."""
from __future__ import annotations

import re

from dreval_assets.benchmarks.tvir.rubrics import SCORED
from dreval_assets.core.checklist_match import key_words
from dreval_assets.core.key_facts import numbers_in

CHECKS = "You inspect one chart from a research report for layout and rendering faults."
COMPOSITION = "You judge how a research report composes its text and its figures."
CAPTION = "You rate the caption of one figure in a research report against the figure itself."
INTEGRATION = "You judge how well one figure of a research report is woven into the text around it."
SOURCE = "You check one chart from a research report against the sources its caption cites."
RUBRICS = {"You grade the writing quality of a research report": "tvir.wq",
           "You grade the analytical depth and breadth of a research report": "tvir.adb"}

_PLACEHOLDER_RE = re.compile(r"\[Figure \d+ \((\w+)(, repeats Figure \d+)?\): ")
_CHECK_ID_RE = re.compile(r"^- \[(\w+)\] ", re.M)
_MARKER_RE = re.compile(r"\[\d+(?:[,\u2013-]\s*\d+)*\]|^\s*(?:Figure|Fig\.|图)\s*\d+[:：.]?", re.I)
_HAN_RE = re.compile("[\u4e00-\u9fff]")


def _text(request: dict) -> str:
    parts = []
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "\n".join(parts)


def _block(text: str, name: str) -> str:
    return text.split(f"<<<{name}\n", 1)[1].split(f"\n{name}>>>", 1)[0]


def _caption_numbers(caption: str) -> set[str]:
    return numbers_in(_MARKER_RE.sub(" ", caption))


def answer(request: dict, schema: dict | None) -> dict | None:
    text = _text(request)
    if CHECKS in text:
        caption = _block(text, "CAPTION")
        checks = {c: True for c in _CHECK_ID_RE.findall(text.split("<<<CAPTION", 1)[0])}
        checks["text_proportion"] = len(caption.split()) <= 25
        checks["no_overload"] = len(_caption_numbers(caption)) <= 6
        failed = [c for c, ok in checks.items() if not ok]
        return {**checks, "problems": ", ".join(failed)}
    if COMPOSITION in text:
        found = _PLACEHOLDER_RE.findall(_block(text, "REPORT"))
        kinds, repeats = [k for k, _ in found], sum(1 for _, again in found if again)
        layout = max(1, min(10, 3 + 2 * len(kinds)) - 3 * repeats)
        return {"layout": {"score": layout, "reason": f"{len(kinds)} figures in place, {repeats} repeated"},
                "variety": {"score": max(1, min(10, 2 + 3 * len(set(kinds)))), "reason": ", ".join(sorted(set(kinds)))}}
    if CAPTION in text:
        caption = _block(text, "CAPTION")
        words = len(caption.split()) + len(_HAN_RE.findall(caption)) // 2
        necessity = 8 if words >= 8 and _caption_numbers(caption) else 5
        clarity = 8 if words <= 40 else 5
        revised = ""
        if min(necessity, clarity) <= 6:
            revised = (caption + "（图中数值与单位见所引来源）" if _HAN_RE.search(caption)
                       else caption + " (values and units as shown, from the cited source)")
        return {"accuracy": {"score": 8, "reason": "as captioned"},
                "necessity": {"score": necessity, "reason": "length"},
                "clarity": {"score": clarity, "reason": "length"}, "revised_caption": revised}
    if INTEGRATION in text:
        caption, context = key_words(_block(text, "CAPTION")), _block(text, "CONTEXT")
        share = len(caption & key_words(context)) / max(1, len(caption))
        mentions = bool(re.search(r"\b(?:figure|chart|fig\.)|图", context, re.I))
        return {"relevance": {"score": 3 + round(7 * share), "reason": f"shared words {share:.2f}"},
                "coherence": {"score": 8 if mentions else 5,
                              "reason": "referred to" if mentions else "not referred to"},
                "value": {"score": 7, "reason": "adds the series at a glance"}}
    for opening, rubric_id in RUBRICS.items():
        if opening in text:
            rubric = next(r for r in SCORED if r.rubric_id == rubric_id)
            measured = rubric.measure(_block(text, "REPORT"))
            return {"scores": [{"dimension_id": d, "score": max(1, min(10, round(measured[d]))), "reason": "measured"}
                               for d, _ in rubric.dimensions]}
    if SOURCE in text:
        caption, sources = _block(text, "CAPTION"), _block(text, "SOURCES")
        stated = numbers_in(sources)
        first = re.search(r"^\[(\d+)\]", sources, re.M)
        index = int(first.group(1)) if first else 0
        wrong = sorted(n for n in _caption_numbers(caption) if n not in stated)
        return {"contradictions": [{"chart_shows": n, "source_says": "not this value", "source": index} for n in wrong],
                "reason": "numbers compared"}
    return None
