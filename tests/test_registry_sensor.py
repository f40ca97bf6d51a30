"""The registry sensor: inbox folders and newly registered tasks and systems become dynamic
partitions and runs for exactly them, in asset order, with a cursor (idle ticks request nothing)."""
import json
import shutil
from pathlib import Path

import pytest
from dagster import DagsterInstance, SensorResult, SkipReason, build_sensor_context

from dreval_assets.config import Settings
from dreval_assets.defs.automation import registry_sensor
from dreval_assets.defs.definitions import build_definitions
from dreval_assets.defs.resources import DrevalResource
from dreval_assets.defs.runner import QUIET_LOGS, demo_root
from dreval_assets.store.db import Store

DEMO = demo_root()
TASK_IDS = ("100001", "100002")


def demo_batch(folder: Path) -> None:
    """Two demo tasks with their sandbox, and one system's reports, in our generic layout."""
    folder.mkdir(parents=True)
    tasks = [line for line in (DEMO / "tasks.jsonl").read_text().splitlines() if json.loads(line)["id"] in TASK_IDS]
    (folder / "tasks.jsonl").write_text("\n".join(tasks) + "\n")
    pages = [line for line in (DEMO / "sandbox.jsonl").read_text().splitlines()
             if json.loads(line)["task_id"] in TASK_IDS]
    (folder / "sandbox.jsonl").write_text("\n".join(pages) + "\n")
    for task_id in TASK_IDS:
        target = folder / "systems" / "careful-scholar" / f"{task_id}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(DEMO / "systems" / "careful-scholar" / f"{task_id}.md", target)


class Daemon:
    """Ticks the sensor and carries out what it asks, as the Dagster daemon would."""

    def __init__(self, home: Path):
        self.home, self.cursor = home, None
        self.instance = DagsterInstance.ephemeral()
        self.defs = build_definitions(Settings(home))

    def tick(self) -> SensorResult:
        context = build_sensor_context(instance=self.instance, cursor=self.cursor,
                                       resources={"dreval": DrevalResource(home=str(self.home))})
        result = registry_sensor(context)
        self.cursor = result.cursor
        return result

    def carry_out(self, result: SensorResult) -> list[tuple[str, dict]]:
        for request in result.dynamic_partitions_requests or []:
            self.instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
        for event in result.asset_events or []:
            self.instance.report_runless_asset_event(event)
        done = []
        for request in result.run_requests or []:
            run = self.defs.resolve_job_def(request.job_name).execute_in_process(
                instance=self.instance, tags=request.tags, run_config=QUIET_LOGS)
            assert run.success
            done.append((request.job_name, {k.split("/")[-1]: v for k, v in request.tags.items()}))
        return done


def ranges(done):
    return [(job, tags.get("asset_partition_range_start"), tags.get("asset_partition_range_end")) for job, tags in done]


@pytest.fixture
def daemon(tmp_path):
    home = tmp_path / "home"
    Store(home / "dreval.duckdb").ensure_schema()
    return Daemon(home)


def test_inbox_folder_becomes_partitions_then_runs_in_asset_order(daemon):
    demo_batch(daemon.home / "inbox" / "batch-1")
    first = daemon.tick()
    added = {r.partitions_def_name: list(r.partition_keys) for r in first.dynamic_partitions_requests}
    assert added == {"task": ["tvir.100001", "tvir.100002"], "system": ["careful-scholar"]}
    assert ranges(daemon.carry_out(first)) == [("tasks_job", "tvir.100001", "tvir.100002")]

    second = daemon.tick()  # the tasks are materialised: now every system evaluates them
    assert not second.dynamic_partitions_requests
    assert ranges(daemon.carry_out(second)) == [
        ("evaluate_job", "careful-scholar|tvir.100001", "careful-scholar|tvir.100002")]

    third = daemon.tick()  # evaluated: the leaderboard
    assert ranges(daemon.carry_out(third)) == [("leaderboard_job", None, None)]
    board = Store(daemon.home / "dreval.duckdb").query("SELECT DISTINCT system FROM leaderboard")
    assert board["system"].to_list() == ["careful-scholar"]

    idle = daemon.tick()
    assert idle.skip_reason == SkipReason("nothing new") and not idle.run_requests


