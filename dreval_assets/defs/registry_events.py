"""Tell Dagster what changed in the registry: one observation of `registered_tasks` per new or
changed task partition, its data version the task's content hash. Dagster then shows the `tasks`
partition stale until it is materialised again (and its downstream stale after that)."""
from __future__ import annotations

from typing import Mapping

from dagster import AssetObservation, DagsterInstance
from dagster._core.definitions.data_version import DATA_VERSION_TAG

from ..store.db import Store
from ..store.registry import task_hashes
from .runner import add_missing_partitions

REGISTRY_ASSET = "registered_tasks"


def observations(hashes: Mapping[str, str]) -> list[AssetObservation]:
    return [AssetObservation(asset_key=REGISTRY_ASSET, partition=key, tags={DATA_VERSION_TAG: digest})
            for key, digest in hashes.items()]


def report_registry_changes(instance: DagsterInstance, store: Store, keys: list[str]) -> None:
    """Add the keys' partitions if new, then observe their current content hashes."""
    if not keys:
        return
    hashes = task_hashes(store)
    add_missing_partitions(instance, "task", keys)
    for event in observations({k: hashes[k] for k in keys if k in hashes}):
        instance.report_runless_asset_event(event)
