"""The HTTP side of an endpoint's judge calls in a process of its own, so the run's own work and the
calls' client work (openai, instructor, httpx, pydantic: ~2.4 ms of CPU a request) use two cores instead
of sharing one interpreter lock. At concurrency 32-64 that work is what kept the endpoint waiting.

The run's process still prepares every request, reads and writes the cache and the ledger, and counts;
the worker only sends, retries and validates, with the endpoint's clients, its concurrency limit and
its rate limiter (so `DREVAL_JUDGE_CONCURRENCY` still bounds what is in flight), and hands back each
call's outcome. Used when `DREVAL_JUDGE_WORKER` says so (`auto`: from concurrency 16). One process's
client work saturates its core at ~400 requests a second, so an endpoint's calls may go to several
(`WorkerPool`, `DREVAL_JUDGE_WORKERS`), each with its share of the endpoint's limits. The worker ignores
Ctrl-C (it reaches the whole process group): the run cancels its requests by message, and the worker
ends when the run's process does (its pipe closes)."""
from __future__ import annotations

import asyncio
import gc
import importlib
import itertools
import multiprocessing
import queue
import signal
import threading
from collections import deque
from concurrent.futures import Future
from multiprocessing.reduction import ForkingPickler
from dataclasses import replace
from typing import Any, Awaitable, Callable

from pydantic import BaseModel

from .judge_loop import ENDPOINT_FULL, JUDGE_LOOP

READY = -1  # the call id of the worker's message that it serves
FRAME_MESSAGES = 256  # at most this many messages in one write of a pipe
ENDED = "the judge worker process ended (see the run's log for why); run again to ask what it did not answer"


class WorkerEnded(RuntimeError):
    """The worker process is gone: the batch fails; what was answered before is in the cache."""


class JudgeWorker:
    """The run's side of one worker process (of an endpoint's `WorkerPool`), called from the shared judge loop."""

    def __init__(self, main: Callable[[Any, Any], None] | str, config: Any,
                 on_ready: Callable[[], None] | None = None) -> None:
        """`main(conn, config)`: the worker's body, a module-level function that calls `serve`, or its
        name ("module:function"), so the run's process need not import the worker's modules. `on_ready`
        is called (from the reader thread) once the worker serves."""
        # named, not pickled: unpickling a function imports its module before any code of ours runs
        where = main if isinstance(main, str) else f"{main.__module__}:{main.__qualname__}"
        early = _EARLY.pop(where, None)
        if early is not None:  # started with the command: it has loaded its modules and waits for its settings
            self._process, self._conn = early
            self._conn.send((where, config, modules_requests_name()))
        else:
            context = multiprocessing.get_context("spawn")  # never fork a process holding DuckDB and threads
            self._conn, child = context.Pipe()
            self._process = context.Process(target=_start, args=(where, child, config, modules_requests_name()),
                                             name="dreval-judge-worker", daemon=True)
            self._process.start()
            child.close()
        self._ids = itertools.count()
        self._waiting: dict[int, tuple[asyncio.AbstractEventLoop | None, asyncio.Future | Future]] = {}
        self._ended = False
        self._ready = False
        self._on_ready = on_ready
        self._writer = PipeWriter(self._conn, self._worker_ended, "dreval-judge-worker-writer")
        threading.Thread(target=self._receive, name="dreval-judge-worker-reader", daemon=True).start()

    async def call(self, prepared: Any) -> Any:
        """The outcome of one prepared request, as `openai_calls.EndpointCalls.call` gives it."""
        loop = asyncio.get_running_loop()
        call_id = next(self._ids)
        future = loop.create_future()
        self._waiting[call_id] = (loop, future)
        try:
            # what the worker needs: the rendered messages (images in them as data URLs), not the variables
            # they were rendered from nor the images' bytes again (a third of what crossed the pipe)
            self._send(("call", call_id, replace(prepared, request=replace(prepared.request, variables={},
                                                                            images=()))))
            return await future
        except asyncio.CancelledError:
            try:
                self._send(("cancel", call_id))
            except WorkerEnded:
                pass
            raise
        finally:
            self._waiting.pop(call_id, None)

    def check(self, timeout_s: float) -> Any:
        """What the worker's `check` returns (the judge check, asked from the worker's process so the run's
        need not load the client); its error raised here, `WorkerEnded` if the worker is gone."""
        call_id = next(self._ids)
        future: Future = Future()
        self._waiting[call_id] = (None, future)
        try:
            self._send(("check", call_id))
            return future.result(timeout_s)
        finally:
            self._waiting.pop(call_id, None)

    def close(self) -> None:
        """End the worker (it also ends with the run's process)."""
        try:
            self._send(("stop",))  # it closes its end, which ends our reader (closing ours would not wake it)
        except WorkerEnded:
            pass
        self._process.join(5)
        if self._process.is_alive():
            self._process.kill()
        self._conn.close()

    @property
    def pid(self) -> int | None:
        return self._process.pid

    @property
    def outstanding(self) -> int:
        """Calls sent and not yet answered."""
        return len(self._waiting)

    @property
    def ended(self) -> bool:
        return self._ended

    @property
    def ready(self) -> bool:
        """The worker has made its clients and serves (until then what it is sent waits in its pipe)."""
        return self._ready

    def _send(self, message: tuple) -> None:
        """Queued for the writer thread: the judge loop never waits on a full pipe (a worker busy with its
        calls reads it late; at concurrency 64 the loop spent ~3.8 s of a run blocked in pipe writes)."""
        if self._ended:
            raise WorkerEnded(ENDED)
        self._writer.put(message)

    def _receive(self) -> None:
        while True:
            try:
                answers = received(self._conn)
            except (EOFError, OSError):  # the worker died
                self._worker_ended()
                return
            settled: dict[Any, list[tuple[Any, bool, Any]]] = {}  # per loop: settled in one turn of it
            for call_id, ok, value in answers:
                if call_id == READY:
                    self._ready = True
                    if self._on_ready is not None:
                        self._on_ready()
                    continue
                waiting = self._waiting.get(call_id)
                if waiting is not None:
                    loop, future = waiting
                    settled.setdefault(loop, []).append((future, ok, value))
            for loop, futures in settled.items():
                _settle_all_from(loop, futures)

    def _worker_ended(self) -> None:
        """Every waiting call fails, so nothing hangs (from the reader, or the writer's broken pipe)."""
        self._ended = True
        error = WorkerEnded(ENDED)
        for loop, future in list(self._waiting.values()):
            _settle_all_from(loop, [(future, False, error)])


