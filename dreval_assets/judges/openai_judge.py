"""A judge on any OpenAI-compatible endpoint, the run's side: requests prepared (rendered, fitted to the
model's context, keyed), the call cache and the ledger, the concurrency limit shared by every judge of the
endpoint. The calls themselves (instructor, our retry layer) are `openai_calls`, sent from the judge worker
or, without one, from this process."""
from __future__ import annotations

import asyncio
import hashlib
import json
import queue
import threading
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextlib import nullcontext
from dataclasses import replace
from datetime import datetime, timezone
from itertools import chain
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from pydantic import ValidationError

from ..core.images import data_url
from ..errors import redact
from ..store.judge_calls import CacheEntry, JudgeCallStore, LedgerRow
from .answer_budget import FLOOR, answer_budget, model_schema
from .base import ASK_NOW, Judgment, JudgmentRequest, JudgeStats, Provenance
from .embeddings import Embeddings, embed_texts
from .context_window import ContextWindow, cut_to_tokens, known_window, prompt_tokens
from .judge_call import CallOutcome, PreparedCall
from .judge_loop import JUDGE_LOOP, AskedAhead, Endpoint
from .judge_worker import WorkerPool
from .limits import RateLimiter
from .meter import METER
from .openai_config import WORKER_MAIN, OpenAIJudgeConfig
from .prompts import load_template, render

CUT_NOTE_TOKENS = 30  # the note a text cut to fit the context ends with
PREPARE_CHUNK = 32  # requests prepared (rendered, keyed, looked up in the cache) before they are sent


class _RowWriter:
    """Answers (the call cache) and ledger rows written as calls end, by one thread per database, at most
    every `write_interval_s` (`DREVAL_JUDGE_WRITE_S`): what arrived meanwhile goes in one statement, so a
    killed step keeps every answer but those of its last interval, the event loop never waits for
    DuckDB, and a fast endpoint does not keep the writer busy with statements of a row or two."""

    def __init__(self, calls: JudgeCallStore, write_interval_s: float) -> None:
        self.calls, self.interval, self.queue, self.error = calls, write_interval_s, queue.SimpleQueue(), None
        threading.Thread(target=self._run, name="dreval-judge-writer", daemon=True).start()

    def put(self, item: CacheEntry | LedgerRow) -> None:
        self.queue.put(item)

    def flush(self) -> None:
        """Wait until everything put so far is written; a failed write is raised here, in the step."""
        written = threading.Event()
        self.queue.put(written)
        written.wait()
        error, self.error = self.error, None
        if error is not None:
            raise error

    def _gather(self) -> list[Any]:
        """The next write's items: what arrives within the interval after the first, or up to a flush."""
        items = [self.queue.get()]
        write_at = time.monotonic() + self.interval
        while not isinstance(items[-1], threading.Event):
            wait = write_at - time.monotonic()
            try:
                items.append(self.queue.get(timeout=wait) if wait > 0 else self.queue.get_nowait())
            except queue.Empty:
                break
        return items

    def _run(self) -> None:
        while True:
            items = self._gather()
            answers = [i for i in items if isinstance(i, CacheEntry)]
            rows = [i for i in items if isinstance(i, LedgerRow)]
            try:
                if answers:
                    self.calls.remember_many(answers)  # before the ledger rows that say they were answered
                if rows:
                    self.calls.record(rows)
            except Exception as exc:  # noqa: BLE001 - handed to the step at its next flush
                self.error = exc
            for item in items:
                if isinstance(item, threading.Event):
                    item.set()


