"""The call side of an OpenAI-compatible judge: one prepared request sent with openai's client, shaped,
validated and re-asked by instructor's mode handlers (`structured_request`) or as plain chat, our one
retry layer (openai `max_retries=0`), the failure buckets, and the endpoint's clients. Imported only by
a process that sends requests: the judge worker's, or the run's own when it calls without one
(`DREVAL_JUDGE_WORKER`), so a run whose calls go through the worker never loads openai and instructor
(~0.5 s of its start under one interpreter lock)."""
from __future__ import annotations

import asyncio
import os
import re
import time
import warnings
from dataclasses import replace
from functools import lru_cache
from typing import Any

import httpx
import instructor
import openai
from instructor.core.exceptions import IncompleteOutputException
from pydantic import BaseModel, ValidationError

from ..core.backoff import retry_after_seconds, wait_before_retry
from ..core.metrics import judge_limit
from ..errors import first_line, redact
from .base import FreeText
from .judge_call import MESSAGE_CHARS, SLOTS_PER_CLIENT, CallOutcome, PreparedCall
from .judge_loop import ENDPOINT_FULL, Endpoint
from .judge_worker import serve
from .limits import RateLimiter
from .openai_config import OpenAIJudgeConfig
from .preflight import ask_endpoint
from .structured_request import INVALID_ANSWER, post_chat, structured_shape

INSTRUCTOR_MODES = {"tools": instructor.Mode.TOOLS, "json": instructor.Mode.JSON,
                    "json_schema": instructor.Mode.JSON_SCHEMA, "md_json": instructor.Mode.MD_JSON}
CONTEXT_ERROR = re.compile(r"context (size|length|window)|maximum context|too many tokens", re.I)
IMAGES_REFUSED = re.compile(r"image input is not supported|does not support (image|vision)|not a (vision|multimodal) "
                            r"model|mmproj", re.I)
TIMEOUTS_TRIED = 2  # a request timed out this often is final: the same answer at the same speed times out again
# A request cancelled (a Ctrl-C) while httpx's anyio backend is still connecting leaves that attempt's
# coroutine unstarted; Python warns when it is collected, wherever that happens, among the run's own
# closing lines. Nothing is lost: the cancelled call is asked again by the next run.
warnings.filterwarnings("ignore", message=r"coroutine 'connect_tcp\.<locals>\.try_connect' was never awaited",
                        category=RuntimeWarning)


class _RetryableError(Exception):
    def __init__(self, message: str, wait_hint: float | None, timed_out: bool = False):
        super().__init__(message)
        self.wait_hint = wait_hint
        self.timed_out = timed_out


class _FinalError(Exception):
    def __init__(self, message: str, na_reason: str):
        super().__init__(message)
        self.na_reason = na_reason