class WorkerPool:
    """An endpoint's worker processes, each started with its share of the endpoint's limits (`shares`:
    the configurations, `slots`: each one's concurrency), so together they keep what one would. The first
    starts at once (it also sends the judge check); each next one only when the calls asked for exceed
    the slots of those started, so a run with few requests never pays another process's start and memory.
    A worker is handed at most twice its slots (what it sends, and as many waiting to follow at once), the
    rest wait here and go to whichever worker has room first; a worker still starting has none (but the
    first), so no call waits on another process's start while a started one could send it."""

    def __init__(self, main: Callable[[Any, Any], None] | str, shares: list[Any], slots: list[int]) -> None:
        if not shares or len(shares) != len(slots):
            raise ValueError("a worker pool needs one share of the limits per worker")
        self._main, self._shares, self._slots = main, shares, slots
        self._waiters: deque[asyncio.Future] = deque()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._workers = [self._started(0)]

    async def call(self, prepared: Any) -> Any:
        worker = await self._worker_with_room()
        try:
            return await worker.call(prepared)
        finally:
            self._wake_one()

    def check(self, timeout_s: float) -> Any:
        return self._workers[0].check(timeout_s)

    def close(self) -> None:
        for worker in self._workers:
            worker.close()

    @property
    def pid(self) -> int | None:
        """The first worker's process (the one that sends the check)."""
        return self._workers[0].pid

    @property
    def pids(self) -> list[int | None]:
        return [worker.pid for worker in self._workers]

    def _started(self, index: int) -> JudgeWorker:
        return JudgeWorker(self._main, self._shares[index], on_ready=self._wake_all)

    async def _worker_with_room(self) -> JudgeWorker:
        self._loop = asyncio.get_running_loop()
        while True:
            started = len(self._workers)
            asked = sum(worker.outstanding for worker in self._workers) + len(self._waiters)
            if started < len(self._shares) and asked >= sum(self._slots[:started]):
                self._workers.append(self._started(started))
            live = [i for i, worker in enumerate(self._workers) if not worker.ended]
            if not live:
                return self._workers[0]  # its call raises WorkerEnded
            room = [i for i in live if (i == 0 or self._workers[i].ready)
                    and self._workers[i].outstanding < 2 * self._slots[i]]
            if room:
                return self._workers[min(room, key=lambda i: self._workers[i].outstanding / self._slots[i])]
            waiter = self._loop.create_future()
            self._waiters.append(waiter)
            ENDPOINT_FULL.set()
            try:
                await waiter  # a waiter is taken off the queue when it is woken
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._wake_one()  # the room it was woken for goes to the next
                elif waiter in self._waiters:
                    self._waiters.remove(waiter)
                raise

    def _wake_one(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _wake_all(self) -> None:
        """A worker is ready (called from its reader thread): every waiting call looks for room again."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._wake_waiting)

    def _wake_waiting(self) -> None:
        while self._waiters:
            self._wake_one()


class PipeWriter:
    """One end of a pipe written by a thread of its own, in the order messages were put: a caller on an
    event loop hands a message over and goes on, whether or not the other process is reading. What was put
    meanwhile leaves in one frame (read with `received`): each write costs the thread a turn at the
    interpreter lock, which a dozen threads preparing requests at a judge step's start made ~60 ms long,
    so one message a turn held hundreds of prepared requests in this process."""

    def __init__(self, conn: Any, on_broken: Callable[[], None], name: str) -> None:
        self._conn = conn
        self._on_broken = on_broken
        self._outbox: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._write, name=name, daemon=True).start()

    def put(self, message: tuple) -> None:
        """Pickled here, so a message that cannot be is the caller's error, as from `Connection.send`."""
        self._outbox.put(bytes(ForkingPickler.dumps(message)))

    def _write(self) -> None:
        while True:
            frame = [self._outbox.get()]
            while len(frame) < FRAME_MESSAGES:
                try:
                    frame.append(self._outbox.get_nowait())
                except queue.Empty:
                    break
            try:
                self._conn.send_bytes(ForkingPickler.dumps(frame))
            except Exception:  # noqa: BLE001 - a closed or broken pipe: the other side is gone; never a hang
                self._on_broken()
                return


def received(conn: Any) -> list[tuple]:
    """The messages of the next frame a `PipeWriter` wrote (EOFError or OSError: the writer's end is gone)."""
    frame = conn.recv_bytes()
    with _LOADING:
        return [ForkingPickler.loads(message) for message in ForkingPickler.loads(frame)]


def _settle_all_from(loop: asyncio.AbstractEventLoop | None, settled: list[tuple[Any, bool, Any]]) -> None:
    """Settle asyncio futures in one turn of their loop, or threads' futures (loop None) here."""
    if loop is not None:
        loop.call_soon_threadsafe(_settle_all, settled)
    else:
        _settle_all(settled)


def _settle_all(settled: list[tuple[Any, bool, Any]]) -> None:
    for future, ok, value in settled:
        _settle(future, ok, value)


def _settle(future: asyncio.Future, ok: bool, value: Any) -> None:
    if future.done():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


def modules_requests_name() -> tuple[str, ...]:
    """Our modules, loaded in this process, that define a pydantic model a request may carry as the form
    of its answer (dagster's configuration models aside): unpickling the worker's first request of each
    would otherwise load its module, and with it the benchmark's package, on the worker's reading thread
    (~0.9 s of imports at the judge step's start, when every slot should fill)."""
    found, seen = set(), set()
    classes = list(BaseModel.__subclasses__())
    while classes:
        cls = classes.pop()
        if cls in seen:
            continue
        seen.add(cls)
        classes.extend(cls.__subclasses__())
        if cls.__module__.split(".")[0] == OUR_PACKAGE and not any(
                base.__module__.split(".")[0] == "dagster" for base in cls.__mro__):
            found.add(cls.__module__)
    return tuple(sorted(found))


OUR_PACKAGE = __name__.split(".")[0]
_TO_LOAD: list[str] = []  # the modules the worker loads once it serves (`modules_requests_name`)
# held while a frame is unpickled or one of those modules loads: two threads loading one package at once
# can each be handed it half made
_LOADING = threading.Lock()


def start_early(main: str) -> None:
    """Start the process of `main` ("module:function", a worker's body) before its settings are known:
    it loads its modules (~1 s of CPU for openai's client) while the command loads its own and plans, on
    the machine's other core, and the first `JudgeWorker` of that body takes it. Before, the worker began
    when the plan was made, and the run's process then waited ~0.5 s for the judge check it sends. The
    command's end kills a worker never taken (`end_early`)."""
    if main in _EARLY:
        return
    context = multiprocessing.get_context("spawn")
    conn, child = context.Pipe()
    process = context.Process(target=_wait_for_settings, args=(main, child), name="dreval-judge-worker",
                              daemon=True)
    process.start()
    child.close()
    _EARLY[main] = (process, conn)


_EARLY: dict[str, tuple[Any, Any]] = {}  # started by `start_early`, not yet taken: by body


def end_early() -> None:
    """End the early workers no `JudgeWorker` took (a command that judged nothing, or refused to) at once:
    one still loading its modules would hold the command's output open until it is done (~1 s)."""
    while _EARLY:
        process, conn = _EARLY.popitem()[1]
        process.kill()
        conn.close()


def _wait_for_settings(main: str, conn: Any) -> None:
    """An early worker's first code: its modules, then its settings from the `JudgeWorker` that takes it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the command's to handle
    gc.disable()
    importlib.import_module(main.split(":")[0])
    try:
        where, config, preload = conn.recv()
    except (EOFError, OSError):  # never taken: the command has ended
        return
    _start(where, conn, config, preload)


def _start(where: str, conn: Any, config: Any, preload: tuple[str, ...] = ()) -> None:
    """The worker process's first code: its modules load with the cyclic collector paused (~0.2 s of
    passes over objects that all live), then `main` runs; `serve` turns the collector on again, and loads
    `preload` on a thread of its own."""
    gc.disable()
    _TO_LOAD[:] = preload
    module, name = where.split(":")
    main = getattr(importlib.import_module(module), name)
    main(conn, config)


def serve(conn: Any, make_call: Callable[[], Callable[[Any], Awaitable[Any]]],
          check: Callable[[], Any] | None = None) -> None:
    """The worker: requests read on this thread, each called by `make_call()`'s function (made once, on
    the worker's event loop) and answered with its outcome; a check message runs `check()` on a thread
    of its own (its result or error is the answer)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    loop = JUDGE_LOOP.loop()
    call = asyncio.run_coroutine_threadsafe(_made(make_call), loop).result()
    # what exists now (modules, clients) lives as long as the worker: its collections need not walk it
    # again (a full one over openai's ~200k objects stalled every request in flight for ~0.2 s)
    gc.freeze()
    gc.enable()
    tasks: dict[int, asyncio.Task] = {}
    load_modules = _once(threading.Thread(target=_load_modules, name="dreval-judge-worker-modules", daemon=True).start)
    # answers leave by a thread of their own: the worker's loop never waits for the run to read them
    answers = PipeWriter(conn, lambda: None, "dreval-judge-worker-answers")
    answers.put((READY, True, None))

    def reply(call_id: int, ok: bool, value: Any) -> None:
        answers.put((call_id, ok, value))

    async def run(call_id: int, prepared: Any) -> None:
        try:
            outcome = await call(prepared)
            reply(call_id, True, outcome)
        except asyncio.CancelledError:
            pass
        except Exception as exc:  # noqa: BLE001 - handed to the caller, never lost in the worker
            reply(call_id, False, RuntimeError(f"{type(exc).__name__}: {exc}"))
        finally:
            tasks.pop(call_id, None)

    def start(call_id: int, prepared: Any) -> None:
        tasks[call_id] = loop.create_task(run(call_id, prepared))

    def run_check(call_id: int) -> None:
        try:
            if check is None:
                raise RuntimeError("this worker has no check")
            reply(call_id, True, check())
        except Exception as exc:  # noqa: BLE001 - handed to the caller, never lost in the worker
            reply(call_id, False, exc)
        finally:
            load_modules()

    def cancel(call_id: int) -> None:
        task = tasks.get(call_id)
        if task is not None:
            task.cancel()

    def on_loop(calls: list[tuple[int, Any]], cancels: list[int]) -> None:
        for call_id, prepared in calls:
            start(call_id, prepared)
        for call_id in cancels:
            cancel(call_id)

    while True:
        try:
            messages = received(conn)
        except (EOFError, OSError):  # the run's process ended
            return
        calls, cancels = [], []  # a frame's calls and cancels, handed to the loop in one turn, in order
        checked = False
        for message in messages:
            if message[0] == "call":
                calls.append((message[1], message[2]))
            elif message[0] == "check":
                checked = True
                threading.Thread(target=run_check, args=(message[1],), name="dreval-judge-check", daemon=True).start()
            elif message[0] == "cancel":
                cancels.append(message[1])
            elif message[0] == "stop":
                conn.close()
                return
        if calls or cancels:
            loop.call_soon_threadsafe(on_loop, calls, cancels)
        if not checked:  # a judge check's answer does not wait for the modules: `run_check` loads them after
            load_modules()  # once, after the first frame's calls


def _load_modules() -> None:
    """Load the modules requests will name, so that the worker's reading thread does not when their
    first requests arrive; then what they made is kept from the collector's passes, as the worker's
    first modules are (`serve`)."""
    for name in _TO_LOAD:
        with _LOADING:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - only a head start: a request that needs it says what is wrong
                pass
    gc.freeze()


def _once(do: Callable[[], None]) -> Callable[[], None]:
    """`do`, the first time the returned function is called, from whichever thread."""
    lock, done = threading.Lock(), []

    def first_time() -> None:
        with lock:
            if done:
                return
            done.append(True)
        do()

    return first_time


async def _made(make_call: Callable[[], Any]) -> Any:
    return make_call()
