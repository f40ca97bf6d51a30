"""The judge's calls sent by a worker process (judges/judge_worker.py): the same judgments, cache keys,
ledger and failure buckets as when the run's process sends them, the concurrency limit kept, an
interrupt that stops the worker's requests, and a worker that dies failing its batch with a clear error."""
from __future__ import annotations

import gc
import os
import signal
import threading
import time
from dataclasses import dataclass
from typing import Any

import pytest

import test_openai_judge as judge_tests
from judge_answers import dreval_answer
from loopback_llm import LoopbackLLM
from worker_probe import Call as ProbeCall, Request as ProbeRequest
from test_openai_judge import claim_request, ledger, make_judge, slow_answer_counting_peak

from dreval_assets.config import ConfigError
from dreval_assets.judges.judge_loop import JUDGE_LOOP
from dreval_assets.judges.judge_worker import JudgeWorker, serve
from dreval_assets.judges import openai_config
from dreval_assets.judges.openai_config import OpenAIJudgeConfig


@pytest.fixture(autouse=True)
def workers_end():
    yield
    JUDGE_LOOP.close_workers()  # each test's endpoint has its own worker: none outlives its test


def _claims(n: int, offset: int = 0):
    return [claim_request(f"The ferry made crossing number {offset + i} in 2023.") for i in range(n)]


def test_the_worker_answers_exactly_as_the_run_itself(calls, tmp_path):
    from dreval_assets.store.db import Store
    from dreval_assets.store.judge_calls import JudgeCallStore

    other = Store(tmp_path / "other.duckdb")
    other.ensure_schema()
    with LoopbackLLM(answer=dreval_answer) as llm:
        inline = make_judge(llm, calls, worker="off").judge_many(_claims(40))
        through_worker = make_judge(llm, JudgeCallStore(other), worker="on")
        worked = through_worker.judge_many(_claims(40))
        assert through_worker._endpoint().worker is not None
    assert [j.answer for j in worked] == [j.answer for j in inline]
    assert [j.provenance.cache_key for j in worked] == [j.provenance.cache_key for j in inline]
    assert not any(j.provenance.cache_hit for j in worked)  # asked anew, in a database of its own
    columns = "template, outcome, attempts, tokens_in, tokens_out, cost"
    rows = sorted(ledger(calls, columns).rows())
    assert rows and sorted(other.query(f"SELECT {columns} FROM judge_ledger").rows()) == rows


def test_auto_uses_a_worker_from_concurrency_16():
    assert not OpenAIJudgeConfig(model="m", concurrency=8).uses_worker
    assert OpenAIJudgeConfig(model="m", concurrency=16).uses_worker
    assert not OpenAIJudgeConfig(model="m", concurrency=64, worker="off").uses_worker
    assert OpenAIJudgeConfig(model="m", concurrency=1, worker="on").uses_worker
    with pytest.raises(ConfigError, match="DREVAL_JUDGE_WORKER='sometimes'"):
        OpenAIJudgeConfig(model="m", worker="sometimes")


def test_workers_auto_one_per_64_slots_at_most_one_per_core_and_their_shares_sum_to_the_limits(monkeypatch):
    monkeypatch.setattr(openai_config, "usable_cores", lambda: 4)
    assert [OpenAIJudgeConfig(model="m", concurrency=c).worker_processes for c in (16, 64, 65, 128, 300)] == [
        1, 1, 2, 2, 4]
    assert OpenAIJudgeConfig(model="m", concurrency=3, workers=8).worker_processes == 3  # a slot each at least
    limited = OpenAIJudgeConfig(model="m", concurrency=64, workers=3, requests_per_minute=2, tokens_per_minute=1000)
    assert limited.worker_processes == 2  # never a worker without a request a minute
    shares = OpenAIJudgeConfig(model="m", concurrency=65, workers=3, requests_per_minute=100,
                               tokens_per_minute=1000).worker_shares()
    assert [s.concurrency for s in shares] == [22, 22, 21]
    assert [s.requests_per_minute for s in shares] == [34, 33, 33]
    assert sum(s.tokens_per_minute for s in shares) == 1000
    assert {(s.model, s.workers, s.max_attempts) for s in shares} == {("m", 3, 6)}
    assert [s.requests_per_minute for s in OpenAIJudgeConfig(model="m", concurrency=128).worker_shares()] == [
        None, None]
    monkeypatch.setenv("DREVAL_JUDGE_MODEL", "m")
    monkeypatch.setenv("DREVAL_JUDGE_WORKERS", "many")
    with pytest.raises(ConfigError, match="DREVAL_JUDGE_WORKERS='many'"):
        OpenAIJudgeConfig.from_env()
    monkeypatch.setenv("DREVAL_JUDGE_WORKERS", "0")
    with pytest.raises(ConfigError, match="DREVAL_JUDGE_WORKERS=0"):
        OpenAIJudgeConfig.from_env()
    monkeypatch.setenv("DREVAL_JUDGE_WORKERS", "auto")
    assert OpenAIJudgeConfig.from_env().workers is None


