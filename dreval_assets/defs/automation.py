"""Sensors, refresh jobs and schedules: what keeps a home current while `dagster dev` runs.

`registry_sensor` (running by default) takes folders dropped into `<home>/inbox/`, notices tasks
and systems registered since its cursor (by the inbox, `dreval import`, `dreval refresh` or a refresh
job), adds their dynamic partitions and requests runs for exactly them, in the order the assets
need: `tasks_job` for new tasks; once those are materialised, `evaluate_job` (systems due on the same
tasks share a run); once those are evaluated, `leaderboard_job`. Its cursor holds the inbox
signatures, the registry time it has seen up to, and what is still pending, so an idle tick reads one
directory and two small queries.

The refresh jobs run the live sources; their schedules are stopped unless DREVAL_LIVE_REFRESH=1.
"""

import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path

from dagster import (AddDynamicPartitionsRequest, DagsterEventType, DagsterRunStatus, DefaultScheduleStatus,
                     DefaultSensorStatus, OpExecutionContext, RunRequest, RunsFilter, RunStatusSensorContext,
                     ScheduleDefinition, SensorEvaluationContext, SensorResult, SkipReason, job, op,
                     run_status_sensor, sensor)
from dagster._core.storage.tags import (ASSET_PARTITION_RANGE_END_TAG, ASSET_PARTITION_RANGE_START_TAG,
                                        SENSOR_NAME_TAG)

from ..operations import inbox
from ..config import Settings
from ..live.config import LiveConfig
from ..live.refresh import SCHEDULES, SOURCES, refresh
from ..operations.run_markers import someone_running
from ..store.registry import task_hashes
from .jobs import evaluate_job, leaderboard_job, publish_job, tasks_job
from .orphans import PID_TAG
from .partitions import system_task_key
from .registry_events import observations, report_observations, report_registry_changes
from ..operations.planner import (INPUT_FILE_REASONS, Selection, contiguous_ranges, evaluation_blocks, plan,
                                  report_input_versions, run_partitions_setting)
from .resources import DrevalResource

SENSOR_INTERVAL_S = 30


def _run_key(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:20]


def _ranged(job_name: str, first: str, last: str, *key_parts: object) -> RunRequest:
    return RunRequest(run_key=_run_key(job_name, first, last, *key_parts), job_name=job_name,
                      tags={ASSET_PARTITION_RANGE_START_TAG: first, ASSET_PARTITION_RANGE_END_TAG: last})


@sensor(name="registry_sensor", minimum_interval_seconds=SENSOR_INTERVAL_S, default_status=DefaultSensorStatus.RUNNING,
        jobs=[tasks_job, evaluate_job, leaderboard_job, publish_job])
