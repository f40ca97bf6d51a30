"""The chain of an evaluation run's stages, made on a thread ahead of its steps (stages/made_ahead.py)."""
from __future__ import annotations

import threading

import polars as pl

from ..background import in_background
from ..judges.parallel import as_done
from ..stages.made_ahead import MADE_AHEAD, STAGES, Ahead, NotMadeAhead
from ..store.registry import load_systems
from . import step_work
from .claims_ahead import ClaimsAhead
from .resources import DrevalResource
from .step_work import Keys


def make_ahead(dreval: DrevalResource, keys: Keys, run_id: str, through: str = STAGES[-1],
               tasks_written: threading.Event | None = None) -> None:
    """Start making the stages of the run `run_id` over `keys` (in the order its steps will see them) up
    to `through`, on a thread; stages already begun for it (the parse, while the slice before was
    judged) are waited for, not made again. The parse needs only the registry; what comes after it
    reads the tasks runs' frames, so it waits for `tasks_written` (the command's tasks runs ended)."""
    stages = STAGES[:STAGES.index(through) + 1]
    ahead, mine = MADE_AHEAD.begin(keys, run_id, stages)
    if mine:
        in_background(_make, dreval, ahead, mine, stages, tasks_written, name="dreval-ahead")


def _make(dreval: DrevalResource, ahead: Ahead, mine: list[str], stages: tuple[str, ...],
          tasks_written: threading.Event | None) -> None:
    try:
        # the database open while the chain works: a run's session closing as the chain opens a connection
        # let DuckDB tear its instance down under it (`python_arrow_scan does not exist`)
        with dreval.store().session():
            _chain(dreval, ahead, mine, stages, tasks_written)
    except BaseException as error:  # noqa: BLE001 - the steps make their own and say what fails
        ahead.fail(mine, error)


def _chain(dreval: DrevalResource, ahead: Ahead, mine: list[str], stages: tuple[str, ...],
           tasks_written: threading.Event | None) -> None:
    keys, run_id = list(ahead.keys), ahead.run_id
    store = dreval.store()
    claims = None  # the claims judged as the parse hands them on, when this chain makes both
    if "parsed_reports" in mine:
        systems = load_systems(store)
        if step_work.of_kind(keys, systems, "endpoint"):  # its reports are written in the run: not before it
            raise NotMadeAhead("a system of this run writes its reports in the run")
        tasks = {task for _, task in keys}  # the registry's, as the `tasks` step writes them
        original_ids = {task: original for task, original in
                        store.query("SELECT task, original_id FROM registered_tasks").iter_rows() if task in tasks}
        reports = step_work.read_the_reports(dreval, keys, systems, original_ids, {})
        if {"fetched_references", "claim_verdicts"} <= set(mine) and ClaimsAhead.suits(dreval):
            claims = ClaimsAhead(dreval, keys, run_id, tasks_written, ahead.dropped)
        try:
            made = step_work.parsed_frames(dreval, reports, keys, run_id, claims.add if claims else None)
        except BaseException:
            if claims is not None:
                claims.close(None)
            raise
        if claims is not None:
            claims.close(made[0]["report_claims"])
        ahead.put("parsed_reports", (reports, made))
    if stages == ("parsed_reports",):
        return
    reports, (parsed_frames, _) = ahead.result("parsed_reports")
    parsed = step_work.as_input("parsed_reports", parsed_frames)
    if claims is not None:
        tasks, task_rubrics = claims.tasks.result()
        fetched = claims.fetched.result()
    else:
        if tasks_written is not None:
            tasks_written.wait()
        _stop_if_dropped(ahead)
        task_keys = sorted({(task,) for _, task in keys})
        tasks = step_work.as_input("tasks", store.read_partitions("tasks", task_keys))
        task_rubrics = step_work.as_input("task_rubrics", store.read_partitions("task_rubrics", task_keys))
        fetched = step_work.fetched_frames(dreval, parsed, tasks, task_rubrics, keys)
    store.keep_content(fetched)  # the judge reads the pages' texts before the step writes them
    ahead.put("fetched_references", fetched)
    _stop_if_dropped(ahead)

    def figures() -> pl.DataFrame:  # made while the claims are judged: only report judgments need them
        images = step_work.image_frames(dreval, reports, parsed, tasks)
        store.keep_content(images)  # the judge reads the figures' bytes before the step writes them
        ahead.put("report_images", images)
        _stop_if_dropped(ahead)
        return step_work.as_input("report_images", images)

    named, builds = step_work.judged_pieces(
        dreval, set(step_work.JUDGED), run_id, keys, reports, tasks, task_rubrics, parsed,
        step_work.as_input("fetched_references", fetched), figures,
        (claims.judge, claims.verdicts) if claims is not None else None)
    for index, frame in as_done(named[0][1], builds):
        if index < len(named):
            name, judge = named[index]
            ahead.put(name, (frame, judge.stats.metadata(), judge.judge_id))


def _stop_if_dropped(ahead: Ahead) -> None:
    if ahead.dropped.is_set():
        raise NotMadeAhead("nothing more of this run is taken (its run ended, or its inputs differed)")
