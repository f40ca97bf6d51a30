"""Dagster's run history is bounded by DREVAL_DAGSTER_KEEP_RUNS: runs beyond the newest N are deleted
(their event-log shards too) unless they hold a partition's newest materialisation, so every partition
stays materialised in Dagster's eyes after any number of repeated runs."""
import contextlib
import io
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from dagster import AssetKey, DagsterInstance

from dreval_assets.cli import main
from dreval_assets.errors import ConfigError
from dreval_assets.defs.retention import keep_runs_setting


def quiet(*argv: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(list(argv)) == 0, argv


def shards(home: Path) -> set[str]:
    runs = home / "dagster" / "history" / "runs"  # ".db" holds runless events
    return {p.stem for p in runs.glob("*.db") if p.name not in ("index.db", ".db")}


def test_repeated_runs_keep_the_newest_materialisations_and_prune_the_rest(home, monkeypatch):
    monkeypatch.setenv("DREVAL_DAGSTER_KEEP_RUNS", "all")
    quiet("--home", str(home), "demo")
    instance = DagsterInstance.from_config(str(home / "dagster"))
    partitions = instance.get_materialized_partitions(AssetKey("metric_scores"))
    first_runs = {r.dagster_run.run_id for r in instance.get_run_records()}
    assert len(partitions) == 24 and shards(home) >= first_runs

    monkeypatch.setenv("DREVAL_DAGSTER_KEEP_RUNS", "1")
    for _ in range(2):  # the same system again: each run supersedes the last one's partitions of it
        quiet("--home", str(home), "run", "--force", "--system", "careful-scholar")
    instance = DagsterInstance.from_config(str(home / "dagster"))
    runs = {r.dagster_run.run_id for r in instance.get_run_records()}
    # the first --force run materialised nothing that is still newest: gone, with its shard
    assert len(runs) < len(first_runs) + 2 * 2
    assert shards(home) == runs  # no shard of a deleted run is left behind
    # every partition still has its newest materialisation, the other systems' from the demo's runs
    assert instance.get_materialized_partitions(AssetKey("metric_scores")) == partitions
    assert first_runs & runs  # the demo's evaluation of the other systems is still what lineage reads


def test_the_setting_is_checked(monkeypatch):
    monkeypatch.setenv("DREVAL_DAGSTER_KEEP_RUNS", "ten")
    with pytest.raises(ConfigError, match="DREVAL_DAGSTER_KEEP_RUNS"):
        keep_runs_setting()
    monkeypatch.setenv("DREVAL_DAGSTER_KEEP_RUNS", "all")
    assert keep_runs_setting() is None
    monkeypatch.delenv("DREVAL_DAGSTER_KEEP_RUNS")
    assert keep_runs_setting() == 100


def test_a_log_left_beside_a_finished_runs_shard_is_folded_in_at_the_next_run(home, monkeypatch):
    """A process killed while it held a run's shard open (or an older dreval) left the shard's
    write-ahead log beside it; the next `dreval run` folds it in, and what it held is kept."""
    monkeypatch.setenv("DREVAL_DAGSTER_KEEP_RUNS", "all")
    quiet("--home", str(home), "demo")
    run_id = sorted(shards(home))[0]
    shard = home / "dagster" / "history" / "runs" / f"{run_id}.db"
    leave_a_log = ("import os, sqlite3, sys\n"
                   "conn = sqlite3.connect(sys.argv[1])\n"
                   "conn.execute('CREATE TABLE left_behind (n INTEGER)')\n"
                   "conn.execute('INSERT INTO left_behind VALUES (7)')\n"
                   "conn.commit()\n"
                   "os._exit(0)\n")  # killed: the connection is never closed
    subprocess.run([sys.executable, "-c", leave_a_log, str(shard)], check=True, timeout=60)
    assert Path(f"{shard}-wal").stat().st_size > 0

    quiet("--home", str(home), "run", "--force", "--system", "careful-scholar")
    assert not Path(f"{shard}-wal").exists()
    with closing(sqlite3.connect(shard)) as conn:
        assert conn.execute("SELECT n FROM left_behind").fetchall() == [(7,)]
    assert not list((home / "dagster" / "history" / "runs").glob("*-wal"))
