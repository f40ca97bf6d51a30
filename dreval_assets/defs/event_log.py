"""Dagster's per-run SQLite event log, with its connections kept open.

The stock `SqliteEventLogStorage` builds a new SQLAlchemy engine and SQLite connection for every
call, about eight per event (measured: 1,577 engines for one 8-partition run, ~2 s of its ~12 s). This
subclass keeps one engine per shard (the index and the few newest runs) and otherwise stores exactly
what the stock one stores, in the same files (`$DAGSTER_HOME/history/runs/`), so a home switches
between the two without losing its history. Used by the home's own dagster.yaml (`runner.DAGSTER_YAML`).
Beyond pooling: batches in one transaction, new run shards copied from an initialised template, and
commits with `synchronous=NORMAL` (WAL mode: durable across application crashes, not power cuts).
"""
from __future__ import annotations

import os
import shutil
import sqlite3
import time
import weakref
from collections import OrderedDict
from contextlib import closing, contextmanager
from typing import Callable, Iterable, Iterator, Sequence

from dagster import Field, StringSource
from dagster import __version__ as dagster_version
from dagster._core.events import ASSET_CHECK_EVENTS, ASSET_EVENTS, EVENT_TYPE_TO_PIPELINE_RUN_STATUS
from dagster._core.events.log import EventLogEntry
from dagster._core.storage.event_log.schema import AssetKeyTable, SqlEventLogStorageTable
from dagster._core.storage.event_log.sqlite.sqlite_event_log import INDEX_SHARD_NAME, SqliteEventLogStorage
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS
from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import NullPool

MIRRORED_IN_INDEX = ASSET_EVENTS | ASSET_CHECK_EVENTS | set(EVENT_TYPE_TO_PIPELINE_RUN_STATUS)
PARTITION_MEMORY_S = 5.0
OPEN_SHARDS = 4  # engines kept: the index shard and the newest run shards
# Dagster hands a storage the events it marks as one batch (a run's planned materialisations, a step's
# materialisations) together only when this is set; `store_event_batch` below writes them in one
# transaction per shard. Set where the storage is loaded, so `dagster dev`'s run workers do it too.
os.environ.setdefault("DAGSTER_EVENT_BATCH_SIZE", "1000")


def default_base_dir() -> str:
    home = os.environ.get("DAGSTER_HOME")
    if not home:  # e.g. DagsterInstance.from_config(path) in a notebook: the shards' folder is unknown
        raise RuntimeError("the home's event log needs DAGSTER_HOME set to the home's dagster folder "
                           "(<home>/dagster), as `dreval` and `dagster dev` set it")
    return os.path.join(home, "history", "runs")


