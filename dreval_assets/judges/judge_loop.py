"""One event loop for every judge of the process, and per endpoint its HTTP clients, one concurrency
limit and one rate limiter, kept for the process's life.

A run's steps each make their own judge, and a step may ask from several threads (report judgments of
all templates at once): sharing the loop keeps connections alive between batches (no new clients, TLS
handshakes and connection pools per `judge_many`), and sharing the limits makes `DREVAL_JUDGE_CONCURRENCY`
the number of requests in flight to an endpoint, however many batches ask at once."""
from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Callable, Coroutine, Hashable, TypeVar

T = TypeVar("T")
STOP_WAIT_S = 10.0  # how long an interrupted caller waits for its batch to write what it received


class JudgeLoop:
    """An asyncio loop on a daemon thread; callers on any other thread hand it coroutines."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._shared: dict[Hashable, Any] = {}
        self._closing: list[threading.Thread] = []  # exits `close_workers(wait=False)` left to wait for

    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="dreval-judge-loop", daemon=True).start()
                self._loop = loop
            return self._loop

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop())

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """The coroutine's result, waited for on the calling thread. Interrupted (Ctrl-C, a step's
        interrupt), the coroutine is cancelled and given `STOP_WAIT_S` to finish its `finally`
        (the ledger and cache rows it holds are written) before the interrupt goes on."""
        ended = threading.Event()

        async def guarded() -> T:
            try:
                return await coro
            finally:
                ended.set()

        future = self.submit(guarded())
        try:
            return future.result()
        except BaseException:
            future.cancel()
            ended.wait(STOP_WAIT_S)
            raise

    def cancel_requests(self) -> None:
        """Cancel every batch's requests on the loop (an interrupt of the threads that asked for them)."""
        with self._lock:
            loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(lambda: [task.cancel() for task in asyncio.all_tasks(loop)])

    def close_workers(self, wait: bool = True) -> None:
        """End every endpoint's worker process and forget those endpoints (the next call starts anew).
        `wait=False`: they are told to stop and their exits (~0.2 s) are waited for on a thread, so the
        caller goes on; a later `close_workers()` waits for those too."""
        with self._lock:
            ended = {key: value for key, value in self._shared.items() if getattr(value, "worker", None) is not None}
            for key in ended:
                del self._shared[key]
            closing, self._closing = (self._closing, []) if wait else ([], self._closing)
        for endpoint in ended.values():
            if wait:
                endpoint.worker.close()
            else:
                closing_now = threading.Thread(target=endpoint.worker.close, name="dreval-judge-worker-close",
                                               daemon=True)
                closing_now.start()
                with self._lock:
                    self._closing.append(closing_now)
        for thread in closing:
            thread.join()

    def shared(self, key: Hashable, make: Callable[[], T]) -> T:
        """One object per key for the process (made on first use): an endpoint's client and limits."""
        with self._lock:
            if key not in self._shared:
                self._shared[key] = make()
            return self._shared[key]


# Set whenever a request has to wait for a free slot of its endpoint (all its slots busy, and as many
# handed to its worker to follow): from then on the endpoint is the limit, and the process has CPU to spare
# for work that would otherwise slow the judge step's start (defs/runner.py).
ENDPOINT_FULL = threading.Event()


class AskedAhead:
    """Requests the process's threads have handed one endpoint and not yet had back, at most `limit` (a
    chunk always goes when nothing is asked). Every thread that prepares requests (render, key, cache lookup) holds
    the interpreter lock while it does: a dozen of them at a step's start, each preparing its own chunks
    ahead, starved the loop and pipe threads that send what was already prepared (767 requests prepared
    in the judge step's first second at concurrency 64, 136 of them sent). A thread past the limit waits,
    lock released, until answers make room: each answer makes room for one request (`Held`), not its
    whole chunk's end (a chunk held until its slowest answer kept the room full while only 12-50 of 64
    slots were busy, at the judge step's start and end)."""

    def __init__(self, limit: int, chunk: int) -> None:
        self.limit, self.chunk, self.asked = limit, chunk, 0
        self._room = threading.Condition()

    def take(self, n: int) -> "Held":
        with self._room:
            while self._full(n):
                self._room.wait()
            self.asked += n
            if self.asked + self.chunk <= self.limit:
                self._room.notify()  # room for another waiting thread's chunk too
        return Held(self, n)

    def would_wait(self, n: int) -> bool:
        """Whether `take(n)` would wait for room now."""
        with self._room:
            return self._full(n)

    def _full(self, n: int) -> bool:
        """Under `_room`: no room for `n` more (a chunk always goes when nothing is asked)."""
        return bool(self.asked) and self.asked + n > self.limit

    def give(self, n: int) -> None:
        with self._room:
            self.asked -= n
            if self.asked + self.chunk <= self.limit or not self.asked:
                self._room.notify()


class Held:
    """One chunk's share of an `AskedAhead`: given back a request at a time as each is answered (`one`),
    and whatever is left once the chunk has ended, failed or been cancelled (`rest`). Either may be
    called from any thread, and nothing is given back twice."""

    def __init__(self, ahead: AskedAhead, n: int) -> None:
        self._ahead, self._left = ahead, n
        self._lock = threading.Lock()

    def one(self) -> None:
        self._give(1)

    def rest(self) -> None:
        self._give(None)

    def _give(self, n: int | None) -> None:
        with self._lock:
            n = self._left if n is None else min(n, self._left)
            self._left -= n
        if n:
            self._ahead.give(n)


@dataclass
class Endpoint:
    """What every judge of one endpoint shares: its clients, and the limits on what it sends. Requests
    take the clients in turn: httpcore scans every connection of its pool for each request it places
    (a readability check each), so one pool of 64 connections cost more CPU than the answers' parsing."""
    clients: list[Any]  # AsyncOpenAI clients, each with a small connection pool
    semaphore: asyncio.Semaphore
    limiter: Any  # RateLimiter
    turn: int = 0
    worker: Any = None  # a JudgeWorker: the calls are sent by its process, with its own clients and limits

    def client(self) -> Any:
        self.turn = (self.turn + 1) % len(self.clients)
        return self.clients[self.turn]


JUDGE_LOOP = JudgeLoop()
