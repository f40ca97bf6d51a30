"""Independent pieces of work that each ask a judge, run at once when the judge can answer several
batches together (`Judge.parallel_batches`: an endpoint, whose concurrency limit is shared by all of
them), else one after another. Results keep the pieces' order, so rows and cache keys do not change."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence, TypeVar

from .judge_loop import JUDGE_LOOP

T = TypeVar("T")


def each(judge: object, pieces: Sequence[Callable[[], T]]) -> list[T]:
    """Every piece's result, in order. In parallel, one pool for all of them: the endpoint sees the
    requests of every piece at once instead of waves that each wait for their slowest answer."""
    if len(pieces) < 2 or not getattr(judge, "parallel_batches", False):
        return [piece() for piece in pieces]
    with ThreadPoolExecutor(max_workers=len(pieces), thread_name_prefix="dreval-judgments") as pool:
        futures = [pool.submit(piece) for piece in pieces]
        try:
            return [future.result() for future in futures]
        except BaseException:
            # interrupted, or one piece failed: the others' requests stop too (each writes what it received)
            for future in futures:
                future.cancel()
            JUDGE_LOOP.cancel_requests()
            raise
