"""Plan and execute runs from the CLI on the home's Dagster instance.

Planning reads our own tables (what is materialised, which hashes it came from); execution
launches one run per block of partitions: the systems due on the same tasks together, not one run per
task or per system (`planner.evaluation_blocks`).
"""
from __future__ import annotations

import ctypes
import gc
import os
import threading
import time
from contextlib import contextmanager, nullcontext
from functools import partial
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from dagster import DagsterEventType, DagsterInstance, DagsterRunStatus, Definitions
from dagster._core.definitions.repository_definition.valid_definitions import SINGLETON_REPOSITORY_NAME
from dagster._core.storage.tags import (ASSET_PARTITION_RANGE_END_TAG, ASSET_PARTITION_RANGE_START_TAG,
                                        REPOSITORY_LABEL_TAG)
from dagster._core.remote_origin import RegisteredCodeLocationOrigin, RemoteJobOrigin, RemoteRepositoryOrigin
from dagster._core.utils import make_new_run_id

from ..config import ConfigError, Settings
from ..core.run_caches import clear_run_caches
from ..operations.planner import Plan, contiguous_ranges, evaluation_blocks, run_partitions_setting
from ..judges.judge_loop import JUDGE_LOOP, ENDPOINT_FULL
from ..presentation.plots import start_plot_helper, start_warm_up
from ..progress import RunProgress
from ..stages.made_ahead import MADE_AHEAD
from ..store.db import DUCKDB_INTERRUPTED, Store
from ..store.registry import load_systems, task_hashes
from .ahead import make_ahead
from .jobs import WAITS_ON_THE_JUDGE, job_steps, step_assets
from .orphans import run_tags
from .postgres_url import POSTGRES_URL_ENV, PostgresURLError, with_locked_driver
from .partitions import add_missing_partitions, system_task_key
from .registry_events import report_input_changes
from .resources import RUN_READS

# Written by dreval into <home>/dagster/dagster.yaml (a file without this first line is the user's own and
# is never touched). Run monitoring: `dagster dev`'s daemon marks failed a run whose worker died (the
# CLI's own runs are checked at its start, `orphans.mark_orphaned_runs`). No compute-log capture: our
# steps log through Dagster's event log, and the capture's `tail` helper processes would each print a
# traceback on Ctrl-C (they share the terminal's process group).
OWN_YAML_MARK = "# written by dreval; replace this file to configure the instance yourself\n"
DAGSTER_YAML = OWN_YAML_MARK + """telemetry:
  enabled: false
run_monitoring:
  enabled: true
  start_timeout_seconds: 180
  max_resume_run_attempts: 0
  poll_interval_seconds: 60
compute_logs:
  module: dagster._core.storage.noop_compute_log_manager
  class: NoOpComputeLogManager
"""
# Teams: runs, event logs and schedules in PostgreSQL (dagster-postgres), the URL read from the
# environment at run time, never written into the file; any standard URL form (defs/postgres.py).
POSTGRES_YAML = f"""storage:
  custom:
    module: dreval_assets.defs.postgres
    class: PostgresStorage
    config:
      postgres_url:
        env: {POSTGRES_URL_ENV}
"""


# One machine: the stock per-run SQLite event log, with its connections kept open (defs/event_log.py).
POOLED_EVENT_LOG_YAML = """event_log_storage:
  module: dreval_assets.defs.event_log
  class: PooledSqliteEventLogStorage
"""


def instance_yaml(postgres: bool) -> str:
    return DAGSTER_YAML + (POSTGRES_YAML if postgres else POOLED_EVENT_LOG_YAML)


# The code location `dagster dev` loads (workspace.yaml's location_name, pyproject's
# code_location_name): the CLI's runs carry its label, so the UI's job pages and timeline list them
# beside the runs it launched itself.
CODE_LOCATION = "dreval"
UI_REPOSITORY_LABEL = f"{SINGLETON_REPOSITORY_NAME}@{CODE_LOCATION}"


def ui_job_origin(job_name: str) -> RemoteJobOrigin:
    """The origin a run launched from the UI has, naming the code location by name: the timeline
    places runs by their origin (the label alone shows them on the job pages only)."""
    return RemoteJobOrigin(RemoteRepositoryOrigin(RegisteredCodeLocationOrigin(CODE_LOCATION),
                                                  SINGLETON_REPOSITORY_NAME), job_name)


@contextmanager
def runs_created_with_origin(instance: DagsterInstance, job_name: str):
    """`execute_in_process` creates its run without an origin and takes none: give it the UI's."""
    create = instance.create_run_for_job
    instance.create_run_for_job = partial(create, remote_job_origin=ui_job_origin(job_name))
    try:
        yield
    finally:
        del instance.create_run_for_job  # the class's method again

