"""MiroEval-style generation at the paper's scale against the loopback news and search emulators:
the defaults make 180 candidates (12 topics x 3 subtopics x 5 headlines x 1 query), the filters'
pass rates are printed and stored, at most 50 are kept and 35 chosen across topics and personas, and
a second refresh registers nothing and asks the judge nothing, with the heuristic judge (CLI) and with
the loopback LLM (through the call cache)."""
import json
import math
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from loopback_news import NewsAndSearch  # noqa: E402

from dreval_assets import cli  # noqa: E402
from dreval_assets.cli import main  # noqa: E402
from dreval_assets.fetch.api import JsonApi  # noqa: E402
from dreval_assets.fetch.live import LiveFetchConfig, LiveFetcher  # noqa: E402
from dreval_assets.fetch.safety import AllowList  # noqa: E402
from dreval_assets.judges.heuristic import HeuristicJudge  # noqa: E402
from dreval_assets.judges.openai_config import OpenAIJudgeConfig  # noqa: E402
from dreval_assets.judges.openai_judge import OpenAIJudge  # noqa: E402
from dreval_assets.live import refresh as live_refresh  # noqa: E402
from dreval_assets.live.config import DEFAULT_TOPICS, LiveConfig  # noqa: E402
from dreval_assets.benchmarks.miroeval.live.query_generation import generate_queries  # noqa: E402
from dreval_assets.store.db import Store  # noqa: E402
from dreval_assets.store.judge_calls import JudgeCallStore  # noqa: E402


@pytest.fixture
def endpoints(web):
    return NewsAndSearch(web).paper_scale(DEFAULT_TOPICS)


@pytest.fixture
def api(web):
    config = LiveFetchConfig(politeness_s=0.0, connect_timeout_s=2, read_timeout_s=2, total_timeout_s=5,
                             backoff_base_s=0.01, max_attempts=2)
    return JsonApi(LiveFetcher(config, allow=AllowList(frozenset({web.address}))))


def assert_selection(candidates):
    chosen = [c for c in candidates if c.chosen]
    accepted = [c for c in candidates if c.accepted]
    assert len([c for c in candidates if c.kept]) == min(50, len(accepted))
    assert len(chosen) == min(35, len(accepted))
    topics = Counter(c.topic for c in accepted)
    per_topic = Counter(c.topic for c in chosen)
    if all(n >= 3 for n in topics.values()):
        assert max(per_topic.values()) <= math.ceil(35 / 12)
    assert max(per_topic.values()) <= math.ceil(35 / 12) + 1
    assert len(per_topic) == len(topics)  # every topic with an accepted candidate has one chosen
    assert len({c.persona for c in chosen}) >= 20  # spread over personas too
    assert all(c.selection_reason for c in candidates)


def test_the_default_scale_makes_about_180_candidates_and_chooses_35(api, endpoints):
    config = LiveConfig()
    assert (len(config.topics), {len(s) for s in config.topics.values()}) == (12, {3})
    assert (config.headlines_per_subtopic, config.queries_per_headline, config.keep, config.choose) == (5, 1, 50, 35)
    result = generate_queries(api, endpoints.news_url, api, endpoints.search_url, HeuristicJudge(), config.topics,
                              config.headlines_per_subtopic, config.queries_per_headline)
    assert result.problems == [] and len(result.candidates) == 180
    assert len(endpoints.news_requests) == 36 and len(endpoints.search_requests) == 180
    assert_selection(result.candidates)
    assert sorted(t.key for t in result.tasks) == sorted(c.task_key for c in result.candidates if c.chosen)
    # every subtopic's five headlines were asked from its topic's five personas
    personas = Counter((c.subtopic, c.persona) for c in result.candidates)
    assert len(personas) == 180
    rates = {r.name: r.rate for r in result.filter_rates()}
    assert 70 <= rates["search"] <= 95 and 50 <= rates["necessity"] <= 75 and 40 <= rates["inverse_quality"] <= 65


@pytest.fixture
def cli_env(web, endpoints, api, monkeypatch):
    monkeypatch.setattr(live_refresh, "make_api", lambda: api)
    # telling a Dagster instance about the new partitions is the Wiki Live end-to-end test's subject;
    # here it would only add Dagster's import time
    monkeypatch.setattr(cli, "_tell_dagster", lambda settings, store, keys: None)
    monkeypatch.setenv("DREVAL_NEWS_URL", endpoints.news_url)
    monkeypatch.setenv("DREVAL_SEARCH_URL", endpoints.search_url)
    return endpoints


