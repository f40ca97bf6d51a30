"""A run is never silent: partitions done / due per step, judge requests done / expected, tokens and
cost so far and an ETA; live on a terminal, one line per step otherwise. Ctrl-C stops a run within
seconds, cancels its Dagster run, keeps every answer already paid for, says so in one line, and the
next `dreval run` resumes from the cache."""
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dagster import DagsterInstance, DagsterRunStatus
from rich.console import Console

sys.path.insert(0, str(Path(__file__).parent))
from cli_output import without_home_line  # noqa: E402

from judge_answers import dreval_answer  # noqa: E402
from loopback_llm import LoopbackLLM  # noqa: E402

from dreval_assets.cli import main  # noqa: E402
from dreval_assets.defs.jobs import job_steps  # noqa: E402
from dreval_assets.defs.runner import demo_root  # noqa: E402
from dreval_assets.judges.meter import JudgeMeter  # noqa: E402
from dreval_assets.progress import RunProgress  # noqa: E402
from dreval_assets.store.db import Store  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PRICES = json.dumps({"loopback-model": {"input_per_mtok": 0.5, "output_per_mtok": 1.5}})


def judge_env(base_url: str) -> dict[str, str]:
    return {"DREVAL_JUDGE": "openai", "DREVAL_JUDGE_MODEL": "loopback-model", "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": "sk-test", "DREVAL_JUDGE_PRICES": PRICES}


def registered_demo(home: Path, capsys) -> None:
    assert main(["--home", str(home), "import", "generic", str(demo_root())]) == 0
    capsys.readouterr()


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_status_line_counts_partitions_judge_requests_spend_and_eta():
    meter, clock = JudgeMeter(), Clock()
    meter.expect(3)
    meter.ended(cache_hit=False, failed=False, tokens_in=1000, tokens_out=100, cost=0.5)  # before the run
    progress = RunProgress(out=io.StringIO(), live=False, meter=meter, clock=clock)
    progress.add_due("claims", 4)
    progress.add_due("scores", 4)
    assert progress.eta_seconds() is None  # nothing done: no guess
    progress.started("claims")
    meter.expect(5)
    meter.ended(cache_hit=False, failed=False, tokens_in=2000, tokens_out=300, cost=0.25)
    meter.ended(cache_hit=True, failed=False, tokens_in=2000, tokens_out=300, cost=0.0)  # paid earlier
    meter.ended(cache_hit=False, failed=True, tokens_in=0, tokens_out=0, cost=None)
    clock.now += 30
    for _ in range(4):
        progress.materialised("claims")
    line = progress.status_line()
    # only what this run asked: the call before it is not counted; a cache hit spends no tokens
    assert "4/8 partition(s)" in line
    assert "judge 3/5 request(s), 1 cached, 1 failed" in line
    assert "tokens 2.0k in / 300 out" in line and "cost $0.2500 + 1 unpriced call(s)" in line
    assert "ETA 30s" in line and "elapsed 30s" in line
    progress.ended("claims", ok=True)
    step_line = progress.console.file.getvalue().strip()
    assert step_line.startswith("step claims: 4/4 partition(s) done in 30.0s; judge 3 request(s)")


def test_a_terminal_gets_a_live_table_of_steps():
    progress = RunProgress(out=io.StringIO(), live=True, meter=JudgeMeter(), clock=Clock())
    progress.add_due("tasks", 2)
    progress.add_due("claim_verdicts", 6)
    progress.started("tasks")
    progress.materialised("tasks", 2)
    progress.ended("tasks", ok=True)
    progress.started("claim_verdicts")
    screen = Console(file=io.StringIO(), width=120, record=True)
    screen.print(progress.render())
    text = screen.export_text()
    assert re.search(r"tasks\s+2/2\s+done", text) and re.search(r"claim_verdicts\s+0/6\s+running", text)
    assert "2/8 partition(s)" in text and "ETA" in text
    assert progress.console.file.getvalue() == ""  # no step lines: the table says it