def registry_sensor(context: SensorEvaluationContext, dreval: DrevalResource):
    if someone_running(Settings(Path(dreval.home)).dagster_home):
        # a `dreval run` is materialising this home: what it does is not requested twice; the cursor
        # stays, so the next tick sees the same changes and asks only for what is still due
        return SensorResult(skip_reason=SkipReason("a dreval run is running on this home"), cursor=context.cursor)
    state = json.loads(context.cursor) if context.cursor else {}
    store = dreval.store()
    store.ensure_schema()
    seen, messages = inbox.ingest_inbox(store, Path(dreval.home) / "inbox", state.get("inbox", {}))
    for message in messages:
        context.log.info(message)
    changes = inbox.registry_changes(store, state.get("registered_at"))
    # report files edited on disk: observed (the UI shows them stale) and evaluated again
    report_dirs, edited = inbox.edited_report_folders(store, state.get("report_dirs"))
    partitions = [AddDynamicPartitionsRequest(name, keys) for name, keys in
                  (("task", changes.tasks), ("system", changes.systems)) if keys]

    if not context.cursor:
        # first tick on a home (maybe filled by the CLI): only what the CLI's planner finds due
        due = plan(store, Selection(), Settings.from_env(dreval.home))
        pending_tasks, ready = list(due.tasks), []
        targets = {system: [t for t in tasks if t not in due.tasks] for system, tasks in due.per_system.items()}
        targets = {system: tasks for system, tasks in targets.items() if tasks}
        leaderboard_due, publish_due = due.leaderboard, due.publish
        tasks_to_run = list(due.tasks)
    else:
        # evaluation waits for its tasks: a task is ready once its current version is materialised
        pending_tasks = list(dict.fromkeys([*state.get("pending_tasks", []), *changes.tasks]))
        ready = inbox.tasks_ready(store, pending_tasks)
        # a new system is planned at once on every materialised task; later tasks reach it through the
        # ready tasks, which every system evaluates
        targets = inbox.evaluation_targets(store, ready, changes.systems) if (ready or changes.systems) else {}
        leaderboard_due, publish_due, tasks_to_run = False, False, changes.tasks
        if tasks_to_run or targets:
            # what a `dreval run` already materialised (after the registration the cursor saw) is not due
            due = plan(store, Selection(), Settings.from_env(dreval.home))
            tasks_to_run = [t for t in tasks_to_run if t in due.tasks]
            targets = {system: [t for t in tasks if t in due.per_system.get(system, [])]
                       for system, tasks in targets.items()}
            targets = {system: tasks for system, tasks in targets.items() if tasks}

    edited_versions = {}
    inbox_taken = seen != state.get("inbox", {})  # a re-imported batch may carry edited reports too
    if context.cursor and (edited or inbox_taken):
        due = plan(store, Selection(systems=() if inbox_taken else edited), Settings.from_env(dreval.home))
        changed = [key for key, why in due.why.items() if key[0] and why in INPUT_FILE_REASONS]
        edited_versions = report_input_versions(store, changed)
        for system, task in changed:
            targets.setdefault(system, [])
            if task not in targets[system]:
                targets[system].append(task)
        for message in sorted({f"{s}: {due.why[(s, t)]}" for s, t in changed}):
            context.log.info(message)

    # ranges follow the partition order; new keys are appended to it in registration order
    known = list(context.instance.get_dynamic_partitions("task")) if (changes.tasks or targets) else []
    listed = set(known)
    order = known + [k for k in changes.tasks if k not in listed]
    requests = [_ranged("tasks_job", first, last, changes.newest)
                for first, last in contiguous_ranges(tasks_to_run, order)]
    evaluating = [tuple(pair) for pair in state.get("evaluating", [])]
    since = state.get("evaluating_since")
    if targets:
        since = datetime.now(timezone.utc).replace(tzinfo=None).isoformat(sep=" ")
        known_systems = list(context.instance.get_dynamic_partitions("system"))
        systems = known_systems + [s for s in changes.systems if s not in set(known_systems)]
        requests += [_ranged("evaluate_job", str(system_task_key(first_system, first)),
                             str(system_task_key(last_system, last)), changes.newest, sorted(ready),
                             sorted(edited_versions.items()))  # a second edit is a new run, not a repeat
                     for first_system, last_system, first, last in evaluation_blocks(
                         targets, systems, order, run_partitions_setting())]
        evaluating += [(system, task) for system, task_keys in targets.items() for task in task_keys]

    # the leaderboard once every evaluation requested has materialised anew (a failed run leaves it pending)
    if evaluating and not targets and inbox.evaluated(store, evaluating, since):
        requests.append(RunRequest(run_key=_run_key("leaderboard", changes.newest, evaluating),
                                   job_name="leaderboard_job"))
        evaluating = []
    elif leaderboard_due and not evaluating and not requests:
        requests.append(RunRequest(run_key=_run_key("leaderboard", changes.newest, "first tick"),
                                   job_name="leaderboard_job"))
    elif publish_due and not evaluating and not requests:
        requests.append(RunRequest(run_key=_run_key("publish", changes.newest, "first tick"), job_name="publish_job"))
    cursor = json.dumps({"inbox": seen, "report_dirs": report_dirs, "registered_at": changes.newest,
                         "evaluating": evaluating,
                         "evaluating_since": since if evaluating else None,
                         "pending_tasks": [t for t in pending_tasks if t not in ready]})
    if not requests and not partitions:
        return SensorResult(skip_reason=SkipReason("nothing new"), cursor=cursor)
    hashes = task_hashes(store) if changes.tasks else {}
    return SensorResult(run_requests=requests, dynamic_partitions_requests=partitions, cursor=cursor,
                        asset_events=[*observations({k: hashes[k] for k in changes.tasks if k in hashes}),
                                      *report_observations(edited_versions)])


