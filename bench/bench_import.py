"""Importing a large release: time, peak memory, and whether cost grows linearly with its size.

    python bench/bench_import.py [--tasks 10000] [--systems 10]

Generates a synthetic DeepResearch Bench release (query.jsonl, criteria.jsonl, reference.jsonl and
one raw_data/<model>.jsonl per system, every task answered by every system), then imports it into a
fresh home in a child process per size (so each peak RSS is that import's own): at a quarter, half
and the full size. Then times a second import of the full release (nothing changes), mirroring the
registry into a Dagster instance's dynamic partitions, and planning the run.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DIMENSIONS = ("comprehensiveness", "insight", "instruction_following", "readability")


def write_release(root: Path, n_tasks: int, n_systems: int) -> None:
    data = root / "data"
    for folder in ("prompt_data", "criteria_data", "test_data/cleaned_data", "test_data/raw_data"):
        (data / folder).mkdir(parents=True, exist_ok=True)
    with (data / "prompt_data" / "query.jsonl").open("w") as queries, \
            (data / "criteria_data" / "criteria.jsonl").open("w") as criteria, \
            (data / "test_data" / "cleaned_data" / "reference.jsonl").open("w") as references:
        for n in range(n_tasks):
            prompt = f"Analyse topic {n}: its market size, main actors, policy drivers and risks to 2030."
            queries.write(json.dumps({"id": n, "topic": f"domain {n % 22}", "language": "en", "prompt": prompt}) + "\n")
            criteria.write(json.dumps({"id": n, "prompt": prompt,
                                       "dimension_weight": {d: 0.25 for d in DIMENSIONS},
                                       "criterions": {d: [{"criterion": f"{d} point {k}", "explanation": "covers it",
                                                           "weight": 0.5} for k in range(2)] for d in DIMENSIONS}}) + "\n")
            references.write(json.dumps({"id": n, "prompt": prompt, "article": _article(n, "reference")}) + "\n")
    for s in range(n_systems):
        with (data / "test_data" / "raw_data" / f"system-{s}.jsonl").open("w") as reports:
            for n in range(n_tasks):
                reports.write(json.dumps({"id": n, "prompt": "...", "article": _article(n, f"system {s}")}) + "\n")


def _article(n: int, who: str) -> str:
    body = " ".join(f"Finding {k} about topic {n} by {who} is stated with figure {k * 7 + n} [{k % 3 + 1}]."
                    for k in range(12))
    refs = "\n".join(f"[{k}] Source {k} https://example.org/{n}/{k}" for k in range(1, 4))
    return f"# Topic {n}\n\n{body}\n\n## References\n{refs}\n"


def child(home: str, release: str) -> None:
    """One import in this process; prints seconds and peak RSS in MiB as JSON."""
    from dreval_assets.operations.importer import import_release
    from dreval_assets.store.db import Store

    store = Store(Path(home) / "dreval.duckdb")
    store.ensure_schema()
    started = time.perf_counter()
    summary = import_release(store, "drb", Path(release))
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "tasks": sum(summary.tasks.values()), "reports": sum(summary.reports.values()),
                      "unchanged": summary.tasks["unchanged"]}))


def run_child(home: Path, release: Path) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", str(home), str(release)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--child", nargs=2)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        results = {}
        for size in (args.tasks // 4, args.tasks // 2, args.tasks):
            release = tmp / f"release-{size}"
            write_release(release, size, args.systems)
            mib = sum(p.stat().st_size for p in release.rglob("*") if p.is_file()) / 2**20
            results[size] = run_child(tmp / f"home-{size}", release)
            r = results[size]
            print(f"{size:>6} tasks x {args.systems} systems ({mib:.0f} MiB of files): import {r['seconds']:.1f} s "
                  f"({1e3 * r['seconds'] / (size * (1 + args.systems)):.2f} ms per task or report), "
                  f"peak RSS {r['peak_mib']:.0f} MiB")
        quarter, full = results[args.tasks // 4], results[args.tasks]
        print(f"full / quarter size: time x{full['seconds'] / quarter['seconds']:.2f} (linear = 4), "
              f"peak memory x{full['peak_mib'] / quarter['peak_mib']:.2f}")
        again = run_child(tmp / f"home-{args.tasks}", tmp / f"release-{args.tasks}")
        print(f"second import of the full release: {again['seconds']:.1f} s, {again['unchanged']} tasks unchanged")
        time_partitions(tmp / f"home-{args.tasks}")


def time_partitions(home: Path) -> None:
    from dreval_assets.config import Settings
    from dreval_assets.defs.runner import open_instance, sync_partitions
    from dreval_assets.operations.planner import Selection, plan
    from dreval_assets.store.db import Store

    store = Store(home / "dreval.duckdb")
    instance = open_instance(Settings(home))
    started = time.perf_counter()
    sync_partitions(instance, store)
    synced = time.perf_counter() - started
    started = time.perf_counter()
    sync_partitions(instance, store)
    resynced = time.perf_counter() - started
    started = time.perf_counter()
    the_plan = plan(store, Selection())
    planned = time.perf_counter() - started
    print(f"dynamic partitions: first sync {synced:.2f} s, second {resynced:.2f} s; "
          f"plan {planned:.2f} s for {len(the_plan.tasks)} tasks and {the_plan.n_system_task} system x task partitions")


if __name__ == "__main__":
    main()
