"""An evaluation run's frames made on threads before its steps ask for them.

Dagster runs an evaluation run's steps one after another, and the judge step starts only once the
parse, the figures and the references are written, their metadata recorded and their checks run: at
concurrency 64 the endpoint waited ~5 s of every run for that. So the runner starts the chain those
steps make on a thread (`defs/ahead.py`: parsed reports, then their cited references, then the claim
verdicts and report judgments, the figures first found for the latter), as the command starts its runs
(the first evaluation) or launches a later one; each stage is made from the frames of the ones before,
and each step takes its stage's frames (`MadeAhead.take`) instead of making them. The next slice of a
sliced block has its parse made the same way while the slice before it is judged.

What is made is the step's own: the same functions, the same partitions in the same order, the same
requests (prompts, cache keys, ledger labels: a planned run's id is known before it starts), so
nothing is asked twice. A step takes only what was made for its run and partitions, and only after the
steps its inputs come from took theirs (the parse checks the reports frame it was made from against
the step's); anything else, or a stage that failed, and the step makes its own frames."""
from __future__ import annotations

import threading
from concurrent.futures import FIRST_COMPLETED, Future, wait
from typing import Any, Callable, Iterable, Sequence

import polars as pl

from ..judges.judge_loop import JUDGE_LOOP

# the stages in the order they are made; each step's inputs come from the stages before it
STAGES = ("parsed_reports", "report_images", "fetched_references", "claim_verdicts", "report_judgments")
NEEDS = {"parsed_reports": (), "report_images": ("parsed_reports",), "fetched_references": ("parsed_reports",),
         "claim_verdicts": ("parsed_reports", "fetched_references"),
         "report_judgments": ("parsed_reports", "report_images", "fetched_references")}
KEEP_RUNS = 2  # the run being evaluated and the next slice, parsed while it is judged


class Ahead:
    """One run's stages: each a future its maker fills once."""

    def __init__(self, keys: Sequence[tuple[str, str]], run_id: str) -> None:
        self.keys, self.run_id = tuple(keys), run_id
        self._made: dict[str, Future] = {stage: Future() for stage in STAGES}
        self.claimed: set[str] = set()  # the stages a maker has taken on
        self.taken: set[str] = set()
        self.dropped = threading.Event()  # a step found it was made from other inputs: nothing more is taken

    def put(self, stage: str, value: Any) -> None:
        self._made[stage].set_result(value)

    def fail(self, stages: Iterable[str], error: BaseException) -> None:
        """These stages will not be made (their maker failed, or a stage they need did)."""
        for stage in stages:
            if not self._made[stage].done():
                self._made[stage].set_exception(error)

    def result(self, stage: str) -> Any:
        """What `stage` made, waiting for it; raises what made it fail."""
        return self._made[stage].result()

    def future(self, stage: str) -> Future:
        return self._made[stage]


class MadeAhead:
    """The runs with stages made ahead, the newest `KEEP_RUNS` of them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[str, Ahead] = {}

    def begin(self, keys: Sequence[tuple[str, str]], run_id: str, stages: Iterable[str]) -> tuple[Ahead, list[str]]:
        """The run's stages (new, or those begun for the same partitions in the same order) and which of
        `stages` the caller is to make: those no one has taken on yet, claimed here at once, so a step
        never makes what a maker will."""
        with self._lock:
            ahead = self._runs.get(run_id)
            if ahead is None or ahead.keys != tuple(keys) or ahead.dropped.is_set():
                ahead = self._runs[run_id] = Ahead(keys, run_id)
                for old in list(self._runs)[:-KEEP_RUNS]:  # a run whose steps never came (it failed first)
                    self._runs.pop(old).dropped.set()
            mine = [stage for stage in stages if stage not in ahead.claimed]
            ahead.claimed.update(mine)
            return ahead, mine

    def take(self, stage: str, keys: Sequence[tuple[str, str]], run_id: str) -> Any | None:
        """What was made for `stage` of this run's partitions (waiting for it while it is made), once, or
        None: nothing was begun for them, a stage its inputs come from was not taken, or making it failed."""
        ahead = self._current(keys, run_id)
        if (ahead is None or stage in ahead.taken or stage not in ahead.claimed
                or any(need not in ahead.taken for need in NEEDS[stage])):
            return None
        try:
            value = self._waited(run_id, ahead.result, stage)
        except Exception:  # noqa: BLE001 - only a head start: the step makes its own and says what fails
            self.drop(run_id)
            return None
        with self._lock:
            ahead.taken.add(stage)
            if ahead.taken >= ahead.claimed:  # all made is taken: its frames are the steps' now
                self._runs.pop(run_id, None)
        return value

    def next_done(self, stages: Sequence[str], keys: Sequence[tuple[str, str]], run_id: str) -> str | None:
        """Of `stages` made ahead for this run's partitions, the first done (waiting for one), or None
        when any of them is not being made for it."""
        ahead = self._current(keys, run_id)
        if ahead is None or not set(stages) <= ahead.claimed - ahead.taken:
            return None
        futures = {ahead.future(stage): stage for stage in stages}
        done, _ = self._waited(run_id, wait, futures, return_when=FIRST_COMPLETED)
        return next(stage for future, stage in futures.items() if future in done)

    def wait_for(self, run_id: str, stage: str) -> None:
        """Wait until `stage` of the run is made or failed, when a maker has taken it on (else return)."""
        with self._lock:
            ahead = self._runs.get(run_id)
        if ahead is not None and stage in ahead.claimed and not ahead.dropped.is_set():
            self._waited(run_id, wait, [ahead.future(stage)])

    def _current(self, keys: Sequence[tuple[str, str]], run_id: str) -> Ahead | None:
        """The run's stages when begun for these partitions in this order and not dropped."""
        with self._lock:
            ahead = self._runs.get(run_id)
        return None if ahead is None or ahead.keys != tuple(keys) or ahead.dropped.is_set() else ahead

    def _waited(self, run_id: str, waiting: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """`waiting(...)` in a step; an interrupt landing there stops what is asked ahead with it."""
        try:
            return waiting(*args, **kwargs)
        except Exception:
            raise  # the caller's to judge
        except BaseException:
            self.drop(run_id)
            JUDGE_LOOP.cancel_requests()
            raise

    def drop(self, run_id: str) -> None:
        """Nothing more of this run is taken (a step found its inputs differ from what was made from)."""
        with self._lock:
            ahead = self._runs.pop(run_id, None)
        if ahead is not None:
            ahead.dropped.set()


class NotMadeAhead(Exception):
    """A run's stages cannot be made before its steps (the steps make their own)."""


def same_rows(read: pl.DataFrame, reports: pl.DataFrame) -> bool:
    """The same rows, in whatever order."""
    order = ["system", "task"]
    return read.columns == reports.columns and read.sort(order).equals(reports.sort(order))


MADE_AHEAD = MadeAhead()
