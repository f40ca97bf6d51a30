"""Tests for tests/loopback_llm.py, driven through the real openai client and instructor."""

from __future__ import annotations

import asyncio
import json
import math
import sys
import time
from pathlib import Path

import httpx
import instructor
import openai
import pytest
from instructor.core.exceptions import InstructorRetryException
from pydantic import BaseModel, ValidationError

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loopback_llm import (  # noqa: E402
    LoopbackLLM,
    hashed_vector,
    answer_override,
    delay,
    raw_content,
    status,
)

GOOD = {"verdict": "supported", "score": 3}
MESSAGES = [
    {"role": "system", "content": "You are a careful judge."},
    {"role": "user", "content": "Does the source support the claim?"},
]


class Verdict(BaseModel):
    verdict: str
    score: int


def _chars(messages) -> int:
    total = 0
    for m in messages:
        c = m.get("content")
        if isinstance(c, str):
            total += len(c)
        elif isinstance(c, list):
            total += sum(len(p.get("text", "")) for p in c if isinstance(p, dict))
    return total


def expected_usage(request: dict, answer_text: str) -> tuple[int, int]:
    return math.ceil(_chars(request["messages"]) / 4), math.ceil(len(answer_text) / 4)


@pytest.fixture
def llm():
    schemas: list = []

    def answer(request, schema):
        schemas.append(schema)
        return dict(GOOD)

    server = LoopbackLLM(answer=answer).start()
    server.schemas = schemas  # test-only bookkeeping
    try:
        yield server
    finally:
        server.stop()


async def _structured(server: LoopbackLLM, mode=instructor.Mode.TOOLS, max_retries=0, timeout=None, messages=MESSAGES):
    raw = openai.AsyncOpenAI(base_url=server.base_url, api_key="test-key", max_retries=0, timeout=timeout or 10.0)
    try:
        client = instructor.from_openai(raw, mode=mode)
        return await client.chat.completions.create_with_completion(
            model="m", messages=messages, response_model=Verdict, max_retries=max_retries
        )
    finally:
        await raw.close()


def structured(server, **kw):
    return asyncio.run(_structured(server, **kw))


def structured_error(server, **kw) -> InstructorRetryException:
    with pytest.raises(InstructorRetryException) as info:
        structured(server, **kw)
    return info.value


# ----------------------------------------------------------------- instructor modes

MODES = [instructor.Mode.TOOLS, instructor.Mode.JSON, instructor.Mode.MD_JSON]
if hasattr(instructor.Mode, "JSON_SCHEMA"):
    MODES.append(instructor.Mode.JSON_SCHEMA)


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
def test_instructor_mode_parses_and_reports_usage(llm, mode):
    model, completion = structured(llm, mode=mode)

    assert model.model_dump() == GOOD
    assert llm.n_calls == 1
    req = llm.requests[0]
    assert req["model"] == "m"
    assert completion.model == "m"

    if mode == instructor.Mode.TOOLS:
        assert "tools" in req and "response_format" not in req
        assert llm.schemas[0] == req["tools"][0]["function"]["parameters"]
        assert completion.choices[0].finish_reason == "tool_calls"
        call = completion.choices[0].message.tool_calls[0]
        assert call.id == "call_1" and call.function.name == req["tools"][0]["function"]["name"]
        assert json.loads(call.function.arguments) == GOOD
    elif mode == instructor.Mode.MD_JSON:
        assert "tools" not in req and "response_format" not in req
        assert llm.schemas[0] is None
        content = completion.choices[0].message.content
        assert content.startswith("```json\n") and content.endswith("\n```")
    else:  # JSON / JSON_SCHEMA
        assert "tools" not in req and "response_format" in req
        fmt = req["response_format"]
        if fmt["type"] == "json_schema":
            assert llm.schemas[0] == fmt["json_schema"]["schema"]
        else:
            assert fmt == {"type": "json_object"} and llm.schemas[0] is None
        assert json.loads(completion.choices[0].message.content) == GOOD
        assert completion.choices[0].finish_reason == "stop"

    p, c = expected_usage(req, json.dumps(GOOD))
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (p, c)
    assert completion.usage.total_tokens == p + c
    assert (llm.prompt_tokens_total, llm.completion_tokens_total) == (p, c)
    # instructor also attaches the cumulative usage to the parsed model
    assert model._total_usage.total_tokens == p + c
    assert model._raw_response is completion


