"""The one place that talks to the DuckDB file: schema, partition rewrites, reads, retries."""
from __future__ import annotations

import logging
import os
import random
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence

import duckdb
import polars as pl

from ..environment import duckdb_memory
from .locations import lock_holder, published_path
from .tables import ASSET_STORAGE, CONTENT_ADDRESSED

log = logging.getLogger("dreval.store")
# Frames enter SQL by their variable name (`SELECT * FROM _dreval_rows`), found by DuckDB's replacement
# scan in the calling function's own locals: ~1 ms cheaper per statement than register + unregister.

SQL_DIR = Path(__file__).resolve().parents[2] / "sql"
SCHEMA_VERSION = 1
MATERIALIZED_COLUMNS = {"asset": pl.String, "system": pl.String, "task": pl.String, "n_rows": pl.Int32,
                        "run_id": pl.String, "materialized_at": pl.Datetime("us"), "settings_version": pl.String}
# What a user's query may touch: the results database only (DuckDB settings, locked after connecting).
CONFINED = {"enable_external_access": False, "autoload_known_extensions": False, "lock_configuration": True}
PartitionKey = tuple[str, ...]  # values of the asset's key columns, e.g. (system, task)
# The databases hold reports, release texts and judge answers: readable by their owner only, and so is
# the home folder dreval creates (which also covers DuckDB's write-ahead log while it exists).
PRIVATE_FILE, PRIVATE_DIR = 0o600, 0o700


def keep_private(path: Path) -> None:
    """`path` and its write-ahead log readable and writable by their owner only (when they exist and
    are looser); a file we do not own is left as it is."""
    for each in (Path(path), Path(f"{path}.wal")):
        try:
            if each.stat().st_mode & 0o077:
                os.chmod(each, PRIVATE_FILE)
        except OSError:
            pass  # not there (yet), or not ours to change


def private_folder(folder: Path) -> None:
    """Create `folder` (and its parents) with a new last folder readable by its owner only."""
    if not folder.exists():
        folder.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
        os.chmod(folder, PRIVATE_DIR)  # mkdir's mode passes through the umask


class StoreError(RuntimeError):
    pass


class MissingUpstreamError(StoreError):
    """An input partition was never materialised: evaluating an empty frame would lie."""


class DatabaseLocked(StoreError):
    """Another process holds the working database: say who, and where people should read instead."""

    def __init__(self, db_path: Path, message: str):
        pid = lock_holder(message)
        holder = f"another process (PID {pid})" if pid else "another process"
        super().__init__(f"{db_path} is held by {holder}; dreval needs it to itself: close that connection, "
                         f"and open the published copy {published_path(db_path)} instead (refreshed after every run)")


DUCKDB_INTERRUPTED = "Query interrupted"  # DuckDB's message for a statement a Ctrl-C ended


def interrupted(exc: BaseException) -> bool:
    """A Ctrl-C, as Python or DuckDB raised it (DuckDB turns the interrupt that reaches it inside a
    statement into InterruptException, into RuntimeError "Query interrupted" while it reads a frame, or,
    when the interrupt is raised in the Python code that hands it a frame, into InvalidInputException
    naming it: "... as Arrow data failed: KeyboardInterrupt", or Dagster's DagsterExecutionInterruptedError)."""
    return isinstance(exc, (KeyboardInterrupt, duckdb.InterruptException)) or (
        isinstance(exc, RuntimeError) and str(exc) == DUCKDB_INTERRUPTED) or (
        isinstance(exc, duckdb.InvalidInputException) and _INTERRUPT_IN_PYTHON.search(str(exc)) is not None)


_INTERRUPT_IN_PYTHON = re.compile(r"failed: \w*(KeyboardInterrupt|InterruptedError)\b")


def _is_lock_conflict(exc: Exception) -> bool:
    text = str(exc).lower()
    return "lock" in text or "conflict" in text


LOCK_WAIT_S = 120.0  # how long a writer waits for another process's turn (DREVAL_LOCK_WAIT_S)
LOCK_DELAY_CAP_S = 1.0  # the longest pause between two tries while it waits