def test_a_pool_of_workers_keeps_the_endpoints_limit_and_starts_the_next_only_when_needed(llm, calls):
    """Two workers of 2 slots each: 4 requests in flight at the peak, never more; a batch the first
    worker's slots hold never starts the second; the answers are those of one process."""
    llm.answer, peak = slow_answer_counting_peak(0.2)
    judge = make_judge(llm, calls, concurrency=4, worker="on", workers=2)
    judge.judge_many(_claims(2))
    pool = judge._endpoint().worker
    assert len(pool.pids) == 1 and peak[0] == 2
    judge.judge_many(_claims(8, offset=100))  # more than the first worker's slots: the second starts
    assert len(pool.pids) == 2 and len(set(pool.pids)) == 2
    deadline = time.monotonic() + 60
    while not all(worker.ready for worker in pool._workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    peak[0] = 0
    pooled = judge.judge_many(_claims(24, offset=10))
    assert peak[0] == 4  # both workers' slots, never more
    inline = make_judge(llm, calls, worker="off").judge_many(_claims(24, offset=10))
    assert [j.answer for j in pooled] == [j.answer for j in inline]
    assert all(j.provenance.cache_hit for j in inline)  # the same requests: the same cache keys


@pytest.mark.parametrize("test", [
    judge_tests.test_concurrency_limit_is_respected_and_used,
    judge_tests.test_429_honours_retry_after,
    judge_tests.test_persistent_failure_is_na_provider_failure_and_never_cached,
    judge_tests.test_a_hanging_endpoint_hits_the_judgment_deadline,
    judge_tests.test_an_answer_that_never_validates_is_a_pipeline_failure_that_says_why,
    judge_tests.test_an_interrupted_run_resumes_from_the_cache,
    judge_tests.test_the_api_key_never_reaches_storage_or_errors,
], ids=lambda test: test.__name__.removeprefix("test_"))
def test_the_judges_own_tests_hold_through_the_worker(test, llm, calls, monkeypatch):
    """The concurrency limit, retry layer, deadlines and failure buckets run in the worker."""
    monkeypatch.setattr(judge_tests, "WORKER", "on")
    test(llm, calls)


def test_an_interrupt_stops_the_workers_requests(llm, calls):
    llm.latency_s = 0.3
    judge = make_judge(llm, calls, concurrency=2, worker="on")
    outcome: dict = {}

    def run():
        try:
            judge.judge_many(_claims(30))
        except BaseException as exc:  # noqa: BLE001 - the test reads what ended the batch
            outcome["error"] = exc

    asking = threading.Thread(target=run)
    asking.start()
    deadline = time.monotonic() + 30

    def written() -> int:
        return calls.store.query("SELECT count(*) FROM judge_cache").item()

    # answers the server sent reach this process through the worker: under load, later than the next requests
    while (llm.n_calls < 4 or written() < 2) and time.monotonic() < deadline:
        time.sleep(0.05)
    written_before = written()
    assert written_before >= 2
    JUDGE_LOOP.cancel_requests()  # what an interrupt of the asking threads does (judges/parallel.each)
    asking.join(30)
    assert not asking.is_alive() and "error" in outcome
    stopped_at = llm.n_calls
    time.sleep(1.0)  # a request the worker still held would reach the server meanwhile
    assert llm.n_calls <= stopped_at + 2 < 30
    assert written() >= written_before  # what was answered before the interrupt is kept


def test_a_worker_that_dies_fails_its_batch_with_a_clear_error(llm, calls):
    llm.latency_s = 0.2
    judge = make_judge(llm, calls, concurrency=2, worker="on")
    judge.judge_many(_claims(1))  # the worker is up
    pid = judge._endpoint().worker.pid
    killer = threading.Timer(0.5, os.kill, (pid, signal.SIGKILL))
    killer.start()
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="the judge worker process ended"):
        judge.judge_many(_claims(40, offset=100))
    assert time.monotonic() - started < 10  # failed, not hung
    killer.join()