class EndpointCalls:
    """Sends one prepared request with the endpoint's settings; the outcome says what came back."""

    def __init__(self, config: OpenAIJudgeConfig) -> None:
        self.config = config

    async def call(self, p: PreparedCall, client: Any, semaphore: asyncio.Semaphore,
                   limiter: RateLimiter) -> CallOutcome:
        outcome = CallOutcome(answer=None)
        queued = time.perf_counter()
        if semaphore.locked():
            ENDPOINT_FULL.set()
        async with semaphore:  # the deadline starts with the judgment's own turn, not in the queue
            started = time.perf_counter()
            outcome.wait_s = started - queued
            deadline = self.config.deadline_s
            try:
                async with asyncio.timeout(deadline):
                    await self._attempts(p, client, limiter, outcome, time.monotonic() + deadline)
            except TimeoutError:
                last = f"; last: {outcome.error}" if outcome.error else ""
                outcome.answer, outcome.na_reason = None, "provider_failure"
                outcome.error = f"deadline of {deadline:g} s exceeded after {outcome.attempts} attempt(s){last}"
                if outcome.trail and outcome.trail[-1] == "sent":
                    outcome.trail[-1] = "cut by the deadline"
        outcome.latency_s = time.perf_counter() - started - outcome.rate_wait_s
        outcome.wait_s += outcome.rate_wait_s
        return outcome

    async def _attempts(self, p: PreparedCall, client: Any, limiter: RateLimiter, outcome: CallOutcome,
                        deadline_at: float) -> None:
        """Our one retry layer: sets `outcome.answer`, or its na_reason and error."""
        for attempt in range(1, self.config.max_attempts + 1):
            outcome.attempts = attempt
            outcome.rate_wait_s += await limiter.acquire(p.estimated_tokens)
            try:
                outcome.answer = await self._attempt(p, client, outcome)
                outcome.error = ""  # recovered: what went wrong on the way stays in the trail
                break
            except _RetryableError as exc:
                outcome.error = self._redact(str(exc))
                if exc.timed_out and outcome.trail.count("timeout") >= TIMEOUTS_TRIED:
                    # a server slower than the timeout for this answer will be again: say what to change
                    outcome.na_reason = "provider_failure"
                    outcome.error = (f"timed out {TIMEOUTS_TRIED} times at {self.config.timeout_s:g} s "
                                     f"(answers up to {p.max_tokens} tokens): raise DREVAL_JUDGE_TIMEOUT or "
                                     f"lower DREVAL_JUDGE_MAX_TOKENS")
                    break
                if attempt == self.config.max_attempts:
                    outcome.na_reason = "provider_failure"
                    outcome.error = f"gave up after {attempt} attempts: {outcome.error}"
                    break
                wait = self._wait_before_retry(attempt, exc.wait_hint)
                if wait is None:
                    outcome.na_reason = "provider_failure"
                    outcome.error = (f"server asked to wait {exc.wait_hint:.0f}s, more than the "
                                     f"{self.config.backoff_cap_s:.0f}s cap: {outcome.error}")
                    break
                if time.monotonic() + wait >= deadline_at:
                    raise TimeoutError  # waiting would only reach the deadline: give up now
                await asyncio.sleep(wait)
            except _FinalError as exc:
                outcome.na_reason, outcome.error = exc.na_reason, self._redact(str(exc))
                break

    async def _attempt(self, p: PreparedCall, client: Any, outcome: CallOutcome) -> BaseModel:
        """One attempt of our retry layer: a request, and instructor's re-asks after invalid answers
        (at most `validation_retries`). Each request's outcome goes to `outcome.trail`."""
        params: dict[str, Any] = {"temperature": p.temperature, "max_tokens": p.max_tokens}
        if self.config.seed is not None:
            params["seed"] = self.config.seed
        chat = {"model": p.model, "messages": p.messages, **params}
        if p.request.response_model is FreeText:
            return await self._free_text(p, client, outcome, chat)
        shape = structured_shape(wire_model(p.request.response_model), INSTRUCTOR_MODES[self.config.mode])
        body = shape.request(chat)
        for ask in range(self.config.validation_retries + 1):
            completion = await self._post(client, body, outcome)
            try:
                # a clean copy of the caller's model: instructor's answer is its schema subclass
                answer = p.request.response_model.model_validate(shape.parse(completion).model_dump())
            except IncompleteOutputException as exc:  # our budget: asking again unchanged would cut it again
                _mark_last(outcome, "cut off")
                raise _FinalError(f"answer cut off at {p.max_tokens} tokens (DREVAL_JUDGE_MAX_TOKENS)",
                                  "pipeline_failure") from exc
            except INVALID_ANSWER as exc:
                _mark_last(outcome, "invalid answer")
                if ask == self.config.validation_retries:
                    raise _FinalError(f"answer failed validation after {ask + 1} attempt(s): "
                                      f"{_validation_summary(exc)}", "pipeline_failure") from exc
                outcome.validation_retries += 1
                body = shape.reask(body, completion, exc)
                continue
            _mark_last(outcome, "ok")
            return answer
        raise AssertionError("unreachable: the last invalid answer raises")

    async def _post(self, client: Any, body: dict[str, Any], outcome: CallOutcome) -> Any:
        """One HTTP request of a call, its outcome in the trail and its tokens counted."""
        outcome.trail.append("sent")
        try:
            completion = await post_chat(client, body)
        except openai.OpenAIError as exc:
            outcome.trail[-1] = _request_label(exc)
            raise _classify_api_error(exc) from exc
        outcome.trail[-1] = "answered"
        _count_usage(outcome, getattr(completion, "usage", None))
        return completion

    async def _free_text(self, p: PreparedCall, client: Any, outcome: CallOutcome,
                         chat: dict[str, Any]) -> FreeText:
        """A plain chat completion: no schema, the answer is the message text."""
        response = await self._post(client, chat, outcome)
        choice = response.choices[0] if response.choices else None
        text = (choice.message.content or "") if choice else ""
        # FreeText is a system writing its report: its own output cut off or empty is the system's
        if choice is not None and choice.finish_reason == "length":
            raise _FinalError(f"answer cut off at {p.max_tokens} tokens", "model_failure")
        if not text.strip():
            raise _FinalError("the endpoint answered with no text", "model_failure")
        outcome.trail[-1] = "ok"
        return FreeText(text=text)

    def _wait_before_retry(self, attempt: int, hint: float | None) -> float | None:
        return wait_before_retry(attempt, hint, self.config.backoff_base_s, self.config.backoff_cap_s)

    def _redact(self, text: str) -> str:
        return redact(text, self.config.api_key)


def endpoint_of(config: OpenAIJudgeConfig) -> Endpoint:
    """The endpoint's HTTP clients and limits, for a process that sends its own requests: keep-alive for
    every slot (a connection closed after each answer would be opened again), in pools of about
    SLOTS_PER_CLIENT connections (see Endpoint)."""
    c = config
    n_clients = -(-c.concurrency // SLOTS_PER_CLIENT)
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=2 * SLOTS_PER_CLIENT)
    tls = httpx.create_ssl_context()  # as each client would make its own (~25 ms each), made once
    hooks = {"response": [_refuse_malformed]}

    def client() -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(base_url=c.base_url, api_key=c.api_key or "unset", max_retries=0,
                                  timeout=c.timeout_s, http_client=httpx.AsyncClient(
                                      verify=tls, limits=limits, event_hooks=hooks))

    return Endpoint([client() for _ in range(n_clients)], asyncio.Semaphore(c.concurrency),
                    RateLimiter(c.requests_per_minute, c.tokens_per_minute))


