"""The DuckDB store: partition rewrites are exact, atomic, by column name, and never duplicate."""
import subprocess
import sys
import time

import duckdb
import polars as pl
import pytest

from dreval_assets.stages.frames import frame
from dreval_assets.store.db import SQL_DIR, DatabaseLocked, MissingUpstreamError, Store, StoreError


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "t.duckdb")
    s.ensure_schema()
    return s


def score_rows(system, task, values):
    return frame("metric_scores", [
        {"system": system, "task": task, "suite": "core", "metric": f"m{i}", "value": v, "scale": "count",
         "n_items": 1, "na_reason": None, "detail": "", "policy": "", "judge": "none"}
        for i, v in enumerate(values)])


def count(store, table="metric_scores"):
    return store.query(f"SELECT count(*) AS n FROM {table}").item()


def test_schema_is_idempotent_and_versioned(store):
    store.ensure_schema()
    migrations = sorted(int(p.name[:3]) for p in (SQL_DIR / "migrations").glob("[0-9][0-9][0-9]_*.sql"))
    assert migrations[:2] == [2, 3]
    assert store.query("SELECT version FROM schema_migrations ORDER BY version").to_series().to_list() == [1, *migrations]
    views = set(store.query("SELECT view_name FROM duckdb_views() WHERE NOT internal").to_series())
    assert {"leaderboard_live", "claim_verdicts_in_context", "na_scores", "judge_cost_by_system",
            "judge_cost_by_metric"} <= views


def test_rewrite_replaces_only_the_given_partitions(store):
    store.replace_partitions("metric_scores", [("a", "t1"), ("a", "t2")],
                             {"metric_scores": pl.concat([score_rows("a", "t1", [1, 2]), score_rows("a", "t2", [3])])}, "r1")
    store.replace_partitions("metric_scores", [("a", "t1")], {"metric_scores": score_rows("a", "t1", [9])}, "r2")
    store.replace_partitions("metric_scores", [("a", "t1")], {"metric_scores": score_rows("a", "t1", [9])}, "r3")
    rows = store.query("SELECT task, value FROM metric_scores ORDER BY task").rows()
    assert rows == [("t1", 9.0), ("t2", 3.0)]
    runs = dict(store.query("SELECT task, run_id FROM materialized_partitions").iter_rows())
    assert runs == {"t1": "r3", "t2": "r1"}


def test_insert_is_by_column_name(store):
    shuffled = score_rows("a", "t", [5]).select(pl.all().reverse())  # reversed column order
    store.replace_partitions("metric_scores", [("a", "t")], {"metric_scores": shuffled}, "r")
    assert store.query("SELECT system, task, value FROM metric_scores").rows() == [("a", "t", 5.0)]


def test_rows_outside_the_partitions_are_refused(store):
    with pytest.raises(StoreError, match="not asked to write"):
        store.replace_partitions("metric_scores", [("a", "t1")], {"metric_scores": score_rows("b", "t1", [1])}, "r")
    assert count(store) == 0


def test_failed_write_leaves_previous_rows(store):
    store.replace_partitions("metric_scores", [("a", "t")], {"metric_scores": score_rows("a", "t", [1, 2])}, "r1")
    bad = score_rows("a", "t", [7]).with_columns(scale=pl.lit(None, pl.String))  # violates NOT NULL
    with pytest.raises(duckdb.ConstraintException):
        store.replace_partitions("metric_scores", [("a", "t")], {"metric_scores": bad}, "r2")
    assert store.query("SELECT value FROM metric_scores ORDER BY value").to_series().to_list() == [1.0, 2.0]
    assert store.query("SELECT run_id FROM materialized_partitions").item() == "r1"


def test_reading_an_unmaterialised_partition_fails_loudly(store):
    store.replace_partitions("metric_scores", [("a", "t")], {"metric_scores": score_rows("a", "t", [1])}, "r")
    assert store.read_partitions("metric_scores", [("a", "t")])["metric_scores"].height == 1
    with pytest.raises(MissingUpstreamError, match="b|t"):
        store.read_partitions("metric_scores", [("a", "t"), ("b", "t")])


