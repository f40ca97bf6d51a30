"""Tell Dagster what changed in its inputs, as observations with data versions, so the UI shows what
depends on them stale: `registered_tasks` per new or changed task partition (the task's content
hash), and `report_sources` per system x task partition whose report file or trace is new or was
edited on disk (`stages/reports.report_input_version`). The `tasks` or `reports` partition then shows
stale until it is materialised again (and its downstream after that)."""
from __future__ import annotations

from typing import Mapping

from dagster import AssetObservation, DagsterInstance
from dagster._core.definitions.data_version import DATA_VERSION_TAG

from ..operations.planner import report_input_versions
from ..store.db import Store
from ..store.registry import task_hashes
from .partitions import add_missing_partitions, system_task_key

REGISTRY_ASSET = "registered_tasks"
REPORT_SOURCES_ASSET = "report_sources"


def observations(hashes: Mapping[str, str]) -> list[AssetObservation]:
    return [AssetObservation(asset_key=REGISTRY_ASSET, partition=key, tags={DATA_VERSION_TAG: digest})
            for key, digest in hashes.items()]


def report_observations(versions: Mapping[tuple[str, str], str]) -> list[AssetObservation]:
    return [AssetObservation(asset_key=REPORT_SOURCES_ASSET, partition=system_task_key(system, task),
                             tags={DATA_VERSION_TAG: version})
            for (system, task), version in versions.items()]


def report_registry_changes(instance: DagsterInstance, store: Store, keys: list[str]) -> None:
    """Add the keys' partitions if new, then observe their current content hashes."""
    if not keys:
        return
    hashes = task_hashes(store)
    add_missing_partitions(instance, "task", keys)
    for event in observations({k: hashes[k] for k in keys if k in hashes}):
        instance.report_runless_asset_event(event)


def report_input_changes(instance: DagsterInstance, store: Store, keys: list[tuple[str, str]]) -> None:
    """Observe the report inputs of these system x task partitions (their partitions exist)."""
    for event in report_observations(report_input_versions(store, keys)):
        instance.report_runless_asset_event(event)
