"""What MMDR's suite reads per task besides its report judgments: the version of the visual ground truth
VEF used (TRACE's weights are report judgments, `trace_weights.py`)."""
from __future__ import annotations

from ...judges.base import Judge
from .vef import version_of


def task_inputs(tasks: list[dict], rubrics, judge: Judge) -> dict[str, dict]:
    """For a task with a visual ground truth, its version (VEF rows name it)."""
    return {t["task"]: {"mmdr.visual_gt_version": version_of(t)} for t in tasks
            if (t.get("visual_ground_truth") or "").strip()}
