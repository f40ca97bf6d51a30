"""Wiki Live refresh into a store: candidate rows, the window carried from one refresh to the next,
task versions with lineage (the generic `register_task_versions`), retries of failed articles, and the
full gold through the loopback LLM with its call cache."""
import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from judge_answers import dreval_answer  # noqa: E402
from loopback_llm import LoopbackLLM  # noqa: E402
from loopback_mediawiki import (  # noqa: E402
    MARTA_ILVES, SALTCOTE_PIER_RAILWAY, LoopbackMediaWiki, filler_article, long_article)
from loopback_web import LoopbackWeb  # noqa: E402

from dreval_assets.core.models import Task  # noqa: E402
from dreval_assets.fetch.api import JsonApi  # noqa: E402
from dreval_assets.fetch.live import LiveFetchConfig, LiveFetcher  # noqa: E402
from dreval_assets.fetch.safety import AllowList  # noqa: E402
from dreval_assets.judges.heuristic import HeuristicJudge, template_handlers  # noqa: E402
from dreval_assets.judges.openai_config import OpenAIJudgeConfig  # noqa: E402
from dreval_assets.judges.openai_judge import OpenAIJudge  # noqa: E402
from dreval_assets.live.config import LiveConfig  # noqa: E402
from dreval_assets.live.refresh import refresh  # noqa: E402
from dreval_assets.benchmarks.wlc.live.wikilive import Window, refresh_wikilive  # noqa: E402
from dreval_assets.benchmarks.wlc.live.wikilive_text import answer_gold_statements  # noqa: E402
from dreval_assets.store.db import Store  # noqa: E402
from dreval_assets.store.judge_calls import JudgeCallStore  # noqa: E402
from dreval_assets.store.registry import TaskVersion, lineage_heads, load_tasks, register_task_versions  # noqa: E402
from dreval_assets.store.wlc_candidates import candidate_rows  # noqa: E402

from test_wikilive_refresh import WINDOW, stamp  # noqa: E402


@pytest.fixture(scope="module")
def web():
    with LoopbackWeb() as server:
        yield server


@pytest.fixture
def wiki(web):
    return LoopbackMediaWiki(web)


@pytest.fixture
def api(web):
    config = LiveFetchConfig(politeness_s=0.0, connect_timeout_s=2, read_timeout_s=2, total_timeout_s=5,
                             backoff_base_s=0.01, max_attempts=2)
    return JsonApi(LiveFetcher(config, allow=AllowList(frozenset({web.address}))))


@pytest.fixture
def store(tmp_path):
    db = Store(tmp_path / "dreval.duckdb")
    db.ensure_schema()
    return db


@pytest.fixture
def judge():
    return HeuristicJudge({**template_handlers(), "wlc/gold_statements": answer_gold_statements})


def config(wiki, **window):
    return LiveConfig(wlc_api=wiki.api_url, **window)


# ---------------------------------------------------------------------------- the generic versions

def task(key, text):
    return Task(key=key, benchmark="wlc", original_id="X", query="Write about X.", reference_article=text)


def test_a_changed_task_is_a_new_version_with_lineage_and_the_old_one_stays(store):
    first = register_task_versions(store, [TaskVersion(task("wlc.live-7", "one"), "70")], "test")
    assert first.new == ["wlc.live-7"] and first.keys == {"wlc.live-7": "wlc.live-7"}
    again = register_task_versions(store, [TaskVersion(task("wlc.live-7", "one"), "70")], "test")
    assert again.unchanged == ["wlc.live-7"] and not again.new and not again.new_versions
    edited = register_task_versions(store, [TaskVersion(task("wlc.live-7", "two"), "75")], "test")
    assert edited.new_versions == [("wlc.live-7-r75", "wlc.live-7")]
    regenerated = register_task_versions(store, [TaskVersion(task("wlc.live-7", "three"), "75")], "test")
    [(key, supersedes)] = regenerated.new_versions
    assert key.startswith("wlc.live-7-r75-") and supersedes == "wlc.live-7-r75"  # same revision, new content
    tasks = load_tasks(store)
    assert tasks["wlc.live-7"].reference_article == "one" and tasks["wlc.live-7-r75"].reference_article == "two"
    rows = store.query("SELECT task, lineage, version, supersedes FROM task_versions ORDER BY version").rows()
    assert rows == [("wlc.live-7", "wlc.live-7", 1, None), ("wlc.live-7-r75", "wlc.live-7", 2, "wlc.live-7"),
                    (key, "wlc.live-7", 3, "wlc.live-7-r75")]
    assert lineage_heads(store, "wlc.live-") == {"wlc.live-7": key}
    back = register_task_versions(store, [TaskVersion(task("wlc.live-7", "two"), "80")], "test")
    assert back.unchanged == ["wlc.live-7-r75"]  # a revert to content a version has: nothing new


# --------------------------------------------------------------------------- refreshes into a store

