"""Stand-in answers for MMDR's visual templates (`mmdr/vef`, `mmdr/mosaic_item`), derived from the prompt
so careful reports score higher than careless ones:

- VEF: the offline measurement (`vef.offline_vef`) of the ground truth against the report in the prompt.
- MOSAIC: it routes by the image it is sent, as a vision judge would: a flat-background graphic
  (`core/images.background_share` >= 0.4) is a DATACHART, anything else a PHOTO. It scores by comparing
  the item's caption with the claim: ACC is the share
  of the claim's values (numbers other than years) the caption also states, SEM the share of the
  caption's key words the claim uses, VQA their mean, f 0.5 + 0.25 for a cited caption + 0.25 for a claim
  that speaks of the figure, h = 1 - VQA. Only the scores of the type it names are given.
"""
from __future__ import annotations

import re

from dreval_assets.benchmarks.mmdr.vef import offline_vef
from dreval_assets.core.checklist_match import key_words
from dreval_assets.benchmarks.mmdr.visual_metrics import DIMENSIONS
from dreval_assets.core.images import background_share
from loopback_llm import image_parts, message_text

VEF_PROMPT = "You check a research report against the images of its task"
MOSAIC_PROMPT = "You judge one visual item of a research report"
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_MARKER = re.compile(r"\[\d+(?:\s*[-,]\s*\d+)*\]")
_LABEL = re.compile(r"^\s*(?:fig(?:ure)?|table|chart)\.?\s*\d+\s*[:.]?", re.I)
NO_CLAIM = "(the report says nothing about it)"


def _between(text: str, name: str) -> str:
    return text.split(f"<<<{name}\n", 1)[1].rsplit(f"\n{name}>>>", 1)[0]


def _prompt(request: dict, marker: str) -> str | None:
    for message in request.get("messages", []):
        text = message_text(message.get("content"))
        if marker in text:
            return text
    return None


def values(text: str) -> set[str]:
    found = {n.replace(",", "").rstrip(".") for n in _NUMBER.findall(_LABEL.sub("", _MARKER.sub(" ", text)))}
    return {n for n in found if not (len(n) == 4 and n.isdigit() and 1800 <= int(n) <= 2100)}


def seen_type(request: dict) -> str:
    images = [part for part in image_parts(request) if part is not None]
    return "DATACHART" if images and background_share(images[0][1]) >= 0.4 else "PHOTO"


def mosaic_scores(text: str, visual_type: str = "PHOTO") -> dict:
    caption, claim = _between(text, "CAPTION"), _between(text, "CLAIM")
    claim_values, caption_values = values(claim), values(caption)
    acc = len(claim_values & caption_values) / len(claim_values) if claim_values else 0.5
    wanted = key_words(_MARKER.sub(" ", caption))
    sem = len(wanted & key_words(claim)) / len(wanted) if wanted else 0.0
    vqa = (acc + sem) / 2
    cited = "The sources its caption cites: none" not in text
    f = 0.5 + 0.25 * cited + 0.25 * (claim.strip() != NO_CLAIM)
    asked = set(DIMENSIONS[visual_type])
    scores = {"sem": sem, "acc": acc, "vqa": vqa, "h": 1 - vqa}
    return {"visual_type": visual_type, **{k: round(v, 4) for k, v in scores.items() if k in asked}, "f": f,
            "questions": ["What values does the figure show?"],
            "reason": f"caption states {len(claim_values & caption_values)} of the claim's {len(claim_values)} values"}


def answer(request: dict, schema: dict | None) -> dict | None:
    text = _prompt(request, VEF_PROMPT)
    if text is not None:
        return offline_vef(_between(text, "VISUAL_GT"), _between(text, "REPORT")).model_dump()
    text = _prompt(request, MOSAIC_PROMPT)
    if text is not None:
        return mosaic_scores(text, seen_type(request))
    return None
