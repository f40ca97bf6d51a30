"""Failures end to end through the CLI: a judge whose claim verdicts all fail at the provider gives N/A
metric rows (not 0), the run says so and the next plain `dreval run` retries exactly those partitions;
a change of the settings that shape rows makes the affected partitions due, and Dagster shows them stale."""
import sys
from pathlib import Path

import pytest
from dagster import AssetKey, DagsterInstance, MultiPartitionKey

sys.path.insert(0, str(Path(__file__).parent))

from judge_answers import dreval_answer  # noqa: E402
from loopback_llm import LoopbackLLM  # noqa: E402

from dreval_assets.cli import main  # noqa: E402
from dreval_assets.config import Settings  # noqa: E402
from dreval_assets.defs.runner import demo_root  # noqa: E402
from dreval_assets.operations.planner import Selection, plan  # noqa: E402
from dreval_assets.store.db import Store  # noqa: E402


def home_with_one_system(home: Path) -> None:
    assert main(["--home", str(home), "import", "generic", str(demo_root()), "--system", "careful-scholar"]) == 0


class VerdictsDown:
    """Answers every request but claim verdicts, which fail with HTTP 500 while `down` is set."""

    def __init__(self):
        self.down = True

    def __call__(self, request, schema):
        if self.down and any("<<<SOURCE" in str(m.get("content"))
                             and ("<<<STATEMENT\n" in str(m.get("content")) or "<<<CLAIMS" in str(m.get("content")))
                             for m in request.get("messages", [])):
            raise RuntimeError("upstream overloaded")
        return dreval_answer(request, schema)


@pytest.fixture
def flaky_judge(monkeypatch):
    answer = VerdictsDown()
    with LoopbackLLM(answer=answer) as llm:
        monkeypatch.setenv("DREVAL_JUDGE", "openai")
        monkeypatch.setenv("DREVAL_JUDGE_MODEL", "loopback-model")
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("DREVAL_JUDGE_MAX_ATTEMPTS", "1")
        yield answer


def test_a_judge_failing_every_verdict_gives_na_rows_and_the_next_run_retries_them(flaky_judge, home, capsys):
    home_with_one_system(home)
    assert main(["--home", str(home), "run", "--task", "miroeval.*"]) == 0
    out = capsys.readouterr().out
    store = Store(home / "dreval.duckdb")
    rows = {(s, m): (v, r, d) for s, m, v, r, d in store.query(
        "SELECT suite, metric, value, na_reason, detail FROM metric_scores WHERE task = 'miroeval.37'").iter_rows()}
    for key in (("core", "supported_ratio"), ("core", "contradicted_ratio"), ("miroeval", "factuality"),
                ("miroeval", "right")):
        value, reason, detail = rows[key]
        assert value is None and reason == "provider_failure", (key, rows[key])
        assert "sources judged 0 of" in detail
    assert rows[("miroeval", "synthesis")][0] is not None  # report-level judgments did not fail
    assert "N/A metric rows by reason: provider_failure" in out
    assert "1 partition(s) had provider failures and will be retried" in out

    flaky_judge.down = False
    assert main(["--home", str(home), "run", "--task", "miroeval.*"]) == 0  # no --force
    out = capsys.readouterr().out
    assert "careful-scholar: miroeval.37..miroeval.37" in out and "plan: 0 task partition(s)" in out
    value, reason, _ = store.query("SELECT value, na_reason, detail FROM metric_scores WHERE task = 'miroeval.37' "
                                   "AND metric = 'factuality'").row(0)
    assert value is not None and reason is None
    assert "will be retried" not in out


def test_answers_that_never_validate_are_left_by_a_plain_run_and_the_summary_says_what_force_adds(
        flaky_judge, home, capsys, monkeypatch):
    def invalid_verdicts(request, schema):
        if any("<<<SOURCE" in str(m.get("content")) for m in request.get("messages", [])):
            return {"verdicts": [{"claim_id": "c1", "verdict": "maybe"}], "verdict": "maybe"}
        return dreval_answer(request, schema)

    flaky_judge.down = False
    home_with_one_system(home)
    with LoopbackLLM(answer=invalid_verdicts) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        assert main(["--home", str(home), "run", "--task", "miroeval.*"]) == 0
        out = capsys.readouterr().out
        assert "N/A metric rows by reason: pipeline_failure" in out
        assert ("judge answers that never validated (pipeline_failure) in 1 system(s): a plain `dreval run` "
                "leaves them; `dreval run --force --system careful-scholar` re-asks them") in out
        assert main(["--home", str(home), "run", "--task", "miroeval.*"]) == 0
        assert "nothing to do" in capsys.readouterr().out


def test_changed_policies_suites_or_judge_make_exactly_the_affected_partitions_due(home, monkeypatch, capsys):
    home_with_one_system(home)
    assert main(["--home", str(home), "run", "--task", "dr3.*"]) == 0
    store = Store(home / "dreval.duckdb")
    same = plan(store, Selection(task_glob="dr3.*"), Settings.from_env(home))
    assert same.empty
    policies = Settings(home, policies='{"dr3.fa.unknown": "exclude"}')
    due = plan(store, Selection(task_glob="dr3.*"), policies)
    assert due.per_system == {"careful-scholar": ["dr3.dr3-en-004", "dr3.dr3-en-011"]}
    assert due.tasks == []  # a policy does not touch what a task generates
    suites = plan(store, Selection(task_glob="dr3.*"), Settings(home, extra_suites=("tvir",)))
    assert suites.n_system_task == 2 and suites.tasks == []
    judge = plan(store, Selection(task_glob="dr3.*"), Settings(home, judge="openai", judge_model="m"))
    assert judge.tasks == ["dr3.dr3-en-004", "dr3.dr3-en-011"]  # a new judge generates task rubrics anew
    assert stale(home, Settings(home)) == {"FRESH"}
    assert stale(home, policies) == {"STALE"}  # Dagster's own view: the settings are the code version

    monkeypatch.setenv("DREVAL_POLICIES", '{"dr3.fa.unknown": "exclude"}')
    assert main(["--home", str(home), "run", "--task", "dr3.*"]) == 0
    assert "careful-scholar: dr3.dr3-en-004..dr3.dr3-en-011" in capsys.readouterr().out
    policy = store.query("SELECT policy FROM metric_scores WHERE metric = 'fa' LIMIT 1").item()
    assert "unknown pairs: exclude" in policy
    assert main(["--home", str(home), "run", "--task", "dr3.*"]) == 0
    assert "nothing to do" in capsys.readouterr().out


def stale(home: Path, settings: Settings) -> set[str]:
    from dagster._core.definitions.data_version import CachingStaleStatusResolver
    from dagster._core.loader import LoadingContextForTest

    from dreval_assets.defs.definitions import build_definitions

    instance = DagsterInstance.from_config(str(home / "dagster"))
    graph = build_definitions(settings).get_repository_def().asset_graph
    resolver = CachingStaleStatusResolver(instance, graph, LoadingContextForTest(instance))
    keys = [MultiPartitionKey({"system": "careful-scholar", "task": t}) for t in ("dr3.dr3-en-004", "dr3.dr3-en-011")]
    return {resolver.get_status(AssetKey("metric_scores"), k).value for k in keys}
