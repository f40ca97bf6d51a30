"""Teams: the home's Dagster instance on a real PostgreSQL server, reached with the URL form the
README shows (`postgresql://`, no driver named). A throw-away cluster from Debian's PostgreSQL
binaries (`initdb`, `pg_ctl`) on a free loopback port: the demo runs on it, then two `dreval run`s
at once, and every run lands in PostgreSQL.

Skipped when no PostgreSQL server binaries are installed, unless DREVAL_POSTGRES_REQUIRED=1 (set by
`.ci/run`, which installs them)."""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import sqlalchemy
from dagster import DagsterInstance, DagsterRunStatus

from dreval_assets.cli import main
from dreval_assets.defs.postgres_url import POSTGRES_URL_ENV

ROOT = Path(__file__).resolve().parents[1]


def server_binaries() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def postgres_url():
    binaries = server_binaries()
    if binaries is None:
        if os.environ.get("DREVAL_POSTGRES_REQUIRED") == "1":
            pytest.fail("DREVAL_POSTGRES_REQUIRED=1 but no /usr/lib/postgresql/*/bin/initdb (see .ci/run)")
        pytest.skip("no PostgreSQL server binaries (apt-get install postgresql)")
    # PostgreSQL refuses to run as root: as root, the cluster belongs to the `postgres` user
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    folder = Path(tempfile.mkdtemp(prefix="dreval-pg-"))
    if as_user:
        account = pwd.getpwnam("postgres")
        os.chown(folder, account.pw_uid, account.pw_gid)
    data, port = folder / "data", free_port()

    def pg(tool: str, *args: str) -> None:
        subprocess.run([*as_user, str(binaries / tool), *args], check=True, capture_output=True, timeout=120)

    pg("initdb", "-D", str(data), "-U", "dreval", "--auth=trust", "-E", "UTF8", "--no-sync")
    pg("pg_ctl", "-D", str(data), "-w", "-t", "60", "-l", str(folder / "server.log"), "-o",
       f"-c listen_addresses=127.0.0.1 -p {port} -k {folder} -c fsync=off -c max_connections=200", "start")
    try:
        yield f"postgresql://dreval@127.0.0.1:{port}/postgres"
    finally:
        pg("pg_ctl", "-D", str(data), "-m", "immediate", "stop")
        shutil.rmtree(folder, ignore_errors=True)


def test_the_demo_and_two_runs_at_once_on_a_real_postgresql_instance(postgres_url, home, monkeypatch, capsys):
    monkeypatch.setenv(POSTGRES_URL_ENV, postgres_url)
    assert main(["--home", str(home), "demo"]) == 0
    assert "3 run(s) succeeded, 0 failed" in capsys.readouterr().out
    assert "PostgresStorage" in (home / "dagster" / "dagster.yaml").read_text()
    assert postgres_url not in (home / "dagster" / "dagster.yaml").read_text()

    env = {**os.environ, POSTGRES_URL_ENV: postgres_url, "PYTHONPATH": str(ROOT)}
    env["DREVAL_LOCK_WAIT_S"] = "300"  # the two share one DuckDB file: its writers take turns
    both = [subprocess.Popen([sys.executable, "-m", "dreval_assets.cli", "--home", str(home), "run", "--force",
                              "--task", task], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for task in ("drb.drb-52", "tvir.100001")]
    outputs = [child.communicate(timeout=600)[0] for child in both]
    for child, out in zip(both, outputs):
        assert child.returncode == 0, out
        assert "run(s) succeeded, 0 failed" in out

    # every run, the demo's and both concurrent ones', is in PostgreSQL (the instance the UI would read)
    engine = sqlalchemy.create_engine(postgres_url.replace("postgresql://", "postgresql+psycopg2://"))
    with engine.connect() as con:
        stored = con.execute(sqlalchemy.text("SELECT count(*) FROM runs")).scalar_one()
    engine.dispose()
    monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster"))
    instance = DagsterInstance.get()
    runs = instance.get_runs()
    assert stored == len(runs) >= 3 + 2 * 3
    assert {run.status for run in runs} == {DagsterRunStatus.SUCCESS}
    forced = [run for run in runs if run.tags.get("dagster/asset_partition_range_start", "").endswith("drb.drb-52")
              or run.tags.get("dagster/asset_partition_range_start") == "drb.drb-52"]
    assert forced
    instance.dispose()
