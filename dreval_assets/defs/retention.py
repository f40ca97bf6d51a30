"""Dagster's run history, bounded (`DREVAL_DAGSTER_KEEP_RUNS`, default 100): after a `dreval run`, a
finished run older than the newest N is deleted, events and its event-log shard with it, unless it holds
the newest materialisation of some asset partition (what the UI's partition status, data versions and
lineage read). So repeated runs of the same partitions leave one run's records per partition, not one per
run, and a home's history stops growing with the number of runs."""
from __future__ import annotations

import os

import sqlalchemy as db
from dagster import DagsterEventType, DagsterInstance, DagsterRunStatus, RunsFilter
from dagster._core.storage.event_log.schema import SqlEventLogStorageTable

from ..errors import ConfigError

KEEP_RUNS_ENV = "DREVAL_DAGSTER_KEEP_RUNS"
DEFAULT_KEEP_RUNS = 100
FINISHED = [DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED]
MATERIALIZATION = DagsterEventType.ASSET_MATERIALIZATION


def keep_runs_setting() -> int | None:
    """Runs kept whatever they hold (None: `all`, nothing is pruned)."""
    value = os.environ.get(KEEP_RUNS_ENV, "").strip().lower()
    if not value:
        return DEFAULT_KEEP_RUNS
    if value == "all":
        return None
    if value.isdigit():
        return int(value)
    raise ConfigError(f"{KEEP_RUNS_ENV}={value!r}: the number of newest Dagster runs always kept, or `all`")


def prune_run_history(instance: DagsterInstance, keep: int | None) -> int:
    """Delete the finished runs beyond the newest `keep` that hold no newest materialisation; how many."""
    if keep is None:
        return 0
    old = instance.get_run_records(RunsFilter(statuses=FINISHED))[keep:]  # newest first
    if not old:
        return 0
    lineage = runs_holding_newest_materialisations(instance)
    deleted = 0
    for record in old:
        if record.dagster_run.run_id not in lineage:
            instance.delete_run(record.dagster_run.run_id)
            deleted += 1
    return deleted


def runs_holding_newest_materialisations(instance: DagsterInstance) -> set[str]:
    """The runs whose materialisation of some asset partition (or unpartitioned asset) is its newest, in
    one query over the event log's index (a run shard's event ids are its own, not comparable)."""
    table = SqlEventLogStorageTable
    newest = (db.select(db.func.max(table.c.id))
              .where(table.c.dagster_event_type == MATERIALIZATION.value)
              .group_by(table.c.asset_key, table.c.partition))
    with instance.event_log_storage.index_connection() as conn:
        return {row[0] for row in conn.execute(db.select(table.c.run_id).where(table.c.id.in_(newest)))}
