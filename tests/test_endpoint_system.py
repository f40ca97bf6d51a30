"""A system that writes its reports through an OpenAI-compatible endpoint (our loopback server):
the report protocol prompt, evaluation of what it wrote, cached re-runs, and a failing endpoint."""
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from loopback_llm import LoopbackLLM, status  # noqa: E402

from dreval_assets.releases.generic import load_generic  # noqa: E402
from dreval_assets.cli import main  # noqa: E402
from dreval_assets.defs.runner import demo_root  # noqa: E402
from dreval_assets.store.db import Store  # noqa: E402
from dreval_assets.store.registry import register_tasks  # noqa: E402

KEY = "sk-writer-secret-1234"
DEMO = demo_root()
TASKS = {t.query: t for t in load_generic(DEMO).tasks}


def careful_report(request: dict, schema) -> str:
    """Writes what the careful demo system wrote for the task whose request is in the prompt."""
    prompt = request["messages"][-1]["content"]
    query = re.search(r"Request:\n(.*?)\n", prompt, re.S).group(1)
    task = TASKS[query]
    return (DEMO / "systems" / "careful-scholar" / f"{task.original_id}.md").read_text(encoding="utf-8")


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("WRITER_KEY", KEY)
    home = tmp_path / "home"
    store = Store(home / "dreval.duckdb")
    store.ensure_schema()
    register_tasks(store, list(TASKS.values()), source="test")
    return home


def test_endpoint_system_writes_reports_that_are_evaluated_and_cached(home, capsys):
    with LoopbackLLM(answer=careful_report) as llm:
        assert main(["--home", str(home), "add-system", "Writer Bot", "--endpoint", llm.base_url,
                     "--model", "writer-1", "--api-key-env", "WRITER_KEY"]) == 0
        assert main(["--home", str(home), "run"]) == 0
        first_calls = llm.n_calls
        assert first_calls == len(TASKS)
        prompt = llm.requests[0]["messages"][-1]["content"]
        assert "References" in prompt and "[1]" in prompt and "tools" not in llm.requests[0]
        assert main(["--home", str(home), "run", "--force"]) == 0
        assert llm.n_calls == first_calls  # every report came from the cache
    db = Store(home / "dreval.duckdb")
    reports = db.query("SELECT status, source_path FROM reports WHERE system = 'writer-bot'")
    assert set(reports["status"]) == {"ok"} and set(reports["source_path"]) == {"endpoint model writer-1"}
    supported = db.query("SELECT mean FROM leaderboard WHERE system = 'writer-bot' AND suite = 'core' "
                         "AND metric = 'supported_ratio'").item()
    assert supported > 50
    cost = db.query("SELECT calls, cache_hits FROM generation_cost_by_system WHERE system = 'writer-bot'")
    assert cost.rows() == [(2 * len(TASKS), len(TASKS))]
    assert db.query("SELECT count(*) FROM judge_cost_by_system WHERE system = 'writer-bot'").item() == 0
    stored = db.query("SELECT * FROM registered_systems WHERE system = 'writer-bot'").rows()
    assert KEY not in repr(stored) and "WRITER_KEY" in repr(stored)  # the variable's name, never the key


def test_a_failing_endpoint_is_na_and_due_again(home, capsys, monkeypatch):
    monkeypatch.setenv("DREVAL_JUDGE_MAX_ATTEMPTS", "1")
    with LoopbackLLM(answer=careful_report) as llm:
        main(["--home", str(home), "add-system", "flaky", "--endpoint", llm.base_url, "--model", "m"])
        for _ in range(len(TASKS)):
            llm.fail_next(status(503))
        # every call of the run failed: it says so and exits 1 (the rows are written, N/A, and due again)
        assert main(["--home", str(home), "run", "--system", "flaky"]) == 1
        db = Store(home / "dreval.duckdb")
        failed = db.query("SELECT status, na_reason FROM reports WHERE system = 'flaky'")
        assert set(failed.rows()) == {("failed", "provider_failure")}
        na = db.query("SELECT count(*) FROM metric_scores WHERE system = 'flaky' AND value IS NOT NULL").item()
        assert na == 0
        capsys.readouterr()
        assert main(["--home", str(home), "run", "--system", "flaky"]) == 0  # due again: the endpoint recovered
        assert f"{len(TASKS)} system x task partition(s)" in capsys.readouterr().out
        assert set(db.query("SELECT status FROM reports WHERE system = 'flaky'")["status"]) == {"ok"}


def test_add_system_needs_a_model_with_an_endpoint(home, capsys):
    assert main(["--home", str(home), "add-system", "x", "--endpoint", "http://127.0.0.1:9/v1"]) == 2
    assert "--endpoint needs --model" in capsys.readouterr().err
    assert main(["--home", str(home), "add-system", "x", "--endpoint", "ftp://host/v1", "--model", "m"]) == 2