def test_the_cli_prints_and_stores_pass_rates_and_a_rerun_adds_nothing(cli_env, tmp_path, capsys):
    home = tmp_path / "home"
    assert main(["--home", str(home), "refresh", "miroeval"]) == 0
    out = capsys.readouterr().out
    assert "refresh miroeval: 35 new task(s)" in out
    assert "filter pass rates (passed/decided; N/A judgments and answers are not in the rate):" in out
    search_line = next(line for line in out.splitlines() if line.strip().startswith("search: "))
    assert search_line.endswith("(paper 84.4 %)") and "/180 = " in search_line
    assert "(paper 63.2 %)" in out and "(paper 52.1 %)" in out
    db = Store(home / "dreval.duckdb")
    summary = json.loads(db.query("SELECT summary FROM refresh_state WHERE source = 'miroeval'").item())
    assert summary["chosen"] == 35 and summary["candidates"] == 180
    assert summary["filter_rates"]["search"]["entered"] == 180 and summary["filter_rates"]["search"]["paper"] == 84.4
    rows = db.query("SELECT topic, persona, accepted, kept, chosen, selection_reason FROM generated_candidates")
    assert rows.height == 180 and rows["selection_reason"].str.len_chars().min() > 0
    assert rows["chosen"].sum() == 35 and rows["kept"].sum() <= 50 and rows["chosen"].null_count() == 0
    registered = set(db.query("SELECT task FROM registered_tasks")["task"])
    assert len(registered) == 35

    searches = len(cli_env.search_requests)
    assert main(["--home", str(home), "refresh", "miroeval"]) == 0
    out = capsys.readouterr().out
    assert "refresh miroeval: 0 new task(s)" in out and "known: 180" in out.replace("rejected_known", "known")
    assert len(cli_env.search_requests) == searches  # nothing sent to the filters again
    assert set(db.query("SELECT task FROM registered_tasks")["task"]) == registered
    again = db.query("SELECT selection_reason FROM generated_candidates WHERE refresh_id = (SELECT "
                     "json_extract_string(summary, '$.refresh_id') FROM refresh_state WHERE source = 'miroeval')")
    assert again.height == 180 and again["selection_reason"].str.starts_with("known: ").all()


def test_with_the_loopback_llm_the_same_decisions_and_a_rerun_costs_no_call(llm, api, endpoints, tmp_path):
    """A third of the default topics (60 candidates): at the full scale the ~510 calls take ~11 s, the
    judge client's own cost per call (README, tests), while the pipeline around them is the same."""
    topics = dict(list(DEFAULT_TOPICS.items())[:4])
    store = Store(tmp_path / "dreval.duckdb")
    store.ensure_schema()
    judge = OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k", timeout_s=5),
                        JudgeCallStore(store))
    config = LiveConfig(news_url=endpoints.news_url, search_url=endpoints.search_url, topics=topics)
    first = live_refresh.refresh("miroeval", store, judge, config, api)
    rates = first.filter_rates
    # one call per headline, then one per candidate reaching each judged step
    assert llm.n_calls == 60 + rates["search"]["passed"] + 2 * rates["necessity"]["passed"]
    assert first.counts["candidates"] == 60 and 0 < len(first.new_tasks) == first.counts["chosen"]
    offline = generate_queries(api, endpoints.news_url, api, endpoints.search_url, HeuristicJudge(), topics)
    assert sorted(first.new_tasks) == sorted(t.key for t in offline.tasks)  # the stand-in model reads our prompts
    assert first.filter_rates == {r.name: r.as_dict() for r in offline.filter_rates()}

    calls = llm.n_calls
    again = live_refresh.refresh("miroeval", store, judge, config, api)
    assert again.new_tasks == [] and again.counts["rejected_known"] == 60
    assert llm.n_calls == calls  # the persona queries come from the call cache, the rest is known
    assert again.metadata()["search_entered"] == 0


def test_the_refresh_job_reports_the_pass_rates_as_metadata(cli_env, tmp_path, monkeypatch):
    from dagster import DagsterInstance

    from dreval_assets.config import Settings
    from dreval_assets.defs.definitions import build_definitions
    from dreval_assets.defs.runner import QUIET_LOGS

    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"health": DEFAULT_TOPICS["health"]}))
    monkeypatch.setenv("DREVAL_LIVE_TOPICS", str(topics))
    job = build_definitions(Settings(tmp_path / "home")).resolve_job_def("miroeval_refresh_job")
    result = job.execute_in_process(instance=DagsterInstance.ephemeral(), run_config=QUIET_LOGS)
    assert result.success
    [output] = [e for e in result.all_events if e.event_type_value == "STEP_OUTPUT"]
    metadata = {k: v.value for k, v in output.event_specific_data.metadata.items()}
    assert metadata["candidates"] == 15 and metadata["search_entered"] == 15
    assert metadata["search_paper"] == 84.4 and metadata["inverse_quality_paper"] == 52.1
    assert metadata["necessity_rate"] == round(100 * metadata["necessity_passed"] / metadata["necessity_entered"], 1)
    assert metadata["chosen"] == metadata["new_tasks"] > 0