def _collector_probe_main(conn, _config):
    """A worker whose every call answers with its collector's state: whether it ran while the worker's
    modules loaded, whether it runs while the worker serves, and how many objects it sets aside."""
    on_while_loading = gc.isenabled()

    async def state(_prepared):
        return on_while_loading, gc.isenabled(), gc.get_freeze_count()

    serve(conn, lambda: state)


def test_the_worker_loads_uncollected_then_serves_with_what_it_made_set_aside():
    """Its modules and clients live as long as it: passes over them while they load, and a full
    collection walking them for every few answers' garbage (each stalled every request in flight,
    ~0.2 s at 64), were the worker's own time, not the endpoint's."""
    worker = JudgeWorker(_collector_probe_main, None)
    try:
        loading, serving, frozen = JUDGE_LOOP.run(worker.call(ProbeCall(ProbeRequest({"unsent": "x"}))))
    finally:
        worker.close()
    assert (loading, serving) == (False, True)
    assert frozen > 10_000  # the imports alone are tens of thousands of objects


def test_the_worker_loads_the_modules_answer_models_come_from_before_their_requests_do(monkeypatch):
    """Unpickling the first request whose answer model is a benchmark's loaded that benchmark's package
    on the worker's reading thread (~0.9 s at the judge step's start, every slot waiting): the worker
    loads them itself, on a thread of its own, as soon as it serves."""
    import sys

    import dreval_assets.benchmarks.tvir.visual_models  # noqa: F401 - a request may carry one of its models
    import dreval_assets.defs.resources  # noqa: F401 - dagster's configuration models: none of a request's
    from dreval_assets.judges import judge_worker

    wanted = ["dreval_assets.benchmarks.tvir.visual_models", "dreval_assets.core.models"]
    named = judge_worker.modules_requests_name()
    assert set(wanted) <= set(named) and not any(name.startswith("dreval_assets.defs") for name in named)
    assert "dreval_assets.defs.resources" in sys.modules

    def loaded_by(worker: JudgeWorker, seconds: float) -> list[str]:
        deadline = time.monotonic() + seconds
        try:
            while True:
                loaded = JUDGE_LOOP.run(worker.call(ProbeCall(ProbeRequest({}))))
                if loaded == wanted or time.monotonic() > deadline:
                    return loaded
                time.sleep(0.05)
        finally:
            worker.close()

    with monkeypatch.context() as patched:  # the control: a worker told of no modules loads none of them
        patched.setattr(judge_worker, "modules_requests_name", lambda: ())
        assert loaded_by(JudgeWorker("worker_probe:loaded_modules_main", wanted), 1.0) == []
    assert loaded_by(JudgeWorker("worker_probe:loaded_modules_main", wanted), 30.0) == wanted


