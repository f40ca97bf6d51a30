"""Definitions: assets, jobs and resources, built from Settings."""
from __future__ import annotations

from dagster import Definitions

from ..config import Settings
from ..live.config import LiveConfig
from .assets import ALL_ASSETS
from .automation import miroeval_refresh_job, refresh_schedules, registry_sensor, wlc_refresh_job
from .jobs import evaluate_job, leaderboard_job, tasks_job
from .resources import DrevalResource, PartitionedDuckDBIOManager


def build_definitions(settings: Settings | None = None) -> Definitions:
    settings = settings or Settings.from_env()
    home = str(settings.home)
    return Definitions(
        assets=ALL_ASSETS,
        jobs=[tasks_job, evaluate_job, leaderboard_job, wlc_refresh_job, miroeval_refresh_job],
        sensors=[registry_sensor],
        schedules=refresh_schedules(LiveConfig.from_env().enabled),
        resources={
            "dreval": DrevalResource(home=home, judge_kind=settings.judge, fetch_kind=settings.fetch,
                                     judge_batch_size=settings.judge_batch_size,
                                     refetch_failed=settings.refetch_failed,
                                     extra_suites=list(settings.extra_suites), policies=settings.policies),
            "dreval_io": PartitionedDuckDBIOManager(home=home),
        },
    )