def test_a_new_system_folder_runs_only_its_own_partitions(daemon):
    demo_batch(daemon.home / "inbox" / "batch-1")
    for _ in range(3):
        daemon.carry_out(daemon.tick())
    reports = daemon.home / "inbox" / "loose-cannon"
    reports.mkdir()
    for task_id in TASK_IDS:
        shutil.copy(DEMO / "systems" / "loose-cannon" / f"{task_id}.md", reports / f"{task_id}.md")
    result = daemon.tick()
    assert [list(r.partition_keys) for r in result.dynamic_partitions_requests] == [["loose-cannon"]]
    assert ranges(daemon.carry_out(result)) == [("evaluate_job", "loose-cannon|tvir.100001", "loose-cannon|tvir.100002")]
    assert ranges(daemon.carry_out(daemon.tick())) == [("leaderboard_job", None, None)]
    # the same folder is not taken again; a changed task file is, and only its task re-runs
    assert daemon.tick().skip_reason is not None
    tasks = daemon.home / "inbox" / "batch-1" / "tasks.jsonl"
    lines = tasks.read_text().splitlines()
    changed = json.loads(lines[0])
    changed["query"] += " Include 2025."
    tasks.write_text("\n".join([json.dumps(changed), *lines[1:]]) + "\n")
    assert ranges(daemon.carry_out(daemon.tick())) == [("tasks_job", "tvir.100001", "tvir.100001")]
    # both systems are due on the same task: one run covers both
    assert ranges(daemon.carry_out(daemon.tick())) == [
        ("evaluate_job", "careful-scholar|tvir.100001", "loose-cannon|tvir.100001")]
    runs = Store(daemon.home / "dreval.duckdb").query(
        "SELECT task, count(DISTINCT system) AS systems, count(DISTINCT run_id) AS runs FROM materialized_partitions "
        "WHERE asset = 'metric_scores' GROUP BY ALL ORDER BY 1")
    # both systems' changed task in the one new run; the other task keeps its earlier runs
    assert runs.rows() == [("tvir.100001", 2, 1), ("tvir.100002", 2, 2)]


def test_refresh_schedules_are_off_unless_switched_on(tmp_path, monkeypatch):
    from dagster import DefaultScheduleStatus

    defs = build_definitions(Settings(tmp_path))
    assert {s.name: s.default_status for s in defs.schedules} == {
        "wlc_refresh_schedule": DefaultScheduleStatus.STOPPED, "miroeval_refresh_schedule": DefaultScheduleStatus.STOPPED}
    monkeypatch.setenv("DREVAL_LIVE_REFRESH", "1")
    assert {s.default_status for s in build_definitions(Settings(tmp_path)).schedules} == {DefaultScheduleStatus.RUNNING}


def test_first_tick_on_a_filled_home_runs_only_what_is_due_and_the_leaderboard_waits(daemon):
    demo_batch(daemon.home / "inbox" / "batch-1")
    for _ in range(3):
        daemon.carry_out(daemon.tick())
    # `dagster dev` started on the filled home: a fresh cursor must not re-run everything
    fresh = Daemon(daemon.home)
    first = fresh.tick()
    assert not first.run_requests  # (its partitions and task versions are declared again, harmlessly)

    # one report changed beside the registry: only its evaluation is due
    report = next((daemon.home / "inbox").rglob("careful-scholar/100002.md"))
    report.write_text(report.read_text().replace("Harbour Line", "Harbour Line corridor", 1))
    fresh = Daemon(daemon.home)
    first = fresh.tick()
    assert ranges([(r.job_name, {k.split("/")[-1]: v for k, v in r.tags.items()}) for r in first.run_requests]) == [
        ("evaluate_job", "careful-scholar|tvir.100002", "careful-scholar|tvir.100002")]
    # the evaluation has not run yet: its old materialisation must not let the leaderboard start
    assert not fresh.tick().run_requests
    fresh.carry_out(first)
    assert ranges(fresh.carry_out(fresh.tick())) == [("leaderboard_job", None, None)]


