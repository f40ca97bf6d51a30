"""The working DuckDB file is rewritten when replaced rows leave it much larger than its data: the same
tables, rows, constraints and views, in a smaller file; left alone when it is not bloated."""
import pytest

from dreval_assets.errors import ConfigError
from dreval_assets.store.compact import compact_if_bloated, compact_ratio_setting
from dreval_assets.store.db import Store
from dreval_assets.store.publish import publish


def contents(store: Store):
    with store.connect() as con:
        tables = con.execute("SELECT table_name, sql FROM duckdb_tables() ORDER BY ALL").fetchall()
        views = con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY ALL").fetchall()
        rows = {name: con.execute(f'SELECT * FROM "{name}" ORDER BY ALL').fetchall() for name, _ in tables}
    return tables, views, rows


def test_a_bloated_working_file_is_rewritten_with_everything_in_it(tmp_path):
    store = Store(tmp_path / "dreval.duckdb")
    store.ensure_schema()
    with store.connect() as con:  # a partition written, then mostly replaced: the old blocks stay in the file
        con.execute("INSERT INTO judge_cache (cache_key, judge_id, model, template, template_hash, answer, tokens_in, "
                    "tokens_out) SELECT 'k' || i, 'j', 'm', 't', 'h', to_json({'text': repeat('x', 2000) || i}), 1, 1 "
                    "FROM range(20000) r(i)")
        con.execute("CHECKPOINT")
        con.execute("DELETE FROM judge_cache WHERE cache_key <> 'k7'")
        con.execute("CHECKPOINT")
    publish(store)
    before = contents(store)
    bloated = store.db_path.stat().st_size
    sizes = compact_if_bloated(store, 1.3)
    assert sizes is not None and sizes[0] == bloated and sizes[1] < bloated / 3
    assert contents(store) == before
    with store.connect() as con:  # the primary key survived: a second insert of k7 is refused
        with pytest.raises(Exception, match="(?i)constraint|duplicate"):
            con.execute("INSERT INTO judge_cache (cache_key, judge_id, model, template, template_hash, answer, "
                        "tokens_in, tokens_out) VALUES ('k7', 'j', 'm', 't', 'h', '{}', 1, 1)")
    assert compact_if_bloated(store, 1.3) is None  # compact now: nothing to do
    assert compact_if_bloated(store, 0) is None


def test_the_ratio_setting_is_checked(monkeypatch):
    monkeypatch.setenv("DREVAL_COMPACT_RATIO", "0.5")
    with pytest.raises(ConfigError, match="DREVAL_COMPACT_RATIO"):
        compact_ratio_setting()
    monkeypatch.setenv("DREVAL_COMPACT_RATIO", "0")
    assert compact_ratio_setting() == 0


def bloated_and_published(tmp_path) -> Store:
    store = Store(tmp_path / "dreval.duckdb")
    store.ensure_schema()
    with store.connect() as con:
        con.execute("INSERT INTO judge_cache (cache_key, judge_id, model, template, template_hash, answer, tokens_in, "
                    "tokens_out) SELECT 'k' || i, 'j', 'm', 't', 'h', to_json({'text': repeat('x', 2000) || i}), 1, 1 "
                    "FROM range(20000) r(i)")
        con.execute("CHECKPOINT")
        con.execute("DELETE FROM judge_cache WHERE cache_key NOT IN ('k7', 'k8')")
    publish(store)
    return store


def test_compaction_takes_the_copy_just_published_and_never_when_a_write_came_after_it(tmp_path, monkeypatch):
    """A command that published and wrote nothing more has its working file's compact copy already: the
    compaction copies it. Any write after the publish (in this process or another) and the copy is not
    taken: the file is written anew, with that write in it."""
    from dreval_assets.store import publish as publishing

    store = bloated_and_published(tmp_path)
    assert publishing.current_copy(store.db_path) == tmp_path / "results.duckdb"
    before = contents(store)
    sizes = compact_if_bloated(store, 1.3)
    assert sizes is not None and sizes[1] == (tmp_path / "results.duckdb").stat().st_size
    assert contents(store) == before and publishing.current_copy(store.db_path) is None

    later = bloated_and_published(tmp_path / "later")
    with later.connect() as con:  # written after the publish: the copy lacks it
        con.execute("DELETE FROM judge_cache WHERE cache_key = 'k8'")
    assert publishing.current_copy(later.db_path) is None
    sizes = compact_if_bloated(later, 1.3)
    assert sizes is not None
    assert [row[0] for row in contents(later)[2]["judge_cache"]] == ["k7"]

    checkpointed = bloated_and_published(tmp_path / "checkpointed")
    with checkpointed.connect() as con:  # written and checkpointed: no log left, but the file changed
        con.execute("DELETE FROM judge_cache WHERE cache_key = 'k7'")
        con.execute("CHECKPOINT")
    assert publishing.current_copy(checkpointed.db_path) is None
    compact_if_bloated(checkpointed, 1.3)
    assert [row[0] for row in contents(checkpointed)[2]["judge_cache"]] == ["k8"]
