"""Time the bundled demo end to end and split the cost into stage work and per-partition overhead.

    python bench/bench_demo.py

Prints: wall time of `dreval demo`; per run, its duration and partitions; the pure stage time
(the same stage functions called without Dagster); the Dagster + storage overhead per partition;
and the cost of a one-partition run, for the ratio against batched runs.
"""
from __future__ import annotations

import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagster import DagsterInstance  # noqa: E402

from dreval_assets.cli import main  # noqa: E402
from dreval_assets.judges.heuristic import HeuristicJudge  # noqa: E402
from dreval_assets.fetch.chain import ChainFetcher  # noqa: E402
from dreval_assets.stages.fetch import fetch_references  # noqa: E402
from dreval_assets.stages.parse import parse_reports  # noqa: E402
from dreval_assets.stages.reports import read_reports  # noqa: E402
from dreval_assets.stages.scores import score_reports  # noqa: E402
from dreval_assets.stages.verdicts import judge_claims  # noqa: E402
from dreval_assets.stages.tasks import attachments_by_task, task_frames  # noqa: E402
from dreval_assets.benchmarks.judging import JudgmentContext  # noqa: E402
from dreval_assets.stages.judgments import judge_reports  # noqa: E402
from dreval_assets.stages.task_rubrics import generate_rubrics  # noqa: E402
import polars as pl  # noqa: E402
from dreval_assets.benchmarks.suites import needs_sandbox_evidence  # noqa: E402
from dreval_assets.store.db import Store  # noqa: E402
from dreval_assets.store.registry import load_systems, load_tasks  # noqa: E402


def quiet(argv: list[str]) -> float:
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    assert code == 0, argv
    return time.perf_counter() - started


def run_durations(home: Path) -> list[tuple[str, int, float]]:
    instance = DagsterInstance.from_config(str(home / "dagster"))
    rows = []
    for record in reversed(instance.get_run_records()):
        stats = instance.get_run_stats(record.dagster_run.run_id)
        rows.append((record.dagster_run.job_name, stats.materializations, stats.end_time - stats.start_time))
    return rows


def pure_stage_seconds(home: Path) -> tuple[float, int]:
    store = Store(home / "dreval.duckdb")
    tasks = load_tasks(store)
    systems = load_systems(store)
    keys = [(s, t) for s in systems for t in tasks]
    sandbox = {k: t.sandbox for k, t in tasks.items()}
    task_tables = task_frames(list(tasks.values()))
    judge = HeuristicJudge()
    started = time.perf_counter()
    reports = read_reports(keys, systems, {k: t.original_id for k, t in tasks.items()})
    parsed = parse_reports(reports)
    fetched = fetch_references(parsed["report_claims"], sandbox, ChainFetcher(), keys)
    texts = {r["text_hash"]: r["text"] for r in fetched["page_texts"].iter_rows(named=True)}
    needs_sandbox = {k: t.sandbox for k, t in tasks.items() if needs_sandbox_evidence({t.benchmark})}
    verdicts = judge_claims(parsed["report_claims"], fetched["fetched_references"], texts, judge, batch_size=8,
                            sandbox_evidence=needs_sandbox)
    page_texts = dict(task_tables["page_texts"].select("text_hash", "text").iter_rows())
    rubrics = generate_rubrics(task_tables["tasks"], attachments_by_task(task_tables["task_sandbox"], page_texts),
                               judge)
    judged = judge_reports(JudgmentContext(keys, reports, task_tables["tasks"], rubrics, judge))
    score_reports(keys, reports, parsed["parsed_reports"], parsed["report_claims"], verdicts,
                  task_tables["tasks"], task_tables["task_sandbox"], judge, judgments=judged, rubrics=rubrics)
    return time.perf_counter() - started, len(keys)


def main_bench() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        demo_s = quiet(["--home", str(home), "demo"])
        runs = run_durations(home)
        evaluate = [r for r in runs if r[0] == "evaluate_job"]
        evaluate_s = sum(r[2] for r in evaluate)
        stage_s, n_partitions = pure_stage_seconds(home)
        noop_s = quiet(["--home", str(home), "run"])
        single = [quiet(["--home", str(home), "run", "--force", "--system", "careful-scholar",
                         "--task", "tvir.100001"]) for _ in range(3)]
        single_runs = [r for r in run_durations(home) if r[0] == "evaluate_job"][-3:]
        single_run_s = min(r[2] for r in single_runs)

    print(f"dreval demo, end to end (fresh home, 8 tasks x 3 systems): {demo_s:.2f} s")
    for job, mats, seconds in runs:
        print(f"  run {job:16s} {mats:3d} materialisations  {seconds:.2f} s")
    per_partition = evaluate_s / n_partitions
    overhead = (evaluate_s - stage_s) / n_partitions
    print(f"evaluate runs: {evaluate_s:.2f} s for {n_partitions} system x task partitions "
          f"= {per_partition * 1000:.0f} ms per partition")
    print(f"pure stage work (same functions, no Dagster, no DuckDB): {stage_s:.2f} s "
          f"= {stage_s / n_partitions * 1000:.0f} ms per partition")
    print(f"Dagster + storage overhead: {overhead * 1000:.0f} ms per partition in batched runs")
    print(f"one-partition run (6 assets): {single_run_s:.2f} s run time, {min(single):.2f} s via the CLI")
    print(f"ratio one-partition run / batched per-partition cost: {single_run_s / per_partition:.1f}x")
    print(f"no-op `dreval run` (planning only): {noop_s:.2f} s")


if __name__ == "__main__":
    main_bench()
