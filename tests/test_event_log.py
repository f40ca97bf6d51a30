"""The home's event log keeps its connections open but stores what Dagster's stock per-run SQLite log
stores, in the same files: a home can switch between them without losing its history."""
import pytest
from dagster import (AssetCheckKey, AssetCheckResult, AssetCheckSpec, AssetKey,
                     BackfillPolicy, DagsterEventType, DagsterInstance, DynamicPartitionsDefinition, IOManager, Output,
                     asset, materialize)
from dagster._core.storage.tags import ASSET_PARTITION_RANGE_END_TAG, ASSET_PARTITION_RANGE_START_TAG

from dreval_assets.config import Settings
from dreval_assets.defs import event_log
from dreval_assets.defs.runner import open_instance


@asset
def counted() -> int:
    return 3


def test_runs_are_stored_in_the_stock_layout_with_few_engines(home, monkeypatch):
    made = []
    real = event_log.create_engine
    monkeypatch.setattr(event_log, "create_engine", lambda *a, **k: made.append(a[0]) or real(*a, **k))
    instance = open_instance(Settings(home))
    assert type(instance.event_log_storage).__name__ == "PooledSqliteEventLogStorage"
    for _ in range(3):
        assert materialize([counted], instance=instance).success
    # one engine per shard (the index and each run) and one for the run-shard template, not one per
    # call (the stock log makes ~8 per event)
    assert len(made) == len(set(made)) <= 1 + 3 + 1

    (home / "dagster" / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")  # the stock storage
    stock = DagsterInstance.from_config(str(home / "dagster"))
    assert type(stock.event_log_storage).__name__ == "SqliteEventLogStorage"
    latest = stock.get_latest_materialization_event(AssetKey("counted"))
    assert latest is not None and len(stock.get_runs()) == 3


letters = DynamicPartitionsDefinition(name="letters")


class Discard(IOManager):
    def handle_output(self, context, obj) -> None:
        pass

    def load_input(self, context):
        raise NotImplementedError


@asset(partitions_def=letters, backfill_policy=BackfillPolicy.single_run(), io_manager_key="discard",
       check_specs=[AssetCheckSpec("non_empty", asset="lettered")])
def lettered(context):
    yield Output({key: len(key) for key in context.partition_keys}, metadata={"n": len(context.partition_keys)})
    yield AssetCheckResult(check_name="non_empty", passed=True)


def test_a_batched_range_run_reads_back_through_the_stock_storage(home):
    """Planned and materialisation events come as batches (DAGSTER_EVENT_BATCH_SIZE): written in one
    transaction per shard, they must read back exactly as the stock storage would have written them."""
    import os

    assert int(os.environ["DAGSTER_EVENT_BATCH_SIZE"]) > 1
    instance = open_instance(Settings(home))
    keys = ["a", "b", "c", "d"]
    instance.add_dynamic_partitions("letters", keys)
    tags = {ASSET_PARTITION_RANGE_START_TAG: "a", ASSET_PARTITION_RANGE_END_TAG: "d"}
    result = materialize([lettered], instance=instance, tags=tags, resources={"discard": Discard()})
    assert result.success
    stored = instance.get_records_for_run(result.run_id).records
    assert [r.event_log_entry.dagster_event_type for r in stored].count(
        DagsterEventType.ASSET_MATERIALIZATION_PLANNED) == 4

    (home / "dagster" / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")  # the stock storage
    stock = DagsterInstance.from_config(str(home / "dagster"))
    key = AssetKey("lettered")
    assert stock.get_materialized_partitions(key) == set(keys)
    assert stock.get_latest_materialization_event(key).dagster_event.partition in keys
    planned = stock.fetch_planned_materializations(key, limit=10).records
    assert sorted(r.partition_key for r in planned) == keys
    # the index rows keep the batch's order, and the asset entry names the batch's last materialisation
    materialised = stock.fetch_materializations(key, limit=10, ascending=True).records
    in_run_order = [r.event_log_entry.dagster_event.partition for r in stored
                    if r.event_log_entry.dagster_event_type == DagsterEventType.ASSET_MATERIALIZATION]
    assert [r.partition_key for r in materialised] == in_run_order and sorted(in_run_order) == keys
    entry = stock.get_asset_records([key])[0].asset_entry
    assert entry.last_materialization_record.storage_id == materialised[-1].storage_id
    assert entry.last_run_id == result.run_id
    check = stock.event_log_storage.get_latest_asset_check_execution_by_key([AssetCheckKey(key, "non_empty")])
    assert check[AssetCheckKey(key, "non_empty")].run_id == result.run_id
    assert len(stock.get_run_records()) == 1 and stock.get_run_by_id(result.run_id).is_success
    # the run shard holds every event of the run, in order, as the stock storage reads them
    assert [r.storage_id for r in stock.get_records_for_run(result.run_id).records] == \
        sorted(r.storage_id for r in stored)


def test_new_run_shards_are_copies_of_one_initialised_template(home):
    """A run's shard is copied from a template made once, not built by alembic each time: the copies
    carry the stock schema and revision, and the template is never taken for a run."""
    import sqlite3

    instance = open_instance(Settings(home))
    runs = [materialize([counted], instance=instance).run_id for _ in range(2)]
    storage = instance.event_log_storage
    assert sorted(storage.get_all_run_ids()) == sorted(runs)
    templates = list((home / "dagster" / "history" / "runs").glob(".run-shard-*.template"))
    assert len(templates) == 1

    def schema(path):
        with sqlite3.connect(path) as con:
            tables = con.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall()
            return tables, con.execute("SELECT version_num FROM alembic_version").fetchall()

    built = home / "built.db"  # a shard as the stock storage builds it
    engine = event_log.create_engine(f"sqlite:///{built}")
    storage._initdb(engine)
    engine.dispose()
    assert schema(storage.path_for_shard(runs[0])) == schema(built)
    assert len(instance.get_records_for_run(runs[1]).records) > 5
    with storage.run_connection(runs[1]) as conn:  # WAL, committed without an fsync each time
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL


def test_opening_the_home_without_dagster_home_says_what_to_set(home, monkeypatch):
    open_instance(Settings(home))
    monkeypatch.delenv("DAGSTER_HOME")
    with pytest.raises(RuntimeError, match="DAGSTER_HOME"):
        DagsterInstance.from_config(str(home / "dagster"))