def test_a_refresh_stores_every_candidate_and_the_next_starts_at_its_window_end(wiki, api, store, judge):
    wiki.add("Marta Ilves", MARTA_ILVES, stamp(5), categories=["Lichenologists"])
    wiki.add("Harrowgate Lock", filler_article("Harrowgate Lock", 3), stamp(8), created="2012-01-01T00:00:00Z")
    wiki.add("List of locks in Westmarch", filler_article("Locks", 4), stamp(9))
    summary = refresh("wlc", store, judge, config(wiki, wlc_created_after="2025-05-01",
                                                  wlc_created_before="2025-07-01"), api)
    assert len(summary.new_tasks) == 1 and summary.cursor == "2025-07-01T00:00:00Z"
    text = "\n".join(summary.lines())
    for line in ("candidates: 3", "in_window: 2", "created_before_window: 1", "list_like: 1", "kept: 1", "tasks: 1",
                 "window: created after 2025-05-01T00:00:00Z, up to 2025-07-01T00:00:00Z"):
        assert line in text
    rows = candidate_rows(store)
    assert rows.height == 3 and set(rows["outcome"]) == {"task", "dropped"}
    marta = rows.filter(rows["title"] == "Marta Ilves").row(0, named=True)
    assert marta["task_key"] == summary.new_tasks[0] and marta["n_statements"] == 7 and marta["gold_chunks"] == 1
    assert marta["content_hash"] and marta["topic"] == "Natural sciences" and marta["views"] == 600
    assert rows["reason"].str.len_chars().min() > 0

    wiki.add("Saltcote Pier Railway", SALTCOTE_PIER_RAILWAY, stamp(3, month=8), created=stamp(10, month=7))
    nxt = refresh("wlc", store, judge, config(wiki, wlc_created_before="2025-09-01"), api)
    assert "window: created after 2025-07-01T00:00:00Z" in "\n".join(nxt.lines()) and len(nxt.new_tasks) == 1
    assert nxt.counts["candidates"] == 1  # the walk stopped at the last window's end


def test_an_article_edited_upstream_becomes_a_new_version_and_a_rerun_registers_nothing(wiki, api, store, judge):
    article = wiki.add("Marta Ilves", MARTA_ILVES, stamp(5))
    window = config(wiki, wlc_created_after="2025-05-01", wlc_created_before="2025-07-01")
    [first] = refresh("wlc", store, judge, window, api).new_tasks
    assert first == f"wlc.live-{article.pageid}"
    same = refresh("wlc", store, judge, window, api)
    assert same.new_tasks == [] and same.changed_tasks == [] and same.counts["unchanged"] == 1

    edited = wiki.edit(article.pageid, MARTA_ILVES.replace("212 lichen species", "214 lichen species"), stamp(20))
    summary = refresh("wlc", store, judge, window, api)
    version = f"wlc.live-{article.pageid}-r{edited.revid}"
    assert summary.new_tasks == [] and summary.changed_tasks == [version]
    assert f"1 new version of {first}: {version}" in summary.lines()
    tasks = load_tasks(store)
    assert "212 lichen species" in tasks[first].reference_article  # the old version stays as it was
    assert "214 lichen species" in tasks[version].reference_article
    assert tasks[version].attributes["revid"] == str(edited.revid)
    assert store.query("SELECT supersedes FROM task_versions WHERE task = ?", [version]).item() == first
    row = candidate_rows(store).row(0, named=True)
    assert (row["outcome"], row["task_key"], row["supersedes"]) == ("new_version", version, first)
    again = refresh("wlc", store, judge, window, api)
    assert again.changed_tasks == [] and again.counts["unchanged"] == 1


def test_an_article_whose_gold_failed_is_retried_by_the_next_refresh(wiki, api, store):
    def failing(variables):
        raise RuntimeError("the endpoint is down")
    wiki.add("Marta Ilves", MARTA_ILVES, stamp(5))
    window = config(wiki, wlc_created_after="2025-05-01", wlc_created_before="2025-07-01")
    down = HeuristicJudge({**template_handlers(), "wlc/gold_statements": failing})
    first = refresh("wlc", store, down, window, api)
    assert first.new_tasks == [] and any("retry" in line for line in first.skipped)
    later = replace(window, wlc_created_after=None, wlc_created_before="2025-09-01")  # the window has moved on
    up = HeuristicJudge({**template_handlers(), "wlc/gold_statements": answer_gold_statements})
    second = refresh("wlc", store, up, later, api)
    assert len(second.new_tasks) == 1 and second.counts["candidates"] == 1
    rows = store.query("SELECT outcome FROM wlc_candidates ORDER BY refreshed_at")["outcome"].to_list()
    assert rows == ["retry", "task"]


# ------------------------------------------------------------------------- the gold through an LLM

def test_the_full_gold_is_batched_through_the_llm_and_a_rerun_costs_no_call(wiki, api, tmp_path):
    wiki.add("Emberton", long_article("Emberton"), stamp(3))
    calls = Store(tmp_path / "judge.duckdb")
    calls.ensure_schema()
    with LoopbackLLM(answer=dreval_answer) as llm:
        judge = OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k",
                                              timeout_s=5), JudgeCallStore(calls))
        [(task, c)] = refresh_wikilive(api, wiki.api_url, judge, WINDOW, chunk_chars=3000).tasks
        assert llm.n_calls == c.gold_chunks >= 3 and 95 <= len(task.gold_facts) <= 101
        [(again, _)] = refresh_wikilive(api, wiki.api_url, judge, WINDOW, chunk_chars=3000).tasks
        assert llm.n_calls == c.gold_chunks and again.gold_facts == task.gold_facts


def test_window_settings_are_checked(wiki, api, store, judge):
    from dreval_assets.live.refresh import RefreshFailed
    with pytest.raises(RefreshFailed, match="nothing can be created inside it"):
        refresh("wlc", store, judge, config(wiki, wlc_created_after="2025-07-01", wlc_created_before="2025-06-01"), api)
    with pytest.raises(RefreshFailed, match="ISO"):
        refresh("wlc", store, judge, config(wiki, wlc_created_after="last tuesday"), api)
    assert isinstance(WINDOW, Window)