def _chunks(requests: Iterable[Any]) -> Iterator[list[JudgmentRequest]]:
    """The requests in chunks of `PREPARE_CHUNK`, taken as they are made; a chunk ends early where the
    stream says to ask now (`ASK_NOW`)."""
    chunk: list[JudgmentRequest] = []
    for request in requests:
        if request is not ASK_NOW:
            chunk.append(request)
        if chunk and (len(chunk) == PREPARE_CHUNK or request is ASK_NOW):
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class _Batch:
    """One `judge_many` on the shared loop: its requests arrive chunk by chunk as they are prepared and
    are sent at once; an identical request already in flight is answered by that one."""

    def __init__(self, judge: "OpenAIJudge", endpoint: Endpoint) -> None:
        self.judge, self.endpoint = judge, endpoint
        calls = judge.calls
        self.writer = JUDGE_LOOP.shared(("writer", str(calls.store.db_path)),
                                        lambda: _RowWriter(calls, judge.config.write_interval_s)) if calls else None
        self.in_flight: dict[str, asyncio.Task] = {}
        if endpoint.worker is None:  # sent from this process, by this judge's settings
            from .openai_calls import EndpointCalls

            self.caller = EndpointCalls(judge.config)

    def write(self, item: CacheEntry | LedgerRow) -> None:
        if self.writer is not None:
            self.writer.put(item)

    async def judge_chunk(self, prepared: list[PreparedCall], hits: Mapping[str, Any],
                          answered: Callable[[], None], each: Sequence[Future]) -> list[CallOutcome]:
        """Every request's outcome, in order; `answered()` as each one's call ends, and its outcome in its
        future of `each` (so a caller on another thread has it before the chunk's slowest answer)."""
        async def one(p: PreparedCall, its: Future) -> CallOutcome:
            try:
                outcome = await self._judge_one(p, hits, answered)
            except BaseException as error:
                its.set_exception(error)
                raise
            its.set_result(outcome)
            return outcome

        return list(await asyncio.gather(*(one(p, its) for p, its in zip(prepared, each))))

    async def _judge_one(self, p: PreparedCall, hits: Mapping[str, Any],
                         answered: Callable[[], None]) -> CallOutcome:
        try:
            outcome = await self._answer(p, hits)
        finally:
            answered()
        p.messages = []  # sent: the rendered prompt (and its images) need not wait for the batch's end
        row = self.judge._account(p, outcome)
        self.write(row)  # as each call ends
        METER.ended(cache_hit=row.cache_hit, failed=outcome.answer is None, tokens_in=row.tokens_in,
                    tokens_out=row.tokens_out, cost=row.cost)
        return outcome

    async def _answer(self, p: PreparedCall, hits: Mapping[str, Any]) -> CallOutcome:
        if p.cache_key in hits:
            return _from_cache(p, hits[p.cache_key].answer_json)
        if p.too_long:  # never sent to fail
            return CallOutcome(None, na_reason="pipeline_failure", error=p.too_long)
        first = p.cache_key not in self.in_flight
        if first:
            self.in_flight[p.cache_key] = asyncio.ensure_future(self._call(p))
        outcome = await self.in_flight[p.cache_key]
        if first or outcome.answer is None:
            return outcome
        # an identical request in this batch already paid for the answer
        return CallOutcome(outcome.answer, cache_hit=True)

    async def _call(self, p: PreparedCall) -> CallOutcome:
        if self.endpoint.worker is not None:
            outcome = await self.endpoint.worker.call(p)
        else:
            outcome = await self.caller.call(p, self.endpoint.client(), self.endpoint.semaphore,
                                             self.endpoint.limiter)
        if outcome.answer is not None:
            self.write(CacheEntry(
                p.cache_key, self.judge.judge_id, p.model, p.request.template, p.template_hash,
                outcome.answer.model_dump_json(), outcome.tokens_in, outcome.tokens_out))
        return outcome

    async def close(self, interrupted: bool) -> None:
        """Interrupted: stop the requests still in flight (the loop outlives this batch)."""
        if interrupted:
            for task in self.in_flight.values():
                task.cancel()
            await asyncio.gather(*self.in_flight.values(), return_exceptions=True)


