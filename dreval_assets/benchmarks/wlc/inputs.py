"""What the Wiki Live suite reads per task besides the report (`Benchmark.evidence_inputs`)."""
from __future__ import annotations

import json

from .judgments import task_criteria


def task_inputs(tasks: list[dict], rubrics, judge) -> dict[str, dict]:
    """task -> {"wlc.gold_facts": how many gold statements, "wlc.criteria_texts": where the writing
    criteria texts come from, "wlc.article_url" / "wlc.title": the task's own Wikipedia article}."""
    found = {}
    for t in tasks:
        attributes = json.loads(t.get("attributes") or "{}")
        found[t["task"]] = {"wlc.gold_facts": len([g for g in (t.get("gold_facts") or []) if str(g).strip()]),
                            "wlc.criteria_texts": task_criteria(t)[1],
                            "wlc.article_url": attributes.get("url", ""), "wlc.title": attributes.get("title", "")}
    return found
