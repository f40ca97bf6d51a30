"""The asset graph of DESIGN.md. Bodies are thin: they call the Dagster-free stages."""

from concurrent.futures import Future
from pathlib import Path

import polars as pl
from dagster import (
    AssetCheckResult,
    AssetSpec,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetIn,
    AssetKey,
    AssetOut,
    BackfillPolicy,
    DataVersionsByPartition,
    Output,
    asset,
    multi_asset,
    observable_source_asset,
)

from ..core.report_rows import PARSER_VERSION
from ..stages import checks
from ..stages.attachment_images import with_image_attachments
from ..stages.task_rubrics import generate_rubrics
from ..stages.leaderboard import TASK_ATTRIBUTE_COLUMNS, build_leaderboard, task_attributes
from ..stages.made_ahead import MADE_AHEAD, same_rows
from ..stages.report_writing import write_reports
from ..stages.scores import score_reports
from ..stages.traces import trace_step_rows
from ..stages.tasks import attachments_by_task, task_frames
from ..judges.parallel import as_done
from ..presentation.plots import begin_leaderboard_plots, leaderboard_plots as draw_leaderboard_plots
from ..store.earlier_judges import scores_of_every_judge
from ..store.publish import publish
from ..store.registry import load_systems, load_tasks, systems_without_citations
from ..operations.planner import report_input_versions
from .agreement import agreement
from .metadata import check_result, leaderboard_metadata, plots_metadata, record_partitions
from .partitions import (from_task, same_report, split_system_task, system_task_key, system_task_partitions,
                         task_partitions)
from .resources import DrevalResource
from .step_work import (JUDGED, fetched_frames, image_frames, judged_pieces, of_kind, parsed_frames,
                        read_the_reports)

SINGLE_RUN = BackfillPolicy.single_run()
IO = "dreval_io"
PER_REPORT = dict(partitions_def=system_task_partitions, backfill_policy=SINGLE_RUN, io_manager_key=IO)


def _keys(context: AssetExecutionContext) -> list[tuple[str, str]]:
    return [split_system_task(k) for k in context.partition_keys]


def _check(name: str, asset_name: str, failures: pl.DataFrame | int, what: str) -> AssetCheckResult:
    """Passed when no row fails; a failing check names its first failing rows (defs/metadata.py)."""
    return check_result(name, failures, what, asset=asset_name)


def _spec(name: str) -> AssetCheckSpec:
    """A check declared with the description the UI shows (stages/checks.CHECKS)."""
    return AssetCheckSpec(name, asset=checks.CHECKS[name].asset, description=checks.CHECKS[name].description)


# The registry as Dagster sees it: an external asset whose data version per task partition is the
# task's content hash (reported by `registry_events`), so a changed task shows `tasks` stale in the UI.
registered_tasks = AssetSpec("registered_tasks", partitions_def=task_partitions, group_name="inputs",
                             description="Tasks as registered by dreval import, refresh or the inbox; "
                                         "data version = the task's content hash")


@observable_source_asset(partitions_def=system_task_partitions, group_name="inputs", required_resource_keys={"dreval"},
                         description="The report files (and traces) systems keep on disk or imported; data version "
                                     "= their content hash, observed by dreval run, registry_sensor and this "
                                     "asset's Observe button, so a report edited on disk shows `reports` stale")
def report_sources(context) -> DataVersionsByPartition:
    versions = report_input_versions(context.resources.dreval.store())
    known = set(context.instance.get_dynamic_partitions("system")), set(context.instance.get_dynamic_partitions("task"))
    return DataVersionsByPartition({str(system_task_key(system, task)): version
                                    for (system, task), version in versions.items()
                                    if system in known[0] and task in known[1]})


@asset(partitions_def=task_partitions, backfill_policy=SINGLE_RUN, io_manager_key=IO, group_name="inputs",
       deps=[registered_tasks])
