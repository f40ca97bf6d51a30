"""The OpenAI-compatible judge, with the real openai + instructor clients against our loopback server."""
import sys
import threading
import time
from pathlib import Path

import polars as pl
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from judge_answers import dreval_answer  # noqa: E402
from loopback_llm import answer_override, delay, raw_content, status  # noqa: E402

from dreval_assets.core.models import ClaimVerdict, ClaimVerdictBatch  # noqa: E402
from dreval_assets.judges.base import JudgmentRequest  # noqa: E402
from dreval_assets.judges.openai_config import OpenAIJudgeConfig, Price  # noqa: E402
from dreval_assets.judges.openai_judge import OpenAIJudge  # noqa: E402

SECRET = "sk-test-secret-0123456789abcdef"
PAGE = ("The Lowmarsh ferry carried 41,200 passengers in 2023, up from 36,900 in 2022. "
        "The operator, Estuary Links, added a third vessel named Curlew in March 2023. "
        "Average crossing time fell to 14 minutes after the new pier opened at Saltcote.")
SOURCE = {"source_url": "https://ferries.example/lowmarsh", "source_title": "Lowmarsh note", "source_text": PAGE}


def claim_request(claim: str, **labels) -> JudgmentRequest:
    return JudgmentRequest("claim_verdict", {"claim": claim, **SOURCE}, ClaimVerdict, labels)


def batch_request(claims: dict[str, str]) -> JudgmentRequest:
    items = [{"claim_id": k, "claim": v} for k, v in claims.items()]
    listing = "\n".join(f"- [{k}] {v}" for k, v in claims.items())
    return JudgmentRequest("claim_verdicts_batch", {"items": items, "claims": listing, **SOURCE}, ClaimVerdictBatch)



WORKER = "auto"  # DREVAL_JUDGE_WORKER of the judges made here (tests/test_judge_worker.py runs some with "on")


def make_judge(llm, calls, **overrides) -> OpenAIJudge:
    settings = dict(model="loopback-model", base_url=llm.base_url, api_key=SECRET, timeout_s=5,
                    backoff_base_s=0.01, max_attempts=4, validation_retries=1,
                    prices={"loopback-model": Price(1.0, 2.0)})
    settings.update(overrides)
    settings.setdefault("worker", WORKER)
    return OpenAIJudge(OpenAIJudgeConfig(**settings), calls)


def ledger(calls, columns="*"):
    return calls.store.query(f"SELECT {columns} FROM judge_ledger ORDER BY called_at, call_id")


@pytest.mark.parametrize("mode, shape", [
    ("tools", "tools"), ("json", "response_format"), ("json_schema", "response_format"), ("md_json", "neither")])
def test_every_instructor_mode_parses(llm, calls, mode, shape):
    judge = make_judge(llm, calls, mode=mode)
    [supported, contradicted] = judge.judge_many([
        claim_request("The Lowmarsh ferry carried 41,200 passengers in 2023."),
        claim_request("The Lowmarsh ferry carried 58,000 passengers in 2023.")])
    assert supported.answer.verdict == "supported" and contradicted.answer.verdict == "contradicted"
    body = llm.requests[0]
    assert ("tools" in body) == (shape == "tools") and ("response_format" in body) == (shape == "response_format")
    assert body["temperature"] == 0 and body["seed"] == 0
    prov = supported.provenance
    assert prov.judge_id == "loopback-model" and prov.tokens_in > 0 and prov.tokens_out > 0
    assert prov.template == "claim_verdict" and len(prov.template_hash) == 16 and len(prov.cache_key) == 64
    assert prov.cost == pytest.approx((prov.tokens_in * 1.0 + prov.tokens_out * 2.0) / 1e6)


def test_cache_survives_a_new_judge_and_costs_zero_calls(llm, calls):
    requests = [claim_request("Estuary Links added a third vessel named Curlew in March 2023.", system="s1"),
                claim_request("Average crossing time fell to 14 minutes.", system="s2")]
    first = make_judge(llm, calls).judge_many(requests)
    assert llm.n_calls == 2
    again = make_judge(llm, calls)
    second = again.judge_many(requests)
    assert llm.n_calls == 2  # nothing reached the server
    assert [j.answer for j in second] == [j.answer for j in first]
    assert all(j.provenance.cache_hit for j in second) and again.stats.cache_hits == 2
    rows = calls.store.query("SELECT system, cache_hit, outcome, cost FROM judge_ledger ORDER BY cache_hit, system")
    assert rows.rows() == [("s1", False, "ok", rows["cost"][0]), ("s2", False, "ok", rows["cost"][1]),
                           ("s1", True, "cache_hit", 0.0), ("s2", True, "cache_hit", 0.0)]
    assert all(c > 0 for c in rows["cost"][:2])
    assert again.stats.metadata()["judge_cache_hit_rate"] == 1.0