def test_the_sensor_never_requests_what_a_cli_run_already_materialised(daemon, tmp_path, capsys):
    from dreval_assets.cli import main

    daemon.carry_out(daemon.tick())  # `dagster dev` is up: its cursor is set on the empty home
    batch = tmp_path / "batch"
    demo_batch(batch)
    assert main(["--home", str(daemon.home), "import", "generic", str(batch)]) == 0
    assert main(["--home", str(daemon.home), "run"]) == 0
    capsys.readouterr()
    result = daemon.tick()  # it sees the registration, and that the CLI did the work
    assert not result.run_requests
    assert not daemon.tick().run_requests


def test_the_sensor_waits_while_a_dreval_run_is_running(daemon):
    import subprocess
    import sys

    from dreval_assets.operations.run_markers import MARKERS

    demo_batch(daemon.home / "inbox" / "batch-1")
    alive = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        markers = daemon.home / "dagster" / MARKERS
        markers.mkdir(parents=True)
        (markers / str(alive.pid)).touch()
        waiting = daemon.tick()
        assert not waiting.run_requests and "dreval run is running" in str(waiting.skip_reason)
        assert not (daemon.home / "inbox" / "batch-1").exists() or daemon.cursor is None  # nothing taken
    finally:
        alive.stdin.close()
        alive.wait(timeout=10)
    assert daemon.carry_out(daemon.tick())  # the process ended: the batch is taken and run


def stale_reports(daemon: Daemon) -> list[str]:
    """The `reports` partitions Dagster's own stale-status resolver (what the UI shows) calls stale."""
    from dagster import AssetKey
    from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView, TemporalContext
    from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
    from dagster._time import get_current_datetime

    from dreval_assets.defs.partitions import system_task_key

    graph = daemon.defs.resolve_asset_graph()
    view = AssetGraphView(temporal_context=TemporalContext(effective_dt=get_current_datetime(), last_event_id=None),
                          instance=daemon.instance, asset_graph=graph)
    resolver = CachingStaleStatusResolver(instance=daemon.instance, asset_graph=graph, loading_context=view)
    keys = daemon.instance.get_dynamic_partitions("system"), daemon.instance.get_dynamic_partitions("task")
    return sorted(str(key) for key in (system_task_key(s, t) for s in keys[0] for t in keys[1])
                  if resolver.get_status(AssetKey("reports"), key) == StaleStatus.STALE)


def test_a_report_edited_on_disk_is_observed_shows_stale_in_the_ui_and_only_it_runs_again(daemon):
    demo_batch(daemon.home / "inbox" / "batch-1")
    folder = daemon.home / "inbox" / "loose-cannon"  # a folder system: its reports stay where they are
    folder.mkdir(parents=True)
    for task_id in TASK_IDS:
        shutil.copy(DEMO / "systems" / "loose-cannon" / f"{task_id}.md", folder / f"{task_id}.md")
    for _ in range(4):
        daemon.carry_out(daemon.tick())
    assert stale_reports(daemon) == [] and daemon.tick().skip_reason == SkipReason("nothing new")

    report = folder / "100002.md"
    report.write_text(report.read_text().replace("Harbour Line", "Harbour Line corridor", 1))
    edited = daemon.tick()
    observed = [(e.asset_key.path[-1], str(e.partition)) for e in edited.asset_events]
    assert observed == [("report_sources", "loose-cannon|tvir.100002")]
    assert ranges(daemon.carry_out(edited)) == [
        ("evaluate_job", "loose-cannon|tvir.100002", "loose-cannon|tvir.100002")]
    assert stale_reports(daemon) == []  # evaluated again: current
    assert ranges(daemon.carry_out(daemon.tick())) == [("leaderboard_job", None, None)]
    assert daemon.tick().skip_reason == SkipReason("nothing new")

    # observed while nothing runs it yet (a sensor tick, or the asset's Observe button): stale in the UI
    report.write_text(report.read_text().replace("corridor", "corridor east", 1))
    pending = daemon.tick()
    for event in pending.asset_events:
        daemon.instance.report_runless_asset_event(event)
    assert stale_reports(daemon) == ["loose-cannon|tvir.100002"]
    # a second edit of the same report is a run of its own (Dagster skips a run key it has seen)
    assert [r.run_key for r in pending.run_requests] != [r.run_key for r in edited.run_requests]
    assert len(pending.run_requests) == 1


