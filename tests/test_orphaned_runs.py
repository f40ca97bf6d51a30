"""A run whose dreval process was killed is marked failed at the next `dreval run`, with the reason
(even one with nothing to do: the dead process's marker says to look); runs of live processes, and
runs of other hosts, are left alone."""
import subprocess
import sys

from dagster import DagsterRunStatus, job, op

from dreval_assets.cli import main
from dreval_assets.config import Settings
from dreval_assets.defs.orphans import HOST_TAG, PID_TAG, mark_orphaned_runs, run_tags
from dreval_assets.defs.runner import open_instance
from dreval_assets.operations.run_markers import someone_died


@op
def noop() -> None:
    pass


@job
def stand_in_job():
    noop()


def dead_pid() -> int:
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True)
    return int(finished.stdout)


def started_run(instance, tags):
    run = instance.create_run_for_job(stand_in_job, tags=tags, status=DagsterRunStatus.STARTED)
    return run.run_id


def test_killed_runs_are_marked_failed_at_the_next_run(home, capsys):
    assert main(["--home", str(home), "init"]) == 0
    instance = open_instance(Settings(home))
    gone = dead_pid()
    killed = started_run(instance, {**run_tags(), PID_TAG: str(gone)})
    (home / "dagster" / "running").mkdir()
    (home / "dagster" / "running" / str(gone)).touch()  # the killed process's marker, left behind
    alive = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        running = started_run(instance, {**run_tags(), PID_TAG: str(alive.pid)})
        elsewhere = started_run(instance, {PID_TAG: str(dead_pid()), HOST_TAG: "another-host"})
        assert main(["--home", str(home), "run"]) == 0
        out = capsys.readouterr().out
        assert "marked 1 orphaned run(s) failed" in out and killed[:8] in out
        status = {r.run_id: r.status for r in instance.get_runs()}
        assert status[killed] == DagsterRunStatus.FAILURE
        assert status[running] == status[elsewhere] == DagsterRunStatus.STARTED
        reason = [e for e in instance.all_logs(killed) if e.dagster_event and e.dagster_event.is_run_failure]
        assert reason and "orphaned" in reason[0].message + str(reason[0].dagster_event.event_specific_data)
        assert mark_orphaned_runs(instance) == []  # said once
        assert not someone_died(home / "dagster")  # its marker is cleared: later no-op runs skip Dagster
    finally:
        alive.stdin.close()
        alive.wait(timeout=10)


def test_the_home_dagster_yaml_turns_on_run_monitoring(home):
    open_instance(Settings(home))
    config = (home / "dagster" / "dagster.yaml").read_text()
    assert "run_monitoring:" in config and "enabled: true" in config