def test_identical_requests_in_one_batch_are_called_once(llm, calls):
    request = claim_request("The Lowmarsh ferry carried 41,200 passengers in 2023.")
    judgments = make_judge(llm, calls).judge_many([request, request, request])
    assert llm.n_calls == 1 and [j.provenance.cache_hit for j in judgments] == [False, True, True]


def test_429_honours_retry_after(llm, calls):
    llm.fail_next(status(429, headers={"Retry-After": "0.4"}))
    started = time.monotonic()
    [judgment] = make_judge(llm, calls).judge_many([claim_request("Average crossing time fell to 14 minutes.")])
    assert judgment.answer is not None and time.monotonic() - started >= 0.4
    assert ledger(calls, "attempts, outcome").rows() == [(2, "ok")]


@pytest.mark.parametrize("fault", [status(500), status(503), delay(1.5)], ids=["500", "503", "timeout"])
def test_server_errors_and_timeouts_are_retried(llm, calls, fault):
    llm.fail_next(fault)
    [judgment] = make_judge(llm, calls, timeout_s=0.5).judge_many([claim_request("Average crossing time fell to 14 minutes.")])
    assert judgment.answer is not None
    assert ledger(calls, "attempts").item() == 2


def test_persistent_failure_is_na_provider_failure_and_never_cached(llm, calls):
    llm.fail_next(*[status(500)] * 3)
    request = claim_request("Average crossing time fell to 14 minutes.")
    [failed] = make_judge(llm, calls, max_attempts=3).judge_many([request])
    assert failed.answer is None and failed.na_reason == "provider_failure"
    assert "gave up after 3 attempts" in failed.error
    assert calls.store.query("SELECT count(*) FROM judge_cache").item() == 0
    [retried] = make_judge(llm, calls).judge_many([request])  # the server is healthy again
    assert retried.answer is not None and llm.n_calls == 4


def test_client_errors_are_not_retried(llm, calls):
    llm.fail_next(status(401))
    [judgment] = make_judge(llm, calls).judge_many([claim_request("Average crossing time fell to 14 minutes.")])
    assert judgment.na_reason == "provider_failure" and "401" in judgment.error
    assert llm.n_calls == 1


def test_retry_after_beyond_the_cap_gives_up(llm, calls):
    llm.fail_next(status(429, headers={"Retry-After": "3600"}))
    [judgment] = make_judge(llm, calls, backoff_cap_s=5).judge_many([claim_request("Average crossing time fell.")])
    assert judgment.na_reason == "provider_failure" and "3600" in judgment.error and llm.n_calls == 1


def test_malformed_json_is_reasked_once_and_counted(llm, calls):
    llm.fail_next(raw_content('{"verdict": "supp'))
    judge = make_judge(llm, calls)
    [judgment] = judge.judge_many([claim_request("Average crossing time fell to 14 minutes.")])
    assert judgment.answer is not None and llm.n_calls == 2
    assert judge.stats.validation_retries == 1
    assert ledger(calls, "validation_retries, tokens_in").row(0)[0] == 1
    assert ledger(calls, "tokens_in").item() == llm.prompt_tokens_total  # both attempts are accounted


@pytest.mark.parametrize("bad", [raw_content("not json at all"), answer_override({"verdict": "maybe"})],
                         ids=["malformed", "invalid-label"])
def test_answers_that_never_validate_are_pipeline_failures(llm, calls, bad):
    llm.fail_next(bad, bad)
    [judgment] = make_judge(llm, calls).judge_many([claim_request("Average crossing time fell to 14 minutes.")])
    assert judgment.answer is None and judgment.na_reason == "pipeline_failure"
    assert "failed validation after 2 attempt(s)" in judgment.error
    assert calls.store.query("SELECT count(*) FROM judge_cache").item() == 0
    assert ledger(calls, "outcome, validation_retries").rows() == [("pipeline_failure", 1)]


def test_batch_answers_map_back_by_claim_id(llm, calls):
    [judgment] = make_judge(llm, calls).judge_many([batch_request({
        "c1": "The Lowmarsh ferry carried 41,200 passengers in 2023.",
        "c2": "Estuary Links added a third vessel named Curlew in March 2019."})])
    verdicts = {v.claim_id: v.verdict for v in judgment.answer.verdicts}
    assert verdicts == {"c1": "supported", "c2": "contradicted"} and llm.n_calls == 1


def slow_answer_counting_peak(seconds: float):
    """An answer function taking `seconds`, and the list whose item is the most requests it held at once."""
    in_flight, peak, lock = [0], [0], threading.Lock()

    def slow_answer(request, schema):
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        time.sleep(seconds)
        with lock:
            in_flight[0] -= 1
        return dreval_answer(request, schema)

    return slow_answer, peak