def tasks(context: AssetExecutionContext, dreval: DrevalResource) -> dict[str, pl.DataFrame]:
    """Each registered task: query, checklist, gold material, and its sandbox corpus."""
    keys = list(context.partition_keys)
    found = load_tasks(dreval.store(), keys)
    missing = [k for k in keys if k not in found]
    if missing:
        raise ValueError(f"task partition(s) with no registered task: {missing[:5]}")
    frames = task_frames([found[k] for k in keys])
    record_partitions(context, "tasks", frames)
    return frames


@asset(partitions_def=task_partitions, backfill_policy=SINGLE_RUN, io_manager_key=IO, group_name="inputs")
def task_rubrics(context: AssetExecutionContext, dreval: DrevalResource, tasks: dict[str, pl.DataFrame]):
    """What a method generates or a release supplies once per task, shared by every system: loaded
    checklists and criteria, and each benchmark's generated artifacts (rubrics, attachment key facts)."""
    judge = dreval.judge()
    attached = tasks["task_sandbox"].filter(pl.col("role") == "attachment")
    attachments = attachments_by_task(attached, dreval.store().texts(attached.get_column("text_hash").to_list()))
    # image attachments travel in the registered task (judge-ready bytes), not in the task tables
    attachments = with_image_attachments(attachments, load_tasks(dreval.store(), list(context.partition_keys)).values())
    frame = generate_rubrics(tasks["tasks"], attachments, judge, dreval.extra_suites,
                             {"run_id": context.run.run_id, "asset": "task_rubrics"})
    record_partitions(context, "task_rubrics", {"task_rubrics": frame}, dreval.store(), judge.stats.metadata())
    return frame


@asset(**PER_REPORT, group_name="reports", ins={"tasks": AssetIn(partition_mapping=from_task)},
       deps=[report_sources], check_specs=[_spec("status_explained")])
def reports(context: AssetExecutionContext, dreval: DrevalResource, tasks: dict[str, pl.DataFrame]):
    """Each system's report for each task, as received, with a status and content hash."""
    original_ids = dict(tasks["tasks"].select("task", "original_id").iter_rows())
    systems, keys = load_systems(dreval.store()), _keys(context)
    written, writing = {}, {}
    for system in sorted({s for s, _ in of_kind(keys, systems, "endpoint")}):
        writer = dreval.writer(systems[system])
        written.update(write_reports([k for k in keys if k[0] == system], tasks["tasks"], writer,
                                     {"run_id": context.run.run_id, "asset": "reports"}))
        writing.update({f"{system}_{name.replace('judge_', 'writer_')}": value
                        for name, value in writer.stats.metadata().items()})
    frame = read_the_reports(dreval, keys, systems, original_ids, written)
    record_partitions(context, "reports", {"reports": frame}, dreval.store(),
                      {"not_ok": frame.filter(pl.col("status") != "ok").height, **writing})
    yield Output(frame)
    yield _check("status_explained", "reports", checks.unexplained_report_status(frame),
                 "unreadable reports without a reason, or readable ones without text")


@asset(**PER_REPORT, group_name="reports", ins={"reports": AssetIn(partition_mapping=same_report)})
def trace_steps(context: AssetExecutionContext, reports: pl.DataFrame):
    """Each report's research trace as steps (plan, search, read, analyze, synthesize, verify) with
    the queries and URLs they touch and their dependencies; an unreadable trace is a warning."""
    frame, counts = trace_step_rows(reports)
    record_partitions(context, "trace_steps", {"trace_steps": frame}, totals=counts)
    return frame


@asset(**PER_REPORT, group_name="reports", code_version=PARSER_VERSION,
       ins={"reports": AssetIn(partition_mapping=same_report)},
       check_specs=[_spec("no_orphan_claims")])
def parsed_reports(context: AssetExecutionContext, dreval: DrevalResource, reports: pl.DataFrame):
    """Sections, references, figures, tables and claims from the deterministic parser; with
    `claims.extraction = llm`, the claims are the judge's statements grounded in the parsed sentences;
    a report whose release ships the benchmark's own statements has those, when its policy says so."""
    keys, run_id = _keys(context), context.run.run_id
    frames, figures = _parsed_ahead(keys, run_id, reports) or parsed_frames(dreval, reports, keys, run_id)
    record_partitions(context, "parsed_reports", frames, dreval.store(), figures)
    yield Output(frames, metadata={"extraction": dreval.extraction()})
    yield _check("no_orphan_claims", "parsed_reports",
                 checks.orphan_claims(frames["parsed_reports"], frames["report_claims"]),
                 "claims whose report has no parsed_reports row")


