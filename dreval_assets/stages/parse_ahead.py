"""A slice's `parsed_reports` made before its run, while the slice before it waits on the judge.

A block over `DREVAL_RUN_PARTITIONS` runs as slices, one Dagster run after another; between two of
them the endpoint had nothing to do while the next slice parsed its reports, asked for their
statements and grounded them (~10 s of one core at 250 partitions). The runner starts that work for
the next slice on a thread as soon as the current slice's judge step starts (`start`); the next
slice's `parsed_reports` step takes it (`take`) when it was made from the very reports frame the step
read, and makes its frames itself otherwise. Its judge requests are the step's own (same prompts,
cache keys and ledger labels: the run they are made for is known before it starts, `runner.Launch.run_id`),
so nothing is asked twice either way."""
from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Callable, Iterable

import polars as pl

from ..background import in_background

Made = tuple[dict[str, pl.DataFrame], dict]  # the step's frames, and the figures its metadata records


class ParsedAhead:
    """At most one slice's frames made ahead per key set; taken once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next: tuple[tuple[frozenset, str | None], Future] | None = None  # partitions and run: what is made

    def start(self, keys: Iterable[tuple[str, str]], make: Callable[[], tuple[pl.DataFrame, Made] | None],
              run_id: str | None = None) -> None:
        """`make()` on a thread of its own for the run `run_id` (its requests' ledger rows name it): (the
        reports frame it read, what it made), or None when the slice's reports cannot be read ahead (a
        system that writes its reports in the run)."""
        future = in_background(make, name="dreval-parse-ahead")
        with self._lock:
            self._next = ((frozenset(keys), run_id), future)  # an earlier slice's, never taken, is dropped

    def take(self, keys: Iterable[tuple[str, str]], reports: pl.DataFrame, run_id: str | None = None) -> Made | None:
        """What was made ahead for exactly these partitions of this run from exactly these reports
        (waiting for it if it is still being made), or None: the step makes its own."""
        with self._lock:
            if self._next is None or self._next[0] != (frozenset(keys), run_id):
                return None
            future, self._next = self._next[1], None
        try:
            found = future.result()
        except Exception:  # noqa: BLE001 - only a head start: the step makes its frames and says what fails
            return None
        if found is None:
            return None
        read, made = found
        return made if _same(read, reports) else None


def _same(read: pl.DataFrame, reports: pl.DataFrame) -> bool:
    order = ["system", "task"]
    return read.columns == reports.columns and read.sort(order).equals(reports.sort(order))


PARSED_AHEAD = ParsedAhead()
