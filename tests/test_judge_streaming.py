"""Judge calls stream: the first requests are answered while later ones are still being prepared, and
batches asked at once from several threads share the endpoint's one concurrency limit."""
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from judge_answers import dreval_answer  # noqa: E402
from loopback_llm import LoopbackLLM  # noqa: E402
from test_openai_judge import claim_request, make_judge  # noqa: E402

from dreval_assets.judges import openai_judge  # noqa: E402
from dreval_assets.judges.parallel import each  # noqa: E402


def test_the_first_requests_are_answered_while_the_rest_are_prepared(llm, calls, monkeypatch):
    judge = make_judge(llm, calls)
    prepare = judge._prepare
    seen_at_last: list[int] = []

    def slow_to_prepare(request):
        if request.variables["claim"].endswith("99."):  # the last request: wait for answers to earlier ones
            deadline = time.monotonic() + 5
            while llm.n_calls == 0 and time.monotonic() < deadline:
                time.sleep(0.01)
            seen_at_last.append(llm.n_calls)
        return prepare(request)

    monkeypatch.setattr(judge, "_prepare", slow_to_prepare)
    requests = [claim_request(f"The ferry carried {40_000 + i} passengers in 20{i:02d}.") for i in range(100)]
    judgments = judge.judge_many(requests)
    assert all(j.answer is not None for j in judgments) and llm.n_calls == 100
    assert seen_at_last and seen_at_last[0] > 0  # requests had been sent before the last was prepared


class CountingLLM(LoopbackLLM):
    """Counts chat requests being answered at once."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.now = self.peak = 0
        self.guard = threading.Lock()

    def _sleep(self, seconds):
        with self.guard:
            self.now += 1
            self.peak = max(self.peak, self.now)
        try:
            super()._sleep(seconds)
        finally:
            with self.guard:
                self.now -= 1


def test_batches_asked_at_once_share_the_endpoints_concurrency(calls):
    with CountingLLM(answer=dreval_answer, latency_s=0.05) as llm:
        judges = [make_judge(llm, calls, concurrency=3) for _ in range(4)]  # four steps' judges, one endpoint
        pieces = [lambda j=j, k=k: j.judge_many([claim_request(f"Claim {k}-{i}: 41,200 passengers in 2023.")
                                                  for i in range(12)]) for k, j in enumerate(judges)]
        started = time.monotonic()
        results = each(judges[0], pieces)
        elapsed = time.monotonic() - started
    assert [len(r) for r in results] == [12] * 4 and all(j.answer is not None for r in results for j in r)
    assert llm.n_calls == 48
    assert llm.peak == 3  # the pieces ran together, never more than the endpoint's limit in flight
    assert elapsed >= 48 / 3 * 0.05 * 0.9


def test_the_writer_has_every_answer_when_judge_many_returns(llm, calls):
    judge = make_judge(llm, calls)
    judge.judge_many([claim_request(f"The ferry carried {40_000 + i} passengers in 2023.") for i in range(40)])
    assert calls.store.query("SELECT count(*) FROM judge_cache").item() == 40
    assert calls.store.query("SELECT count(*) FROM judge_ledger").item() == 40
    assert openai_judge.PREPARE_CHUNK < 40  # more than one chunk was streamed