def test_a_run_launched_from_the_ui_ends_with_the_leaderboard_and_results_copy(daemon):
    import duckdb
    from dagster import AssetKey, DagsterEventType, build_run_status_sensor_context

    from dreval_assets.defs.automation import publish_after_ui_runs, publish_step_after
    from dreval_assets.defs.partitions import system_task_key

    demo_batch(daemon.home / "inbox" / "batch-1")
    for _ in range(3):
        daemon.carry_out(daemon.tick())
    copy = daemon.home / "results.duckdb"
    with duckdb.connect(str(copy), read_only=True) as con:
        published_before = con.execute("SELECT max(materialized_at) FROM materialized_partitions "
                                        "WHERE asset = 'metric_scores'").fetchone()[0]

    # what the UI's Materialize button launches: an asset job over one partition, without the CLI's tags
    partition = str(system_task_key("careful-scholar", "tvir.100001"))
    run = daemon.defs.resolve_implicit_global_asset_job_def().get_subset(
        asset_selection={AssetKey("metric_scores")}).execute_in_process(
        instance=daemon.instance, partition_key=partition, run_config=QUIET_LOGS)
    assert run.success
    success = daemon.instance.get_records_for_run(run.run_id, of_type=DagsterEventType.RUN_SUCCESS).records[0]
    context = build_run_status_sensor_context(
        sensor_name="publish_after_ui_runs", dagster_instance=daemon.instance,
        dagster_run=daemon.instance.get_run_by_id(run.run_id),
        dagster_event=success.event_log_entry.dagster_event,
        resources={"dreval": DrevalResource(home=str(daemon.home))})
    request = publish_after_ui_runs(context)
    assert request.job_name == "leaderboard_job"
    daemon.carry_out(SensorResult(run_requests=[request]))
    with duckdb.connect(str(copy), read_only=True) as con:
        published_after = con.execute("SELECT max(materialized_at) FROM materialized_partitions "
                                      "WHERE asset = 'metric_scores'").fetchone()[0]
    assert published_after > published_before  # the UI's materialisation reached results.duckdb

    # the CLI's own runs and registry_sensor's publish themselves; a leaderboard alone needs only the copy
    assert publish_step_after({"leaderboard"}) == "publish_job"
    assert publish_step_after({"leaderboard", "agreement", "published_results"}) is None
    assert publish_step_after({"reports", "parsed_reports"}) is None


def test_either_judge_bound_asset_can_be_materialised_alone_from_the_ui(daemon):
    """claim_verdicts and report_judgments are one step (asked of the judge at once); the UI can still
    materialise one of them: only it runs, and its checks with it."""
    from dagster import AssetKey, DagsterEventType

    from dreval_assets.defs.partitions import system_task_key

    graph = daemon.defs.resolve_asset_graph()  # one step, each asset's own lineage (as when they were two)
    assert {k.path[-1] for k in graph.get(AssetKey("claim_verdicts")).parent_keys} == {
        "parsed_reports", "fetched_references", "tasks", "task_rubrics"}
    assert {k.path[-1] for k in graph.get(AssetKey("report_judgments")).parent_keys} == {
        "reports", "parsed_reports", "fetched_references", "tasks", "task_rubrics", "report_images"}
    demo_batch(daemon.home / "inbox" / "batch-1")
    for _ in range(3):
        daemon.carry_out(daemon.tick())
    partition = str(system_task_key("careful-scholar", "tvir.100001"))
    for asset, check in (("report_judgments", "credits_valid"), ("claim_verdicts", "verdict_labels_valid")):
        run = daemon.defs.resolve_implicit_global_asset_job_def().get_subset(
            asset_selection={AssetKey(asset)}).execute_in_process(
            instance=daemon.instance, partition_key=partition, run_config=QUIET_LOGS)
        assert run.success
        materialised = {e.asset_key.path[-1] for e in run.get_asset_materialization_events()}
        assert materialised == {asset}
        checked = [r.event_log_entry.dagster_event.event_specific_data.check_name
                   for r in daemon.instance.get_records_for_run(
                       run.run_id, of_type=DagsterEventType.ASSET_CHECK_EVALUATION).records]
        assert checked == [check]
        metadata = run.get_asset_materialization_events()[0].materialization.metadata
        assert metadata["judge"].value and "view" in metadata