class PooledSqliteEventLogStorage(SqliteEventLogStorage):
    def __init__(self, base_dir: str | None = None, inst_data=None):
        self._engines: OrderedDict[str, Engine] = OrderedDict()  # before the parent's init, which connects
        self._tables_seen: set[str] = set()
        self._asset_key_columns_seen: set[str] = set()
        self._partitions_seen: dict[tuple[str, str], float] = {}  # (definition, key) -> when found
        super().__init__(base_dir or default_base_dir(), inst_data)
        _OPEN.add(self)

    def close_shards(self) -> None:
        """Close the shards' connections kept open: SQLite folds each shard's write-ahead log into it and
        deletes the log when its last connection closes. The storage connects again when next used."""
        with self._db_lock:
            engines, self._engines = list(self._engines.values()), OrderedDict()
        for engine in engines:
            engine.dispose()

    def runs_with_leftover_logs(self) -> list[str]:
        """The runs whose shard has a write-ahead log beside it: one of this process's open shards, or one
        a process left when it ended without closing it (killed, or an older dreval)."""
        suffix = ".db-wal"
        return [name[:-len(suffix)] for name in os.listdir(self._base_dir)
                if name.endswith(suffix) and name[:-len(suffix)] not in ("", INDEX_SHARD_NAME)]

    def fold_logs(self, run_ids: Iterable[str]) -> int:
        """These runs' write-ahead logs folded into their shards (how many): opening a shard and closing it
        is enough, as the last connection to close checkpoints and deletes the log (while another process
        has the shard open, that one does it when it closes)."""
        folded = 0
        for run_id in run_ids:
            path = self.path_for_shard(run_id)
            if not os.path.exists(path):
                continue
            with closing(sqlite3.connect(path, timeout=SQLITE_BUSY_TIMEOUT_SECONDS)) as conn:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            folded += not os.path.exists(f"{path}-wal")
        return folded

    @classmethod
    def config_type(cls):
        return {"base_dir": Field(StringSource, is_required=False)}

    @classmethod
    def from_config_value(cls, inst_data, config_value):
        return cls(inst_data=inst_data, **config_value)

    @contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:
        with self._db_lock:
            engine = self._engine(shard)
            with engine.connect() as conn:
                with conn.begin():
                    yield conn

    def _engine(self, shard: str) -> Engine:
        engine = self._engines.get(shard)
        if engine is None:
            engine = create_engine(self.conn_string_for_shard(shard), pool_size=2, max_overflow=8,
                                   connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS, "check_same_thread": False})
            event.listen(engine, "connect", _relaxed_sync)
            if shard not in self._initialized_dbs:
                if shard == INDEX_SHARD_NAME or not self._copy_run_shard_template(shard):
                    self._initdb(engine)
                self._initialized_dbs.add(shard)
            self._engines[shard] = engine
            while len(self._engines) > OPEN_SHARDS:
                oldest = next(s for s in self._engines if s != "index")
                self._engines.pop(oldest).dispose()
        self._engines.move_to_end(shard)
        return engine

    def _copy_run_shard_template(self, shard: str) -> bool:
        """A new run's shard as a copy of an empty, initialised one (~2 ms instead of ~110 ms of
        alembic and schema creation). The template is made once per Dagster version, beside the shards
        under a name their `*.db` globs do not match. False when the shard exists already."""
        path = self.path_for_shard(shard)
        if os.path.exists(path):
            return False
        template = os.path.join(self._base_dir, f".run-shard-{dagster_version}.template")
        if not os.path.exists(template):
            self._make_run_shard_template(template)
        partial = f"{path}.{os.getpid()}.partial"
        shutil.copyfile(template, partial)
        try:
            os.link(partial, path)  # never over a shard another process created meanwhile
        except FileExistsError:
            return False
        finally:
            os.unlink(partial)
        return True

    def _make_run_shard_template(self, template: str) -> None:
        partial = f"{template}.{os.getpid()}.partial"
        engine = create_engine(f"sqlite:///{partial}", poolclass=NullPool)
        try:
            self._initdb(engine)
        finally:
            engine.dispose()
        os.replace(partial, template)

    def has_table(self, table_name: str) -> bool:
        # asked before every dynamic-partition lookup (hundreds per run), each time through a new
        # engine. Not through `_connect`: callers may hold its lock.
        return _true_once_seen(self._tables_seen, table_name, lambda: super(
            PooledSqliteEventLogStorage, self).has_table(table_name))

    def has_dynamic_partition(self, partitions_def_name: str, partition_key: str) -> bool:
        # asked twice per partition for every range Dagster resolves (hundreds of times per run); a key
        # seen in the last few seconds is trusted, so a deletion by another process shows within them
        seen = (partitions_def_name, partition_key)
        now = time.monotonic()
        if now - self._partitions_seen.get(seen, -PARTITION_MEMORY_S) < PARTITION_MEMORY_S:
            return True
        found = super().has_dynamic_partition(partitions_def_name, partition_key)
        if found:
            self._partitions_seen[seen] = now
        return found

    def delete_dynamic_partition(self, partitions_def_name: str, partition_key: str) -> None:
        self._partitions_seen.pop((partitions_def_name, partition_key), None)
        super().delete_dynamic_partition(partitions_def_name, partition_key)

    def _has_asset_key_col_on_connection(self, conn: Connection, column_name: str) -> bool:
        # a schema inspection per asset event in the stock storage
        return _true_once_seen(self._asset_key_columns_seen, column_name, lambda: super(
            PooledSqliteEventLogStorage, self)._has_asset_key_col_on_connection(conn, column_name))

    def store_event_batch(self, events: Sequence[EventLogEntry]) -> None:
        """What `store_event` writes for each event, in two transactions for the whole batch: the run
        shard's rows in one statement; the index's mirrored rows (asset, check and run-status events),
        asset tags and asset entries in one transaction. Check rows are stored after it, as
        `store_asset_check_event` opens its own connection."""
        if len({event.run_id for event in events}) != 1:
            return super().store_event_batch(events)
        rows = [self._event_to_row(event) for event in events]
        with self.run_connection(events[0].run_id) as conn:
            conn.execute(SqlEventLogStorageTable.insert(), rows)
        mirrored = [(event, row) for event, row in zip(events, rows) if _mirrored_in_index(event)]
        if not mirrored:
            return
        with self.index_transaction() as conn:
            ids = list(conn.execute(SqlEventLogStorageTable.insert().returning(
                SqlEventLogStorageTable.c.id, sort_by_parameter_order=True), [row for _, row in mirrored]).scalars())
            assets = [(event, event_id) for (event, _), event_id in zip(mirrored, ids) if _is_asset_event(event)]
            if assets:
                self._store_asset_event_tags(conn, [e for e, _ in assets], [i for _, i in assets])
            self._store_asset_entries(conn, assets)
        for (event, _), event_id in zip(mirrored, ids):
            if event.dagster_event_type in ASSET_CHECK_EVENTS:
                self.store_asset_check_event(event, event_id)

    def _store_asset_entries(self, conn: Connection, assets: list[tuple[EventLogEntry, int]]) -> None:
        """The asset_keys rows as the stock storage leaves them after storing the events one by one:
        each event overwrites its columns, so per asset key the later events' values win; one upsert
        per key instead of one (a failed insert, then an update) per event. An event type always sets
        the same columns, so only the last event of each type per key is read (and serialised)."""
        with_index_columns = self._has_asset_key_index_cols_on_connection(conn)
        last_of_type = {(event.get_dagster_event().asset_key.to_string(), event.dagster_event_type): i
                        for i, (event, _) in enumerate(assets)}
        entries: dict[str, dict] = {}
        for (asset_key, _), i in sorted(last_of_type.items(), key=lambda item: item[1]):
            values = self._get_asset_entry_values(*assets[i], with_index_columns)
            if values:
                entries.setdefault(asset_key, {}).update(values)
        for asset_key, values in entries.items():
            updated = conn.execute(AssetKeyTable.update().values(**values).where(
                AssetKeyTable.c.asset_key == asset_key))
            if not updated.rowcount:
                conn.execute(AssetKeyTable.insert().values(asset_key=asset_key, **values))

    def delete_events(self, run_id: str) -> None:
        """A deleted run's shard goes too (deleting its rows would leave the file its size)."""
        super().delete_events(run_id)
        with self._db_lock:
            engine = self._engines.pop(run_id, None)
            if engine is not None:
                engine.dispose()
            self._initialized_dbs.discard(run_id)
            path = self.path_for_shard(run_id)
            for leftover in (path, f"{path}-wal", f"{path}-shm"):
                if os.path.exists(leftover):
                    os.unlink(leftover)

    def dispose(self) -> None:
        self.close_shards()
        super().dispose()