def test_raw_openai_response_shapes(llm):
    async def run():
        async with openai.AsyncOpenAI(base_url=llm.base_url, api_key="k", max_retries=0) as client:
            tool = {"type": "function", "function": {"name": "judge", "parameters": {"type": "object"}}}
            a = await client.chat.completions.create(model="gpt-x", messages=MESSAGES, tools=[tool])
            b = await client.chat.completions.create(
                model="gpt-y", messages=MESSAGES, response_format={"type": "json_object"}
            )
            c = await client.chat.completions.create(model="gpt-z", messages=MESSAGES)
            return a, b, c

    a, b, c = asyncio.run(run())
    assert a.object == "chat.completion" and a.id and a.created > 0 and a.model == "gpt-x"
    msg = a.choices[0].message
    assert msg.content is None and msg.role == "assistant"
    assert msg.tool_calls[0].type == "function" and msg.tool_calls[0].function.name == "judge"
    assert b.model == "gpt-y" and json.loads(b.choices[0].message.content) == GOOD
    assert c.model == "gpt-z" and c.choices[0].message.content == "```json\n" + json.dumps(GOOD) + "\n```"
    assert llm.schemas == [{"type": "object"}, None, None]
    assert llm.n_calls == 3


def test_multipart_content_counts_text_parts(llm):
    messages = [{"role": "user", "content": [{"type": "text", "text": "x" * 10}, {"type": "text", "text": "y" * 7}]}]

    async def run():
        async with openai.AsyncOpenAI(base_url=llm.base_url, api_key="k", max_retries=0) as client:
            return await client.chat.completions.create(model="m", messages=messages)

    resp = asyncio.run(run())
    assert resp.usage.prompt_tokens == math.ceil(17 / 4)


# ----------------------------------------------------------------- API faults


def test_rate_limit_fault_carries_retry_after(llm):
    llm.fail_next(status(429, headers={"Retry-After": "1"}))
    err = structured_error(llm)

    cause = err.__cause__
    assert isinstance(cause, openai.RateLimitError)
    assert cause.status_code == 429
    assert cause.response.headers["retry-after"] == "1"
    assert cause.body["code"] == "rate_limit_exceeded"  # openai unwraps the "error" object
    # API errors are not retried by instructor: one attempt, no failed (parse) attempts, no usage
    assert err.n_attempts == 1
    assert err.failed_attempts == []
    assert err.last_completion is None
    assert err.total_usage.total_tokens == 0
    assert llm.n_calls == 1 and llm.prompt_tokens_total == 0

    # the fault is consumed; the next request is answered normally
    model, _ = structured(llm)
    assert model.verdict == "supported"


@pytest.mark.parametrize(
    "code, exc_type",
    [(500, openai.InternalServerError), (401, openai.AuthenticationError), (400, openai.BadRequestError)],
)
def test_status_faults_map_to_openai_errors(llm, code, exc_type):
    llm.fail_next(status(code))
    err = structured_error(llm)
    assert isinstance(err.__cause__, exc_type)
    assert err.__cause__.status_code == code
    assert set(err.__cause__.body) >= {"message", "type", "code"}


def test_custom_error_body(llm):
    llm.fail_next(status(503, body={"error": {"message": "overloaded", "type": "server_error", "code": "x"}}))
    err = structured_error(llm)
    assert isinstance(err.__cause__, openai.InternalServerError)
    assert err.__cause__.body["message"] == "overloaded"


def test_faults_are_consumed_fifo(llm):
    llm.fail_next(status(500), status(429))
    assert isinstance(structured_error(llm).__cause__, openai.InternalServerError)
    assert isinstance(structured_error(llm).__cause__, openai.RateLimitError)
    assert structured(llm)[0].score == 3
    assert llm.n_calls == 3


def test_delay_beyond_client_timeout_raises_api_timeout(llm):
    llm.fail_next(delay(2.0))
    t0 = time.monotonic()
    err = structured_error(llm, timeout=0.2)
    assert isinstance(err.__cause__, openai.APITimeoutError)
    assert time.monotonic() - t0 < 1.5
    # the server is still healthy afterwards
    assert structured(llm)[0].verdict == "supported"


# ----------------------------------------------------------------- validation faults


