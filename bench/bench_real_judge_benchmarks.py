"""One demo task of each benchmark judged end to end by a real model: llama.cpp's llama-server with
SmolLM2-135M (set up by `.ci/real-judge`), `dreval import generic` then `dreval run` for one system.

    python bench/bench_real_judge_benchmarks.py [TASK_ID,...] [--max-tokens JSON]

Too slow for the test suite on two cores (each call spends 10-60 s reading its prompt and writing
its answer); `tests/test_real_judge.py` runs one partition. Prints the run's seconds, then per
template: calls, valid answers, cut off, refused for the context, failed, seconds, median seconds,
tokens in and out; then every metric row of the system: a value or an N/A with its reason."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from real_judge_server import LlamaServer, real_judge_paths  # noqa: E402

from dreval_assets.cli import main as dreval  # noqa: E402
from dreval_assets.defs.runner import demo_root  # noqa: E402
from dreval_assets.store.db import Store  # noqa: E402

ONE_PER_BENCHMARK = "100001,Q7,dr3-en-004,37,Harrowgate Tidal Barrage,drb-52"
SYSTEM = "careful-scholar"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tasks", nargs="?", default=ONE_PER_BENCHMARK)
    parser.add_argument("--max-tokens", default=json.dumps({"*": 512, "statement_extraction": 1536}))
    args = parser.parse_args()
    found = real_judge_paths()
    if found is None:
        sys.exit("no llama-server and GGUF model: run .ci/real-judge first")
    keep = set(args.tasks.split(","))
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        shutil.copytree(demo_root(), tmp / "demo")
        tasks = tmp / "demo" / "tasks.jsonl"
        tasks.write_text("".join(f"{line}\n" for line in tasks.read_text().splitlines()
                                 if json.loads(line)["id"] in keep))
        with LlamaServer(*found, tmp / "server.log", 2, 8192) as base_url:
            os.environ.update(DREVAL_JUDGE="openai", DREVAL_JUDGE_MODEL="smollm2-135m", DREVAL_JUDGE_MODE="json_schema",
                              OPENAI_BASE_URL=base_url, OPENAI_API_KEY="local", DREVAL_JUDGE_CONCURRENCY="2",
                              DREVAL_JUDGE_TIMEOUT="300", DREVAL_JUDGE_MAX_TOKENS=args.max_tokens)
            home = str(tmp / "home")
            assert dreval(["--home", home, "import", "generic", str(tmp / "demo")]) == 0
            started = time.monotonic()
            code = dreval(["--home", home, "run", "--system", SYSTEM])
            print(f"\ndreval run: exit {code}, {time.monotonic() - started:.0f} s for {len(keep)} task(s)")
        store = Store(tmp / "home" / "dreval.duckdb")
        print(store.query("""
            SELECT template, count(*) AS calls, count(*) FILTER (outcome = 'ok') AS valid,
                   count(*) FILTER (error LIKE '%cut off at%') AS cut_off,
                   count(*) FILTER (error LIKE '%exceeds the model%') AS too_long,
                   count(*) FILTER (outcome NOT IN ('ok', 'cache_hit')) AS failed,
                   round(sum(latency_s)) AS seconds, round(median(latency_s), 1) AS median_s,
                   sum(tokens_in) AS tokens_in, sum(tokens_out) AS tokens_out
            FROM judge_ledger WHERE NOT cache_hit AND asset <> 'preflight' GROUP BY ALL ORDER BY template"""))
        rows = store.query(f"""SELECT task, metric, value, na_reason, left(detail, 90) AS detail FROM metric_scores
                               WHERE system = '{SYSTEM}' ORDER BY task, metric""")
        print(rows.filter(rows["value"].is_not_null()).height, "values,", rows["value"].is_null().sum(), "N/A")
        for row in rows.iter_rows():
            print(" | ".join("" if v is None else str(v) for v in row))


if __name__ == "__main__":
    main()