# the storages of this process, for a command that ends with `os._exit`: without `close_open_event_logs`
# every shard still open (the index, the runless events', the newest runs') kept a log of up to ~6 MB
_OPEN: weakref.WeakSet[PooledSqliteEventLogStorage] = weakref.WeakSet()


def close_open_event_logs() -> None:
    for storage in list(_OPEN):
        storage.close_shards()


def _true_once_seen(seen: set[str], name: str, ask: Callable[[], bool]) -> bool:
    """A table or column, once there, stays there: ask the database until it says yes."""
    if name not in seen and ask():
        seen.add(name)
    return name in seen


def _is_asset_event(event: EventLogEntry) -> bool:
    return bool(event.is_dagster_event and event.dagster_event_type in ASSET_EVENTS
                and event.get_dagster_event().asset_key)


def _mirrored_in_index(event: EventLogEntry) -> bool:
    """The events the stock SQLite storage copies into the index shard (cross-run queries)."""
    return bool(event.is_dagster_event and event.dagster_event_type in MIRRORED_IN_INDEX)


def _relaxed_sync(dbapi_connection, _record) -> None:
    # no fsync per commit (~3 ms each, a dozen commits per step); the shards are in WAL mode already
    dbapi_connection.execute("PRAGMA synchronous=NORMAL")
