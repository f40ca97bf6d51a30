"""Text embeddings through the judge endpoint's `/v1/embeddings` (the openai client's
`embeddings.create`), when an embedding model is configured (DREVAL_JUDGE_EMBEDDING_MODEL).

Each text's vector is cached in `judge_cache` (template ``EMBEDDING_TEMPLATE``, key: the model and
the text), so a second run asks nothing; every HTTP request gets a ledger row, priced when the price
table names the embedding model. Requests keep the chat judge's limits: its concurrency, requests and
tokens per minute, retries with Retry-After and backoff, and the deadline per request. A text whose request
failed has no vector and says why (reason bucket and error): the caller reports it N/A, never
falls back to another retriever under the embeddings' name."""
from __future__ import annotations

import asyncio
import hashlib
import json
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Mapping, Sequence

from ..core.backoff import retry_after_seconds, wait_before_retry
from ..errors import redact
from ..store.judge_calls import CacheEntry, JudgeCallStore, LedgerRow
from .base import JudgeStats
from .limits import RateLimiter
from .meter import METER
from .openai_config import OpenAIJudgeConfig

if TYPE_CHECKING:
    import openai

EMBEDDING_TEMPLATE = "embeddings"  # the template name of embedding rows in judge_cache and judge_ledger
EMBEDDING_VERSION = "v1"  # their template hash: bump when what a cached vector means changes
TEXTS_PER_REQUEST = 64  # texts sent in one request (servers cap a request's inputs)


@dataclass
class Embeddings:
    """What an embedding pass found: a vector per text, or why a text has none."""

    model: str
    vectors: dict[str, list[float]] = field(default_factory=dict)
    failures: dict[str, tuple[str, str]] = field(default_factory=dict)  # text -> (reason bucket, error)


