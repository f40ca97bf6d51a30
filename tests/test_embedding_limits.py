"""Embedding requests keep the chat judge's limits: Retry-After, the backoff cap, the deadline, the
rate limit and the concurrency; each request is priced and ledgered, failures are N/A-able."""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from loopback_llm import delay, status  # noqa: E402

from dreval_assets.judges.embeddings import TEXTS_PER_REQUEST  # noqa: E402
from dreval_assets.judges.openai_config import OpenAIJudgeConfig, Price  # noqa: E402
from dreval_assets.judges.openai_judge import OpenAIJudge  # noqa: E402

TEXTS = ["The barrage was opened in 1967.", "Dunlin fell by 40 percent.", "The lock is 65 metres long."]


def make_judge(llm, calls, **overrides) -> OpenAIJudge:
    settings = dict(model="loopback-model", base_url=llm.base_url, api_key="k", timeout_s=5, backoff_base_s=0.01,
                    max_attempts=3, embedding_model="embed-model", prices={"embed-model": Price(2.0, 0.0)})
    settings.update(overrides)
    return OpenAIJudge(OpenAIJudgeConfig(**settings), calls)


def ledger(calls):
    return calls.store.query("SELECT attempts, outcome, tokens_in, cost, error FROM judge_ledger "
                             "WHERE template = 'embeddings'").rows()


def test_retry_after_is_obeyed_and_the_request_is_priced(llm, calls):
    llm.fail_next(status(429, headers={"Retry-After": "0.4"}))
    judge = make_judge(llm, calls)
    started = time.monotonic()
    found = judge.embed(TEXTS)
    assert time.monotonic() - started >= 0.4 and set(found.vectors) == set(TEXTS) and not found.failures
    [(attempts, outcome, tokens, cost, _)] = ledger(calls)
    assert (attempts, outcome) == (2, "ok") and tokens > 0 and cost == tokens * 2.0 / 1_000_000
    assert judge.stats.cost == cost


def test_a_wait_beyond_the_cap_gives_up_saying_so(llm, calls):
    llm.fail_next(status(429, headers={"Retry-After": "3600"}))
    found = make_judge(llm, calls, backoff_cap_s=5).embed(TEXTS)
    assert not found.vectors and llm.n_calls == 1
    assert all(bucket == "provider_failure" and "3600" in why for bucket, why in found.failures.values())
    [(_, outcome, _, cost, _)] = ledger(calls)
    assert outcome == "provider_failure" and cost is None  # nothing answered, nothing priced


def test_the_deadline_bounds_a_hanging_endpoint(llm, calls):
    llm.fail_next(*[delay(3)] * 3)
    started = time.monotonic()
    found = make_judge(llm, calls, timeout_s=10, deadline_s=1).embed(TEXTS)
    assert time.monotonic() - started < 2.5 and not found.vectors
    assert all("deadline of 1 s exceeded" in why for _, why in found.failures.values())


def test_requests_per_minute_and_concurrency_hold(llm, calls):
    texts = [f"Statement number {n} about the barrage." for n in range(3 * TEXTS_PER_REQUEST)]
    llm.latency_s = 0.3  # the three requests overlap: two at a time
    judge = make_judge(llm, calls, concurrency=2, requests_per_minute=600)
    found = judge.embed(texts)
    assert len(found.vectors) == len(texts) and llm.n_calls == 3 and llm.embeddings_peak == 2
    assert [row[1] for row in ledger(calls)] == ["ok"] * 3
    again = make_judge(llm, calls).embed(texts)  # cached: nothing asked twice
    assert llm.n_calls == 3 and again.vectors == found.vectors
