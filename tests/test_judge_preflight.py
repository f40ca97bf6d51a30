"""Before a run, one cheap request checks the OpenAI-compatible judge: a wrong model, key or base URL
is refused in one line with the setting to fix, and nothing runs."""
import json
import socket
import sys
from pathlib import Path

import pytest

from cli_output import without_home_line  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))

from loopback_llm import status  # noqa: E402

from dreval_assets.releases.generic import load_generic  # noqa: E402
from dreval_assets.cli import main  # noqa: E402
from dreval_assets.config import ConfigError  # noqa: E402
from dreval_assets.judges.openai_config import OpenAIJudgeConfig, Price  # noqa: E402
from dreval_assets.judges.preflight import PROMPT, PreflightFailed, check_judge_endpoint  # noqa: E402
from dreval_assets.store.db import Store  # noqa: E402
from dreval_assets.store.registry import register_tasks  # noqa: E402

SECRET = "sk-preflight-secret-0123456789"
REPORT = ("# Ferry\n\nThe Lowmarsh ferry carried 41,200 passengers in 2023 [1].\n\n"
          "## References\n[1] Lowmarsh note https://ferries.example/lowmarsh\n")



def config(base_url: str | None, **overrides) -> OpenAIJudgeConfig:
    return OpenAIJudgeConfig(**{"model": "loopback-model", "base_url": base_url, "api_key": SECRET, **overrides})


def refusal(cfg: OpenAIJudgeConfig, calls=None) -> str:
    with pytest.raises(PreflightFailed) as caught:
        check_judge_endpoint(cfg, calls, sleep=lambda _: None)
    message = str(caught.value)
    assert "\n" not in message and SECRET not in message
    return message


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_working_endpoint_passes_with_one_request_in_the_ledger(llm, calls):
    check_judge_endpoint(config(llm.base_url, prices={"loopback-model": Price(1.0, 2.0)}), calls)
    assert llm.n_calls == 1 and llm.requests[0]["messages"] == [{"role": "user", "content": PROMPT}]
    assert llm.requests[0]["temperature"] == 0 and llm.requests[0]["seed"] == 0  # what the judge sends
    row = calls.store.query("SELECT asset, template, outcome, attempts, tokens_in, cost FROM judge_ledger").row(0)
    assert row[:4] == ("preflight", "preflight", "ok", 1) and row[4] > 0 and row[5] > 0


def test_a_refused_key_says_which_setting_to_check(llm, calls):
    llm.fail_next(status(401, body={"error": {"message": f"Incorrect API key provided: {SECRET}"}}))
    message = refusal(config(llm.base_url), calls)
    assert message.startswith(f"the judge endpoint {llm.base_url} (model 'loopback-model') refused the API key "
                              "(HTTP 401: Incorrect API key provided: ***)")
    assert message.endswith("check OPENAI_API_KEY") and llm.n_calls == 1
    assert calls.store.query("SELECT outcome FROM judge_ledger").item() == "provider_failure"
    assert SECRET not in calls.store.query("SELECT * FROM judge_ledger").write_csv()


def test_an_unknown_model_says_which_setting_to_check(llm):
    llm.fail_next(status(404, body={"error": {"message": "The model `loopback-model` does not exist"}}))
    message = refusal(config(llm.base_url))
    assert "answered 404 (The model `loopback-model` does not exist); check DREVAL_JUDGE_MODEL" in message


def test_a_base_url_with_a_wrong_path_is_a_404_that_says_so(llm):
    message = refusal(config(llm.base_url.replace("/v1", "/api")))
    assert "answered 404 (unknown path '/api/chat/completions')" in message and "often ending in /v1" in message


def test_nothing_listening_is_connection_refused():
    message = refusal(config(f"http://127.0.0.1:{closed_port()}/v1"))
    assert message.startswith("cannot connect to the judge endpoint http://127.0.0.1:")
    assert "connection refused" in message and message.endswith("check OPENAI_BASE_URL")


def test_a_base_url_that_is_not_http_is_refused_before_any_request():
    assert refusal(config("localhost:8000/v1")) == ("OPENAI_BASE_URL='localhost:8000/v1' is not an http(s) URL "
                                                    "(e.g. http://localhost:8000/v1)")


def test_server_errors_are_tried_three_times_and_rate_limits_pass(llm):
    llm.fail_next(status(503), status(503), status(503))
    assert "answered HTTP 503" in refusal(config(llm.base_url)) and llm.n_calls == 3
    llm.fail_next(status(503))
    check_judge_endpoint(config(llm.base_url), sleep=lambda _: None)  # the second try answers
    llm.fail_next(status(429))
    check_judge_endpoint(config(llm.base_url))  # key and model work; the run's retry layer waits
    assert llm.n_calls == 6


def test_judge_deadline_and_timeout_must_be_positive():
    with pytest.raises(ConfigError, match="DREVAL_JUDGE_DEADLINE"):
        OpenAIJudgeConfig(model="m", deadline_s=0)


# --- the CLI ----------------------------------------------------------------------------------