def _parsed_ahead(keys: list[tuple[str, str]], run_id: str, reports: pl.DataFrame):
    """The frames made ahead of this step (stages/made_ahead.py), when made from the reports it read."""
    made = MADE_AHEAD.take("parsed_reports", keys, run_id)
    if made is None:
        return None
    read, frames = made
    if not same_rows(read, reports):
        MADE_AHEAD.drop(run_id)  # nothing made from other reports is taken
        return None
    return frames


@asset(**PER_REPORT, group_name="reports", ins={"reports": AssetIn(partition_mapping=same_report),
                                                "parsed_reports": AssetIn(partition_mapping=same_report),
                                                "tasks": AssetIn(partition_mapping=from_task)})
def report_images(context: AssetExecutionContext, dreval: DrevalResource, reports: pl.DataFrame,
                  parsed_reports: dict[str, pl.DataFrame], tasks: dict[str, pl.DataFrame]):
    """Each figure's image, found beside the report, among the task's attachments or on the web (safe
    fetcher), checked, measured and stored once by hash; or why it is invalid."""
    frames = (MADE_AHEAD.take("report_images", _keys(context), context.run.run_id)
              or image_frames(dreval, reports, parsed_reports, tasks))
    record_partitions(context, "report_images", frames)
    return frames


@asset(**PER_REPORT, group_name="evidence", ins={"tasks": AssetIn(partition_mapping=from_task),
                                                 "task_rubrics": AssetIn(partition_mapping=from_task),
                                                 "parsed_reports": AssetIn(partition_mapping=same_report)},
       check_specs=[_spec("failures_explained")])
def fetched_references(context: AssetExecutionContext, dreval: DrevalResource,
                       parsed_reports: dict[str, pl.DataFrame], tasks: dict[str, pl.DataFrame],
                       task_rubrics: pl.DataFrame):
    """Every cited URL: where its text came from, or why it could not be read."""
    keys = _keys(context)
    frames = (MADE_AHEAD.take("fetched_references", keys, context.run.run_id)
              or fetched_frames(dreval, parsed_reports, tasks, task_rubrics, keys))
    fetched = frames["fetched_references"]
    record_partitions(context, "fetched_references", frames, dreval.store())
    yield Output(frames)
    yield _check("failures_explained", "fetched_references", checks.unexplained_fetch_failures(fetched),
                 "unreadable URLs without a reason, or readable ones without stored text")


CLAIM_VERDICTS = ("Per claim x source: the judge's verdict, evidence and provenance (cited sources, and the sandbox "
                  "where a suite looks beyond them).")
REPORT_JUDGMENTS = ("Report-level judgments: checklist credits, fixed-rubric scores, then each registered "
                    "benchmark's own (pairwise criteria, fused channels, adaptive-rubric criteria, "
                    "reference-relative criteria, ...).")
EVIDENCE_AND_JUDGMENTS = "claim_verdicts_and_report_judgments"  # the step that builds both


@multi_asset(name=EVIDENCE_AND_JUDGMENTS, partitions_def=system_task_partitions, backfill_policy=SINGLE_RUN,
             can_subset=True,
             outs={"claim_verdicts": AssetOut(io_manager_key=IO, group_name="evidence", is_required=False,
                                              description=CLAIM_VERDICTS),
                   "report_judgments": AssetOut(io_manager_key=IO, group_name="evidence", is_required=False,
                                                description=REPORT_JUDGMENTS)},
             ins={"reports": AssetIn(partition_mapping=same_report), "tasks": AssetIn(partition_mapping=from_task),
                  "task_rubrics": AssetIn(partition_mapping=from_task),
                  "parsed_reports": AssetIn(partition_mapping=same_report),
                  "fetched_references": AssetIn(partition_mapping=same_report),
                  "report_images": AssetIn(partition_mapping=same_report)},
             # each asset's own inputs, so lineage and staleness stay as they were when they were two steps
             internal_asset_deps={
                 "claim_verdicts": {AssetKey(name) for name in ("parsed_reports", "fetched_references", "tasks",
                                                                "task_rubrics")},
                 "report_judgments": {AssetKey(name) for name in ("reports", "tasks", "task_rubrics", "parsed_reports",
                                                                  "fetched_references", "report_images")}},
             check_specs=[_spec("verdict_labels_valid"), _spec("credits_valid")])
