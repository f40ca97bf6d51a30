"""Work on a thread of its own, its outcome as a future."""
from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any, Callable


def in_background(work: Callable[..., Any], *args: Any, name: str = "dreval-background") -> Future:
    """`work(*args)` on a daemon thread named `name`; its result, or its exception, from `.result()`.
    A daemon: work nobody waits for any more (a head start an interrupted run never takes) does not
    hold the process's exit."""
    future: Future = Future()

    def run() -> None:
        try:
            future.set_result(work(*args))
        except BaseException as exc:  # noqa: BLE001 - the caller reads it from the future
            future.set_exception(exc)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future