def publish_step_after(materialised: set[str]) -> str | None:
    """The job that brings the leaderboard and results.duckdb up to date after a run that materialised
    these assets, or None when the run left them current."""
    if "published_results" in materialised:
        return None
    if "metric_scores" in materialised or "agreement" in materialised:
        return "leaderboard_job"
    return "publish_job" if "leaderboard" in materialised else None


@run_status_sensor(name="publish_after_ui_runs", run_status=DagsterRunStatus.SUCCESS, minimum_interval_seconds=5,
                   default_status=DefaultSensorStatus.RUNNING, request_jobs=[leaderboard_job, publish_job],
                   description="A run launched from the UI that changed scores ends with the leaderboard and "
                               "results.duckdb, as a dreval run does (the CLI's and registry_sensor's runs "
                               "schedule their own)")
def publish_after_ui_runs(context: RunStatusSensorContext):
    run = context.dagster_run
    if PID_TAG in run.tags or run.tags.get(SENSOR_NAME_TAG) == registry_sensor.name:
        return SkipReason(f"run {run.run_id[:8]} is a dreval run's or registry_sensor's: they publish themselves")
    records = context.instance.get_records_for_run(run.run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION).records
    job_name = publish_step_after({record.event_log_entry.dagster_event.asset_key.path[-1] for record in records})
    if job_name is None:
        return SkipReason(f"run {run.run_id[:8]} left the leaderboard and results.duckdb current")
    waiting = context.instance.get_runs(filters=RunsFilter(job_name=job_name, statuses=[
        DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING]), limit=1)
    if waiting:  # it has not read the scores yet, so it covers this run too
        return SkipReason(f"{job_name} run {waiting[0].run_id[:8]} is about to start")
    return RunRequest(run_key=f"after-{run.run_id}", job_name=job_name)


def _refresh_op(source: str):
    @op(name=f"{source}_refresh", description=f"Fetch the {source} live source's new tasks and register them; "
                                               "registry_sensor then materialises exactly those partitions.")
    def refresh_op(context: OpExecutionContext, dreval: DrevalResource) -> None:
        store = dreval.store()
        store.ensure_schema()
        summary = refresh(source, store, dreval.judge(), LiveConfig.from_env())
        report_registry_changes(context.instance, store, [*summary.new_tasks, *summary.changed_tasks])
        for line in summary.lines():
            context.log.info(line)
        context.add_output_metadata({"new_tasks": len(summary.new_tasks), "skipped": len(summary.skipped),
                                     **summary.metadata()})
    return refresh_op


def _refresh_job(source: str):
    op_def = _refresh_op(source)

    @job(name=f"{source}_refresh_job", description=f"Live refresh of {source}")
    def refresh_job():
        op_def()
    return refresh_job


REFRESH_JOBS = {source: _refresh_job(source) for source in SOURCES}  # `<source>_refresh_job`


def refresh_schedules(enabled: bool) -> list[ScheduleDefinition]:
    status = DefaultScheduleStatus.RUNNING if enabled else DefaultScheduleStatus.STOPPED
    return [ScheduleDefinition(name=f"{job_def.name.removesuffix('_job')}_schedule", job=job_def,
                               cron_schedule=SCHEDULES[source], default_status=status,
                               execution_timezone="UTC")
            for source, job_def in REFRESH_JOBS.items()]
