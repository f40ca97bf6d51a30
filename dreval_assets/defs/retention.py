"""Dagster's run history, bounded (`DREVAL_DAGSTER_KEEP_RUNS`, default 100): after a `dreval run`, a
finished run older than the newest N is deleted, events and its event-log shard with it, unless it holds
the newest materialisation of some asset partition (what the UI's partition status, data versions and
lineage read). So repeated runs of the same partitions leave one run's records per partition, not one per
run, and a home's history stops growing with the number of runs. The finished runs' shards are then closed
with their write-ahead logs folded in (`fold_run_logs`): a shard left open kept a log of up to ~4 MB,
bigger than the shard (at 100 demo runs 174 of the history's 292 MB)."""
from __future__ import annotations

import os

import sqlalchemy as db
from dagster import DagsterEventType, DagsterInstance, DagsterRunStatus, RunsFilter
from dagster._core.storage.event_log.schema import SqlEventLogStorageTable

from ..errors import ConfigError
from .event_log import PooledSqliteEventLogStorage

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


def fold_run_logs(instance: DagsterInstance) -> int:
    """The finished runs' shards without a write-ahead log beside them: this process's are closed, and the
    logs a process left when it ended without closing its shards (killed, or an older dreval) folded in;
    how many were folded. A run still going (`dagster dev`'s) keeps its log."""
    storage = instance.event_log_storage
    if not isinstance(storage, PooledSqliteEventLogStorage):  # PostgreSQL, or a user's own storage
        return 0
    storage.close_shards()
    with_logs = storage.runs_with_leftover_logs()
    if not with_logs:
        return 0
    finished = instance.get_run_records(RunsFilter(run_ids=with_logs, statuses=FINISHED))
    return storage.fold_logs(record.dagster_run.run_id for record in finished)


def runs_holding_newest_materialisations(instance: DagsterInstance) -> set[str]:
    """The runs whose materialisation of some asset partition (or unpartitioned asset) is its newest, in
    one query over the event log's index (a run shard's event ids are its own, not comparable)."""
    table = SqlEventLogStorageTable
    newest = (db.select(db.func.max(table.c.id))
              .where(table.c.dagster_event_type == MATERIALIZATION.value)
              .group_by(table.c.asset_key, table.c.partition))
    with instance.event_log_storage.index_connection() as conn:
        return {row[0] for row in conn.execute(db.select(table.c.run_id).where(table.c.id.in_(newest)))}
