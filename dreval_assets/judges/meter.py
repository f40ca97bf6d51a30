"""What the judges of this process have asked and spent so far, for a run's live progress.

Counted as each request ends (not when the ledger's small batches are written), from the same rows
the ledger keeps, so the progress line and `judge_ledger` agree. One meter per process: the CLI runs
its Dagster runs in process, so every judge a step makes reports here."""
from __future__ import annotations

import threading
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class MeterReading:
    expected: int = 0  # requests the judges were handed so far (a later step adds its own)
    done: int = 0  # requests ended: answered, served from the cache, or failed
    cache_hits: int = 0
    failures: int = 0
    tokens_in: int = 0  # sent and answered (not a cache hit's)
    tokens_out: int = 0
    cost: float = 0.0  # of the priced calls
    unpriced: int = 0  # calls whose model has no price: the cost above leaves them out

    def minus(self, earlier: "MeterReading") -> "MeterReading":
        return MeterReading(*(a - b for a, b in zip(_fields(self), _fields(earlier))))


def _fields(reading: MeterReading) -> tuple:
    return (reading.expected, reading.done, reading.cache_hits, reading.failures, reading.tokens_in,
            reading.tokens_out, reading.cost, reading.unpriced)


class JudgeMeter:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reading = MeterReading()

    def expect(self, requests: int) -> None:
        with self._lock:
            self._reading = replace(self._reading, expected=self._reading.expected + requests)

    def ended(self, *, cache_hit: bool, failed: bool, tokens_in: int, tokens_out: int, cost: float | None,
              requests: int = 1) -> None:
        with self._lock:
            r = self._reading
            self._reading = MeterReading(
                r.expected, r.done + requests, r.cache_hits + (requests if cache_hit else 0),
                r.failures + (requests if failed else 0),
                # tokens a cached answer once cost are not spent again
                r.tokens_in + (0 if cache_hit else tokens_in), r.tokens_out + (0 if cache_hit else tokens_out),
                r.cost + (cost or 0.0), r.unpriced + (cost is None and not cache_hit))

    def read(self) -> MeterReading:
        with self._lock:
            return self._reading


METER = JudgeMeter()
