"""Independent pieces of work that each ask a judge, run at once when the judge can answer several
batches together (`Judge.parallel_batches`: an endpoint, whose concurrency limit is shared by all of
them), else one after another. Results keep the pieces' order, so rows and cache keys do not change."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Callable, Iterator, Sequence, TypeVar

from .judge_loop import JUDGE_LOOP

T = TypeVar("T")


def each(judge: object, pieces: Sequence[Callable[[], T]]) -> list[T]:
    """Every piece's result, in order. In parallel, one pool for all of them: the endpoint sees the
    requests of every piece at once instead of waves that each wait for their slowest answer."""
    done = dict(as_done(judge, pieces))
    return [done[index] for index in range(len(pieces))]


def as_done(judge: object, pieces: Sequence[Callable[[], T]]) -> Iterator[tuple[int, T]]:
    """(index, result) of each piece as it ends, so a caller can write one piece's rows while the others
    still wait on the judge; in order when the judge answers one batch at a time (see `each`)."""
    if len(pieces) < 2 or not getattr(judge, "parallel_batches", False):
        for index, piece in enumerate(pieces):
            yield index, piece()
        return
    with ThreadPoolExecutor(max_workers=len(pieces), thread_name_prefix="dreval-judgments") as pool:
        futures = {pool.submit(piece): index for index, piece in enumerate(pieces)}
        try:
            for future in as_completed(futures):
                yield futures[future], future.result()
        except BaseException:
            # interrupted, one piece failed, or the caller stopped: the others' requests stop too (each
            # writes what it received)
            for future in futures:
                future.cancel()
            JUDGE_LOOP.cancel_requests()
            raise