def test_empty_partition_is_recorded_and_readable(store):
    store.replace_partitions("metric_scores", [("a", "t")], {"metric_scores": frame("metric_scores", [])}, "r")
    assert store.read_partitions("metric_scores", [("a", "t")])["metric_scores"].height == 0


def test_page_texts_are_stored_once(store):
    texts = frame("page_texts", [{"text_hash": "h1", "text": "x", "n_chars": 1}])
    tasks = frame("tasks", [])
    for run in ("r1", "r2"):
        store.replace_partitions("tasks", [("t",)], {"tasks": tasks, "page_texts": texts}, run)
    assert count(store, "page_texts") == 1
    assert store.texts(["h1", "nope"]) == {"h1": "x"}


def test_a_batch_of_pages_is_typed_by_the_table_not_by_its_first_rows(store):
    """150 unreachable pages (no HTTP status, no charset) before a read one: all stored."""
    from dreval_assets.core.models import FetchResult
    from dreval_assets.store.pages import PageStore

    store.ensure_schema()
    results = [(f"https://dead.example/{n}", FetchResult(url=f"https://dead.example/{n}", status="unknown",
                                                         backend="live", na_reason="data_accessibility"))
               for n in range(150)]
    results.append(("https://ok.example/", FetchResult(url="https://ok.example/", status="ok", backend="live",
                                                        text="A page.", http_status=200, charset="utf-8",
                                                        truncated=True, attempts=2)))
    PageStore(store).put(results)
    assert count(store, "pages") == 151
    assert PageStore(store).get(["https://ok.example/"])["https://ok.example/"].http_status == 200


def hold_lock(path, seconds):
    """Another process that opens the file for writing and keeps it for `seconds`."""
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); "
         "time.sleep(float(sys.argv[2]))", str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_lock_held_by_another_process_is_retried(tmp_path):
    path = tmp_path / "locked.duckdb"
    Store(path).ensure_schema()
    holder = hold_lock(path, 1.0)
    store = Store(path, base_delay_s=0.1, max_attempts=10)
    started = time.monotonic()
    store.replace_partitions("metric_scores", [("a", "t")], {"metric_scores": score_rows("a", "t", [1])}, "r")
    waited = time.monotonic() - started
    holder.wait()
    assert count(store) == 1
    assert waited > 0.1  # it really had to wait for the other process


def test_lock_held_too_long_raises(tmp_path):
    path = tmp_path / "locked.duckdb"
    Store(path).ensure_schema()
    holder = hold_lock(path, 3)
    try:
        with pytest.raises(DatabaseLocked, match=rf"held by another process \(PID {holder.pid}\).*results.duckdb"):
            Store(path, base_delay_s=0.01, lock_wait_s=0.2).ensure_schema()
    finally:
        holder.kill()
        holder.wait()


def reported_limit(size: str) -> str:
    with duckdb.connect() as con:  # how DuckDB states a limit it was given
        con.execute(f"SET memory_limit = '{size}'")
        return con.execute("SELECT current_setting('memory_limit')").fetchone()[0]


def test_every_connection_holds_duckdb_to_the_memory_setting(tmp_path, monkeypatch):
    monkeypatch.setenv("DREVAL_DUCKDB_MEMORY", "64MB")
    store = Store(tmp_path / "m.duckdb")
    store.ensure_schema()
    assert store.query("SELECT current_setting('memory_limit') AS m").item() == reported_limit("64MB")
    with store.session():  # the setting is the database's: a plain connection beside ours still opens
        with duckdb.connect(str(store.db_path)) as plain:
            assert plain.execute("SELECT current_setting('memory_limit')").fetchone()[0] == reported_limit("64MB")
    monkeypatch.delenv("DREVAL_DUCKDB_MEMORY")
    assert Store(tmp_path / "m.duckdb").query("SELECT current_setting('memory_limit') AS m").item() == \
        reported_limit("128MB")  # the default, not DuckDB's 80 % of the machine


