"""A second process for CPU work the command's own process would otherwise do alone on one core (the
leaderboard's plots): started ahead, warmed, and ended with the command however it ends.

Only the `dreval` command's own process starts one (`cli`): a library user or a test that runs in its
own process keeps every piece of work there. Whatever the helper cannot do (never started, its
process gone, an error) the caller does itself, so the helper changes when work is done, never what
it makes."""
from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from functools import partial
from typing import Any, Callable

ORPHAN_CHECK_S = 0.2  # how often the helper looks whether the process that started it is gone


class HelperProcess:
    """One spawned process, kept until `close` (or the starting process's end)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None
        self._ending: list[threading.Thread] = []  # shutdowns `close(wait=False)` left running
        # what was submitted, newest last: (the pool's future, the caller's, function, args)
        self._submitted: deque[tuple[Future, Future, Callable[..., Any], tuple]] = deque()

    def start(self, warm_up: Callable[[], Any] | None = None) -> None:
        """Start the process (once) and have it run `warm_up` (a module-level function) now."""
        with self._lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=_ready)
                self._pool.submit(warm_up or int)  # a process starts on its first task

    @property
    def started(self) -> bool:
        with self._lock:
            return self._pool is not None

    def submit(self, function: Callable[..., Any], *args: Any) -> Future | None:
        """`function(*args)` in the helper (a module-level function, picklable arguments), or None when
        there is no helper: the caller does it. The future is the caller's: a waiting caller may do the
        work here instead (`result_or_here`)."""
        with self._lock:
            pool = self._pool
        if pool is None:
            return None
        try:
            there = pool.submit(function, *args)
        except Exception:  # noqa: BLE001 - a broken or closed pool: the caller does the work
            self._drop(pool)
            return None
        mine: Future = Future()
        there.add_done_callback(partial(_settle_from, mine))
        with self._lock:
            self._forget_settled()
            self._submitted.append((there, mine, function, args))
        return mine

    def _forget_settled(self) -> None:
        """Calls whose outcome their caller has (or can take) are no longer kept, nor their arguments."""
        self._submitted = deque(entry for entry in self._submitted if not entry[1].done())

    def result_or_here(self, future: Future | None, function: Callable[..., Any], *args: Any) -> Any:
        """What `submit` started, or `function(*args)` done here when it was not started or failed
        (an error of `function` itself is raised here, as it would be without the helper). While it waits,
        this process does the newest work the helper has not begun, this one's included (the helper works
        from the oldest): at 10 x 10, 64, the helper was still grounding the first parse's statements ~0.8 s
        after their last answer while the command's process idled."""
        if future is None:
            return function(*args)
        while not future.done() and self._do_the_newest_here():
            pass
        try:
            return future.result()
        except Exception:  # noqa: BLE001 - done again here: a real error surfaces from this call
            with self._lock:
                pool = self._pool
            if pool is not None:
                self._drop(pool)
        return function(*args)

    def _do_the_newest_here(self) -> bool:
        """The newest submitted call the helper has not begun, done here; False when there is none."""
        while True:
            with self._lock:
                if not self._submitted:
                    return False
                there, mine, function, args = self._submitted.pop()
            if there.cancel():  # not begun there (the pool hands its process at most two calls ahead)
                break
        try:
            mine.set_result(function(*args))
        except BaseException as error:  # noqa: BLE001 - its caller's `result_or_here` does it again and raises
            mine.set_exception(error)
        return True

    def close(self, wait: bool = True) -> None:
        """End the process. A command that ends with `os._exit` calls this first (the pool's own exit hook
        does not run then). `wait=False` ends it on a thread, so the caller goes on while the process
        exits (~0.2 s); a later `close()` still waits for that."""
        with self._lock:
            pool, self._pool = self._pool, None
            self._forget_settled()
            if pool is not None:
                self._ending.append(threading.Thread(target=pool.shutdown, kwargs={"cancel_futures": True},
                                                     name="dreval-helper-shutdown", daemon=True))
                self._ending[-1].start()
            waiting, self._ending = (self._ending, []) if wait else ([], self._ending)
        for thread in waiting:
            thread.join()

    def _drop(self, pool: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._pool is pool:
                self._pool = None
        pool.shutdown(wait=False, cancel_futures=True)


def _ready() -> None:
    """The helper's start: Ctrl-C is the command's to handle (it reaches the whole process group), and it
    ends when the process that started it is gone, however that one ended (killed, `os._exit`: the
    pool's queue does not tell it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_end_when_orphaned, args=(os.getppid(),), name="dreval-helper-orphan-check",
                     daemon=True).start()


def _end_when_orphaned(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(ORPHAN_CHECK_S)
    os._exit(0)


def _settle_from(mine: Future, there: Future) -> None:
    """The caller's future takes the helper's outcome (not when the call was taken back to be done here)."""
    if there.cancelled() or mine.done():
        return
    error = there.exception()
    if error is not None:
        mine.set_exception(error)
    else:
        mine.set_result(there.result())
