"""Which dreval processes are running jobs on a home, without importing Dagster: a marker file per
process under `<home>/dagster/running/`, written before its runs and removed after. A marker whose
process is gone means runs may have been left "Started" (kill -9): only then does a `dreval run` with
nothing to do open the Dagster instance to mark them failed (`defs/orphans.py`)."""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ..core.processes import process_alive

MARKERS = "running"


@contextmanager
def running(dagster_home: Path) -> Iterator[None]:
    folder = dagster_home / MARKERS
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / str(os.getpid())
    marker.touch()
    try:
        yield
    finally:
        marker.unlink(missing_ok=True)


def _dead(dagster_home: Path) -> list[Path]:
    folder = dagster_home / MARKERS
    if not folder.is_dir():
        return []
    return [m for m in folder.iterdir() if m.name.isdigit() and not process_alive(int(m.name))]


def someone_running(dagster_home: Path) -> bool:
    """Another live dreval process is running jobs on this home (the sensor waits for it)."""
    folder = dagster_home / MARKERS
    if not folder.is_dir():
        return False
    return any(m.name.isdigit() and int(m.name) != os.getpid() and process_alive(int(m.name))
               for m in folder.iterdir())


def someone_died(dagster_home: Path) -> bool:
    return bool(_dead(dagster_home))


def forget_the_dead(dagster_home: Path) -> None:
    for marker in _dead(dagster_home):
        marker.unlink(missing_ok=True)
