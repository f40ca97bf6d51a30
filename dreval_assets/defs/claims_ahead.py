"""A run's claim verdicts made ahead report by report: each report's claims judged as soon as the parse
hands them on (with `claims.extraction = llm`, once its statements are grounded), while later reports are
parsed and their statements asked.

Made all at once, the claims waited for the last statement's answer, then for the run's rows, its fetch
and its first requests: at 10 x 10 and concurrency 64 the endpoint was half empty in the statements' last
waves and empty for ~0.6 s after them. Here one thread fetches the cited pages of the reports handed on so
far, as one part, while the next part gathers, and another asks each part's claims as it is fetched. Only
with offline fetching (the sandbox and the stored pages): a live fetch stays one fetch of the whole run,
concurrent across its reports, so that no report's slowest page holds the next part back. The frames are
the steps': the fetched references in the run's partition order, the verdicts in the order they would be
made at once, from the same requests (stages/verdicts.py `judge_claims_of`)."""
from __future__ import annotations

import queue
import threading
from concurrent.futures import Future
from typing import Iterator

import polars as pl

from ..background import in_background
from ..core.models import FetchResult
from ..stages.fetch import fetch_outcomes, fetched_frames_of
from ..stages.made_ahead import NotMadeAhead
from ..stages.verdicts import ClaimsPart
from . import step_work
from .resources import DrevalResource
from .step_work import Frames, Keys

Key = tuple[str, str]


class ClaimsAhead:
    """The claims of one run's reports, judged as they are handed on (`add`, then `close` once the parse
    is over): one thread fetches the pages of the reports handed on so far, as one part, while the next
    part gathers; another asks each part's claims as it is fetched. `tasks` and `fetched` are futures:
    the tasks runs' frames read, and the run's fetched_references frames (once every part is fetched)."""

    def __init__(self, dreval: DrevalResource, keys: Keys, run_id: str, tasks_written: threading.Event | None,
                 dropped: threading.Event) -> None:
        self.keys, self.run_id = list(keys), run_id
        self.judge = dreval.judge()
        self.tasks: Future = Future()
        self.fetched: Future = Future()
        self._dreval, self._tasks_written, self._dropped = dreval, tasks_written, dropped
        self._handed: queue.SimpleQueue = queue.SimpleQueue()  # (keys, claims) of whole reports; None: no more
        self._handed_keys: set[Key] = set()
        self._fetched_parts: queue.SimpleQueue = queue.SimpleQueue()  # ClaimsPart; None: no more
        self._all_claims: pl.DataFrame | None = None
        in_background(self._fetch, name="dreval-claims-fetch")
        self._verdicts = in_background(self._judge, name="dreval-claims-ahead")

    @staticmethod
    def suits(dreval: DrevalResource) -> bool:
        """Whether a run's claims can be judged as they come: its pages are fetched offline."""
        return dreval.fetch_kind != "live"

    def add(self, system: str, task: str, claims: pl.DataFrame) -> None:
        """One report's claims, handed on by the parse (its thread)."""
        self._handed_keys.add((system, task))
        self._handed.put(([(system, task)], claims))

    def close(self, report_claims: pl.DataFrame | None) -> None:
        """The parse is over: `report_claims`, every report's claims (those not handed on are judged now),
        or None when it failed (nothing more is judged here)."""
        if report_claims is not None:
            self._all_claims = report_claims
            rest = [key for key in self.keys if key not in self._handed_keys]
            if rest:
                wanted = pl.DataFrame(rest, schema={"system": pl.String, "task": pl.String}, orient="row")
                self._handed.put((rest, report_claims.join(wanted, on=["system", "task"], how="semi")))
        self._handed.put(None)

    def verdicts(self) -> pl.DataFrame:
        """The claim_verdicts frame (waiting for it); raises what made it fail."""
        return self._verdicts.result()

    def _fetch(self) -> None:
        dreval = self._dreval
        try:
            if self._tasks_written is not None:
                self._tasks_written.wait()
            with dreval.store().session():
                store, task_keys = dreval.store(), sorted({(task,) for _, task in self.keys})
                tasks = step_work.as_input("tasks", store.read_partitions("tasks", task_keys))
                task_rubrics = step_work.as_input("task_rubrics", store.read_partitions("task_rubrics", task_keys))
                self.tasks.set_result((tasks, task_rubrics))
                sandbox, fetcher = step_work.fetch_sandbox(dreval, tasks, task_rubrics), dreval.fetcher()
                outcomes: dict[Key, list[FetchResult]] = {}
                while (handed := self._next_part()) is not None:
                    if self._dropped.is_set():
                        raise NotMadeAhead("nothing more of this run is taken (its run ended, or its inputs differed)")
                    keys, claims = handed
                    found = fetch_outcomes(claims, sandbox, fetcher, keys)
                    outcomes.update(found)
                    fetched = fetched_frames_of(keys, found)
                    # the pages' texts as read (the chain stores them once the run's fetch is whole)
                    texts = dict(fetched["page_texts"].select("text_hash", "text").iter_rows())
                    self._fetched_parts.put(ClaimsPart(claims, fetched["fetched_references"], texts))
                if self._all_claims is None:
                    raise NotMadeAhead("the parse this run's claims come from failed")
                self.fetched.set_result(fetched_frames_of(self.keys, outcomes))
        except BaseException as error:  # noqa: BLE001 - the steps make their own and say what fails
            for future in (self.tasks, self.fetched):
                if not future.done():
                    future.set_exception(error)
        finally:
            self._fetched_parts.put(None)

    def _next_part(self) -> tuple[Keys, pl.DataFrame] | None:
        """The reports handed on since the last part (waiting for one); None once the parse is over."""
        handed, over = _drained(self._handed)
        if over:
            self._handed.put(None)  # the next call ends
        if not handed:
            return None
        return [key for keys, _ in handed for key in keys], pl.concat([claims for _, claims in handed],
                                                                      how="vertical_relaxed")

    def _judge(self) -> pl.DataFrame:
        tasks, task_rubrics = self.tasks.result()
        with self._dreval.store().session():
            return step_work.claim_verdicts_of(self._dreval, self.judge, self.run_id, self._parts(),
                                               self._every_claim, tasks, task_rubrics)

    def _parts(self) -> Iterator[ClaimsPart]:
        """What is fetched when the judge takes its next requests, as one part (waiting for one)."""
        over = False
        while not over:
            parts, over = _drained(self._fetched_parts)
            if parts:
                yield ClaimsPart(pl.concat([p.claims for p in parts], how="vertical_relaxed"),
                                 pl.concat([p.fetched for p in parts], how="vertical_relaxed"),
                                 {h: text for p in parts for h, text in p.texts.items()})
        self.fetched.result()  # raises what stopped the fetch

    def _every_claim(self) -> pl.DataFrame:
        """Every report's claims (the parse is over when this is asked)."""
        if self._all_claims is None:
            raise NotMadeAhead("the parse this run's claims come from failed")
        return self._all_claims


def _drained(waiting: queue.SimpleQueue) -> tuple[list, bool]:
    """What the queue holds (waiting for one item), up to its end (None), and whether the end came."""
    found = [waiting.get()]
    while found[-1] is not None:
        try:
            found.append(waiting.get_nowait())
        except queue.Empty:
            break
    over = found[-1] is None
    return (found[:-1] if over else found), over
