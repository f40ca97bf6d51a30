"""The asset jobs: task inputs, per-report evaluation, the leaderboard (with the agreement figures and the
published copy of the results, then its plots)."""
from __future__ import annotations

from dagster import AssetSelection, define_asset_job

from .assets import (PER_REPORT_ASSETS, agreement, leaderboard, leaderboard_plots, published_results, task_rubrics,
                     tasks)

# each job's assets, in the order they run (a run's progress lists its steps from here)
JOB_ASSETS = {
    "tasks_job": [tasks, task_rubrics],
    "evaluate_job": list(PER_REPORT_ASSETS),
    "leaderboard_job": [leaderboard, agreement, published_results, leaderboard_plots],
    # the published copy alone: due when a leaderboard step ended before its copy was written
    "publish_job": [published_results],
}
tasks_job, evaluate_job, leaderboard_job, publish_job = (
    define_asset_job(name, AssetSelection.assets(*assets)) for name, assets in JOB_ASSETS.items())


def _names(asset) -> list[str]:
    return [key.path[-1] for key in sorted(asset.keys)]


def job_steps(job_name: str) -> list[str]:
    """The job's assets by name, in order: progress counts each asset of a step that builds several."""
    return [name for asset in JOB_ASSETS[job_name] for name in _names(asset)]


# a step that builds several assets, by its op's name (other steps build the asset they are named after)
STEP_ASSETS = {asset.op.name: _names(asset) for assets in JOB_ASSETS.values() for asset in assets
               if len(asset.keys) > 1}


def step_assets(step_key: str) -> list[str]:
    return STEP_ASSETS.get(step_key, [step_key])


# assets whose step waits on the judge's endpoint most of its time: the process has time to spare then
WAITS_ON_THE_JUDGE = frozenset({"claim_verdicts", "report_judgments"})