def test_a_run_prints_each_step_and_the_judge_spend_when_not_on_a_terminal(home, capsys, monkeypatch):
    registered_demo(home, capsys)
    with LoopbackLLM(answer=dreval_answer) as llm:
        for name, value in judge_env(llm.base_url).items():
            monkeypatch.setenv(name, value)
        assert main(["--home", str(home), "run", "--task", "drb.drb-52"]) == 0
    out = capsys.readouterr().out
    for job, due in (("tasks_job", 1), ("evaluate_job", 3), ("leaderboard_job", 1)):
        for step in job_steps(job):
            assert re.search(rf"^  step {step}: {due}/{due} partition\(s\) done in [\d.]+s", out, re.M), step
    final = [line for line in out.splitlines() if line.startswith("30/30 partition(s)")]
    assert final, out
    asked = re.search(r"judge (\d+)/(\d+) request\(s\)", final[0])
    assert asked and asked.group(1) == asked.group(2) and int(asked.group(1)) > 0
    assert re.search(r"tokens [\d.]+k? in / [\d.]+k? out, cost \$\d+\.\d{4}", final[0])


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("worker", ["off", "on"])  # on: the judge worker started with the command
def test_ctrl_c_cancels_the_run_keeps_paid_answers_and_the_next_run_resumes(worker, home, capsys, monkeypatch):
    registered_demo(home, capsys)
    with LoopbackLLM(answer=dreval_answer, latency_s=0.4) as llm:
        env = {**os.environ, **judge_env(llm.base_url), "DREVAL_JUDGE_WORKER": worker, "PYTHONPATH": str(ROOT),
               "PYTHONUNBUFFERED": "1"}
        # as the installed `dreval` runs (entry.console ends with os._exit): through `python -m`, the
        # interpreter's teardown after an interrupt sometimes printed DuckDB's report of objects still alive
        child = subprocess.Popen([sys.executable, "-c", "from dreval_assets.entry import console; console()",
                                  "--home", str(home), "run", "--task", "drb.drb-52"], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        seen = []
        for line in child.stdout:  # extraction's answers are paid for; claim verdicts ask the slow judge next
            seen.append(line)
            if line.startswith("  step parsed_reports:"):
                break
        assert child.poll() is None, "".join(seen)
        time.sleep(0.8)
        child.send_signal(signal.SIGINT)
        interrupted_at = time.monotonic()
        out, err = child.communicate(timeout=30)
        stopped_after = time.monotonic() - interrupted_at
        assert child.returncode == 130, out + err
        assert stopped_after < 10
        assert "Traceback" not in err + out
        lines = [line for line in without_home_line(err).splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("dreval: interrupted: run "), err
        assert "leaderboard_job" not in out  # nothing launched after the interrupt

        instance = DagsterInstance.from_config(str(home / "dagster"))
        runs = {run.job_name: run for run in instance.get_runs()}
        assert runs["evaluate_job"].status == DagsterRunStatus.CANCELED
        assert runs["tasks_job"].status == DagsterRunStatus.SUCCESS
        store = Store(home / "dreval.duckdb")
        paid = set(store.query("SELECT cache_key FROM judge_cache WHERE template <> 'preflight'")["cache_key"])
        ledger = store.query("SELECT cache_key, called_at FROM judge_ledger WHERE asset = 'parsed_reports'")
        assert paid and ledger.height > 0  # the answers and their ledger rows outlive the interrupt
        until = store.query("SELECT max(called_at) AS t FROM judge_ledger")["t"][0]

        for name, value in judge_env(llm.base_url).items():
            monkeypatch.setenv(name, value)
        assert main(["--home", str(home), "run", "--task", "drb.drb-52"]) == 0
    later = store.query("SELECT cache_key, cache_hit FROM judge_ledger WHERE called_at > ?", [until])
    asked_again = set(later.filter(~later["cache_hit"])["cache_key"]) & paid
    assert not asked_again  # the next run pays for nothing already answered
    assert set(later.filter(later["cache_hit"])["cache_key"]) & paid  # it resumed from the cache


def test_a_run_in_which_every_judge_call_failed_exits_non_zero(home, capsys, monkeypatch):
    registered_demo(home, capsys)
    with LoopbackLLM(answer=dreval_answer) as llm:
        answered = llm._handle

        def down_after_the_preflight(request):  # the endpoint answers the preflight, then fails
            if len(llm.requests) >= 1:
                llm.requests.append(request)
                return 503, {"error": {"message": "down", "type": "server_error"}}, {}, None
            return answered(request)

        llm._handle = down_after_the_preflight
        for name, value in {**judge_env(llm.base_url), "DREVAL_JUDGE_MAX_ATTEMPTS": "1"}.items():
            monkeypatch.setenv(name, value)
        assert main(["--home", str(home), "run", "--task", "drb.drb-52"]) == 1
    err = capsys.readouterr().err
    assert "every judge call of this run failed" in err


def test_a_connection_attempt_cut_short_by_ctrl_c_is_not_a_warning_on_the_console():
    """A call cancelled while httpx's anyio backend is still connecting leaves that attempt's coroutine
    unstarted; its "never awaited" warning, printed wherever it is collected, was a stray line among an
    interrupted run's closing ones. Only that coroutine is silenced: another one never awaited still warns."""
    probe = ("import asyncio, gc, warnings\n"
             "import dreval_assets.judges.openai_calls\n"
             "async def connect_tcp():\n"
             "    async def try_connect(): pass\n"
             "    return try_connect()\n"
             "async def elsewhere():\n"
             "    async def try_connect(): pass\n"
             "    return try_connect()\n"
             "for made in (connect_tcp, elsewhere):\n"
             "    attempt = asyncio.run(made())\n"
             "    del attempt\n"
             "    gc.collect()\n")
    done = subprocess.run([sys.executable, "-W", "default", "-c", probe], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert "connect_tcp.<locals>.try_connect" not in done.stderr
    assert "elsewhere.<locals>.try_connect' was never awaited" in done.stderr


@pytest.mark.parametrize("raised, interrupt", [
    (RuntimeError("Query interrupted"), True),  # DuckDB, a Ctrl-C inside its statement while it read a frame
    (RuntimeError("Query failed"), False),
    (KeyboardInterrupt(), True),
    (ValueError("Query interrupted"), False),
])
def test_a_step_that_failed_on_a_ctrl_c_reaching_duckdb_is_an_interrupt(raised, interrupt):
    """The run's watch cancels the run (the command stops with 130, the next run resumes) whatever ended the
    step on a Ctrl-C: Dagster's interrupt, Python's, or DuckDB's statement it ended, under Dagster's wrapper."""
    from dagster._utils.error import serializable_error_info_from_exc_info

    from dreval_assets.defs.runner import _error_class

    try:
        try:
            raise raised
        except BaseException as inner:
            raise OSError("the step failed") from inner  # Dagster's step error wraps the cause
    except OSError:
        error = serializable_error_info_from_exc_info(sys.exc_info())
    assert bool(_error_class(error)) is interrupt