def claim_verdicts_and_report_judgments(context: AssetExecutionContext, dreval: DrevalResource, reports: pl.DataFrame,
                                        tasks: dict[str, pl.DataFrame], task_rubrics: pl.DataFrame,
                                        parsed_reports: dict[str, pl.DataFrame], fetched_references: pl.DataFrame,
                                        report_images: pl.DataFrame):
    """The two judge-bound assets of a report, asked of the judge at once (one step): they are independent,
    so the endpoint is never left waiting between them, and each one's last slow answers overlap the
    other's requests. Either can be materialised alone."""
    selected = set(context.op_execution_context.selected_output_names)
    store, keys, run_id = dreval.store(), _keys(context), context.run.run_id
    # each asset written as soon as its piece ends, while the others still judge
    for name, frame, metadata, judge_id in _judged(dreval, selected, run_id, keys, reports, tasks, task_rubrics,
                                                   parsed_reports, fetched_references, report_images):
        record_partitions(context, name, {name: frame}, store, metadata)
        yield Output(frame, output_name=name, metadata={"judge": judge_id})
        if name == "claim_verdicts":
            yield _check("verdict_labels_valid", "claim_verdicts",
                         checks.invalid_verdicts(frame).vstack(checks.unknown_without_reason(frame)),
                         "labels outside the five verdicts, or unknown without a reason")
        else:
            yield _check("credits_valid", "report_judgments", checks.invalid_credits(frame),
                         "credits outside 0 / 0.5 / 1, rubric scores outside 1-10, or N/A without a reason")


def _judged(dreval: DrevalResource, selected: set[str], run_id: str, keys, *inputs):
    """(asset, frame, its judge's figures, judge id) of each selected asset as it is done: made ahead of
    the step (stages/made_ahead.py; each taken as it is done), else judged here, all pieces at once."""
    left = [name for name in JUDGED if name in selected]
    while left and (name := MADE_AHEAD.next_done(left, keys, run_id)) is not None:
        made = MADE_AHEAD.take(name, keys, run_id)
        if made is None:  # it failed ahead: judged here (what was answered then is in the cache)
            break
        left.remove(name)
        yield name, *made
    if not left:
        return
    selected = set(left)
    named, builds = judged_pieces(dreval, selected, run_id, keys, *inputs)
    for index, frame in as_done(named[0][1], builds):
        if index < len(named):
            name, judge = named[index]
            yield name, frame, judge.stats.metadata(), judge.judge_id


@asset(**PER_REPORT, group_name="scores",
       ins={**{name: AssetIn(partition_mapping=same_report)
               for name in ("reports", "parsed_reports", "fetched_references", "claim_verdicts",
                            "report_judgments")},
            "tasks": AssetIn(partition_mapping=from_task), "task_rubrics": AssetIn(partition_mapping=from_task)},
       check_specs=[_spec("scores_within_range"),
                    _spec("na_has_reason")])