def worker_main(conn: Any, config: OpenAIJudgeConfig) -> None:
    """A judge worker process's body (judges/judge_worker.py): this endpoint's calls, and the run's
    judge check, sent from here."""
    def make_call():
        own = replace(config, worker="off")  # the worker calls the endpoint itself
        endpoint, caller = endpoint_of(own), EndpointCalls(own)
        return lambda p: caller.call(p, endpoint.client(), endpoint.semaphore, endpoint.limiter)

    serve(conn, make_call, check=lambda: ask_endpoint(config))
    os._exit(0)  # nothing of the worker's is left to write: Python's shutdown would only delay the run's end


@lru_cache(maxsize=None)
def wire_model(response_model: type[BaseModel]) -> type[BaseModel]:
    """The response model as instructor sends it, made once per model: handed a plain model, instructor
    builds this subclass and its function schema again for every request (a third of the loop's CPU)."""
    return instructor.openai_schema(response_model)


def _count_usage(outcome: CallOutcome, usage: Any) -> None:
    """Add one response's token counts; image tokens only when the endpoint reports them."""
    outcome.tokens_in += getattr(usage, "prompt_tokens", 0) or 0
    outcome.tokens_out += getattr(usage, "completion_tokens", 0) or 0
    image_tokens = getattr(getattr(usage, "prompt_tokens_details", None), "image_tokens", None)
    if isinstance(image_tokens, int):
        outcome.image_tokens = (outcome.image_tokens or 0) + image_tokens


class MalformedAnswer(openai.APIError):
    """An HTTP 200 whose body is no chat completion (an HTML page, no choices): the provider's, retried."""


async def _refuse_malformed(response: httpx.Response) -> None:
    """A chat completion answered 200 must be JSON with choices; a proxy's HTML page or an empty
    `choices` is the provider's failure, never an invalid answer of the model."""
    if response.status_code != 200 or not response.request.url.path.endswith("/chat/completions"):
        return
    await response.aread()
    try:
        body = response.json()
    except ValueError:
        raise MalformedAnswer(f"the endpoint answered 200 with a body that is not JSON: "
                              f"{' '.join(response.text[:120].split())!r}", response.request, body=None) from None
    if not isinstance(body, dict) or not body.get("choices"):
        raise MalformedAnswer("the endpoint answered 200 with no choices", response.request, body=body)


def _classify_api_error(exc: BaseException) -> Exception:
    malformed = next((e for e in (exc, exc.__cause__) if isinstance(e, MalformedAnswer)), None)
    if malformed is not None:  # raised in the HTTP client's hook, so openai may wrap it as a connection error
        return _RetryableError(first_line(malformed, MESSAGE_CHARS), None)
    message = first_line(exc, MESSAGE_CHARS)
    if isinstance(exc, openai.RateLimitError):
        return _RetryableError(f"429 rate limited: {message}", retry_after_seconds(exc.response.headers))
    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError)):
        return _RetryableError(f"{type(exc).__name__}: {message}", None, isinstance(exc, openai.APITimeoutError))
    if isinstance(exc, openai.APIStatusError):
        if IMAGES_REFUSED.search(message):  # a text-only model shown an image: our judge's limit, final
            return _FinalError(judge_limit(f"the judge model does not accept images ({exc.status_code}: {message})"),
                               "pipeline_failure")
        if exc.status_code == 400 and CONTEXT_ERROR.search(message):  # our prompt, not the provider's fault
            return _FinalError(f"prompt exceeds the model's context (set DREVAL_JUDGE_CONTEXT): {message}",
                               "pipeline_failure")
        if exc.status_code >= 500:
            return _RetryableError(f"{exc.status_code} server error: {message}",
                                   retry_after_seconds(exc.response.headers))
        return _FinalError(f"{exc.status_code} {type(exc).__name__}: {message}", "provider_failure")
    return _FinalError(f"{type(exc).__name__}: {message}", "provider_failure")


def _mark_last(outcome: CallOutcome, label: str) -> None:
    if outcome.trail:
        outcome.trail[-1] = label


def _request_label(exc: BaseException) -> str:
    """What one HTTP request got, in a word or two, for the ledger's trail."""
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}"
    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "connection error"
    return type(exc).__name__


def _validation_summary(exc: BaseException) -> str:
    """The first problem of an invalid answer, in one line (`field: message`, not pydantic's banner)."""
    if isinstance(exc, ValidationError) and exc.errors():
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "answer"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        return f"{where}: {error['msg']}{more}"
    return first_line(exc, MESSAGE_CHARS)


