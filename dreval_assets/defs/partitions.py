"""The partitions of DESIGN.md: dynamic task and system, and their product."""
from __future__ import annotations

from dagster import (
    DagsterInstance,
    DynamicPartitionsDefinition,
    IdentityPartitionMapping,
    MultiPartitionKey,
    MultiPartitionsDefinition,
    MultiToSingleDimensionPartitionMapping,
)

task_partitions = DynamicPartitionsDefinition(name="task")
system_partitions = DynamicPartitionsDefinition(name="system")
system_task_partitions = MultiPartitionsDefinition({"system": system_partitions, "task": task_partitions})
# A system x task partition reads the task partition of the same task.
from_task = MultiToSingleDimensionPartitionMapping(partition_dimension_name="task")
# Stages of one report read the same system x task partition upstream.
same_report = IdentityPartitionMapping()


def split_system_task(key: str) -> tuple[str, str]:
    """(system, task) of a multi-partition key; keys are validated to hold no '|'."""
    if isinstance(key, MultiPartitionKey):
        dims = key.keys_by_dimension
        return dims["system"], dims["task"]
    system, task = key.split("|")
    return system, task


def system_task_key(system: str, task: str) -> MultiPartitionKey:
    return MultiPartitionKey({"system": system, "task": task})


def add_missing_partitions(instance: DagsterInstance, name: str, keys: list[str]) -> None:
    known = set(instance.get_dynamic_partitions(name))
    new = [k for k in keys if k not in known]
    if new:
        instance.add_dynamic_partitions(name, new)
