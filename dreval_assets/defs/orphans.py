"""Runs whose process died (kill -9, a closed terminal) must not stay "Started" forever.

The CLI runs jobs in its own process and tags each run with that process's PID and host. Before a
`dreval run` launches runs (or, with nothing to do, when a dead process left its marker:
`operations/run_markers.py`), runs still marked starting or started whose process on this host is gone are marked
failed, with the reason. Runs launched by `dagster dev` are watched by Dagster's own run monitoring,
switched on in the home's dagster.yaml (`runner.DAGSTER_YAML`).
"""
from __future__ import annotations

import os
import socket

from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

from ..core.processes import process_alive

PID_TAG = "dreval/pid"
HOST_TAG = "dreval/host"
LIVE_STATUSES = [DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING, DagsterRunStatus.STARTED]


def run_tags() -> dict[str, str]:
    return {PID_TAG: str(os.getpid()), HOST_TAG: socket.gethostname()}


def mark_orphaned_runs(instance: DagsterInstance) -> list[str]:
    """Mark failed the CLI's runs on this host whose process is gone; their ids."""
    runs = instance.get_runs(filters=RunsFilter(statuses=LIVE_STATUSES, tags={HOST_TAG: socket.gethostname()}))
    orphaned = []
    for run in runs:
        pid = int(run.tags.get(PID_TAG, "0") or 0)
        if pid and pid != os.getpid() and not process_alive(pid):
            instance.report_run_failed(run, f"orphaned: the dreval process that ran it (PID {pid}) is gone "
                                            "(killed or interrupted); its partitions are due again")
            orphaned.append(run.run_id)
    return orphaned