@pytest.mark.parametrize("mode", [instructor.Mode.TOOLS, instructor.Mode.JSON, instructor.Mode.MD_JSON], ids=lambda m: m.name)
def test_malformed_json_is_a_validation_failure(llm, mode):
    bad = '{"verdict": "supp'
    llm.fail_next(raw_content(bad))
    err = structured_error(llm, mode=mode)

    assert isinstance(err.__cause__, ValidationError)
    assert err.n_attempts == 1
    assert len(err.failed_attempts) == 1
    attempt = err.failed_attempts[0]
    assert attempt.attempt_number == 1 and isinstance(attempt.exception, ValidationError)
    assert attempt.completion is err.last_completion
    p, c = expected_usage(llm.requests[0], bad)
    assert (err.total_usage.prompt_tokens, err.total_usage.completion_tokens) == (p, c)
    assert (llm.prompt_tokens_total, llm.completion_tokens_total) == (p, c)
    if mode == instructor.Mode.TOOLS:
        assert err.last_completion.choices[0].message.tool_calls[0].function.arguments == bad


def test_answer_override_fails_pydantic_validation(llm):
    llm.fail_next(answer_override({"verdict": 1}))
    err = structured_error(llm)
    assert isinstance(err.__cause__, ValidationError)
    assert llm.schemas == []  # the answer callable was not consulted


def test_reask_after_validation_failure_accumulates_usage(llm):
    llm.fail_next(raw_content("not json"))
    model, completion = structured(llm, max_retries=1)

    assert model.model_dump() == GOOD
    assert llm.n_calls == 2
    roles = [m["role"] for m in llm.requests[1]["messages"]]
    assert roles[: len(MESSAGES)] == [m["role"] for m in MESSAGES] and "tool" in roles  # instructor re-asked
    # completion.usage is instructor's running total over both attempts
    assert completion.usage.prompt_tokens == llm.prompt_tokens_total
    assert completion.usage.completion_tokens == llm.completion_tokens_total
    assert model._total_usage.total_tokens == llm.prompt_tokens_total + llm.completion_tokens_total


# ----------------------------------------------------------------- concurrency


def test_concurrent_requests_are_not_serialised(llm):
    llm.latency_s = 0.3

    async def run():
        raw = openai.AsyncOpenAI(base_url=llm.base_url, api_key="k", max_retries=0)
        client = instructor.from_openai(raw, mode=instructor.Mode.TOOLS)
        try:
            t0 = time.monotonic()
            results = await asyncio.gather(
                *(
                    client.chat.completions.create_with_completion(
                        model="m", messages=[{"role": "user", "content": f"q{i}"}], response_model=Verdict, max_retries=0
                    )
                    for i in range(16)
                )
            )
            return results, time.monotonic() - t0
        finally:
            await raw.close()

    results, elapsed = asyncio.run(run())
    assert len(results) == 16 and all(m.score == 3 for m, _ in results)
    assert elapsed >= 0.3
    assert elapsed < 2.0, f"16 x 0.3 s requests took {elapsed:.2f} s: server serialises requests"
    assert llm.n_calls == 16
    assert sorted(r["messages"][0]["content"] for r in llm.requests) == sorted(f"q{i}" for i in range(16))
    assert llm.completion_tokens_total == 16 * math.ceil(len(json.dumps(GOOD)) / 4)


# ----------------------------------------------------------------- raw HTTP behaviour


def test_http_paths_errors_and_silence(llm, capfd):
    root = llm.base_url[: -len("/v1")]
    body = {"model": "m", "messages": [{"role": "user", "content": "abcd"}], "response_format": {"type": "json_object"}}
    with httpx.Client() as http:
        ok_v1 = http.post(f"{root}/v1/chat/completions", json=body)
        ok_bare = http.post(f"{root}/chat/completions", json=body)
        missing = http.post(f"{root}/v1/completions", json=body)
        no_input = http.post(f"{root}/v1/embeddings", json=body)  # a chat body: no `input`
        embedded = http.post(f"{root}/v1/embeddings", json={"model": "e", "input": ["Tide mill", "tide MILL!"]})
        bad = http.post(
            f"{root}/v1/chat/completions", content=b"{not json", headers={"Content-Type": "application/json"}
        )

    assert ok_v1.status_code == ok_bare.status_code == 200
    assert ok_v1.json()["usage"] == {"prompt_tokens": 1, "completion_tokens": 9, "total_tokens": 10}
    assert ok_v1.json()["object"] == "chat.completion"
    assert missing.status_code == 404 and "message" in missing.json()["error"]
    assert no_input.status_code == 400 and "input" in no_input.json()["error"]["message"]
    vectors = [item["embedding"] for item in embedded.json()["data"]]
    assert embedded.status_code == 200 and vectors[0] == vectors[1] == hashed_vector("tide mill")  # a bag of words
    assert embedded.json()["usage"]["prompt_tokens"] == 6 and sum(vectors[0]) == 2.0
    assert bad.status_code == 400 and bad.json()["error"]["type"] == "invalid_request_error"
    assert llm.n_calls == 4  # well-formed JSON bodies are recorded, embedding requests too
    out, errs = capfd.readouterr()
    assert errs == ""  # no per-request logging


