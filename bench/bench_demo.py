"""Time the bundled demo end to end and split the cost into stage work and per-partition overhead.

    python bench/bench_demo.py

Prints: wall time of `dreval demo`; per run, its duration and partitions; the stage time (seconds
spent inside the stage functions the per-report assets call, measured in the same run); the Dagster +
storage overhead per partition (evaluate runs' time minus stage time); and the cost of a one-partition
run, for the ratio against batched runs.
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
from dreval_assets.defs import assets as asset_module  # noqa: E402
from dreval_assets.defs.jobs import PER_REPORT_ASSETS  # noqa: E402
from dreval_assets.store.db import Store  # noqa: E402

# Stages import some libraries on first use (the fetcher's charset detection), once per process:
# imported here so that the stage work measured below is steady-state work, not one-time imports
import charset_normalizer  # noqa: E402,F401

# The stage functions the per-report assets call (Dagster-free work: reading, parsing, measuring images,
# fetching, judging, scoring). Everything else in a run is orchestration and storage: Dagster's events
# and bookkeeping, the IO manager's reads and writes, metadata.
STAGES = ("read_reports", "trace_step_rows", "parse_reports", "extract_statements", "with_statements",
          "find_report_images", "fetch_references", "judge_claims", "judge_reports", "score_reports")
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


class StageClock:
    """Wraps the assets' stage functions and sums the seconds spent inside them."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.originals = {name: getattr(asset_module, name) for name in STAGES if hasattr(asset_module, name)}

    def __enter__(self) -> "StageClock":
        for name, function in self.originals.items():
            setattr(asset_module, name, self._timed(function))
        return self

    def __exit__(self, *exc) -> None:
        for name, function in self.originals.items():
            setattr(asset_module, name, function)

    def _timed(self, function):
        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started
        return timed


def main_bench() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        with StageClock() as clock:
            demo_s = quiet(["--home", str(home), "demo"])
        runs = run_durations(home)
        evaluate = [r for r in runs if r[0] == "evaluate_job"]
        evaluate_s = sum(r[2] for r in evaluate)
        stage_s = clock.seconds
        n_partitions = Store(home / "dreval.duckdb").query(
            "SELECT count(*) FROM materialized_partitions WHERE asset = 'metric_scores'").item()
        noop_s = quiet(["--home", str(home), "run"])
        with StageClock() as system_clock:  # what adding one system costs: its own run of 8 partitions
            quiet(["--home", str(home), "run", "--force", "--system", "careful-scholar"])
        system_run = [r for r in run_durations(home) if r[0] == "evaluate_job"][-1]
        with StageClock() as single_clock:
            single = [quiet(["--home", str(home), "run", "--force", "--system", "careful-scholar",
                             "--task", "tvir.100001"]) for _ in range(3)]
        single_runs = [r for r in run_durations(home) if r[0] == "evaluate_job"][-3:]
        single_run_s = min(r[2] for r in single_runs)
        single_stage_s = single_clock.seconds / 3

    print(f"dreval demo, end to end (fresh home, 8 tasks x 3 systems): {demo_s:.2f} s")
    for job, mats, seconds in runs:
        print(f"  run {job:16s} {mats:3d} materialisations  {seconds:.2f} s")
    per_partition = evaluate_s / n_partitions
    overhead = (evaluate_s - stage_s) / n_partitions
    print(f"evaluate runs: {evaluate_s:.2f} s for {n_partitions} system x task partitions "
          f"= {per_partition * 1000:.0f} ms per partition")
    print(f"stage work (time inside the assets' stage functions): {stage_s:.2f} s "
          f"= {stage_s / n_partitions * 1000:.0f} ms per partition")
    print(f"Dagster + storage overhead: {overhead * 1000:.0f} ms per partition in batched runs "
          f"({overhead / (stage_s / n_partitions):.2f}x the stage work)")
    system_overhead = (system_run[2] - system_clock.seconds) / (system_run[1] / len(PER_REPORT_ASSETS))
    system_stage = system_clock.seconds / (system_run[1] / len(PER_REPORT_ASSETS))
    print(f"one system's run ({system_run[1] // len(PER_REPORT_ASSETS)} partitions): {system_run[2]:.2f} s; per "
          f"partition, overhead {system_overhead * 1000:.0f} ms against stage work {system_stage * 1000:.0f} ms "
          f"({system_overhead / system_stage:.1f}x)")
    print(f"one-partition run ({len(PER_REPORT_ASSETS)} assets): {single_run_s:.2f} s run time, "
          f"{min(single):.2f} s via the CLI")
    print(f"ratio one-partition run / batched per-partition cost: {single_run_s / per_partition:.1f}x")
    # overhead(n) ~ fixed + n x marginal: the one-partition run gives the fixed part, one system's run the rest
    n_system = system_run[1] // len(PER_REPORT_ASSETS)
    fixed = single_run_s - single_stage_s
    marginal = ((system_run[2] - system_clock.seconds) - fixed) / (n_system - 1)
    stage_per_partition = stage_s / n_partitions
    print(f"overhead model: {fixed:.2f} s per run + {marginal * 1000:.0f} ms per partition; at most the stage work "
          f"({stage_per_partition * 1000:.0f} ms) from {fixed / max(stage_per_partition - marginal, 1e-9):.0f} "
          "partitions per run")
    print(f"no-op `dreval run` (planning only): {noop_s:.2f} s")


if __name__ == "__main__":
    main_bench()