OLD_DAGSTER_YAML = "telemetry:\n  enabled: false\n"
# The event log keeps every event; the console shows only warnings and errors.
QUIET_LOGS = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
# The CLI's runs: the progress display says what ran and failed (each failure's root cause in a line),
# so Dagster's own console logger keeps quiet; the event log still holds everything.
CLI_LOGS = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


def open_instance(settings: Settings) -> DagsterInstance:
    """The home's own Dagster instance, shared with `dagster dev` when DAGSTER_HOME points there."""
    from ..store.db import private_folder

    private_folder(settings.home)  # the home holds the databases: its owner's only, whoever makes it first
    settings.dagster_home.mkdir(parents=True, exist_ok=True)
    config = settings.dagster_home / "dagster.yaml"
    postgres_url = os.environ.get(POSTGRES_URL_ENV)
    if postgres_url:
        try:
            with_locked_driver(postgres_url)  # refused here in one line, not deep inside SQLAlchemy
        except PostgresURLError as exc:
            raise ConfigError(str(exc)) from None
    wanted = instance_yaml(bool(postgres_url))
    current = config.read_text() if config.exists() else None
    ours = current is None or current == OLD_DAGSTER_YAML or current.startswith(OWN_YAML_MARK)
    if ours and current != wanted:
        config.write_text(wanted)
    os.environ["DAGSTER_HOME"] = str(settings.dagster_home)
    return DagsterInstance.get()


def sync_partitions(instance: DagsterInstance, store: Store) -> None:
    """Mirror the registry into the dynamic partitions (the registry is the source of truth)."""
    for name, keys in (("task", list(task_hashes(store))), ("system", list(load_systems(store)))):
        add_missing_partitions(instance, name, keys)


@dataclass
class RunOutcome:
    job: str
    description: str
    success: bool
    run_id: str
    error: str = ""
    interrupted: bool = False  # stopped by Ctrl-C (SIGINT/SIGTERM): the run is CANCELED, the rest not launched


@dataclass(frozen=True)
class Launch:
    job: str
    first: str | None
    last: str | None
    description: str
    partitions: int  # partitions each of the job's steps materialises (1: an unpartitioned asset)
    pairs: tuple[tuple[str, str], ...] = ()  # an evaluation run's (system, task) partitions
    # known before the run starts: work done ahead for it (the next slice's parsing) is its own in the ledger
    run_id: str = field(default_factory=make_new_run_id)


def launches(instance: DagsterInstance, the_plan: Plan) -> list[Launch]:
    """The runs a plan takes, in order: task ranges, evaluation blocks, then the leaderboard or the copy."""
    found: list[Launch] = []
    task_order = list(instance.get_dynamic_partitions("task"))
    place = {task: i for i, task in enumerate(task_order)}
    due_tasks = set(the_plan.tasks)
    for first, last in contiguous_ranges(the_plan.tasks, task_order):
        n = sum(1 for task in task_order[place[first]:place[last] + 1] if task in due_tasks)
        found.append(Launch("tasks_job", first, last, f"tasks {first}..{last}", n))
    system_order = list(instance.get_dynamic_partitions("system"))
    blocks = evaluation_blocks(the_plan.per_system, system_order, task_order, run_partitions_setting())
    for first_system, last_system, first, last in blocks:
        systems = first_system if first_system == last_system else f"{first_system}..{last_system}"
        in_systems = system_order[system_order.index(first_system):system_order.index(last_system) + 1]
        in_tasks = task_order[place[first]:place[last] + 1]
        # in the order the run's steps see them (system, then task, each in its partitions' order)
        due = {system: set(the_plan.per_system.get(system, ())) for system in in_systems}
        pairs = tuple((system, task) for system in in_systems for task in in_tasks if task in due[system])
        found.append(Launch("evaluate_job", str(system_task_key(first_system, first)),
                            str(system_task_key(last_system, last)), f"{systems}: {first}..{last}", len(pairs),
                            pairs))
    # what did materialise is published even when a block failed: one failure never freezes the results
    if the_plan.leaderboard:
        found.append(Launch("leaderboard_job", None, None, "leaderboard", 1))
    elif the_plan.publish:
        found.append(Launch("publish_job", None, None, "results.duckdb", 1))
    return found