@pytest.fixture
def ferry_home(home, tmp_path):
    """A home with one task and one folder system, nothing run yet."""
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "tasks.jsonl").write_text(json.dumps({"id": "ferry", "query": "Report on the Lowmarsh ferry."}) + "\n")
    (bench / "sandbox.jsonl").write_text(json.dumps({"task_id": "ferry", "url": "https://ferries.example/lowmarsh",
                                                     "text": "The Lowmarsh ferry carried 41,200 passengers in 2023. " * 5}) + "\n")
    store = Store(home / "dreval.duckdb")
    store.ensure_schema()
    register_tasks(store, load_generic(bench).tasks, source="test")
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "ferry.md").write_text(REPORT)
    assert main(["--home", str(home), "add-system", "writer", "--reports", str(reports)]) == 0
    return home


def openai_env(monkeypatch, base_url: str, model: str | None = "loopback-model") -> None:
    monkeypatch.setenv("DREVAL_JUDGE", "openai")
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    if model:
        monkeypatch.setenv("DREVAL_JUDGE_MODEL", model)
    else:
        monkeypatch.delenv("DREVAL_JUDGE_MODEL", raising=False)


def nothing_ran(home: Path) -> bool:
    store = Store(home / "dreval.duckdb")
    return store.query("SELECT count(*) FROM materialized_partitions").item() == 0 and not (home / "dagster").exists()


def test_run_without_a_judge_model_is_refused_in_one_line(ferry_home, monkeypatch, capsys, llm):
    openai_env(monkeypatch, llm.base_url, model=None)
    capsys.readouterr()
    assert main(["--home", str(ferry_home), "run"]) == 2
    out = capsys.readouterr()
    assert without_home_line(out.err) == "dreval: error: DREVAL_JUDGE=openai needs DREVAL_JUDGE_MODEL (the model name to call)\n"
    assert llm.n_calls == 0 and nothing_ran(ferry_home)


@pytest.mark.parametrize("fault, expected", [
    (status(401), "refused the API key (HTTP 401"),
    (status(404, body={"error": {"message": "model not found"}}), "answered 404 (model not found)"),
    (None, "connection refused"),
])
def test_run_against_a_broken_endpoint_is_refused_before_anything_runs(ferry_home, monkeypatch, capsys, llm,
                                                                       fault, expected):
    base_url = llm.base_url if fault else f"http://127.0.0.1:{closed_port()}/v1"
    if fault:
        llm.fail_next(fault)
    openai_env(monkeypatch, base_url)
    capsys.readouterr()
    assert main(["--home", str(ferry_home), "run"]) == 2
    err = without_home_line(capsys.readouterr().err)
    assert err.startswith("dreval: error: judge check failed, nothing was run: ") and expected in err
    assert err.count("\n") == 1 and "Traceback" not in err and SECRET not in err
    assert llm.n_calls == (1 if fault else 0) and nothing_ran(ferry_home)


def test_one_preflight_per_command_and_none_when_nothing_is_due(ferry_home, monkeypatch, llm):
    openai_env(monkeypatch, llm.base_url)

    def preflights() -> int:
        return sum(r["messages"] == [{"role": "user", "content": PROMPT}] for r in llm.requests)

    assert main(["--home", str(ferry_home), "run"]) == 0
    assert preflights() == 1 and llm.n_calls > 1  # then the judged partitions
    store = Store(ferry_home / "dreval.duckdb")
    assert store.query("SELECT value FROM metric_scores WHERE metric = 'supported_ratio'").item() == 100.0
    assert main(["--home", str(ferry_home), "run"]) == 0  # nothing to do: no request at all
    assert preflights() == 1


def test_the_preflight_says_the_model_context_and_mode_it_found(ferry_home, monkeypatch, capsys, llm):
    openai_env(monkeypatch, llm.base_url)
    monkeypatch.delenv("DREVAL_JUDGE_CONTEXT", raising=False)
    llm.context_tokens = 8192
    assert main(["--home", str(ferry_home), "run"]) == 0
    out = capsys.readouterr().out
    assert f"judge loopback-model at {llm.base_url}: context 8192 tokens" in out and "mode tools" in out
    preflight = next(r for r in llm.requests if r["messages"] == [{"role": "user", "content": PROMPT}])
    assert preflight["max_tokens"] == 16
    assert all(isinstance(r.get("max_tokens"), int) for r in llm.requests)  # every request is bounded


def test_a_refused_preflight_leaves_no_judge_worker_behind(ferry_home, monkeypatch, capsys, llm):
    import multiprocessing

    openai_env(monkeypatch, llm.base_url)
    monkeypatch.setenv("DREVAL_JUDGE_WORKER", "on")  # started before the check's request, so its imports overlap it
    llm.fail_next(status(401))
    before = set(multiprocessing.active_children())
    assert main(["--home", str(ferry_home), "run"]) == 2
    assert "refused the API key" in capsys.readouterr().err
    assert set(multiprocessing.active_children()) - before == set()  # ended with the refusal
    assert nothing_ran(ferry_home)
