"""Plan and execute runs from the CLI on the home's Dagster instance.

Planning reads our own tables (what is materialised, which hashes it came from); execution
launches one run per block of partitions: the systems due on the same tasks together, not one run per
task or per system (`planner.evaluation_blocks`).
"""
from __future__ import annotations

import os
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from dagster import DagsterInstance, Definitions
from dagster._core.storage.tags import ASSET_PARTITION_RANGE_END_TAG, ASSET_PARTITION_RANGE_START_TAG

from ..config import Settings
from ..planner import Plan, contiguous_ranges, evaluation_blocks
from ..store.db import Store
from ..store.registry import load_systems, task_hashes
from .orphans import run_tags
from .partitions import system_task_key

# Written by dreval into <home>/dagster/dagster.yaml (a file without this first line is the user's own and
# is never touched). Run monitoring: `dagster dev`'s daemon marks failed a run whose worker died (the
# CLI's own runs are checked at its start, `orphans.mark_orphaned_runs`).
OWN_YAML_MARK = "# written by dreval; replace this file to configure the instance yourself\n"
DAGSTER_YAML = OWN_YAML_MARK + """telemetry:
  enabled: false
run_monitoring:
  enabled: true
  start_timeout_seconds: 180
  max_resume_run_attempts: 0
  poll_interval_seconds: 60
"""
# Teams: runs, event logs and schedules in PostgreSQL (dagster-postgres), the URL read from the
# environment at run time, never written into the file.
POSTGRES_URL_ENV = "DREVAL_DAGSTER_POSTGRES_URL"
POSTGRES_YAML = f"""storage:
  postgres:
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


OLD_DAGSTER_YAML = "telemetry:\n  enabled: false\n"
# The event log keeps every event; the console shows only warnings and errors.
QUIET_LOGS = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def open_instance(settings: Settings) -> DagsterInstance:
    """The home's own Dagster instance, shared with `dagster dev` when DAGSTER_HOME points there."""
    from ..store.db import private_folder

    private_folder(settings.home)  # the home holds the databases: its owner's only, whoever makes it first
    settings.dagster_home.mkdir(parents=True, exist_ok=True)
    config = settings.dagster_home / "dagster.yaml"
    wanted = instance_yaml(bool(os.environ.get(POSTGRES_URL_ENV)))
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


def add_missing_partitions(instance: DagsterInstance, name: str, keys: list[str]) -> None:
    known = set(instance.get_dynamic_partitions(name))
    new = [k for k in keys if k not in known]
    if new:
        instance.add_dynamic_partitions(name, new)


@dataclass
class RunOutcome:
    job: str
    description: str
    success: bool
    run_id: str
    error: str = ""


def execute(defs: Definitions, instance: DagsterInstance, the_plan: Plan,
            echo: Callable[[str], None] = print, store: Store | None = None) -> list[RunOutcome]:
    outcomes: list[RunOutcome] = []
    task_order = list(instance.get_dynamic_partitions("task"))
    for first, last in contiguous_ranges(the_plan.tasks, task_order):
        outcomes.append(_launch(defs, instance, "tasks_job", first, last, f"tasks {first}..{last}", echo, store))
    system_order = list(instance.get_dynamic_partitions("system"))
    for first_system, last_system, first, last in evaluation_blocks(the_plan.per_system, system_order, task_order):
        systems = first_system if first_system == last_system else f"{first_system}..{last_system}"
        outcomes.append(_launch(defs, instance, "evaluate_job", str(system_task_key(first_system, first)),
                                str(system_task_key(last_system, last)), f"{systems}: {first}..{last}", echo,
                                store))
    # what did materialise is published even when a block failed: one failure never freezes the results
    if the_plan.leaderboard:
        outcomes.append(_launch(defs, instance, "leaderboard_job", None, None, "leaderboard", echo, store))
    elif the_plan.publish:
        outcomes.append(_launch(defs, instance, "publish_job", None, None, "results.duckdb", echo, store))
    return outcomes


def _launch(defs, instance, job_name, first, last, description, echo, store: Store | None = None) -> RunOutcome:
    tags = run_tags()
    if first is not None:
        tags |= {ASSET_PARTITION_RANGE_START_TAG: first, ASSET_PARTITION_RANGE_END_TAG: last}
    echo(f"run {job_name}: {description}")
    started = time.monotonic()
    # the database stays open for the run: each step's connections cost ~1 ms, not ~30
    with store.session() if store else nullcontext():
        result = defs.resolve_job_def(job_name).execute_in_process(
            run_config=QUIET_LOGS, instance=instance, tags=tags, raise_on_error=False)
    error = ""
    if result.success:
        n = len(result.get_asset_materialization_events())
        echo(f"  ok: {n} partition materialisation(s) in {time.monotonic() - started:.1f}s")
    else:
        failures = [e for e in result.all_events if e.is_step_failure]
        error = "; ".join(_root_cause(e.event_specific_data.error) for e in failures) or "run failed"
        echo(f"  FAILED: {error}")
    return RunOutcome(job_name, description, result.success, result.run_id, error)


def _root_cause(error) -> str:
    """Dagster wraps our exception (e.g. a load-input error); the innermost message says what to do."""
    while getattr(error, "cause", None) is not None:
        error = error.cause
    return str(error.message).strip()


def demo_root() -> Path:
    return Path(__file__).resolve().parents[1] / "demo"
