"""Task frames for stage tests, built the way the tasks asset builds them (from Task objects)."""
from __future__ import annotations

from dreval_assets.core.models import Task
from dreval_assets.stages.tasks import task_frames


def tasks_table(**fields):
    """The `tasks` frame of one task; fields override a minimal valid task keyed `t`."""
    return tasks_with(**fields)["tasks"]


def tasks_with(**fields):
    """All frames of one task (tasks, task_sandbox, page_texts)."""
    base = {"key": "t", "benchmark": "generic", "original_id": "t", "query": "q"}
    return task_frames([Task(**{**base, **fields})])
