"""Bounded answers: every judge request carries `max_tokens` sized from its template's answer; an
answer cut off at that budget is N/A `pipeline_failure`, said with the budget, and not asked again
unchanged. The loopback server cuts an answer at `max_tokens` as a real server does."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from judge_answers import dreval_answer  # noqa: E402
from test_openai_judge import batch_request, claim_request, make_judge  # noqa: E402

from dreval_assets.core.models import ClaimVerdict, ClaimVerdictBatch, StatementExtraction  # noqa: E402
from dreval_assets.errors import ConfigError  # noqa: E402
from dreval_assets.judges.answer_budget import CEILING, FLOOR, answer_budget, overrides_from_env  # noqa: E402
from dreval_assets.stages.statements import extraction_budget  # noqa: E402


def test_budget_grows_with_the_items_asked_and_stays_bounded():
    one = answer_budget(ClaimVerdict, {}, "claim_verdict")
    eight = answer_budget(ClaimVerdictBatch, {"items": [{}] * 8}, "claim_verdicts_batch")
    twenty = answer_budget(ClaimVerdictBatch, {"items": [{}] * 20}, "claim_verdicts_batch")
    assert FLOOR <= one < eight < twenty <= CEILING
    assert answer_budget(ClaimVerdictBatch, {"items": [{}] * 500}, "claim_verdicts_batch") == CEILING
    assert answer_budget(StatementExtraction, {}, "statement_extraction", asked=extraction_budget("x" * 6000)) == 2025
    assert answer_budget(ClaimVerdict, {}, "claim_verdict", overrides={"claim_verdict": 64}) == 64
    assert answer_budget(ClaimVerdict, {}, "claim_verdict", overrides={"*": 900}) == 900


def test_the_override_setting_is_checked():
    assert overrides_from_env("2048") == {"*": 2048}
    assert overrides_from_env('{"claim_verdict": 300}') == {"claim_verdict": 300}
    for bad in ("lots", '{"claim_verdict": -1}', "[1, 2]"):
        with pytest.raises(ConfigError, match="DREVAL_JUDGE_MAX_TOKENS"):
            overrides_from_env(bad)


@pytest.mark.parametrize("mode", ["tools", "json_schema", "md_json"])
def test_every_request_is_bounded_and_a_cut_answer_is_na_once(llm, calls, mode):
    judge = make_judge(llm, calls, mode=mode, validation_retries=2)
    [ok] = judge.judge_many([claim_request("The Lowmarsh ferry carried 41,200 passengers in 2023.")])
    assert ok.answer is not None
    assert llm.requests[0]["max_tokens"] == answer_budget(ClaimVerdict, {}, "claim_verdict")

    tight = make_judge(llm, calls, mode=mode, validation_retries=2, max_tokens={"claim_verdicts_batch": 20})
    sent = len(llm.requests)
    claims = {f"c{i}": f"The ferry carried {40_000 + i} passengers." for i in range(6)}
    [cut] = tight.judge_many([batch_request(claims)])
    assert cut.answer is None and cut.na_reason == "pipeline_failure"
    assert cut.error.startswith("answer cut off at 20 tokens")
    assert len(llm.requests) == sent + 1  # neither retried nor re-asked: the same budget would cut it again
    assert llm.requests[-1]["max_tokens"] == 20
    row = calls.store.query("SELECT outcome, tokens_out, error FROM judge_ledger "
                            "ORDER BY called_at DESC LIMIT 1").row(0)
    assert row[0] == "pipeline_failure" and row[1] == 20 and "cut off at 20 tokens" in row[2]


KILLED_JUDGE = """
import sys
sys.path[:0] = {paths!r}
from test_openai_judge import claim_request
from dreval_assets.judges.openai_config import OpenAIJudgeConfig
from dreval_assets.judges.openai_judge import OpenAIJudge
from dreval_assets.store.db import Store
from dreval_assets.store.judge_calls import JudgeCallStore
store = Store({db!r})
store.ensure_schema()
judge = OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url={url!r}, api_key="x", concurrency=1,
                                      write_interval_s={interval}), JudgeCallStore(store))