def metric_scores(context: AssetExecutionContext, dreval: DrevalResource, reports: pl.DataFrame,
                  parsed_reports: dict[str, pl.DataFrame], fetched_references: pl.DataFrame,
                  claim_verdicts: pl.DataFrame, report_judgments: pl.DataFrame, tasks: dict[str, pl.DataFrame],
                  task_rubrics: pl.DataFrame):
    """Long format: every applicable suite's metrics, value or N/A with a reason, policy and judge."""
    judge = dreval.judge()
    frame = score_reports(_keys(context), reports, parsed_reports["parsed_reports"], parsed_reports["report_claims"],
                          claim_verdicts, tasks["tasks"], tasks["task_sandbox"], judge,
                          dreval.extra_suites, dreval.policy_map(), report_judgments, task_rubrics,
                          systems_without_citations(dreval.store()), fetched=fetched_references,
                          run_id=context.run.run_id)
    record_partitions(context, "metric_scores", {"metric_scores": frame}, dreval.store(), judge.stats.metadata())
    yield Output(frame)
    yield _check("scores_within_range", "metric_scores", checks.scores_out_of_range(frame),
                 "0-100 values outside [0, 100] or negative counts")
    yield _check("na_has_reason", "metric_scores", checks.na_rows_without_valid_reason(frame),
                 "N/A rows without one of the four reason buckets")


@asset(deps=[metric_scores], io_manager_key=IO, group_name="scores")
def leaderboard(context: AssetExecutionContext, dreval: DrevalResource) -> pl.DataFrame:
    """Per system x suite x metric x judge: the system's number by the metric's aggregation rule, 95%
    bootstrap CI, coverage. Its page shows the headline metric per suite and system, and each suite's
    headline metrics as `mean [95% CI] (scored/tasks)`. Each suite's declared breakdowns
    (`<metric>.<value>` rows) too. Its plots are `leaderboard_plots`'."""
    store = dreval.store()
    scores = scores_of_every_judge(store)  # an earlier judge's kept scores stand beside the current one's
    attributes = task_attributes(store.query(f"SELECT {TASK_ATTRIBUTE_COLUMNS} FROM tasks"))
    frame = build_leaderboard(scores, dreval.policy_map(), attributes)
    if _selected(context, "leaderboard_plots"):  # drawn while this run's published copy is written
        PLOTS_BEGUN.clear()  # what an earlier run began and did not take (its plots step did not run)
        PLOTS_BEGUN[context.run.run_id] = begin_leaderboard_plots(frame)
    context.add_output_metadata(leaderboard_metadata(frame))
    return frame


# A run's leaderboard plots, begun by its leaderboard step and taken by its leaderboard_plots step.
PLOTS_BEGUN: dict[str, Future] = {}


def _selected(context: AssetExecutionContext, name: str) -> bool:
    """Whether this run also materialises the asset `name` (a whole job's run selects none: all of its own)."""
    selection = context.run.asset_selection
    return not selection or AssetKey(name) in selection


# Last of its run (priority -1): its plots are drawn while the published copy is written before it.
@asset(deps=[leaderboard], group_name="scores", op_tags={"dagster/priority": "-1"},
       description="The leaderboard's three plots (plot_*: \"Show Markdown\" opens each; the PNGs are under "
                   "`<home>/plots/`): each suite's headline score with its 95% CI per system, a system x metric "
                   "heatmap, and how ranks shift between benchmarks and judges. N/A is never drawn as 0.")
def leaderboard_plots(context: AssetExecutionContext, dreval: DrevalResource) -> None:
    begun = PLOTS_BEGUN.pop(context.run.run_id, None)
    plots = begun.result() if begun is not None else draw_leaderboard_plots(
        dreval.store().query("SELECT * FROM leaderboard"))
    context.add_output_metadata(plots_metadata(plots, Path(dreval.home) / "plots"))


@asset(deps=[leaderboard, agreement], description="results.duckdb: the read-only copy of every table and view that people "
       "query with any DuckDB client; written beside and renamed over after each leaderboard, so no client blocks a run")
def published_results(context: AssetExecutionContext, dreval: DrevalResource) -> None:
    path = publish(dreval.store())
    context.add_output_metadata({"path": str(path), "bytes": path.stat().st_size})


ALL_ASSETS = [registered_tasks, report_sources, tasks, task_rubrics, reports, trace_steps, parsed_reports, report_images,
              fetched_references, claim_verdicts_and_report_judgments, metric_scores,
              leaderboard, agreement, published_results, leaderboard_plots]
PER_REPORT_ASSETS = [reports, trace_steps, parsed_reports, report_images, fetched_references,
                     claim_verdicts_and_report_judgments, metric_scores]