def lock_wait_setting() -> float:
    value = os.environ.get("DREVAL_LOCK_WAIT_S", "").strip()
    try:
        return max(0.0, float(value)) if value else LOCK_WAIT_S
    except ValueError as exc:
        from ..errors import ConfigError
        raise ConfigError(f"DREVAL_LOCK_WAIT_S={value!r}: seconds to wait for another process's turn") from exc


@dataclass
class _Held:
    """One file's keep-alive connection and the sessions sharing it (`Store.session`)."""
    keepalive: duckdb.DuckDBPyConnection
    sessions: int = 0


_SESSIONS: dict[Path, _Held] = {}
_SESSIONS_LOCK = threading.Lock()


class Store:
    # Told once per wait when another process holds the file (the CLI prints it; else it is logged).
    on_lock_wait: Callable[[str], None] | None = None

    def __init__(self, db_path: Path | str, *, max_attempts: int = 8, base_delay_s: float = 0.05,
                 lock_wait_s: float | None = None):
        self.db_path = Path(db_path)
        self.max_attempts = max_attempts  # conflicts between transactions of this process
        self.base_delay_s = base_delay_s
        self.lock_wait_s = lock_wait_setting() if lock_wait_s is None else lock_wait_s  # another process's turn
        self.memory_limit = duckdb_memory()  # set on every connection (a setting of the whole database)

    # -- connections ------------------------------------------------------------------
    @contextmanager
    def connect(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """A short-lived connection; lock conflicts with another process are retried."""
        con = self._open_with_retry(read_only)
        try:
            try:
                yield con
            except (duckdb.InterruptException, duckdb.InvalidInputException, RuntimeError) as exc:
                if not interrupted(exc):
                    raise
            else:
                return
            # a Ctrl-C inside a statement stays a Ctrl-C (`interrupted`), raised outside the handler so that
            # the statement's error and its frames are let go
            raise KeyboardInterrupt
        finally:
            con.close()

    @contextmanager
    def session(self) -> Iterator[None]:
        """Keep the database open for a scope: connections opened inside it cost ~0.5 ms, not ~20 ms.

        DuckDB shares one database instance per file within a process while any connection is open. The
        sessions of one file in this process share one keep-alive connection, closed when the last ends:
        threads each opening and closing their own had DuckDB tear the instance down and set it up again
        while another thread connected ("Unique file handle conflict", through every retry)."""
        path = self.db_path.resolve()
        with _SESSIONS_LOCK:
            held = _SESSIONS.get(path)
            if held is None:
                held = _SESSIONS[path] = _Held(self._open_with_retry(read_only=False))
            held.sessions += 1
        try:
            yield
        finally:
            with _SESSIONS_LOCK:
                held.sessions -= 1
                if not held.sessions:
                    del _SESSIONS[path]
                    held.keepalive.close()

    def _open_with_retry(self, read_only: bool, config: dict | None = None) -> duckdb.DuckDBPyConnection:
        """Writers take turns: while another process holds the file, wait up to `lock_wait_s` (said
        once), then refuse naming the holder."""
        started, attempt, told = time.monotonic(), 0, False
        while True:
            attempt += 1
            try:
                con = duckdb.connect(str(self.db_path), read_only=read_only, config=config or {})
                if not (config or {}).get("lock_configuration"):  # a locked one has it in its config
                    # set, not passed as a config: a later plain duckdb.connect in this process still opens
                    con.execute(f"SET memory_limit = '{self.memory_limit}'")
                if not read_only:
                    keep_private(self.db_path)  # a new file, or one an older dreval made world-readable
                return con
            except duckdb.Error as exc:
                if not _is_lock_conflict(exc):
                    raise
                if "PID" not in str(exc):  # a conflict inside this process: a few quick tries
                    if attempt >= self.max_attempts:
                        raise
                    self._sleep_before_retry(attempt, exc)
                    continue
                waited = time.monotonic() - started
                if waited >= self.lock_wait_s:
                    raise DatabaseLocked(self.db_path, str(exc)) from exc
                if not told:
                    told = True
                    self._tell_wait(exc)
                delay = min(LOCK_DELAY_CAP_S, self.base_delay_s * (2 ** min(attempt - 1, 10)),
                            self.lock_wait_s - waited)
                time.sleep(max(delay, 0.0))

    def _tell_wait(self, exc: Exception) -> None:
        pid = lock_holder(str(exc))
        message = (f"waiting up to {self.lock_wait_s:g} s for {self.db_path}: another process "
                   f"{f'(PID {pid}) ' if pid else ''}is writing to it (DREVAL_LOCK_WAIT_S)")
        (Store.on_lock_wait or log.warning)(message)

    def _sleep_before_retry(self, attempt: int, exc: Exception) -> None:
        delay = self.base_delay_s * (2 ** (attempt - 1)) * (0.5 + random.random())
        log.warning("duckdb busy (%s); retry %d/%d in %.2fs", exc, attempt, self.max_attempts, delay)
        time.sleep(delay)

    def write(self, work) -> None:
        """Run `work(con)` in one transaction, retrying the whole transaction on conflicts."""
        for attempt in range(1, self.max_attempts + 1):
            try:
                with self.connect() as con:
                    con.begin()
                    try:
                        work(con)
                        con.commit()
                    except BaseException as exc:
                        try:
                            con.rollback()
                        except duckdb.Error:
                            if not interrupted(exc):
                                raise
                            # the interrupt ended the transaction already; `connect` raises it as a Ctrl-C
                        raise
                return
            except duckdb.TransactionException as exc:
                if attempt == self.max_attempts:
                    raise
                self._sleep_before_retry(attempt, exc)

    # -- schema -----------------------------------------------------------------------
    def ensure_schema(self) -> None:
        private_folder(self.db_path.parent)

        def migrate(con: duckdb.DuckDBPyConnection) -> None:
            con.execute((SQL_DIR / "schema.sql").read_text())
            applied = {r[0] for r in con.execute("SELECT version FROM schema_migrations").fetchall()}
            if 1 not in applied:
                con.execute("INSERT INTO schema_migrations (version, name) VALUES (1, 'schema.sql')")
            for path in sorted((SQL_DIR / "migrations").glob("[0-9][0-9][0-9]_*.sql")):
                version = int(path.name[:3])
                if version not in applied:
                    con.execute(path.read_text())
                    con.execute("INSERT INTO schema_migrations VALUES (?, ?, now())", [version, path.name])
            con.execute((SQL_DIR / "views.sql").read_text())

        self.write(migrate)

    # -- partition rewrites -----------------------------------------------------------
    def replace_partitions(
        self,
        asset: str,
        keys: Sequence[PartitionKey],
        frames: Mapping[str, pl.DataFrame],
        run_id: str,
        settings_version: str | None = None,
    ) -> dict[str, int]:
        """Replace exactly `keys`' rows of every table of `asset` in one transaction; `settings_version`
        (the settings that shaped the rows) is recorded with each partition.

        Rows are inserted by column name; a row whose partition is not in `keys` is refused.
        Returns rows written per table.
        """
        storage = ASSET_STORAGE[asset]
        unknown = set(frames) - set(storage.tables) - set(CONTENT_ADDRESSED)
        if unknown:
            raise StoreError(f"asset {asset} cannot write tables {sorted(unknown)}")
        key_set = set(keys)
        for table in storage.tables:
            frame = frames.get(table)
            if frame is not None and frame.height and storage.key_columns:
                self._refuse_foreign_rows(asset, table, frame, storage.key_columns, key_set)
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        written: dict[str, int] = {}

        def work(con: duckdb.DuckDBPyConnection) -> None:
            keys_frame = pl.DataFrame(
                [list(k) for k in keys], schema=list(storage.key_columns), orient="row"
            ) if storage.key_columns else None
            for table in storage.tables:
                self._delete_partitions(con, table, storage.key_columns, keys_frame)
                frame = frames.get(table)
                written[table] = self.insert_by_name(con, table, frame)
            written.update(self._insert_content(con, frames))
            self._record_partitions(con, asset, storage.key_columns, keys, frames, run_id, now, settings_version)

        self.write(work)
        return written

    def keep_content(self, frames: Mapping[str, pl.DataFrame]) -> None:
        """The content-addressed rows among `frames` (page texts, image bytes) stored now, each once: the
        stages made ahead of their steps read them before the steps write their frames."""
        if any(frames.get(table) is not None and frames[table].height for table in CONTENT_ADDRESSED):
            self.write(lambda con: self._insert_content(con, frames))

    def _insert_content(self, con, frames: Mapping[str, pl.DataFrame]) -> dict[str, int]:
        """Each content-addressed table's new rows among `frames`; rows offered per table."""
        offered = {}
        for table, hash_column in CONTENT_ADDRESSED.items():
            frame = frames.get(table)
            if frame is not None and frame.height:
                offered[table] = self.insert_new_content(con, table, hash_column, frame)
        return offered

    @staticmethod
    def _refuse_foreign_rows(asset, table, frame, key_columns, key_set) -> None:
        present = {tuple(r) for r in frame.select(list(key_columns)).unique().iter_rows()}
        foreign = present - key_set
        if foreign:
            raise StoreError(
                f"{asset} produced rows in {table} for partitions it was not asked to write: "
                f"{sorted(foreign)[:5]}"
            )

    @staticmethod
    def _delete_partitions(con, table, key_columns, keys_frame) -> None:
        if not key_columns:
            con.execute(f'DELETE FROM "{table}"')
            return
        _dreval_keys = keys_frame  # noqa: F841 (read by name in the SQL)
        match = " AND ".join(f't."{c}" = k."{c}"' for c in key_columns)
        con.execute(f'DELETE FROM "{table}" t WHERE EXISTS (SELECT 1 FROM _dreval_keys k WHERE {match})')

    @staticmethod
    def insert_by_name(con, table, frame: pl.DataFrame | None) -> int:
        if frame is None or frame.height == 0:
            return 0
        _dreval_rows = frame  # noqa: F841 (read by name in the SQL)
        con.execute(f'INSERT INTO "{table}" BY NAME SELECT * FROM _dreval_rows')
        return frame.height

    @staticmethod
    def insert_new_content(con, table, hash_column, frame: pl.DataFrame) -> int:
        _dreval_blobs = frame = frame.unique(subset=[hash_column], keep="first")  # read by name in the SQL
        con.execute(
            f'INSERT INTO "{table}" BY NAME SELECT * FROM _dreval_blobs b '
            f'WHERE NOT EXISTS (SELECT 1 FROM "{table}" t WHERE t."{hash_column}" = b."{hash_column}")'
        )
        return frame.height

    @staticmethod
    def _record_partitions(con, asset, key_columns, keys, frames, run_id, now, settings_version) -> None:
        main = frames.get(ASSET_STORAGE[asset].tables[0])
        counts: dict[PartitionKey, int] = {}
        if main is not None and main.height and key_columns:
            for row in main.group_by(list(key_columns)).len().iter_rows():
                counts[tuple(row[:-1])] = row[-1]
        rows = []
        for key in keys if key_columns else [()]:
            system, task = _system_task(key_columns, key)
            n = counts.get(key, 0) if key_columns else (main.height if main is not None else 0)
            rows.append((asset, system, task, n, run_id, now, settings_version))
        # one statement over a frame (read by name in the SQL): executemany costs ~3 ms a row here
        _dreval_done = pl.DataFrame(rows, schema=MATERIALIZED_COLUMNS, orient="row")  # noqa: F841
        con.execute("INSERT OR REPLACE INTO materialized_partitions BY NAME SELECT * FROM _dreval_done")

    # -- reads ------------------------------------------------------------------------
    def read_partitions(self, asset: str, keys: Sequence[PartitionKey]) -> dict[str, pl.DataFrame]:
        """All tables of `asset` restricted to `keys`; every key must have been materialised."""
        storage = ASSET_STORAGE[asset]
        with self.connect() as con:
            if storage.key_columns:
                self._require_materialised(con, asset, storage.key_columns, keys)
                keys_frame = pl.DataFrame(
                    [list(k) for k in keys], schema=list(storage.key_columns), orient="row"
                )
                _dreval_keys = keys_frame  # noqa: F841 (read by name in the SQL)
                using = ", ".join(f'"{c}"' for c in storage.key_columns)
                result = {}
                for t in storage.tables:  # a loop, not a comprehension: the SQL sees this frame's names
                    result[t] = con.sql(f'SELECT t.* FROM "{t}" t SEMI JOIN _dreval_keys USING ({using})').pl()
                return result
            return {t: _frame(con, f'SELECT * FROM "{t}"') for t in storage.tables}

    @staticmethod
    def _require_materialised(con, asset, key_columns, keys) -> None:
        tasks = sorted({_system_task(key_columns, k)[1] for k in keys})  # not every partition of the asset
        done = {
            (s, t) for s, t in con.execute(
                "SELECT system, task FROM materialized_partitions WHERE asset = ? AND task IN (SELECT unnest(?))",
                [asset, tasks]).fetchall()
        }
        missing = [k for k in keys if _system_task(key_columns, k) not in done]
        if missing:
            shown = ", ".join("|".join(k) for k in missing[:5])
            raise MissingUpstreamError(
                f"upstream asset {asset!r} has no materialisation for {len(missing)} partition(s): "
                f"{shown}{' ...' if len(missing) > 5 else ''}. Materialise it first (dreval run)."
            )

    def materialised(self, asset: str) -> dict[tuple[str, str], datetime]:
        """(system, task) -> materialised_at for every materialised partition of `asset`."""
        return self._partition_records(asset, "materialized_at")

    def settings_versions(self, asset: str) -> dict[tuple[str, str], str | None]:
        """(system, task) -> the settings version each materialised partition of `asset` was made with."""
        return self._partition_records(asset, "settings_version")

    def _partition_records(self, asset: str, column: str) -> dict[tuple[str, str], object]:
        with self.connect() as con:
            rows = con.execute(f"SELECT system, task, {column} FROM materialized_partitions WHERE asset = ?",
                               [asset]).fetchall()
        return {(s, t): value for s, t, value in rows}

    def rows_for_keys(self, sql: str, keys: Iterable, params: Sequence = ()) -> list[tuple]:
        """Rows of `sql`, whose last parameter is the distinct `keys` as a list (`... IN (SELECT
        unnest(?))`), after `params`; no query at all when there is no key."""
        wanted = sorted(set(keys))
        if not wanted:
            return []
        with self.connect() as con:
            return con.execute(sql, [*params, wanted]).fetchall()

    def texts(self, hashes: Sequence[str]) -> dict[str, str]:
        return dict(self.rows_for_keys("SELECT text_hash, text FROM page_texts WHERE text_hash IN (SELECT unnest(?))",
                                       (h for h in hashes if h)))

    def query(self, sql: str, params: Sequence | None = None, read_only: bool = False) -> pl.DataFrame:
        with self.connect(read_only=read_only) as con:
            return _frame(con, sql, params)

    def query_confined(self, sql: str, timeout_s: float | None = None) -> pl.DataFrame:
        """A user's query (`dreval sql`): read-only, and no file or network access, so `COPY ... TO`,
        `read_csv('/etc/passwd')`, `ATTACH` and extensions are refused; the configuration is locked,
        so the query cannot switch that back on. A query still running after `timeout_s` is
        interrupted (duckdb.InterruptException)."""
        con = self._open_with_retry(read_only=True, config=CONFINED | {"memory_limit": self.memory_limit})
        timer = threading.Timer(timeout_s, con.interrupt) if timeout_s else None
        try:
            if timer:
                timer.start()
            return _frame(con, sql)
        finally:
            if timer:
                timer.cancel()
            con.close()

    def execute(self, sql: str, params: Sequence | None = None) -> None:
        self.write(lambda con: con.execute(sql, params or []))


def _system_task(key_columns: Sequence[str], key: PartitionKey) -> tuple[str, str]:
    values = dict(zip(key_columns, key))
    return values.get("system", ""), values.get("task", "")


def _frame(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence | None = None) -> pl.DataFrame:
    """Query result as a polars frame."""
    return con.sql(sql, params=list(params) if params else None).pl()
