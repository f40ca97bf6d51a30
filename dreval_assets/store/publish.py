"""The published copy of the results: what people open in the DuckDB CLI, a notebook or a BI tool.

The working database (`<home>/dreval.duckdb`) is private to the pipeline: DuckDB lets one process
write a file and no other process open it meanwhile, not even read-only. After each run the pipeline
copies every table and view into a new file and renames it over `<home>/results.duckdb` in one step.
A client holding the old copy open keeps reading it (the rename swaps the name, not the file it has
open) and sees the new results when it reconnects; no client ever blocks a run.
"""
from __future__ import annotations

import hashlib
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..core.processes import process_alive
from .db import Store, keep_private
from .locations import published_path


# inode, size, modification time (ns) and the digest of its first blocks: DuckDB's headers, rewritten by
# every checkpoint (with a counter), so a change shows even where modification times are coarse
FileState = tuple[int, int, int, str]
HEADER_BYTES = 3 * 4096


@dataclass(frozen=True)
class Published:
    """A copy this process published from a working file it had just checkpointed: while neither file has
    changed since (and the working file has no write-ahead log), the copy holds all the working file
    holds, written compactly, so compaction can take the copy instead of writing its own (`store/compact`)."""
    working: FileState
    copy: FileState


PUBLISHED: dict[Path, Published] = {}  # working file -> its last copy published by this process


def file_state(path: Path) -> FileState | None:
    try:
        found = path.stat()
        with path.open("rb") as file:
            head = hashlib.sha256(file.read(HEADER_BYTES)).hexdigest()
    except FileNotFoundError:
        return None
    return found.st_ino, found.st_size, found.st_mtime_ns, head


def publish(store: Store) -> Path:
    """Copy the working database to `results.duckdb`: write a temporary file beside it, then rename."""
    target = published_path(store.db_path)
    _remove_dead_temporaries(target)
    temporary = target.with_name(f".{target.stem}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp.duckdb")
    PUBLISHED.pop(store.db_path, None)
    try:
        with store.connect() as con:
            # the file as checkpointed, before and after the copy: a write of another thread meanwhile shows
            before = file_state(store.db_path) if _checkpoint(con) else None
            copy_database(con, temporary)
            unchanged = before is not None and file_state(store.db_path) == before and not _has_log(store.db_path)
        keep_private(temporary)  # the copy holds what the working file holds: its owner's only
        os.replace(temporary, target)
        if unchanged:
            PUBLISHED[store.db_path] = Published(before, file_state(target))
    finally:
        for leftover in (temporary, temporary.with_name(temporary.name + ".wal")):
            leftover.unlink(missing_ok=True)
    return target


def copy_database(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Every table and view of the connection's database written compactly into a new file at `path`."""
    source = con.execute("SELECT current_database()").fetchone()[0]
    con.execute(f"ATTACH '{_quoted(path)}' AS dreval_copy")
    try:
        con.execute(f'COPY FROM DATABASE "{source}" TO dreval_copy')
    finally:
        con.execute("DETACH dreval_copy")


def current_copy(db_path: Path) -> Path | None:
    """The published copy, when it still holds exactly what the working file holds (see `Published`)."""
    published, target = PUBLISHED.get(db_path), published_path(db_path)
    if published is None or _has_log(db_path):
        return None
    if file_state(db_path) != published.working or file_state(target) != published.copy:
        return None
    return target


def _has_log(db_path: Path) -> bool:
    """Whether the working file has a write-ahead log: writes not yet in the file itself."""
    return Path(f"{db_path}.wal").exists()


def _checkpoint(con: duckdb.DuckDBPyConnection) -> bool:
    """The write-ahead log written into the file (the checkpoint the file's close would make anyway);
    False when another transaction is open."""
    try:
        con.execute("CHECKPOINT")
        return True
    except duckdb.Error:
        return False


def _remove_dead_temporaries(target: Path) -> None:
    """Copies a killed publish left behind (its process is gone): a later publish removes them."""
    for leftover in target.parent.glob(f".{target.stem}.*.tmp.duckdb*"):
        pid = leftover.name.split(".")[2]
        if pid.isdigit() and not process_alive(int(pid)):
            leftover.unlink(missing_ok=True)


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")