def test_concurrency_limit_is_respected_and_used(llm, calls):
    slow_answer, peak = slow_answer_counting_peak(0.2)
    llm_answer, llm.answer = llm.answer, slow_answer
    requests = [claim_request(f"The ferry made crossing number {i} in 2023.") for i in range(12)]
    make_judge(llm, calls, concurrency=4).judge_many(requests)
    assert peak[0] == 4
    llm.answer = llm_answer


def test_the_api_key_never_reaches_storage_or_errors(llm, calls):
    llm.fail_next(status(401, body={"error": {"message": f"bad key {SECRET}", "type": "auth"}}))
    judge = make_judge(llm, calls)
    judge.judge_many([claim_request("Average crossing time fell to 14 minutes."),
                      claim_request("The Lowmarsh ferry carried 41,200 passengers in 2023.")])
    assert SECRET not in repr(judge.config)
    dump = calls.store.query("SELECT * FROM judge_ledger").write_csv() + \
        calls.store.query("SELECT * FROM judge_cache").write_csv()
    assert SECRET not in dump and "***" in dump


def test_an_interrupted_run_resumes_from_the_cache(llm, calls):
    requests = [claim_request(f"The ferry made crossing number {i} in 2023.") for i in range(5)]
    answered = [0]

    def dies_after_two(request, schema):
        if answered[0] >= 2:
            raise RuntimeError("endpoint went away")
        answered[0] += 1
        return dreval_answer(request, schema)

    llm.answer = dies_after_two
    first = make_judge(llm, calls, concurrency=1, max_attempts=1).judge_many(requests)
    assert [j.answer is not None for j in first] == [True, True, False, False, False]
    assert {j.na_reason for j in first[2:]} == {"provider_failure"}
    llm.answer = dreval_answer
    before = llm.n_calls
    second = make_judge(llm, calls).judge_many(requests)
    assert llm.n_calls - before == 3  # only the three that failed
    assert all(j.answer is not None for j in second)
    assert [j.provenance.cache_hit for j in second] == [True, True, False, False, False]


# --- deadline per judgment, failure buckets, what the ledger shows ------------------------------

def test_a_hanging_endpoint_hits_the_judgment_deadline(llm, calls):
    llm.fail_next(delay(30))
    started = time.monotonic()
    [judgment] = make_judge(llm, calls, timeout_s=60, deadline_s=0.5).judge_many(
        [claim_request("Average crossing time fell to 14 minutes.")])
    assert time.monotonic() - started < 5  # not the 30 s the server hangs, nor the 60 s request timeout
    assert judgment.answer is None and judgment.na_reason == "provider_failure"
    assert judgment.error.startswith("deadline of 0.5 s exceeded after 1 attempt(s)")
    assert ledger(calls, "outcome, attempts").rows() == [("provider_failure", 1)]
    assert "requests: cut by the deadline" not in ledger(calls, "error").item()  # one request: no trail
    assert calls.store.query("SELECT count(*) FROM judge_cache").item() == 0


def test_the_deadline_covers_every_attempt_and_wait_together(llm, calls):
    llm.fail_next(*[status(503)] * 50)
    judge = make_judge(llm, calls, max_attempts=50, backoff_base_s=0.2, backoff_cap_s=0.2, deadline_s=1.0)
    judge._endpoint()  # its clients made (openai's first import is not the judgment's time)
    started = time.monotonic()
    [judgment] = judge.judge_many([claim_request("Average crossing time fell to 14 minutes.")])
    assert time.monotonic() - started < 3
    assert judgment.na_reason == "provider_failure" and "deadline of 1 s exceeded" in judgment.error
    assert "last: 503 server error" in judgment.error
    attempts = ledger(calls, "attempts").item()
    # the attempt the deadline cut may have been sent without reaching the server yet
    assert 1 < attempts < 50 and llm.n_calls in (attempts - 1, attempts)


def test_an_invalid_answer_then_a_server_error_is_retried_and_every_request_is_in_the_ledger(llm, calls):
    llm.fail_next(raw_content("I would rather not answer."), status(500))
    [judgment] = make_judge(llm, calls).judge_many([claim_request("Average crossing time fell to 14 minutes.")])
    assert judgment.answer is not None and judgment.error == "" and llm.n_calls == 3
    assert ledger(calls, "outcome, attempts, validation_retries, error").rows() == [
        ("ok", 2, 1, "requests: invalid answer, HTTP 500, ok")]