def test_a_worker_started_early_loads_its_modules_then_serves_the_first_worker_made_of_its_body():
    """`dreval run` starts the worker's process before it loads its own modules; the first `JudgeWorker`
    of that body takes the process (no second start) and hands it its settings."""
    from dreval_assets.judges import judge_worker

    body = "worker_probe:loaded_modules_main"
    judge_worker.start_early(body)
    early_pid = judge_worker._EARLY[body][0].pid
    worker = JudgeWorker(body, ["worker_probe", "dreval_assets.judges.openai_calls"])
    try:
        assert worker.pid == early_pid and body not in judge_worker._EARLY
        assert JUDGE_LOOP.run(worker.call(ProbeCall(ProbeRequest({})))) == ["worker_probe"]
    finally:
        worker.close()
    assert not worker._process.is_alive()
    other = JudgeWorker(body, ["worker_probe"])  # the next one starts its own
    try:
        assert other.pid != early_pid and JUDGE_LOOP.run(other.call(ProbeCall(ProbeRequest({})))) == ["worker_probe"]
    finally:
        other.close()


def test_an_early_worker_never_taken_ends_when_the_command_does():
    from dreval_assets.judges import judge_worker

    body = "worker_probe:loaded_modules_main"
    judge_worker.start_early(body)
    process, conn = judge_worker._EARLY.pop(body)
    conn.close()  # the command ended (its end of the pipe closes with it)
    process.join(30)
    assert process.exitcode == 0
    # the command's end ends one at once: still loading, it would hold the command's output open
    judge_worker.start_early(body)
    process = judge_worker._EARLY[body][0]
    judge_worker.end_early()
    process.join(5)
    assert not judge_worker._EARLY and process.exitcode is not None and not process.is_alive()


