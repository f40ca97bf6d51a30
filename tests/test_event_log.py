"""The home's event log keeps its connections open but stores what Dagster's stock per-run SQLite log
stores, in the same files: a home can switch between them without losing its history."""
from dagster import AssetKey, DagsterInstance, asset, materialize

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
    # one engine per shard (the index and each run), not one per call (the stock log makes ~8 per event)
    assert len(made) == len(set(made)) <= 1 + 3

    (home / "dagster" / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")  # the stock storage
    stock = DagsterInstance.from_config(str(home / "dagster"))
    assert type(stock.event_log_storage).__name__ == "SqliteEventLogStorage"
    latest = stock.get_latest_materialization_event(AssetKey("counted"))
    assert latest is not None and len(stock.get_runs()) == 3