def execute(defs: Definitions, instance: DagsterInstance, the_plan: Plan, store: Store | None = None,
            progress: RunProgress | None = None, command_process: bool = False) -> list[RunOutcome]:
    """Launch the plan's runs one after another; a Ctrl-C cancels the run it lands in and launches
    nothing more (what that run's judge calls already answered is in the judge cache).

    `command_process`: this is the `dreval` command's own process, not a test's or a library user's: it
    may start a plot helper (`helper_process`; it ends once it has drawn), and ends the judge workers
    after the last run that judges, so their memory is not held beside the closing runs' peak."""
    # the database open throughout: with chains made ahead on threads, a run's session closing as a chain
    # opened a connection let DuckDB tear its instance down under the chain (`python_arrow_scan does not exist`)
    with store.session() if store is not None else nullcontext():
        return _execute(defs, instance, the_plan, store, progress or RunProgress(live=False), command_process)


def _execute(defs: Definitions, instance: DagsterInstance, the_plan: Plan, store: Store | None,
             progress: RunProgress, command_process: bool) -> list[RunOutcome]:
    planned = launches(instance, the_plan)
    # the first evaluation's stages are made from the command's start: its parse reads only the registry,
    # the rest waits for the tasks runs (every one of them comes before any evaluation run)
    tasks_written = threading.Event()
    evaluations = [launch for launch in planned if launch.job == "evaluate_job" and launch.pairs]
    if evaluations:
        make_ahead(defs.resources["dreval"], list(evaluations[0].pairs), evaluations[0].run_id,
                   tasks_written=tasks_written)
    for launch in planned:
        for step in job_steps(launch.job):
            progress.add_due(step, launch.partitions)
    outcomes: list[RunOutcome] = []
    interrupted = False
    first_evaluation = next((launch for launch in planned if launch.job == "evaluate_job"), None)
    last_tasks_run = next((launch for launch in reversed(planned) if launch.job == "tasks_job"), None)
    # a plot helper only for a command whose evaluation is one run: a longer one's leaderboard is a small part
    # of it, and the helper (~140 MB) would stand beside the last slice's memory peak (100 x 10: 1,029 MiB)
    helper = command_process and sum(launch.job == "evaluate_job" for launch in planned) <= 1
    try:
        for n, launch in enumerate(planned):
            if launch.job == "evaluate_job":
                tasks_written.set()
                if launch.pairs:  # its stages made ahead of its steps (begun already for the first)
                    make_ahead(defs.resources["dreval"], list(launch.pairs), launch.run_id)
                if launch is first_evaluation:
                    _before_the_first_evaluation(instance, store, the_plan, launch)
            # the evaluation's stages made ahead read the tasks once the last tasks run's steps wrote them
            written = tasks_written.set if launch is last_tasks_run else None
            outcomes.append(_launch(defs, instance, launch, progress, store, _spare_work(defs, planned[n:], helper),
                                    written=written))
            MADE_AHEAD.drop(launch.run_id)  # what its steps did not take (one failed) is let go
            if outcomes[-1].interrupted:
                break
            if launch.job == "evaluate_job" and any(later.job == "evaluate_job" for later in planned[n + 1:]):
                _between_slices()
            if command_process and launch.job in JUDGED_JOBS and not any(later.job in JUDGED_JOBS
                                                                          for later in planned[n + 1:]):
                _release_what_judging_held()
    except BaseException:  # an interrupt between runs
        interrupted = True
        raise
    finally:
        # nothing is made any more for a run once it ended or will never be launched: its chain stops before
        # its next stage (and what it still holds is let go); an interrupt cancels what they asked
        for launch in evaluations:
            MADE_AHEAD.drop(launch.run_id)
        if interrupted or any(outcome.interrupted for outcome in outcomes):
            JUDGE_LOOP.cancel_requests()
        tasks_written.set()
    return outcomes


def _before_the_first_evaluation(instance: DagsterInstance, store: Store | None, the_plan: Plan,
                                 launch: Launch) -> None:
    """What the evaluation reads is observed before it runs, so the UI can tell when it changes (here,
    after the tasks runs: ~0.5 s at 10 x 10 that no longer delays their judge calls; the first
    evaluation's statements are awaited meanwhile). Then its chain made ahead is let pass the parse
    and the references before the run starts: the run's first steps no longer share this process's
    core with the grounding of the statements' last answers."""
    if store is not None:
        report_input_changes(instance, store, [(system, task) for system, tasks in the_plan.per_system.items()
                                               for task in tasks])
    MADE_AHEAD.wait_for(launch.run_id, "fetched_references")


JUDGED_JOBS = frozenset({"tasks_job", "evaluate_job"})  # the jobs whose steps call a judge


