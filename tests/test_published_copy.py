"""People query `<home>/results.duckdb`, a copy published after every run: a client holding it open
for a whole run never affects the run, and a client holding the working file gets one clear line."""
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb

from cli_output import without_home_line

from dreval_assets.cli import main
from dreval_assets.store.db import DatabaseLocked, Store
from dreval_assets.store.publish import publish, published_path

HOLD_AND_QUERY = textwrap.dedent("""
    import sys, time, duckdb
    con = duckdb.connect(sys.argv[1], read_only=True)
    print(con.execute("SELECT count(*) FROM metric_scores").fetchone()[0], flush=True)
    answered = 0
    while sys.stdin.readline().strip() == "query":  # the test asks between its steps; EOF ends it
        answered += con.execute("SELECT count(*) FROM leaderboard").fetchone()[0] > 0
        print(answered, flush=True)
""")


def hold(path: Path) -> subprocess.Popen:
    client = subprocess.Popen([sys.executable, "-c", HOLD_AND_QUERY, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    client.first_line = client.stdout.readline().strip()
    return client


def ask(client: subprocess.Popen) -> str:
    client.stdin.write("query\n")
    client.stdin.flush()
    return client.stdout.readline().strip()


def test_a_client_holds_the_published_copy_through_a_full_run(home):
    assert main(["--home", str(home), "demo"]) == 0
    copy = published_path(home / "dreval.duckdb")
    assert copy.exists() and not list(home.glob(".*tmp*"))  # written beside it, then renamed over it
    client = hold(copy)
    try:
        assert int(client.first_line) > 300
        old_file = copy.stat().st_ino
        extra = Path(__file__).resolve().parents[1] / "dreval_assets" / "demo" / "extra_systems" / "steady-analyst"
        assert main(["--home", str(home), "add-system", "steady-analyst", "--reports", str(extra)]) == 0
        assert main(["--home", str(home), "run"]) == 0  # a whole run (a new system, the leaderboard), copy open
        assert ask(client) == "1"  # the client kept its connection and still reads
        assert copy.stat().st_ino != old_file  # a new copy was renamed into place
    finally:
        client.stdin.close()
        client.wait(timeout=30)
    assert client.returncode == 0
    fresh = duckdb.connect(str(copy), read_only=True)
    working = Store(home / "dreval.duckdb")
    views = {r[0] for r in fresh.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    assert {"leaderboard_live", "na_scores", "judge_cost_by_system", "agreement_pairs"} <= views  # views come too
    assert fresh.execute("SELECT count(*) FROM na_scores").fetchone()[0] > 0
    for table in ("metric_scores", "leaderboard", "report_claims"):
        assert fresh.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == \
            working.query(f"SELECT count(*) FROM {table}").item()
    fresh.close()


def test_the_working_file_held_elsewhere_is_one_line_naming_the_pid_and_the_copy(home, capsys, monkeypatch):
    store = Store(home / "dreval.duckdb")
    store.ensure_schema()
    publish(store)
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys; c = duckdb.connect(sys.argv[1]); "
                               "print('held', flush=True); sys.stdin.read()", str(store.db_path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        quick = Store(store.db_path, base_delay_s=0.01, lock_wait_s=0.2)
        try:
            quick.query("SELECT 1")
            raise AssertionError("the lock was not noticed")
        except DatabaseLocked as exc:
            message = str(exc)
        assert f"PID {holder.pid}" in message and str(published_path(store.db_path)) in message
        assert "\n" not in message
        # reading needs no write access: the leaderboard comes from the published copy meanwhile
        assert main(["--home", str(home), "leaderboard"]) == 0
        # a writer waits its turn, says so once, and gives up in one line naming the holder
        monkeypatch.setenv("DREVAL_LOCK_WAIT_S", "0.5")
        capsys.readouterr()
        reports = home.parent / "late-reports"
        reports.mkdir()
        (reports / "t1.md").write_text("# A report\n\nIt says something.\n", encoding="utf-8")
        assert main(["--home", str(home), "add-system", "late", "--reports", str(reports)]) == 2
        err = without_home_line(capsys.readouterr().err)
        assert err.count("\n") == 2 and err.startswith("dreval: waiting up to 0.5 s for ")
        assert f"PID {holder.pid}" in err.splitlines()[1] and "results.duckdb" in err.splitlines()[1]
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