class OpenAIJudge:
    parallel_batches = True  # judge_many may be called from several threads at once (judges/parallel.py)
    streams_requests = True  # takes an iterator of requests, and has judge_each: answers handed back as they come

    def __init__(self, config: OpenAIJudgeConfig, calls: JudgeCallStore | None = None):
        self.config = config
        self.judge_id = config.model
        self.source_token_budget = config.source_tokens
        self.calls = calls
        self.stats = JudgeStats()
        self.window: ContextWindow | None = None  # the model's context, asked once before the first batch
        self.embedding_model = config.embedding_model  # None: retrieval that would embed uses BM25, named so

    # -- public -----------------------------------------------------------------------
    def judge_many(self, requests: Iterable[JudgmentRequest]) -> list[Judgment]:
        """Prepared chunk by chunk on the calling thread, each chunk sent on the shared loop as soon as it
        is ready, so the first request leaves while the rest are prepared, and never more than about twice
        the concurrency prepared ahead of the answers (a run's prompts are not all held at once). Safe to
        call from several threads at once: they share the endpoint's concurrency.

        `requests` may be an iterator (`streams_requests`): a caller that makes its requests as it reads
        its input has the first ones answered while it reads the rest."""
        return list(self._judged(requests, promptly=False))

    def judge_each(self, requests: Iterable[JudgmentRequest]) -> Iterator[Judgment]:
        """As `judge_many`, one judgment at a time in the requests' order, each as soon as it and those
        before it are answered: the caller works on the first answers while later ones are asked. The
        batch's answers and ledger rows are in the database once the last judgment is taken."""
        return self._judged(requests, promptly=True)

    def _judged(self, requests: Iterable[JudgmentRequest], promptly: bool) -> Iterator[Judgment]:
        """The judgments in order; `promptly`: each handed back as its request is answered (the caller acts
        on each), else a chunk's once all of them are (the caller only gathers them: it is woken less)."""
        pending = _chunks(requests)
        first = next(pending, None)
        if first is None:
            return
        self.context_tokens()
        batch, room = _Batch(self, self._endpoint()), self._asked_ahead()
        session = self.calls.store.session() if self.calls else nullcontext()
        chunks: list[tuple[list[PreparedCall], Any, list[Future]]] = []
        with session:
            interrupted = True
            try:
                ahead = max(2, -(-2 * self.config.concurrency // PREPARE_CHUNK))
                taken = 0  # chunks whose judgments the caller has
                for chunk in chain([first], pending):
                    METER.expect(len(chunk))
                    # the endpoint first: the caller has the answers while this chunk would wait for room
                    # (or once too many are held), so it never works on them while a request could leave
                    while taken < len(chunks) and chunks[taken][1].done() and (
                            len(chunks) - taken >= 2 * ahead or room.would_wait(len(chunk))
                            or len(chunks) >= ahead and not chunks[-ahead][1].done()):
                        yield from self._judgments_of(*chunks[taken], promptly)
                        taken += 1
                    if len(chunks) >= ahead:  # prepared prompts wait in memory: only enough to keep slots busy
                        chunks[-ahead][1].result()
                    held = room.take(len(chunk))
                    try:
                        prepared = [self._prepare(r) for r in chunk]
                        hits = self.calls.cached([p.cache_key for p in prepared]) if self.calls else {}
                        each = [Future() for _ in prepared]
                        future = JUDGE_LOOP.submit(batch.judge_chunk(prepared, hits, held.one, each))
                    except BaseException:
                        held.rest()
                        raise
                    future.add_done_callback(lambda _, held=held: held.rest())  # ended, failed or cancelled
                    chunks.append((prepared, future, each))
                for prepared, future, each in chunks[taken:]:
                    yield from self._judgments_of(prepared, future, each, promptly)
                interrupted = False
            finally:
                if interrupted:
                    for _, future, _ in chunks:
                        future.cancel()
                JUDGE_LOOP.run(batch.close(interrupted))
                if batch.writer is not None:
                    batch.writer.flush()  # this batch's answers and ledger rows are in the database

    def _judgments_of(self, prepared: list[PreparedCall], future: Any, each: list[Future],
                      promptly: bool) -> Iterator[Judgment]:
        """The chunk's judgments in order: `promptly`, each as soon as its request is answered."""
        if not promptly:
            yield from (self._judgment(p, o) for p, o in zip(prepared, future.result()))
            return
        for p, its in zip(prepared, each):
            if not its.done():
                wait([its, future], return_when=FIRST_COMPLETED)
                if not its.done():
                    future.result()  # the chunk was cancelled or failed before this request ended: raises
            yield self._judgment(p, its.result())

    def _endpoint_key(self) -> tuple:
        c = self.config
        key = ("chat", c.base_url, c.api_key, c.timeout_s, c.mode, c.concurrency, c.requests_per_minute,
               c.tokens_per_minute)
        if c.uses_worker:  # the worker retries and waits by its own copy of the settings
            key += ("worker", c.worker_processes, c.seed, c.deadline_s, c.max_attempts, c.validation_retries,
                    c.backoff_base_s, c.backoff_cap_s)
        return key

    def _asked_ahead(self) -> AskedAhead:
        """What every judge of this endpoint may have asked ahead of its answers: enough to keep its slots
        busy while chunks end at different times (twice the concurrency, and two chunks)."""
        limit = 2 * self.config.concurrency + 2 * PREPARE_CHUNK
        return JUDGE_LOOP.shared(("asked ahead", *self._endpoint_key()), lambda: AskedAhead(limit, PREPARE_CHUNK))

    def _endpoint(self) -> Endpoint:
        """The clients and limits every judge of this endpoint shares in this process."""
        c = self.config
        key = self._endpoint_key()

        def make() -> Endpoint:
            if c.uses_worker:  # its processes have the clients and the limits (these two stay unused)
                shares = c.worker_shares()
                return Endpoint([], asyncio.Semaphore(c.concurrency), RateLimiter(None, None),
                                worker=WorkerPool(WORKER_MAIN, shares, [share.concurrency for share in shares]))
            from .openai_calls import endpoint_of  # openai and instructor: only where calls are sent

            return endpoint_of(c)

        return JUDGE_LOOP.shared(key, make)

    def context_tokens(self) -> int | None:
        """The model's context window (asked once), for callers that size their requests to fit it."""
        if self.window is None:
            self.window = known_window(self.config.base_url, self.config.model, self.config.api_key)
        return self.window.tokens

    def embed(self, texts: Sequence[str], labels: Mapping[str, str] | None = None) -> Embeddings:
        """Vectors of `texts` by the configured embedding model, cached; see judges/embeddings.py."""
        session = self.calls.store.session() if self.calls else nullcontext()
        with session:
            return embed_texts(self.config, self.calls, self.stats, texts, labels)

    def cache_key(self, request: JudgmentRequest) -> str:
        return self._prepare(request).cache_key

    # -- internals --------------------------------------------------------------------
    def room_for(self, request: JudgmentRequest) -> int | None:
        """Tokens of the model's context this request leaves unused with its answer budget (None: unknown)."""
        if self.context_tokens() is None:
            return None
        return self.window.room_for_answer(prompt_tokens(render(request.template, dict(request.variables)),
                                                         len(request.images))) - self._answer_budget(request)

    def _answer_budget(self, request: JudgmentRequest) -> int:
        return answer_budget(request.response_model, request.variables, request.template, request.answer_tokens,
                             self.config.max_tokens)

    def _fitted(self, request: JudgmentRequest) -> JudgmentRequest:
        """The request with its `fit` variables cut, in order, until prompt and answer fit the window."""
        if not request.fit or self.window is None or self.window.tokens is None:
            return request
        variables = dict(request.variables)
        for name in request.fit:
            over = -self.room_for(replace(request, variables=variables))
            if over <= 0:
                break
            text = str(variables[name])
            kept = cut_to_tokens(text, prompt_tokens(text) - over - CUT_NOTE_TOKENS)
            variables[name] = kept + (f"\n[... cut to fit the judge model's context: {len(kept)} of {len(text)} "
                                      "characters]")
        return replace(request, variables=variables)

    def _prepare(self, request: JudgmentRequest) -> PreparedCall:
        _, template_hash = load_template(request.template)
        request = self._fitted(request)
        text = render(request.template, dict(request.variables))
        model = self.config.model_for(bool(request.images))
        max_tokens = self._answer_budget(request)
        temperature = self.config.temperature_for(request.temperature)
        identity = {
            "model": model, "template_hash": template_hash, "messages": [{"role": "user", "content": text}],
            "params": {"temperature": temperature, "seed": self.config.seed, "mode": self.config.mode},
            "schema": model_schema(request.response_model),
        }  # not max_tokens: an answer that fits a smaller budget stays valid under a larger one
        if request.images:  # an image is its content hash in the key (not its bytes, nor its name)
            identity["images"] = [image.sha256 for image in request.images]
        if request.run > 1:  # a repeated run asks again (run 1 keeps the key it always had)
            identity["run"] = request.run
        key = hashlib.sha256(json.dumps(identity, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
        prepared = PreparedCall(request, [_user_message(text, request)], template_hash, key, len(text), model,
                             max_tokens, temperature, sum(len(image.data) for image in request.images))
        room = self.window.room_for_answer(prompt_tokens(text, len(request.images))) if self.window else None
        if room is not None and room < min(FLOOR, max_tokens):
            prepared.too_long = (f"prompt of ~{self.window.tokens - room} tokens exceeds the model's context of "
                                 f"{self.window.tokens} ({self.window.source}) with room for an answer")
        elif room is not None:
            prepared.max_tokens = min(max_tokens, room)  # the answer may take what the prompt leaves
        return prepared

    def _cost(self, p: PreparedCall, outcome: CallOutcome) -> float | None:
        """At the price of the model asked (a vision model without a price is unpriced: NULL, not
        the text model's price)."""
        if outcome.cache_hit:
            return 0.0
        price = self.config.prices.get(p.model)
        return price.cost(outcome.tokens_in, outcome.tokens_out) if price else None

    def _account(self, p: PreparedCall, o: CallOutcome) -> LedgerRow:
        """Count one ended request in the stats; its ledger row."""
        cost = self._cost(p, o)
        image_bytes = _image_bytes_sent(p, o)
        self.stats.requests += 1
        self.stats.cache_hits += o.cache_hit
        self.stats.calls += not o.cache_hit
        self.stats.failures += o.answer is None
        self.stats.validation_retries += o.validation_retries
        self.stats.tokens_in += o.tokens_in
        self.stats.tokens_out += o.tokens_out
        self.stats.add_cost(cost)
        self.stats.image_bytes += image_bytes
        labels = p.request.labels
        return LedgerRow(
            call_id=str(uuid.uuid4()), called_at=datetime.now(timezone.utc).replace(tzinfo=None),
            run_id=labels.get("run_id"), asset=labels.get("asset"),
            system=labels.get("system"), task=labels.get("task"), judge_id=self.judge_id,
            model=p.model, template=p.request.template, template_hash=p.template_hash,
            cache_key=p.cache_key, cache_hit=o.cache_hit,
            outcome="cache_hit" if o.cache_hit
            else ("ok" if o.answer is not None else o.na_reason or "pipeline_failure"),
            attempts=o.attempts, validation_retries=o.validation_retries, tokens_in=o.tokens_in,
            tokens_out=o.tokens_out, cost=cost, latency_s=o.latency_s, error=redact(o.ledger_error(), self.config.api_key),
            image_bytes=image_bytes, image_tokens=o.image_tokens, wait_s=o.wait_s)

    def _judgment(self, p: PreparedCall, o: CallOutcome) -> Judgment:
        provenance = Provenance(
            judge_id=self.judge_id, template=p.request.template, template_hash=p.template_hash,
            model=p.model, temperature=p.temperature, seed=self.config.seed,
            tokens_in=o.tokens_in, tokens_out=o.tokens_out, cost=self._cost(p, o) or 0.0,
            latency_s=o.latency_s, cache_hit=o.cache_hit, cache_key=p.cache_key)
        return Judgment(answer=o.answer, provenance=provenance,
                        na_reason=None if o.answer is not None else (o.na_reason or "pipeline_failure"),
                        error=o.error)


def _user_message(text: str, request: JudgmentRequest) -> dict[str, Any]:
    """The prompt as one user message; a visual request's content is a list: the text, then each
    image as a base64 data URL, in order."""
    if not request.images:
        return {"role": "user", "content": text}
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for image in request.images:
        parts.append({"type": "image_url", "image_url": {"url": data_url(image.data, image.mime)}})
    return {"role": "user", "content": parts}


def _image_bytes_sent(p: PreparedCall, o: CallOutcome) -> int:
    """Image bytes that went over the wire: each HTTP request (a retry or re-ask too) carries them all."""
    if o.cache_hit or not p.image_bytes:
        return 0
    return p.image_bytes * len(o.trail)


def _from_cache(p: PreparedCall, answer_json: str) -> CallOutcome:
    try:
        return CallOutcome(p.request.response_model.model_validate_json(answer_json), cache_hit=True)
    except ValidationError as exc:  # the response model changed under the same key: treat as absent
        return CallOutcome(None, na_reason="pipeline_failure", error=f"cached answer no longer valid: {exc}")
