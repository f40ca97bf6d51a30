"""A run's progress as the user sees it: partitions done / due per step, judge requests done /
expected, tokens and cost so far, an ETA.

On a terminal a live table (rich) redrawn a few times a second; otherwise (a log file, CI, a pipe) one
line per step as it ends, so a long run is never silent and a log stays readable. Fed by the runner
(steps and materialisations from Dagster's events) and by the judge meter (`judges/meter.py`).
No Dagster here."""
from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable, TextIO

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from .judges.meter import METER, JudgeMeter, MeterReading


@dataclass
class StepCount:
    due: int = 0
    done: int = 0
    running: bool = False
    failed: bool = False
    seconds: float = 0.0
    started: float | None = None


class RunProgress:
    def __init__(self, out: TextIO | None = None, live: bool | None = None, meter: JudgeMeter = METER,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.console = Console(file=out or sys.stdout, highlight=False, soft_wrap=True)
        self.live = self.console.is_terminal if live is None else live
        self.meter, self.clock = meter, clock
        self.steps: dict[str, StepCount] = {}
        self._lock = threading.Lock()
        self._started = clock()
        self._meter_at_start = meter.read()
        self._meter_at_step: dict[str, MeterReading] = {}
        self._display: Live | None = None

    # -- what the runner reports ---------------------------------------------------------------
    def add_due(self, step: str, partitions: int) -> None:
        with self._lock:
            self.steps.setdefault(step, StepCount()).due += partitions

    def started(self, step: str) -> None:
        with self._lock:
            count = self.steps.setdefault(step, StepCount())
            count.running, count.started = True, self.clock()
            self._meter_at_step[step] = self.meter.read()

    def materialised(self, step: str, partitions: int = 1) -> None:
        with self._lock:
            self.steps.setdefault(step, StepCount()).done += partitions

    def ended(self, step: str, ok: bool) -> None:
        with self._lock:
            count = self.steps.setdefault(step, StepCount())
            count.running, count.failed = False, count.failed or not ok
            if count.started is not None:
                count.seconds += self.clock() - count.started
            spent = self.meter.read().minus(self._meter_at_step.pop(step, self.meter.read()))
        if not self.live:
            judge = f"; judge {spent.done} request(s){_spend(spent)}" if spent.done else ""
            self.say(f"  step {step}: {count.done}/{count.due} partition(s) {'done' if ok else 'FAILED'} "
                     f"in {count.seconds:.1f}s{judge} | {self.status_line()}")

    def say(self, line: str) -> None:
        """A line of its own (above the live table on a terminal)."""
        self.console.print(Text(line))

    # -- what is shown ---------------------------------------------------------------------------
    def totals(self) -> tuple[int, int]:
        with self._lock:
            return sum(s.done for s in self.steps.values()), sum(s.due for s in self.steps.values())

    def eta_seconds(self) -> float | None:
        """The time left if the partitions still due take as long as the ones done; None before any
        is done."""
        done, due = self.totals()
        if not done or done >= due:
            return None
        return (self.clock() - self._started) * (due - done) / done

    def status_line(self) -> str:
        done, due = self.totals()
        judge = self.meter.read().minus(self._meter_at_start)
        parts = [f"{done}/{due} partition(s)"]
        if judge.expected or judge.done:
            cached = f", {judge.cache_hits} cached" if judge.cache_hits else ""
            failed = f", {judge.failures} failed" if judge.failures else ""
            parts.append(f"judge {judge.done}/{judge.expected} request(s){cached}{failed}{_spend(judge)}")
        parts.append(f"elapsed {_duration(self.clock() - self._started)}")
        eta = self.eta_seconds()
        parts.append(f"ETA {_duration(eta)}" if eta is not None else "ETA -")
        return " | ".join(parts)

    def render(self) -> Group:
        table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
        for column, justify in (("step", "left"), ("partitions", "right"), ("", "left")):
            table.add_column(column, justify=justify)
        with self._lock:
            rows = [(name, s.done, s.due, s.running, s.failed) for name, s in self.steps.items()]
        for name, done, due, running, failed in rows:
            state = "FAILED" if failed else "running" if running else "done" if due and done >= due else ""
            table.add_row(name, f"{done}/{due}", state)
        return Group(table, Text(self.status_line()))

    def __enter__(self) -> "RunProgress":
        if self.live:
            self._display = Live(get_renderable=self.render, console=self.console, refresh_per_second=4,
                                 transient=False, redirect_stdout=False, redirect_stderr=False)
            self._display.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._display is not None:
            self._display.stop()
            self._display = None
        elif self.steps:
            self.say(self.status_line())


def _spend(reading: MeterReading) -> str:
    if not (reading.tokens_in or reading.tokens_out or reading.cost or reading.unpriced):
        return ""
    if reading.unpriced and not reading.cost:
        cost = "cost unknown (no price for the model: DREVAL_JUDGE_PRICES)"
    else:
        cost = f"cost ${reading.cost:.4f}" + (f" + {reading.unpriced} unpriced call(s)" if reading.unpriced else "")
    return f", tokens {_count(reading.tokens_in)} in / {_count(reading.tokens_out)} out, {cost}"


def _count(n: int) -> str:
    return f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1e3 else str(n)


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