def test_an_answer_that_never_validates_is_a_pipeline_failure_that_says_why(llm, calls):
    bad = answer_override({"verdict": "maybe"})
    llm.fail_next(bad, bad)
    [judgment] = make_judge(llm, calls).judge_many([claim_request("Average crossing time fell to 14 minutes.")])
    assert judgment.na_reason == "pipeline_failure"
    assert judgment.error.startswith("answer failed validation after 2 attempt(s): verdict: Input should be ")
    assert ledger(calls, "error").item().endswith("[requests: invalid answer, invalid answer]")


def test_a_refused_key_after_an_invalid_answer_is_the_providers_failure(llm, calls):
    llm.fail_next(raw_content("not json"), status(401))
    [judgment] = make_judge(llm, calls).judge_many([claim_request("Average crossing time fell to 14 minutes.")])
    assert judgment.na_reason == "provider_failure" and judgment.error.startswith("401 AuthenticationError")
    assert ledger(calls, "outcome, attempts, validation_retries").rows() == [("provider_failure", 1, 1)]


def test_an_endpoint_that_always_fails_stays_a_provider_failure_with_every_attempt_shown(llm, calls):
    llm.fail_next(*[status(500)] * 3)
    [judgment] = make_judge(llm, calls, max_attempts=3).judge_many([claim_request("Average crossing time fell.")])
    assert judgment.na_reason == "provider_failure"
    assert ledger(calls, "outcome, attempts, validation_retries").rows() == [("provider_failure", 3, 0)]
    assert ledger(calls, "error").item().endswith("[requests: HTTP 500, HTTP 500, HTTP 500]")


def test_150_unpriced_calls_then_a_cache_hit_write_the_whole_ledger(llm, calls):
    """The ledger's types are the table's, not guessed from a batch's first rows: 150 NULL costs (no
    price table) followed by a cache hit's 0.0 once lost every row of the batch."""
    requests = [claim_request(f"Average crossing time fell to {n} minutes.") for n in range(150)]
    judge = make_judge(llm, calls, prices={}, concurrency=16)
    judgments = judge.judge_many(requests + requests[:1])
    assert all(j.answer is not None for j in judgments)
    rows = ledger(calls, "cost, cache_hit, latency_s, wait_s").rows()
    assert len(rows) == 151 and sum(hit for _, hit, _, _ in rows) == 1
    assert {cost for cost, hit, _, _ in rows if not hit} == {None} and [c for c, hit, _, _ in rows if hit] == [0.0]
    unpriced = calls.store.query("SELECT * EXCLUDE (wait_s) FROM judge_ledger WHERE NOT cache_hit")
    hit = calls.store.query("SELECT * EXCLUDE (wait_s) FROM judge_ledger WHERE cache_hit")
    calls.store.execute("DELETE FROM judge_ledger")
    from dreval_assets.store.judge_calls import LedgerRow
    as_rows = [LedgerRow(**r) for r in pl.concat([unpriced, hit]).to_dicts()]
    calls.record(as_rows)  # one batch of 151, NULL costs first: written whole
    assert calls.store.query("SELECT count(*) AS n, count(cost) AS priced FROM judge_ledger").rows() == [(151, 1)]


def test_the_wait_for_a_slot_is_recorded_apart_from_the_request_time(llm, calls):
    llm.latency_s = 0.3
    requests = [claim_request(f"Average crossing time fell to {n} minutes.") for n in range(4)]
    make_judge(llm, calls, concurrency=1).judge_many(requests)
    rows = ledger(calls, "latency_s, wait_s").rows()
    waits = sorted(wait for _, wait in rows)
    assert all(latency >= 0.3 for latency, _ in rows) and waits[0] < 0.3 and waits[3] >= 0.9  # three ahead of it
    assert max(latency for latency, _ in rows) < waits[3]  # each request's own time, not the queue's


@pytest.mark.parametrize("body", ["<html><body>502 Bad Gateway from the proxy</body></html>", "{not json",
                                  {"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": []}],
                         ids=["html", "broken-json", "no-choices"])
def test_a_200_that_is_no_chat_completion_is_the_providers_and_retried(llm, calls, body):
    """Not an invalid answer of the model (pipeline_failure, never retried): the provider's failure,
    retried by our layer now and by the next run when it persists."""
    llm.fail_next(status(200, body=body))
    [recovered] = make_judge(llm, calls).judge_many([claim_request("Average crossing time fell to 14 minutes.")])
    assert recovered.answer is not None and llm.n_calls == 2
    llm.fail_next(*[status(200, body=body)] * 3)
    [failed] = make_judge(llm, calls, max_attempts=3).judge_many([claim_request("Average crossing time fell.")])
    assert failed.answer is None and failed.na_reason == "provider_failure" and llm.n_calls == 5
    assert "gave up after 3 attempts: the endpoint answered 200" in failed.error