@pytest.mark.parametrize("value", ["lots", "256", "-1GB", "1 GB of RAM"])
def test_a_malformed_memory_setting_is_refused_naming_it(tmp_path, monkeypatch, value):
    from dreval_assets.errors import ConfigError

    monkeypatch.setenv("DREVAL_DUCKDB_MEMORY", value)
    with pytest.raises(ConfigError, match="DREVAL_DUCKDB_MEMORY"):
        Store(tmp_path / "m.duckdb")


def test_the_published_copy_is_whole_when_the_data_exceeds_the_memory_setting(tmp_path, monkeypatch):
    from dreval_assets.store.publish import publish

    monkeypatch.setenv("DREVAL_DUCKDB_MEMORY", "32MB")
    store = Store(tmp_path / "w.duckdb")
    store.execute("CREATE TABLE pages AS SELECT range AS id, repeat(md5(range::VARCHAR), 40) AS text "
                  "FROM range(60000)")  # ~77 MB of text: more than DuckDB may hold at once
    copy = publish(store)
    with duckdb.connect(str(copy), read_only=True) as con:
        assert con.execute("SELECT count(*), sum(length(text)) FROM pages").fetchone() == (60000, 60000 * 32 * 40)


@pytest.mark.parametrize("raised", [
    duckdb.InterruptException("INTERRUPT Error: Interrupted!"), RuntimeError("Query interrupted"),
    duckdb.InvalidInputException("Invalid Input Error: reading the Python object '_dreval_keys' as Arrow data "
                                 "failed: DagsterExecutionInterruptedError:")],
    ids=["interrupt", "runtime", "in-python-scan"])
def test_a_ctrl_c_inside_a_statement_stays_a_ctrl_c_and_writes_nothing(tmp_path, raised):
    """DuckDB turns a Ctrl-C that reaches it inside a statement into an error of its own (and the
    rollback then finds no transaction): a write or a read raises it as the interrupt it was, never as
    a failure to retry or report, and the transaction's rows are not there."""
    store = Store(tmp_path / "x.duckdb")
    store.ensure_schema()
    store.execute("CREATE TABLE t (x INTEGER)")

    def work(con):
        con.execute("INSERT INTO t VALUES (1)")
        raise raised

    with pytest.raises(KeyboardInterrupt):
        store.write(work)
    assert store.query("SELECT count(*) AS n FROM t")["n"][0] == 0
    with pytest.raises(KeyboardInterrupt):
        with store.connect() as con:
            raise raised
    with pytest.raises(RuntimeError, match="something else"):  # any other error is itself
        with store.connect() as con:
            raise RuntimeError("something else")
    with pytest.raises(duckdb.InvalidInputException, match="ValueError"):
        with store.connect() as con:
            raise duckdb.InvalidInputException("reading the Python object 'x' as Arrow data failed: ValueError: no")


def test_the_sessions_of_one_file_share_one_keepalive_across_threads(tmp_path, monkeypatch):
    """Threads that each opened and closed a session of the same file had DuckDB tear its instance down
    and set it up again while another thread connected ("Unique file handle conflict", through every
    retry): the sessions of a file share one keep-alive connection, closed when the last one ends."""
    import threading

    store = Store(tmp_path / "s.duckdb")
    store.ensure_schema()
    opened = []
    real_open = Store._open_with_retry

    def counted(self, read_only, config=None):
        opened.append(real_open(self, read_only, config))
        return opened[-1]

    monkeypatch.setattr(Store, "_open_with_retry", counted)
    inside, go, errors = threading.Barrier(5), threading.Event(), []

    def work():
        try:
            with Store(tmp_path / "." / "s.duckdb").session():  # the same file, named otherwise
                inside.wait(30)
                go.wait(30)
                for _ in range(20):
                    store.query("SELECT count(*) FROM schema_migrations")
        except Exception as exc:  # noqa: BLE001 - the test says which thread failed
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    inside.wait(30)  # four sessions open, no query yet
    keepalives = list(opened)
    go.set()
    for thread in threads:
        thread.join(30)
    assert not errors and len(keepalives) == 1
    with pytest.raises(duckdb.ConnectionException):  # closed once the last session ended
        keepalives[0].execute("SELECT 1")
    with store.session(), store.session():  # nested in one thread alike; a new one after the last closed
        assert len(opened) == 1 + 80 + 1