judge.judge_many([claim_request(f"The ferry carried {{40_000 + i}} passengers in 2023.") for i in range(60)])
"""


@pytest.mark.parametrize("interval", [0.0, 0.5])
def test_a_killed_step_leaves_its_ended_calls_in_the_ledger(tmp_path, interval):
    """Answers are cached as they arrive (a writer thread's group commits, at most every `interval`
    seconds), and their ledger rows with them: a step killed mid-batch keeps what it paid for on the
    books, all but the request in flight and the answers of the last interval (20 a second here)."""
    import signal
    import subprocess
    import time

    from loopback_llm import LoopbackLLM

    from dreval_assets.store.db import Store

    db = tmp_path / "killed.duckdb"
    tests = Path(__file__).parent
    with LoopbackLLM(answer=dreval_answer, latency_s=0.05) as llm:
        script = KILLED_JUDGE.format(paths=[str(tests.parent), str(tests)], db=str(db), url=llm.base_url,
                                     interval=interval)
        child = subprocess.Popen([sys.executable, "-c", script])
        deadline = time.monotonic() + 60
        while llm.n_calls < 40 and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait()
        answered = llm.n_calls
    assert 40 <= answered < 60  # killed mid-batch
    store = Store(db)
    cached = store.query("SELECT count(*) FROM judge_cache").item()
    booked = store.query("SELECT count(*) FROM judge_ledger WHERE outcome = 'ok'").item()
    lost = 2 + round(interval * 20 * 1.2)  # in flight, being written, and the interval's (with slack)
    assert cached >= answered - lost and answered - lost <= booked <= cached


def test_the_judge_learns_the_context_window_and_never_sends_a_prompt_that_cannot_fit(calls, monkeypatch):
    from loopback_llm import LoopbackLLM

    from dreval_assets.judges.context_window import discover, prompt_tokens

    monkeypatch.delenv("DREVAL_JUDGE_CONTEXT", raising=False)
    with LoopbackLLM(answer=dreval_answer, context_tokens=1200) as llm:
        window = discover(llm.base_url, "loopback-model")
        assert (window.tokens, window.source) == (1200, llm.base_url.removesuffix("/v1") + "/props")
        judge = make_judge(llm, calls)
        short = claim_request("The Lowmarsh ferry carried 41,200 passengers in 2023.")
        long_page = dict(short.variables, source_text="The ferry sailed on. " * 400)  # ~8,400 characters
        too_long = type(short)(short.template, long_page, short.response_model)
        ok, refused = judge.judge_many([short, too_long])
        assert ok.answer is not None and len(llm.requests) == 1  # the long one was never sent
        assert refused.answer is None and refused.na_reason == "pipeline_failure"
        assert "exceeds the model's context of 1200" in refused.error
        sent = llm.requests[0]
        assert sent["max_tokens"] <= 1200 - prompt_tokens(sent["messages"][0]["content"]) + 16

    assert discover("http://127.0.0.1:9/v1", "m", setting="4096").tokens == 4096
    assert discover(None, "m", setting="").tokens is None


def test_a_server_refusing_the_prompt_for_its_context_is_ours_not_the_providers(llm, calls, monkeypatch):
    monkeypatch.setenv("DREVAL_JUDGE_CONTEXT", "100000")  # we believe it fits; the server says otherwise
    llm.context_tokens = 50
    judge = make_judge(llm, calls, max_attempts=3)
    [refused] = judge.judge_many([claim_request("The Lowmarsh ferry carried 41,200 passengers in 2023.")])
    assert refused.na_reason == "pipeline_failure" and "prompt exceeds the model's context" in refused.error
    assert len(llm.requests) == 1  # a 400 is final: not retried


def test_a_text_only_model_shown_an_image_is_the_judges_limit_and_not_retried(llm, calls):
    """llama.cpp without a vision projector answers a 500 "image input is not supported": retrying it
    would only repeat it, and it is our judge's limit, never the system's fault."""
    from loopback_llm import status

    from dreval_assets.judges.base import ImageInput

    refusal = "image input is not supported - hint: you may need to provide the mmproj"
    llm.fail_next(status(500, body={"error": {"code": 500, "type": "server_error", "message": refusal}}))
    image = ImageInput("chart.png", "ab" * 32, "image/png", b"\x89PNG fake")
    request = claim_request("The chart shows 41,200 passengers.")
    [seen] = make_judge(llm, calls).judge_many([type(request)(request.template, request.variables,
                                                              request.response_model, images=(image,))])
    assert seen.answer is None and seen.na_reason == "pipeline_failure"
    assert seen.error.startswith("judge limit: the judge model does not accept images")
    assert len(llm.requests) == 1


def test_a_server_slower_than_the_timeout_is_given_up_after_two_timeouts_saying_what_to_change(llm, calls):
    from loopback_llm import delay

    llm.fail_next(delay(1.5), delay(1.5), delay(1.5))
    [slow] = make_judge(llm, calls, timeout_s=0.5, max_attempts=6).judge_many(
        [claim_request("Average crossing time fell to 14 minutes.")])
    assert slow.answer is None and slow.na_reason == "provider_failure"
    assert slow.error.startswith("timed out 2 times at 0.5 s") and "DREVAL_JUDGE_TIMEOUT" in slow.error
    assert len(llm.requests) == 2  # not six identical waits


def test_statement_extraction_splits_a_report_into_chunks_that_fit_the_context(calls, tmp_path):
    """A small context window: the report is split into more, smaller chunks, and every extraction
    request fits it (none is refused, none is sent to fail)."""
    import polars as pl
    from loopback_llm import LoopbackLLM

    from dreval_assets.stages.parse import parse_reports
    from dreval_assets.stages.statements import extract_statements, fitting_chunk_chars

    sentences = " ".join(f"The Lowmarsh ferry carried {40_000 + i} passengers in {1990 + i} [1]." for i in range(120))
    report = f"# Ferry\n\n{sentences}\n\n## References\n[1] https://ferries.example/lowmarsh\n"
    claims = parse_reports(pl.DataFrame([{"system": "s", "task": "t", "status": "ok", "text": report,
                                          "detail": ""}]))["report_claims"]
    assert fitting_chunk_chars(None) > 10**6 and fitting_chunk_chars(2048) < 6000
    with LoopbackLLM(answer=dreval_answer, context_tokens=2048) as llm:
        _, wide = extract_statements(claims, make_judge(llm, calls))
        requests = llm.requests
    assert wide["n_failed_chunks"].item() == 0 and wide["n_chunks"].item() > 1
    assert wide["n_chunks"].item() >= len(sentences) // fitting_chunk_chars(2048)
    assert all(r["max_tokens"] >= 128 for r in requests)


def test_a_runs_judges_ask_the_server_for_its_context_once(llm, calls, monkeypatch):
    """Every step of a run makes its own judges: the model's context is asked of the server once per
    process, not once per judge (against a hosted API each ask is a round trip before the step's first call)."""
    monkeypatch.delenv("DREVAL_JUDGE_CONTEXT", raising=False)
    llm.context_tokens = 6000
    judges = [make_judge(llm, calls) for _ in range(3)]
    assert [judge.context_tokens() for judge in judges] == [6000, 6000, 6000]
    assert llm.gets == ["/props"]
    monkeypatch.setenv("DREVAL_JUDGE_CONTEXT", "4096")  # the setting is part of what is known
    assert make_judge(llm, calls).context_tokens() == 4096 and llm.gets == ["/props"]
