"""Definitions: assets, jobs and resources, built from Settings."""
from __future__ import annotations

from dagster import AssetSelection, Definitions, define_asset_job

from ..config import Settings
from .assets import ALL_ASSETS, PER_REPORT_ASSETS, leaderboard, task_rubrics, tasks
from .resources import DrevalResource, PartitionedDuckDBIOManager

tasks_job = define_asset_job("tasks_job", AssetSelection.assets(tasks, task_rubrics))
evaluate_job = define_asset_job("evaluate_job", AssetSelection.assets(*PER_REPORT_ASSETS))
leaderboard_job = define_asset_job("leaderboard_job", AssetSelection.assets(leaderboard))


def build_definitions(settings: Settings | None = None) -> Definitions:
    settings = settings or Settings.from_env()
    home = str(settings.home)
    return Definitions(
        assets=ALL_ASSETS,
        jobs=[tasks_job, evaluate_job, leaderboard_job],
        resources={
            "dreval": DrevalResource(home=home, judge_kind=settings.judge, fetch_kind=settings.fetch,
                                     judge_batch_size=settings.judge_batch_size,
                                     refetch_failed=settings.refetch_failed,
                                     extra_suites=list(settings.extra_suites), policies=settings.policies),
            "dreval_io": PartitionedDuckDBIOManager(home=home),
        },
    )
