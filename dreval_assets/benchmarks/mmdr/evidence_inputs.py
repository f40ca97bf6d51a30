"""What MMDR's suite reads per task: the task-adaptive CON/COV/FID weights for TRACE (one judgment per task,
cached and shared by systems) and the version of the visual ground truth VEF used."""
from __future__ import annotations

from ...core.models import TraceWeights
from ...judges.base import Judge, JudgmentRequest
from .vef import version_of


def _weights(weights: dict | None, source: str) -> dict:
    return {"mmdr.trace_weights": weights, "mmdr.trace_weights_source": source}


def trace_weights(tasks: list[dict], rubrics, judge: Judge) -> dict[str, dict]:
    """Per task the weights the judge proposes, or the documented fallback (equal thirds) and why."""
    if not tasks:
        return {}
    judgments = judge.judge_many([JudgmentRequest("mmdr/trace_weights", {"query": t["query"]}, TraceWeights,
                                                  {"asset": "metric_scores", "task": t["task"]}) for t in tasks])
    result = {}
    for task, judgment in zip([t["task"] for t in tasks], judgments):
        answer = judgment.answer
        if isinstance(answer, TraceWeights) and not judgment.extra.get("fallback"):
            result[task] = _weights({"con": answer.con, "cov": answer.cov, "fid": answer.fid},
                                    f"proposed by {judgment.provenance.judge_id}: {answer.rationale}"[:300])
        elif isinstance(answer, TraceWeights):
            result[task] = _weights(None, f"fixed fallback 1/3 each ({judgment.provenance.judge_id})")
        else:
            result[task] = _weights(None, f"fixed fallback 1/3 each (judge failed: {judgment.na_reason})")
    return result


def task_inputs(tasks: list[dict], rubrics, judge: Judge) -> dict[str, dict]:
    """The TRACE weights and, for a task with a visual ground truth, its version (VEF rows name it)."""
    result = trace_weights(tasks, rubrics, judge)
    for t in tasks:
        if (t.get("visual_ground_truth") or "").strip():
            result.setdefault(t["task"], {})["mmdr.visual_gt_version"] = version_of(t)
    return result