def embedding_key(model: str, text: str) -> str:
    identity = {"kind": "embedding", "version": EMBEDDING_VERSION, "model": model, "text": text}
    return hashlib.sha256(json.dumps(identity, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def embed_texts(config: OpenAIJudgeConfig, calls: JudgeCallStore | None, stats: JudgeStats,
                texts: Sequence[str], labels: Mapping[str, str] | None = None) -> Embeddings:
    """Vectors of `texts` (distinct, in order) by `config.embedding_model`: cached ones from the
    cache, the rest asked ``TEXTS_PER_REQUEST`` at a time."""
    model = config.embedding_model or ""
    found = Embeddings(model)
    wanted = list(dict.fromkeys(t for t in texts if t))
    keys = {t: embedding_key(model, t) for t in wanted}
    hits = calls.cached(list(keys.values())) if calls else {}
    missing = []
    for text in wanted:
        hit = hits.get(keys[text])
        vector = _vector(hit.answer_json) if hit else None
        if vector is None:
            missing.append(text)
        else:
            found.vectors[text] = vector
    stats.requests += len(wanted) - len(missing)
    stats.cache_hits += len(wanted) - len(missing)
    if missing:
        batches = [missing[i:i + TEXTS_PER_REQUEST] for i in range(0, len(missing), TEXTS_PER_REQUEST)]
        asyncio.run(_ask_all(config, calls, stats, batches, keys, found, labels or {}))
    return found


async def _ask_all(config: OpenAIJudgeConfig, calls: JudgeCallStore | None, stats: JudgeStats,
                   batches: list[list[str]], keys: Mapping[str, str], found: Embeddings,
                   labels: Mapping[str, str]) -> None:
    """The batches under the chat judge's limits: its concurrency, rate limits and deadline."""
    import openai  # here: every command imports this module (the WLC coverage metric), few embed

    client = openai.AsyncOpenAI(base_url=config.base_url, api_key=config.api_key or "unset", max_retries=0,
                                timeout=config.timeout_s)
    limiter = RateLimiter(config.requests_per_minute, config.tokens_per_minute)
    semaphore = asyncio.Semaphore(config.concurrency)
    METER.expect(sum(len(batch) for batch in batches))
    try:
        await asyncio.gather(*(_ask(client, config, calls, stats, batch, keys, found, labels, limiter, semaphore)
                               for batch in batches))
    finally:
        await client.close()


async def _ask(client: openai.AsyncOpenAI, config: OpenAIJudgeConfig, calls: JudgeCallStore | None,
               stats: JudgeStats, batch: list[str], keys: Mapping[str, str], found: Embeddings,
               labels: Mapping[str, str], limiter: RateLimiter, semaphore: asyncio.Semaphore) -> None:
    """One request for `batch`, retried on a server's or the network's failure within the deadline;
    its ledger row, priced at the embedding model's price when the price table has one."""
    async with semaphore:
        model, started, error, bucket, tokens = found.model, time.perf_counter(), "", "", 0
        outcome = {"attempt": 0}
        try:
            async with asyncio.timeout(config.deadline_s):
                vectors, tokens, error, bucket = await _attempts(client, config, batch, model, limiter, outcome)
        except TimeoutError:
            vectors, bucket = [], "provider_failure"
            error = f"deadline of {config.deadline_s:g} s exceeded after {outcome['attempt']} attempt(s)"
    attempt = outcome["attempt"]
    price = config.prices.get(model)
    cost = price.cost(tokens, 0) if price and not error else None
    stats.requests += len(batch)
    stats.calls += 1
    stats.tokens_in += tokens
    stats.add_cost(cost)
    if error:
        stats.failures += 1
        for text in batch:
            found.failures[text] = (bucket, f"embeddings by {model} failed after {attempt} attempt(s): {error}")
    else:
        for text, vector in zip(batch, vectors):
            found.vectors[text] = [float(x) for x in vector]
            if calls:
                calls.remember(CacheEntry(keys[text], config.model, model, EMBEDDING_TEMPLATE, EMBEDDING_VERSION,
                                          json.dumps(found.vectors[text]), 0, 0))
    METER.ended(cache_hit=False, failed=bool(error), tokens_in=tokens, tokens_out=0, cost=cost, requests=len(batch))
    if calls:
        calls.record([LedgerRow(
            call_id=str(uuid.uuid4()), called_at=datetime.now(timezone.utc).replace(tzinfo=None),
            run_id=labels.get("run_id"), asset=labels.get("asset"), system=labels.get("system"),
            task=labels.get("task"), judge_id=config.model, model=model, template=EMBEDDING_TEMPLATE,
            template_hash=EMBEDDING_VERSION, cache_key=hashlib.sha256("".join(keys[t] for t in batch).encode()
                                                                    ).hexdigest(),
            cache_hit=False, outcome="ok" if not error else bucket, attempts=attempt, validation_retries=0,
            tokens_in=tokens, tokens_out=0, cost=cost, latency_s=time.perf_counter() - started, error=error)])


async def _attempts(client: openai.AsyncOpenAI, config: OpenAIJudgeConfig, batch: list[str], model: str,
                    limiter: RateLimiter, outcome: dict) -> tuple[list, int, str, str]:
    """(vectors, prompt tokens, error, reason bucket): the chat judge's retry rules — a server's
    Retry-After is obeyed up to the backoff cap, a refused request is not asked again."""
    import openai

    error = bucket = ""
    for attempt in range(1, config.max_attempts + 1):
        outcome["attempt"] = attempt
        await limiter.acquire(sum(len(t) for t in batch) // 4 + 1)
        hint = None
        try:
            response = await client.embeddings.create(model=model, input=batch)
            vectors = [item.embedding for item in sorted(response.data, key=lambda item: item.index)]
            if len(vectors) != len(batch) or any(not v for v in vectors):
                raise ValueError(f"{len(vectors)} vectors for {len(batch)} texts")
            return vectors, getattr(response.usage, "prompt_tokens", 0) or 0, "", ""
        except openai.APIStatusError as exc:
            error = f"{exc.status_code} {type(exc).__name__}: {redact(str(exc), config.api_key)}"[:500]
            bucket = "provider_failure"
            if exc.status_code < 500 and exc.status_code != 429:
                break  # the request itself is refused (unknown model, no embeddings here): asking again changes nothing
            hint = retry_after_seconds(dict(exc.response.headers)) if exc.response is not None else None
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            error, bucket = f"{type(exc).__name__}: {redact(str(exc), config.api_key)}"[:500], "provider_failure"
        except (ValueError, TypeError, AttributeError) as exc:
            error, bucket = f"the endpoint's answer is not one vector per text: {exc}"[:500], "provider_failure"
            break
        if attempt < config.max_attempts:
            wait = wait_before_retry(attempt, hint, config.backoff_base_s, config.backoff_cap_s)
            if wait is None:
                error = f"server asked to wait {hint:.0f}s, more than the {config.backoff_cap_s:.0f}s cap: {error}"
                break
            await asyncio.sleep(wait)
    return [], 0, error, bucket


def _vector(answer_json: str) -> list[float] | None:
    try:
        vector = json.loads(answer_json)
    except ValueError:
        return None
    return [float(x) for x in vector] if isinstance(vector, list) and vector else None


def cosine_top(query: Sequence[float], candidates: Sequence[Sequence[float]], k: int) -> list[int]:
    """Indices of the min(k, n) candidates most similar to `query` by cosine, best first (ties in
    candidate order)."""
    def norm(v: Sequence[float]) -> float:
        return sum(x * x for x in v) ** 0.5 or 1.0

    q = norm(query)
    scores = [sum(a * b for a, b in zip(query, c)) / (q * norm(c)) for c in candidates]
    return sorted(range(len(candidates)), key=lambda i: (-scores[i], i))[:min(k, len(candidates))]
