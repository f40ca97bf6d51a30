"""The installed `dreval` command ends its process at once after `main` (cli.console): what it printed
still arrives whole through a pipe, its exit status is main's, and the garbage collector runs at the
command's threshold."""
from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tomllib
from contextlib import closing
from pathlib import Path

import duckdb

from dreval_assets.cli import YOUNG_OBJECTS_BEFORE_GC


def dreval_command() -> str:
    found = shutil.which("dreval", path=str(Path(sys.executable).parent))
    assert found, "the dreval console script is installed beside this Python"
    return found


def test_a_large_output_arrives_whole_through_a_pipe(tmp_path):
    home = tmp_path / "home"
    assert subprocess.run([dreval_command(), "--home", str(home), "init"], capture_output=True).returncode == 0
    with duckdb.connect(str(home / "results.duckdb")) as con:  # what `dreval sql` reads
        con.execute("CREATE TABLE numbers AS SELECT range AS n FROM range(30000)")
    done = subprocess.run([dreval_command(), "--home", str(home), "sql", "--format", "csv",
                           "SELECT n FROM numbers ORDER BY n"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "n" and lines[1:] == [str(n) for n in range(30000)]  # the last block was flushed


def test_the_exit_status_and_the_error_line_are_mains(tmp_path):
    done = subprocess.run([dreval_command(), "--home", str(tmp_path / "nowhere"), "sql", "SELECT 1"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith("dreval: error:")


def test_console_sets_the_collectors_threshold_and_exits_with_mains_status():
    probe = ("import gc, dreval_assets.cli as cli\n"
             "cli.main = lambda: print(gc.get_threshold(), end='') or 3\n"
             "cli.console()\n"
             "print('never reached')\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 3
    assert done.stdout == str((YOUNG_OBJECTS_BEFORE_GC, 10, 10))


def test_the_command_freezes_what_it_has_before_its_runs_and_a_library_caller_does_not(tmp_path):
    demo = Path(__file__).resolve().parents[1] / "dreval_assets" / "demo"
    home = tmp_path / "home"
    probe = ("import gc, sys, dreval_assets.cli as cli, dreval_assets.defs.runner as runner\n"
             "runner.execute = lambda *a, **k: print('frozen', gc.get_freeze_count(), flush=True) or []\n"
             f"assert cli.main(['--home', {str(home)!r}, 'import', 'generic', {str(demo)!r}, "
             "'--system', 'careful-scholar']) == 0\n"
             f"assert cli.main(['--home', {str(home)!r}, 'run']) == 0\n"
             f"sys.argv = ['dreval', '--home', {str(home)!r}, 'run']\n"
             "cli.console()\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "DREVAL_JUDGE": "heuristic"})
    assert done.returncode == 0, done.stderr[-2000:]
    library, command = [int(line.split()[1]) for line in done.stdout.splitlines() if line.startswith("frozen")]
    assert library == 0 and command > 100_000  # the imports, Dagster's among them


def test_the_console_script_loads_the_command_uncollected_then_collects_with_it_set_aside():
    scripts = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["dreval"] == "dreval_assets.entry:console"
    probe = ("import gc, sys\n"
             "from dreval_assets import entry\n"
             "seen = []\n"
             "sys.addaudithook(lambda event, args: event == 'import' and args[0] == 'dreval_assets.cli'"
             " and seen.append(gc.isenabled()))\n"
             "command = entry.loaded_command()\n"
             "print(seen, gc.isenabled(), gc.get_freeze_count() > 100_000, command.__module__)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["[False]", "True", "True", "dreval_assets.cli"]


def test_the_command_loads_without_the_openai_client():
    """openai's types are ~0.4 s of import: a command that calls no endpoint (sql, view, status) must not
    pay it; the judge and the embeddings import it when they call."""
    probe = "import sys, dreval_assets.cli\nprint(sorted(m for m in ('openai', 'instructor') if m in sys.modules))\n"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_a_run_leaves_no_write_ahead_log_beside_dagsters_history(tmp_path):
    """The command ends with os._exit: the event log's shards it kept open are closed first, so SQLite
    folds their logs into them (each was left beside its shard, up to ~6 MB, never read again)."""
    demo = Path(__file__).resolve().parents[1] / "dreval_assets" / "demo"
    home = tmp_path / "home"
    env = {**os.environ, "DREVAL_JUDGE": "heuristic"}
    for argv in (["import", "generic", str(demo), "--system", "careful-scholar"], ["run"]):
        done = subprocess.run([dreval_command(), "--home", str(home), *argv], capture_output=True, text=True,
                              timeout=300, env=env)
        assert done.returncode == 0, done.stderr[-2000:]
    history = home / "dagster" / "history" / "runs"
    shards = [p for p in history.glob("*.db") if p.name not in ("index.db", ".db")]  # ".db": runless events
    assert len(shards) >= 3  # the tasks, evaluation and leaderboard runs
    assert sorted(p.name for p in history.glob("*-wal")) == []
    for shard in shards:  # what the logs held is in the shards: every run's steps are there
        with closing(sqlite3.connect(shard)) as conn:
            assert conn.execute("SELECT count(*) FROM event_logs WHERE dagster_event_type = 'STEP_SUCCESS'"
                                ).fetchone()[0] >= 1
