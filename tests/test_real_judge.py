"""A real model on a real server: llama.cpp's llama-server serving SmolLM2-135M-Instruct on a free
loopback port judges one demo partition (DeepResearch Bench's task, one system) end to end through
`dreval run`.

A 135M model is a poor judge; that is not the point. It has a real tokenizer, a real context limit,
real constrained decoding (json_schema), real latency and real degenerate answers. The test asserts
what must hold whatever the model says: the run finishes within its time budget, every call is in the
ledger, every metric row is a value or an N/A with a reason, and running again costs no call. It
prints, per template: calls, valid answers, cut off, failed, seconds, tokens.

`.ci/real-judge` builds the server and extracts the model into a cache folder (only the first run
pays); the paths come from DREVAL_REAL_JUDGE_SERVER / DREVAL_REAL_JUDGE_MODEL or that folder's
`paths.env`. Without them the test is skipped, unless DREVAL_REAL_JUDGE_REQUIRED=1 (`.ci/run`), when
their absence fails it."""
from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from real_judge_server import LlamaServer, real_judge_paths  # noqa: E402

from dreval_assets.cli import main  # noqa: E402
from dreval_assets.defs.runner import demo_root  # noqa: E402
from dreval_assets.store.db import Store  # noqa: E402

BUDGET_S = 600  # one demo partition on two cores
KEEP = {"drb-52"}  # statement extraction, claim verdicts against its cited pages, RACE in both orders
ANSWER_TOKENS = {"*": 512, "statement_extraction": 1536}
CONTEXT = 8192  # SmolLM2's trained context, per slot
SLOTS = 2


def server_and_model() -> tuple[Path, Path]:
    found = real_judge_paths()
    if found:
        return found
    why = "no llama-server and GGUF model: run .ci/real-judge (the README's test command does)"
    if os.environ.get("DREVAL_REAL_JUDGE_REQUIRED") == "1":
        pytest.fail(why)
    pytest.skip(why)


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    server, model = server_and_model()
    with LlamaServer(server, model, tmp_path_factory.mktemp("llama") / "server.log", SLOTS, CONTEXT) as base_url:
        yield base_url


def demo_subset(target: Path) -> Path:
    shutil.copytree(demo_root(), target)
    tasks = target / "tasks.jsonl"
    kept = [line for line in tasks.read_text().splitlines() if json.loads(line)["id"] in KEEP]
    assert len(kept) == len(KEEP)
    tasks.write_text("\n".join(kept) + "\n")
    return target


def per_template(store: Store) -> list[tuple]:
    return store.query("""
        SELECT template, count(*) AS calls, count(*) FILTER (outcome = 'ok') AS valid,
               count(*) FILTER (error LIKE '%cut off at%') AS cut_off,
               count(*) FILTER (outcome NOT IN ('ok', 'cache_hit')) AS failed,
               round(sum(latency_s), 1) AS seconds, round(median(latency_s), 2) AS median_s,
               sum(tokens_in) AS tokens_in, sum(tokens_out) AS tokens_out
        FROM judge_ledger WHERE NOT cache_hit AND asset <> 'preflight' GROUP BY template ORDER BY template""").rows()


def test_a_real_model_judges_a_demo_partition_within_budget(llama_server, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DREVAL_JUDGE", "openai")
    monkeypatch.setenv("DREVAL_JUDGE_MODEL", "smollm2-135m")
    monkeypatch.setenv("DREVAL_JUDGE_MODE", "json_schema")
    monkeypatch.setenv("OPENAI_BASE_URL", llama_server)
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    monkeypatch.setenv("DREVAL_JUDGE_CONCURRENCY", str(SLOTS))
    monkeypatch.setenv("DREVAL_JUDGE_TIMEOUT", "300")  # a slow local model; answers are bounded anyway
    monkeypatch.delenv("DREVAL_JUDGE_CONTEXT", raising=False)
    # SmolLM2 on two cores writes 10-30 tokens/s and, degenerate, fills whatever budget it gets: with
    # the default budgets (~2,000 tokens for a batch of eight verdicts) one call takes 2-4 minutes. The
    # documented override keeps each call under a minute; an answer cut there is N/A, said in the ledger.
    monkeypatch.setenv("DREVAL_JUDGE_MAX_TOKENS", json.dumps(ANSWER_TOKENS))
    home = tmp_path / "home"
    release = demo_subset(tmp_path / "demo")
    assert main(["--home", str(home), "import", "generic", str(release)]) == 0
    started = time.monotonic()
    assert main(["--home", str(home), "run", "--system", "careful-scholar"]) == 0
    seconds = time.monotonic() - started
    out = capsys.readouterr().out
    assert f"judge smollm2-135m at {llama_server}: context {CONTEXT} tokens" in out  # asked from /props

    store = Store(home / "dreval.duckdb")
    table = per_template(store)
    with capsys.disabled():
        print(f"\nreal judge (llama-server, SmolLM2-135M, json_schema): {len(KEEP)} partition(s) in {seconds:.0f} s")
        print("template | calls | valid | cut off | failed | seconds | median s | tokens in | tokens out")
        for row in table:
            print(" | ".join(str(v) for v in row))
    assert seconds < BUDGET_S
    assert sum(r[1] for r in table) > len(KEEP)  # it judged, and every call is in the ledger
    assert sum(r[2] for r in table) > 0  # some answers were valid
    longest = store.query("SELECT max(tokens_out) FROM judge_ledger WHERE template <> 'preflight'").item()
    assert longest <= max(ANSWER_TOKENS.values())  # every answer bounded by its max_tokens
    scores = store.query("SELECT * FROM metric_scores WHERE system = 'careful-scholar'")
    assert scores.height > 0
    unexplained = scores["value"].is_null() & (scores["na_reason"].is_null() | (scores["detail"] == ""))
    assert scores.filter(unexplained).height == 0
    assert set(scores["task"].unique().to_list()) == {t for t in store.query(
        "SELECT task FROM registered_tasks").to_series().to_list()}

    calls = store.query("SELECT count(*) FROM judge_ledger").item()
    assert main(["--home", str(home), "run", "--system", "careful-scholar"]) == 0
    # nothing is due (a cut-off answer is ours, not retried unchanged): not even the preflight is sent
    assert store.query("SELECT count(*) FROM judge_ledger").item() == calls