def _release_what_judging_held() -> None:
    """After the last run that judges: its judge workers end (a later call would start one anew), and the
    caches of the texts it read, the frames its steps shared and the cycles its runs left (the collector
    runs seldom here, `cli.console`) are let go, so the closing runs, which read the whole home, use that
    memory instead of adding to it (100 x 10: ~900 MiB held by then)."""
    JUDGE_LOOP.close_workers(wait=False)  # their exits waited for by the command's end
    clear_run_caches()
    RUN_READS.clear()
    gc.collect()


def _between_slices() -> None:
    """Before an evaluation's next slice: the frames the slice's steps shared are let go, the cycles they
    left collected and the heap's free pages handed back to the system, so the next slice's peak does not
    stand on this one's leftovers (100 x 10 at 64, slices of 250: the command's peak 991 -> 919 MiB, with
    `RunReads` at 128 MiB)."""
    RUN_READS.clear()
    gc.collect()
    _trim_heap()


def _trim_heap() -> None:
    """glibc keeps freed pages inside its heap for later allocations; `malloc_trim` returns them."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (musl, macOS): its allocator decides
        pass


def _spare_work(defs: Definitions, ahead: list[Launch], helper: bool = False) -> Callable[[], None] | None:
    """What the process does while the judge step of `ahead[0]` waits on its endpoint: the next evaluation
    slice's parsing and statements (`ahead.make_ahead`: between two slices the endpoint waited for
    them), and matplotlib made ready when a leaderboard will plot (with `helper`, in the plot helper
    process too, which then draws two of the three plots)."""
    work = []
    following = next((launch for launch in ahead[1:] if launch.job == "evaluate_job"), None)
    if ahead[0].job == "evaluate_job" and following is not None and following.pairs:
        work.append(partial(make_ahead, defs.resources["dreval"], list(following.pairs), following.run_id,
                            "parsed_reports"))
    if any(launch.job == "leaderboard_job" for launch in ahead):
        work.append(start_warm_up)
        if helper:
            work.append(start_plot_helper)  # by the evaluation's judge step: it lives until it has drawn
    if not work:
        return None

    def spare_work() -> None:
        for do in work:
            do()

    return spare_work


# the judge step waits on its endpoint: full, and this process mostly idle, for this long
QUIET_FOR_S, SPARE_BELOW = 1.0, 0.5

# The exceptions a Ctrl-C becomes inside a Dagster step (Dagster turns SIGINT into the first one).
INTERRUPTS = ("DagsterExecutionInterruptedError", "KeyboardInterrupt")


def _launch(defs, instance: DagsterInstance, launch: Launch, progress: RunProgress,
            store: Store | None = None, spare_time: Callable[[], None] | None = None,
            written: Callable[[], None] | None = None) -> RunOutcome:
    """One run, in this process; `written()` once every step of it succeeded (before the run's own end)."""
    tags = run_tags() | {REPOSITORY_LABEL_TAG: UI_REPOSITORY_LABEL}
    if launch.first is not None:
        tags |= {ASSET_PARTITION_RANGE_START_TAG: launch.first, ASSET_PARTITION_RANGE_END_TAG: launch.last}
    progress.say(f"run {launch.job}: {launch.description}")
    started = time.monotonic()
    run_id = launch.run_id
    watch = _RunWatch(instance, run_id, progress, spare_time, written and (job_steps(launch.job), written))
    instance.add_event_listener(run_id, watch.on_event)
    # the database stays open for the run: each step's connections cost ~1 ms, not ~30
    with store.session() if store else nullcontext(), runs_created_with_origin(instance, launch.job):
        result = defs.resolve_job_def(launch.job).execute_in_process(
            run_config=CLI_LOGS, instance=instance, tags=tags, raise_on_error=False, run_id=run_id)
    error = ""
    if watch.interrupted:
        _make_sure_cancelled(instance, run_id)
        return RunOutcome(launch.job, launch.description, False, run_id, "interrupted", interrupted=True)
    if result.success:
        n = len(result.get_asset_materialization_events())
        progress.say(f"  ok: {n} partition materialisation(s) in {time.monotonic() - started:.1f}s")
    else:
        failures = [e for e in result.all_events if e.is_step_failure]
        error = "; ".join(_root_cause(e.event_specific_data.error) for e in failures) or "run failed"
        progress.say(f"  FAILED: {error}")
    return RunOutcome(launch.job, launch.description, result.success, result.run_id, error)


class _RunWatch:
    """Dagster's events of one in-process run, as they happen: progress, and a Ctrl-C turned into a
    cancellation (the run is marked CANCELING here, so Dagster ends it CANCELED, not FAILURE)."""

    def __init__(self, instance: DagsterInstance, run_id: str, progress: RunProgress,
                 spare_time: Callable[[], None] | None = None,
                 written: tuple[list[str], Callable[[], None]] | None = None) -> None:
        self.instance, self.run_id, self.progress = instance, run_id, progress
        self.spare_time = spare_time  # work for the process while a step waits on the judge
        # (the run's assets, what to call once every one of them is written)
        self._unwritten, self._written = (set(written[0]), written[1]) if written else (set(), None)
        self.interrupted = False
        self._judge_step_ended = threading.Event()

    def on_event(self, record) -> None:
        event = record.dagster_event
        if event is None:
            return
        kind = event.event_type
        if kind == DagsterEventType.STEP_START:
            assets = step_assets(event.step_key)
            for asset in assets:
                self.progress.started(asset)
            if self.spare_time is not None and WAITS_ON_THE_JUDGE.intersection(assets):
                ENDPOINT_FULL.clear()
                threading.Thread(target=self._when_spare, name="dreval-spare-time", daemon=True).start()
        elif kind == DagsterEventType.ASSET_MATERIALIZATION:
            self.progress.materialised(event.asset_key.path[-1])
        elif kind == DagsterEventType.STEP_SUCCESS:
            self._ended_step(event.step_key)
            for asset in step_assets(event.step_key):
                self.progress.ended(asset, ok=True)
            self._unwritten.difference_update(step_assets(event.step_key))
            if self._written is not None and not self._unwritten:
                self._written, written = None, self._written
                written()
        elif kind == DagsterEventType.STEP_FAILURE:
            self._ended_step(event.step_key)
            if _error_class(event.event_specific_data.error) in INTERRUPTS:
                self._cancel()
            for asset in step_assets(event.step_key):
                self.progress.ended(asset, ok=False)

    def _when_spare(self) -> None:
        """The spare work, once the judge step waits on its endpoint: for QUIET_FOR_S its requests found
        the endpoint full and this process used less than SPARE_BELOW of a core (checked every quarter
        second); or when the step ends. Started with the step, the plot helper's start and matplotlib's
        import took the CPU the first requests were prepared and sent with (10 x 10 at 64: the endpoint
        ~2 s below its concurrency), and the endpoint is full for a moment as soon as the first chunks
        are handed over, while this process still prepares the rest."""
        quiet_for, cpu, at = 0.0, time.process_time(), time.monotonic()
        while quiet_for < QUIET_FOR_S and not self._judge_step_ended.wait(0.25):
            now_cpu, now = time.process_time(), time.monotonic()
            busy, cpu, at = (now_cpu - cpu) / max(now - at, 1e-3), now_cpu, now
            quiet_for = quiet_for + 0.25 if ENDPOINT_FULL.is_set() and busy < SPARE_BELOW else 0.0
            ENDPOINT_FULL.clear()
        self.spare_time()

    def _ended_step(self, step_key: str) -> None:
        if WAITS_ON_THE_JUDGE.intersection(step_assets(step_key)):
            self._judge_step_ended.set()

    def _cancel(self) -> None:
        if self.interrupted:
            return
        self.interrupted = True
        run = self.instance.get_run_by_id(self.run_id)
        if run is not None and not run.is_finished:
            self.instance.report_run_canceling(run, message="interrupted (Ctrl-C) in dreval run")


def _error_class(error) -> str:
    """The interrupt in the step's error chain (its class name), or ''. A Ctrl-C that reaches DuckDB inside a
    statement ends it as DuckDB's "Query interrupted" (`store.db.interrupted`): a Ctrl-C too."""
    while error is not None:
        if error.cls_name in INTERRUPTS:
            return error.cls_name
        if error.cls_name in ("RuntimeError", "InterruptException") and DUCKDB_INTERRUPTED in (error.message or ""):
            return "KeyboardInterrupt"
        error = getattr(error, "cause", None)
    return ""


def _make_sure_cancelled(instance: DagsterInstance, run_id: str) -> None:
    """Dagster ends a run marked CANCELING as CANCELED; should it have ended otherwise, say so now."""
    run = instance.get_run_by_id(run_id)
    if run is not None and run.status != DagsterRunStatus.CANCELED:
        instance.report_run_canceled(run, message="interrupted (Ctrl-C) in dreval run")


def _root_cause(error) -> str:
    """Dagster wraps our exception (e.g. a load-input error); the innermost message says what to do."""
    while getattr(error, "cause", None) is not None:
        error = error.cause
    return str(error.message).strip()


def demo_root() -> Path:
    return Path(__file__).resolve().parents[1] / "demo"
