"""Statement extraction by a real model: llama.cpp's llama-server with SmolLM2-135M (set up by
`.ci/real-judge`) extracts the statements of demo reports, and grounding keeps or drops them.

    python bench/bench_real_judge.py [N_REPORTS]

Prints per report the parser's units, the statements the model wrote, how many grounding kept and
why it dropped the rest, with examples of both; then per template: calls, valid, cut off, median
seconds, tokens in and out. Chunks of 1,500 characters (the stage's default is 6,000) keep each
answer short enough for a 135M model at 10-40 tokens/s on two cores."""
from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import polars as pl  # noqa: E402
from bench_statements import demo_reports  # noqa: E402
from real_judge_server import LlamaServer, real_judge_paths  # noqa: E402

from dreval_assets.judges.openai_config import OpenAIJudgeConfig  # noqa: E402
from dreval_assets.judges.openai_judge import OpenAIJudge  # noqa: E402
from dreval_assets.stages.parse import parse_reports  # noqa: E402
from dreval_assets.stages.statements import extract_statements  # noqa: E402
from dreval_assets.store.db import Store  # noqa: E402
from dreval_assets.store.judge_calls import JudgeCallStore  # noqa: E402

CHUNK_CHARS = 1500


def main(n_reports: int) -> None:
    found = real_judge_paths()
    if found is None:
        sys.exit("no llama-server and GGUF model: run .ci/real-judge first")
    reports = demo_reports().filter(pl.col("system") == "careful-scholar").head(n_reports)
    claims = parse_reports(reports)["report_claims"]
    with tempfile.TemporaryDirectory() as tmp, LlamaServer(*found, Path(tmp) / "server.log") as base_url:
        store = Store(Path(tmp) / "bench.duckdb")
        store.ensure_schema()
        judge = OpenAIJudge(OpenAIJudgeConfig(model="smollm2-135m", base_url=base_url, api_key="local",
                                              mode="json_schema", concurrency=2, timeout_s=300),
                            JudgeCallStore(store))
        statements, summary = extract_statements(claims, judge, chunk_chars=CHUNK_CHARS)
        ledger = store.query("SELECT * FROM judge_ledger")
    units = {(t, c): text for t, c, text in claims.select("task", "claim_id", "text").iter_rows()}
    print("report | units | statements kept | ungrounded | duplicates | empty | chunks | failed chunks | detail")
    for r in summary.sort("task").iter_rows(named=True):
        print(f"{r['task']} | {r['n_units']} | {r['n_statements']} | {r['n_ungrounded']} | {r['n_duplicates']} | "
              f"{r['n_empty']} | {r['n_chunks']} | {r['n_failed_chunks']} | {r['detail']}")
    kept = statements.filter(pl.col("extraction") == "llm")
    print(f"\nstatements the model wrote and grounding kept: {kept.height}; first 5 with their sentence:")
    for task, text, unit in kept.select("task", "text", "source_claim").head(5).iter_rows():
        print(f"  {text!r}\n    <- {units.get((task, unit), '')[:200]!r}")
    outcomes = Counter(ledger["outcome"].to_list())
    cut = ledger.filter(pl.col("error").str.contains("cut off at")).height
    print(f"\nstatement_extraction: {ledger.height} calls, {outcomes.get('ok', 0)} valid, {cut} cut off, "
          f"median {ledger['latency_s'].median():.1f} s, tokens in {ledger['tokens_in'].sum()}, "
          f"out {ledger['tokens_out'].sum()}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
