"""The published copy of the results: what people open in the DuckDB CLI, a notebook or a BI tool.

The working database (`<home>/dreval.duckdb`) is private to the pipeline: DuckDB lets one process
write a file and no other process open it meanwhile, not even read-only. After each run the pipeline
copies every table and view into a new file and renames it over `<home>/results.duckdb` in one step.
A client holding the old copy open keeps reading it (the rename swaps the name, not the file it has
open) and sees the new results when it reconnects; no client ever blocks a run.
"""
from __future__ import annotations

import os
import uuid
from pathlib import Path

from ..core.processes import process_alive
from .db import Store, keep_private
from .locations import published_path


def publish(store: Store) -> Path:
    """Copy the working database to `results.duckdb`: write a temporary file beside it, then rename."""
    target = published_path(store.db_path)
    _remove_dead_temporaries(target)
    temporary = target.with_name(f".{target.stem}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp.duckdb")
    try:
        with store.connect() as con:
            source = con.execute("SELECT current_database()").fetchone()[0]
            con.execute(f"ATTACH '{_quoted(temporary)}' AS dreval_published")
            try:
                con.execute(f'COPY FROM DATABASE "{source}" TO dreval_published')
            finally:
                con.execute("DETACH dreval_published")
        keep_private(temporary)  # the copy holds what the working file holds: its owner's only
        os.replace(temporary, target)
    finally:
        for leftover in (temporary, temporary.with_name(temporary.name + ".wal")):
            leftover.unlink(missing_ok=True)
    return target


def _remove_dead_temporaries(target: Path) -> None:
    """Copies a killed publish left behind (its process is gone): a later publish removes them."""
    for leftover in target.parent.glob(f".{target.stem}.*.tmp.duckdb*"):
        pid = leftover.name.split(".")[2]
        if pid.isdigit() and not process_alive(int(pid)):
            leftover.unlink(missing_ok=True)


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")