def test_answer_callable_exception_becomes_500():
    def boom(request, schema):
        raise RuntimeError("kaput")

    with LoopbackLLM(answer=boom) as server:
        err = structured_error(server)
    assert isinstance(err.__cause__, openai.InternalServerError)
    assert "kaput" in err.__cause__.body["message"]


def test_default_answer_and_lifecycle():
    server = LoopbackLLM()
    with server:
        url = server.base_url
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        resp = httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": [], "tools": [
            {"type": "function", "function": {"name": "f", "parameters": {}}}]})
        assert json.loads(resp.json()["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]) == {}
    with pytest.raises(httpx.ConnectError):
        httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": []}, timeout=1.0)
    with pytest.raises(TypeError):
        server.fail_next("not a fault")


def test_a_stand_in_that_keeps_no_requests_still_counts_and_answers_them():
    with LoopbackLLM(answer=lambda request, schema: GOOD, keep_requests=False) as server:
        for _ in range(3):
            resp = httpx.post(f"{server.base_url}/chat/completions", json={"model": "m", "messages": MESSAGES,
                                                                          "response_format": {"type": "json_object"}})
            assert json.loads(resp.json()["choices"][0]["message"]["content"]) == GOOD
        resp = httpx.post(f"{server.base_url}/embeddings", json={"model": "e", "input": ["a b"]})
        assert resp.status_code == 200
        assert server.n_calls == 4 and server.requests == []
        assert server.prompt_tokens_total > 0  # usage is still counted


def test_a_stand_in_that_remembers_answers_answers_a_repeated_body_from_memory():
    asked: list[str] = []

    def answer(request, schema):
        asked.append(request["messages"][-1]["content"])
        return {"n": len(asked)}

    def ask(server, text: str) -> dict:
        resp = httpx.post(f"{server.base_url}/chat/completions", json={
            "model": "m", "messages": [{"role": "user", "content": text}], "response_format": {"type": "json_object"}})
        assert resp.status_code == 200
        return json.loads(resp.json()["choices"][0]["message"]["content"])

    with LoopbackLLM(answer=answer, remember_answers=2) as server:
        first = ask(server, "a")
        assert ask(server, "a") == first  # the same body: not answered again
        assert ask(server, "b") == {"n": 2}
        ask(server, "c")  # the third distinct body: "a" is forgotten
        assert ask(server, "a") == {"n": 4}
        assert asked == ["a", "b", "c", "a"]
        assert server.answers_remembered == 1 and server.n_calls == 5  # each request still counts
        assert all("_body" not in r for r in server.requests)  # the digest never reaches what a test reads
    with LoopbackLLM(answer=answer) as server:  # off by default: every request is answered
        ask(server, "z")
        ask(server, "z")
        assert asked[-2:] == ["z", "z"] and server.answers_remembered == 0


def test_spans_say_when_each_request_arrived_and_was_answered():
    """A benchmark's account of the endpoint's use (bench/bench_scale.py): one (arrived, answered) per chat
    request, the answer no sooner than the latency; none kept unless asked for."""
    def ask(server) -> None:
        resp = httpx.post(f"{server.base_url}/chat/completions", json={
            "model": "m", "messages": [{"role": "user", "content": "x"}], "response_format": {"type": "json_object"}})
        assert resp.status_code == 200

    before = time.monotonic()
    with LoopbackLLM(latency_s=0.05, record_spans=True) as server:
        ask(server)
        ask(server)
        after = time.monotonic()
        assert len(server.spans) == 2
        (a1, b1), (a2, b2) = server.spans
        assert before <= a1 and b1 - a1 >= 0.05 and b1 <= a2 and b2 - a2 >= 0.05 and b2 <= after
    with LoopbackLLM() as server:
        ask(server)
        assert server.spans is None