@pytest.mark.parametrize("args, env, started", [
    (["run"], {"DREVAL_JUDGE": "openai", "DREVAL_JUDGE_WORKER": "on"}, True),
    (["run", "--system", "s"], {"DREVAL_JUDGE": "openai", "DREVAL_JUDGE_CONCURRENCY": "64"}, True),
    (["run"], {"DREVAL_JUDGE": "openai", "DREVAL_JUDGE_CONCURRENCY": "8"}, False),  # auto: no worker below 16
    (["run", "--dry-run"], {"DREVAL_JUDGE": "openai", "DREVAL_JUDGE_WORKER": "on"}, False),
    (["leaderboard"], {"DREVAL_JUDGE": "openai", "DREVAL_JUDGE_WORKER": "on"}, False),
    (["run"], {"DREVAL_JUDGE": "heuristic", "DREVAL_JUDGE_WORKER": "on"}, False),
    (["run"], {"DREVAL_JUDGE": "openai", "DREVAL_JUDGE_WORKER": "on", "DREVAL_JUDGE_CONCURRENCY": "many"}, False),
])
def test_the_command_starts_the_worker_first_only_for_a_run_that_will_use_one(args, env, started, monkeypatch):
    from dreval_assets import entry
    from dreval_assets.judges import judge_worker

    for name in ("DREVAL_JUDGE", "DREVAL_JUDGE_WORKER", "DREVAL_JUDGE_CONCURRENCY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    began = []
    monkeypatch.setattr(judge_worker, "start_early", began.append)
    entry.loaded_command(args)
    assert began == (["dreval_assets.judges.openai_calls:worker_main"] if started else [])


@dataclass
class _UnpicklableCall:
    request: ProbeRequest
    how: Any = lambda: None  # a lambda cannot be pickled


def test_a_call_that_cannot_be_sent_fails_alone_and_the_pipe_goes_on():
    """Messages are pickled by the caller before the writer thread sends them: one that cannot be is the
    caller's error (as from a direct send), and the next call still reaches the worker."""
    import pickle

    worker = JudgeWorker(_collector_probe_main, None)
    try:
        with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
            JUDGE_LOOP.run(worker.call(_UnpicklableCall(ProbeRequest({}))))
        loading, serving, _ = JUDGE_LOOP.run(worker.call(ProbeCall(ProbeRequest({"unsent": "x"}))))
    finally:
        worker.close()
    assert (loading, serving) == (False, True)


def test_through_the_worker_the_runs_process_never_loads_the_client(llm, tmp_path):
    """The check and every call go from the worker's process: the run's process prepares, caches and
    records without importing openai or instructor (~0.5 s of a run's start beside Dagster's import)."""
    import subprocess
    import sys
    from pathlib import Path

    probe = ("import sys\n"
             "from test_openai_judge import claim_request\n"
             "from dreval_assets.judges.factory import check_judge, make_judge\n"
             "from dreval_assets.store.db import Store\n"
             f"store = Store({str(tmp_path / 'calls.duckdb')!r}); store.ensure_schema()\n"
             "print(check_judge('openai', store))\n"
             "[j] = make_judge('openai', store).judge_many([claim_request('Average crossing time fell to 14 minutes.')])\n"
             "print(j.answer is not None, store.query(\"SELECT string_agg(coalesce(asset, '-') || ':' || outcome, ',' "
             "ORDER BY asset) FROM judge_ledger\").item())\n"
             "print(sorted(m for m in ('openai', 'instructor') if m in sys.modules))\n")
    env = {**os.environ, "DREVAL_JUDGE": "openai", "OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "k",
           "DREVAL_JUDGE_MODEL": "loopback-model", "DREVAL_JUDGE_WORKER": "on",
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    found, answered, loaded = done.stdout.strip().splitlines()
    assert found.startswith("judge loopback-model at ")
    assert answered == "True preflight:ok,-:ok"  # answered, and both calls in the ledger
    assert loaded == "[]"
    assert llm.n_calls == 2  # the check's request and the claim's, both from the worker


def test_a_check_the_worker_cannot_answer_fails_the_check_saying_so(llm, calls):
    from dreval_assets.judges.factory import _asked_by
    from dreval_assets.judges.preflight import PreflightFailed

    worker = JudgeWorker(_collector_probe_main, None)  # a worker with no check
    try:
        with pytest.raises(RuntimeError, match="this worker has no check"):
            worker.check(30)
    finally:
        worker.close()
    with pytest.raises(PreflightFailed, match="DREVAL_JUDGE_WORKER=off"):
        _asked_by(worker, OpenAIJudgeConfig(model="m"))  # ended: said, not a hang


def test_what_is_put_while_the_pipe_is_busy_leaves_in_frames_in_order():
    """Each write costs the writer's thread a turn at the interpreter lock: the messages put meanwhile
    leave together (at most FRAME_MESSAGES a frame), in the order they were put."""
    import multiprocessing

    from dreval_assets.judges import judge_worker
    from dreval_assets.judges.judge_worker import PipeWriter, received

    reader, writer_end = multiprocessing.Pipe(duplex=False)
    broken = []
    writer = PipeWriter(writer_end, lambda: broken.append(True), "test-writer")
    writer.put(("big", "x" * 2_000_000))  # more than the pipe holds: the writer waits until it is read
    time.sleep(0.2)
    for i in range(300):
        writer.put(("call", i))
    frames = [received(reader) for _ in range(3)]
    assert [len(frame) for frame in frames] == [1, judge_worker.FRAME_MESSAGES, 300 - judge_worker.FRAME_MESSAGES]
    assert [message for frame in frames[1:] for message in frame] == [("call", i) for i in range(300)]
    reader.close()
    writer.put(("after", 1))  # the reader is gone: the writer says so instead of hanging
    deadline = time.monotonic() + 5
    while not broken and time.monotonic() < deadline:
        time.sleep(0.01)
    assert broken == [True]


def test_workers_closed_without_waiting_are_waited_for_by_the_next_close():
    """After the last run that judges the workers are told to stop and the command goes on (their exits,
    ~0.2 s, are not the closing runs' time); the command's end waits for them."""
    import types

    closed = threading.Event()

    def slow_close():
        time.sleep(0.5)
        closed.set()

    JUDGE_LOOP.shared(("test endpoint", "slow to close"), lambda: types.SimpleNamespace(
        worker=types.SimpleNamespace(close=slow_close)))
    began = time.monotonic()
    JUDGE_LOOP.close_workers(wait=False)
    assert time.monotonic() - began < 0.3 and not closed.is_set()
    JUDGE_LOOP.close_workers()
    assert closed.is_set()
