"""Derived state is due like any partition: a leaderboard step that never ran after an evaluation, or a
published copy older than its leaderboard, is rebuilt by the next plain `dreval run`; a killed
publish's temporary copy is removed by the next one."""
import os
import sys
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).parent))
from test_judge_preflight import REPORT, ferry_home  # noqa: E402,F401

from dreval_assets.cli import main  # noqa: E402
from dreval_assets.config import Settings  # noqa: E402
from dreval_assets.defs.definitions import build_definitions  # noqa: E402
from dreval_assets.defs.runner import execute, open_instance, sync_partitions  # noqa: E402
from dreval_assets.operations.planner import Plan, Selection, plan  # noqa: E402
from dreval_assets.store.db import Store  # noqa: E402
from dreval_assets.store.publish import published_path  # noqa: E402


def published_systems(home: Path) -> set[str]:
    with duckdb.connect(str(published_path(home / "dreval.duckdb")), read_only=True) as con:
        return {s for (s,) in con.execute("SELECT DISTINCT system FROM metric_scores").fetchall()}


def test_an_evaluation_whose_leaderboard_never_ran_is_published_by_the_next_run(ferry_home, tmp_path, capsys):  # noqa: F811
    home = ferry_home
    assert main(["--home", str(home), "run"]) == 0
    assert published_systems(home) == {"writer"}
    second = tmp_path / "second"
    second.mkdir()
    (second / "ferry.md").write_text(REPORT.replace("41,200", "41,300"))
    assert main(["--home", str(home), "add-system", "second", "--reports", str(second)]) == 0
    # the crash: the evaluation ran, the process died before its leaderboard step
    store, settings = Store(home / "dreval.duckdb"), Settings.from_env(home)
    due = plan(store, Selection(), settings)
    instance = open_instance(settings)
    sync_partitions(instance, store)
    execute(build_definitions(settings), instance, Plan(per_system=due.per_system))
    assert "second" not in published_systems(home)
    capsys.readouterr()
    assert main(["--home", str(home), "run"]) == 0  # was "nothing to do" for good
    out = capsys.readouterr().out
    assert "plan: 0 task partition(s), 0 system x task partition(s) in 0 system(s), leaderboard" in out
    assert published_systems(home) == {"writer", "second"}
    assert main(["--home", str(home), "run"]) == 0
    assert "nothing to do" in capsys.readouterr().out


def test_a_copy_older_than_its_leaderboard_is_published_again_and_dead_temporaries_go(ferry_home, capsys):  # noqa: F811
    home = ferry_home
    assert main(["--home", str(home), "run"]) == 0
    copy = published_path(home / "dreval.duckdb")
    past = time.time() - 3600
    os.utime(copy, (past, past))  # the publish was cut short: the copy is an hour behind
    dead = copy.with_name(f".{copy.stem}.999999999.deadbeef.tmp.duckdb")
    dead.write_bytes(b"x" * 1000)
    live = copy.with_name(f".{copy.stem}.{os.getpid()}.cafe.tmp.duckdb")  # a publish still under way
    live.write_bytes(b"x")
    capsys.readouterr()
    assert main(["--home", str(home), "run"]) == 0
    out = capsys.readouterr().out
    assert "publish (results.duckdb is older than the leaderboard)" in out and "run publish_job" in out
    assert copy.stat().st_mtime > past + 1800 and not dead.exists() and live.exists()
    assert main(["--home", str(home), "run"]) == 0
    assert "nothing to do" in capsys.readouterr().out
