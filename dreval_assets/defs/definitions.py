"""Definitions: assets, jobs and resources, built from Settings."""
from __future__ import annotations

from dagster import AssetsDefinition, Definitions

from ..config import SHAPING_SETTINGS, Settings
from ..live.config import LiveConfig
from .assets import ALL_ASSETS
from .automation import REFRESH_JOBS, publish_after_ui_runs, refresh_schedules, registry_sensor
from .jobs import evaluate_job, leaderboard_job, publish_job, tasks_job
from .resources import DrevalResource, PartitionedDuckDBIOManager


def build_definitions(settings: Settings | None = None) -> Definitions:
    settings = settings or Settings.from_env()
    home = str(settings.home)
    versions = {asset: settings.shaping_version(asset) for asset in SHAPING_SETTINGS}
    return Definitions(
        assets=[_with_settings_version(a, versions) for a in ALL_ASSETS],
        jobs=[tasks_job, evaluate_job, leaderboard_job, publish_job, *REFRESH_JOBS.values()],
        sensors=[registry_sensor, publish_after_ui_runs],
        schedules=refresh_schedules(LiveConfig.from_env().enabled),
        resources={
            "dreval": DrevalResource(home=home, judge_kind=settings.judge, fetch_kind=settings.fetch,
                                     judge_batch_size=settings.judge_batch_size,
                                     refetch_failed=settings.refetch_failed,
                                     extra_suites=list(settings.extra_suites), policies=settings.policies,
                                     evidence_search=settings.evidence_search, search_url=settings.search_url,
                                     search_max_queries=settings.search_max_queries,
                                     search_max_pages=settings.search_max_pages),
            "dreval_io": PartitionedDuckDBIOManager(home=home, settings_versions=versions),
        },
    )


def _with_settings_version(asset, versions: dict[str, str]):
    """The settings that shape an asset's rows are its code version: change them and Dagster shows it stale."""
    if not isinstance(asset, AssetsDefinition) or not any(key.path[-1] in versions for key in asset.keys):
        return asset

    def versioned(spec):
        version = versions.get(spec.key.path[-1])
        if version is None:
            return spec
        # an asset with its own code version (the parser's) keeps it beside the settings'
        return spec.replace_attributes(code_version=f"{spec.code_version}+{version}" if spec.code_version else version)

    return asset.map_asset_specs(versioned)
