"""One cheap request to an OpenAI-compatible judge before a run, so a wrong model name, key or base
URL is refused in one line before any partition starts, not in every judged step of the run.

The request is the judge's own kind (model, temperature, seed; no schema) with a two-word prompt, so
an endpoint that refuses those parameters is caught too. It is written to the ledger like any call
(asset `preflight`), so its few tokens are accounted for.
"""
from __future__ import annotations

import time
import uuid
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Callable
from urllib.parse import urlsplit

from ..errors import first_line, redact, redact_url
from .openai_config import OpenAIJudgeConfig

if TYPE_CHECKING:
    from ..store.judge_calls import JudgeCallStore

PROMPT = "Reply with the single word OK."
ATTEMPTS = 3  # for 5xx and timeouts only; every other answer is final
TIMEOUT_S = 30.0
PREFLIGHT_TOKENS = 16  # "OK" and then some: a model that rambles is cut, not waited for
OPENAI_DEFAULT = "the OpenAI API (OPENAI_BASE_URL is not set)"


class PreflightFailed(Exception):
    """The endpoint cannot serve the run; the message is one line that says what to fix."""


Asked = tuple[tuple[int, int], int, float, "str | None"]  # tokens (in, out), attempts, seconds, problem


def check_judge_endpoint(config: OpenAIJudgeConfig, calls: JudgeCallStore | None = None,
                         sleep=time.sleep, ask: Callable[[], Asked] | None = None) -> None:
    """Raise PreflightFailed unless one chat completion with the judge's settings succeeds (a 429
    passes: the key and model work, the run's retry layer waits). `ask`: where the request is sent
    from (the judge worker's process); by default from here."""
    _check_base_url(config.base_url)
    tokens, attempt, latency_s, problem = ask() if ask is not None else ask_endpoint(config, sleep)
    if calls is not None:
        _record(calls, config, tokens, attempt, latency_s, problem)
    if problem:
        raise PreflightFailed(redact(problem, config.api_key))


def ask_endpoint(config: OpenAIJudgeConfig, sleep=time.sleep) -> Asked:
    """The check's one request (retried on 5xx and timeouts): what it cost and, if it failed, why."""
    import openai  # here: a run whose calls go through the judge worker asks from the worker's process

    where = _check_base_url(config.base_url)
    client = openai.OpenAI(base_url=config.base_url, api_key=config.api_key or "unset", max_retries=0,
                           timeout=min(config.timeout_s, TIMEOUT_S))
    params = {"temperature": config.temperature_for(None), "max_tokens": PREFLIGHT_TOKENS,
              **({"seed": config.seed} if config.seed is not None else {})}
    started, tokens, problem, attempt = time.perf_counter(), (0, 0), None, 0
    try:
        for attempt in range(1, ATTEMPTS + 1):
            try:
                response = client.chat.completions.create(
                    model=config.model, messages=[{"role": "user", "content": PROMPT}], **params)
                usage = getattr(response, "usage", None)
                tokens = (getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0)
                problem = None
                break
            except openai.RateLimitError:
                problem = None
                break
            except (openai.InternalServerError, openai.APITimeoutError) as exc:
                problem = _explain(exc, config, where)
                if attempt < ATTEMPTS:
                    sleep(attempt)
            except openai.OpenAIError as exc:
                problem = _explain(exc, config, where)
                break
    finally:
        client.close()
    return tokens, attempt, time.perf_counter() - started, problem


def _check_base_url(base_url: str | None) -> str:
    if not base_url:
        return OPENAI_DEFAULT
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PreflightFailed(f"OPENAI_BASE_URL={redact_url(base_url)!r} is not an http(s) URL "
                              f"(e.g. http://localhost:8000/v1)")
    return redact_url(base_url)  # where the messages say it is: never with its password


def _explain(exc: Exception, config: OpenAIJudgeConfig, where: str) -> str:
    """One line: what the endpoint said and which setting to check."""
    import openai

    head = f"the judge endpoint {where} (model {config.model!r})"
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return f"{head} refused the API key (HTTP {exc.status_code}: {_message(exc)}); check OPENAI_API_KEY"
    if isinstance(exc, openai.NotFoundError):
        return (f"{head} answered 404 ({_message(exc)}); check DREVAL_JUDGE_MODEL, and that OPENAI_BASE_URL is "
                f"the API root that /chat/completions follows (often ending in /v1)")
    if isinstance(exc, openai.APIStatusError):
        return f"{head} answered HTTP {exc.status_code} ({_message(exc)})"
    if isinstance(exc, openai.APITimeoutError):
        return f"{head} gave no answer within {min(config.timeout_s, TIMEOUT_S):g} s ({ATTEMPTS} tries)"
    if isinstance(exc, openai.APIConnectionError):
        return f"cannot connect to the judge endpoint {where}: {_root_cause(exc)}; check OPENAI_BASE_URL"
    return f"{head} failed: {type(exc).__name__}: {first_line(exc)}"


def _message(exc) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error", body) if isinstance(body.get("error", body), dict) else {}
    return first_line(error.get("message") or exc.message or "")[:200]


def _root_cause(exc: BaseException) -> str:
    """The innermost error's text ("[Errno 111] Connection refused"), not openai's "Connection error."."""
    seen = exc
    for _ in range(10):  # a chain is short; the bound only guards against a cycle
        inner = seen.__cause__ or (None if seen.__suppress_context__ else seen.__context__)
        if inner is None:
            break
        seen = inner
    text = first_line(seen)
    return text.lower() if "refused" in text.lower() else text


def _record(calls: JudgeCallStore, config: OpenAIJudgeConfig, tokens: tuple[int, int], attempts: int,
            latency_s: float, problem: str | None) -> None:
    from ..store.judge_calls import LedgerRow  # here: the judge worker asks, and never writes the ledger

    price = config.prices.get(config.model)
    calls.record([LedgerRow(
        call_id=str(uuid.uuid4()), called_at=datetime.now(timezone.utc).replace(tzinfo=None), run_id=None,
        asset="preflight", system=None, task=None, judge_id=config.model, model=config.model, template="preflight",
        template_hash="", cache_key="", cache_hit=False, outcome="provider_failure" if problem else "ok",
        attempts=attempts, validation_retries=0, tokens_in=tokens[0], tokens_out=tokens[1],
        cost=price.cost(*tokens) if price else None, latency_s=latency_s,
        error=redact(problem or "", config.api_key))])
