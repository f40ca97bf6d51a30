"""A slice's parsed_reports made while the slice before it waits on the judge (stages/parse_ahead.py):
taken only for the same partitions and the same reports, made by the step itself otherwise, and the
rows a sliced run writes are those of one run."""
import json
import sys
import threading
from pathlib import Path

import duckdb
import polars as pl
import pytest
from dagster import AssetKey, DagsterInstance

from dreval_assets.cli import main
from dreval_assets.defs import assets
from dreval_assets.releases.generic import load_generic
from dreval_assets.stages.parse_ahead import ParsedAhead
from dreval_assets.store.db import Store
from dreval_assets.store.registry import register_tasks

KEYS = [("a", "t1"), ("b", "t1")]


def reports(text: str = "One [1].") -> pl.DataFrame:
    return pl.DataFrame({"system": ["b", "a"], "task": ["t1", "t1"], "text": [text, text]})


MADE = ({"parsed_reports": "its frame"}, {"sentence_claims": 1})


def made() -> tuple[dict, dict]:
    return MADE


def test_what_was_made_ahead_is_taken_once_for_the_same_partitions_and_reports():
    ahead = ParsedAhead()
    ahead.start(KEYS, lambda: (reports(), made()))
    assert ahead.take(list(reversed(KEYS)), reports().reverse()) is MADE  # the order of rows is no matter
    assert ahead.take(KEYS, reports()) is None  # taken once


@pytest.mark.parametrize("case", ["other reports", "other partitions", "other run", "failed", "not read ahead"])
def test_otherwise_the_step_makes_its_own(case):
    ahead = ParsedAhead()
    make = {"failed": lambda: 1 / 0, "not read ahead": lambda: None}.get(case, lambda: (reports(), made()))
    ahead.start(KEYS, make, "run-2")
    keys = KEYS[:1] if case == "other partitions" else KEYS
    run = "run-3" if case == "other run" else "run-2"  # its requests' ledger rows would name another run
    assert ahead.take(keys, reports("One [2].") if case == "other reports" else reports(), run) is None


def test_the_step_waits_for_what_is_still_being_made():
    ahead, release = ParsedAhead(), threading.Event()

    def slow():
        release.wait(5)
        return reports(), made()

    ahead.start(KEYS, slow)
    threading.Timer(0.1, release.set).start()
    assert ahead.take(KEYS, reports()) is MADE


TASKS = [f"slice{n}" for n in range(4)]


def slice_home(home: Path, tmp_path: Path) -> Path:
    """Four tasks and two folder systems: eight partitions of one evaluation block."""
    bench = tmp_path / "bench"
    bench.mkdir(parents=True)
    (bench / "tasks.jsonl").write_text("".join(json.dumps({"id": t, "query": f"Report on {t}."}) + "\n" for t in TASKS))
    (bench / "sandbox.jsonl").write_text("".join(
        json.dumps({"task_id": t, "url": f"https://{t}.example/a", "text": f"{t} carried 41,200 passengers in 2023. " * 3})
        + "\n" for t in TASKS))
    store = Store(home / "dreval.duckdb")
    store.ensure_schema()
    register_tasks(store, load_generic(bench).tasks, source="test")
    for system in ("first", "second"):
        folder = tmp_path / system
        folder.mkdir()
        for t in TASKS:
            (folder / f"{t}.md").write_text(f"# {t}\n\n{system} says {t} carried 41,200 passengers in 2023 [1]. "
                                            f"It grew [1].\n\n## References\n[1] Note https://{t}.example/a\n")
        assert main(["--home", str(home), "add-system", system, "--reports", str(folder)]) == 0
    return home


def rows(home: Path, table: str) -> list[tuple]:
    with duckdb.connect(str(home / "dreval.duckdb"), read_only=True) as con:
        columns = [c for (c,) in con.execute(f"SELECT column_name FROM (DESCRIBE {table})").fetchall()
                   if c not in ("materialized_at", "run_id")]
        quoted = ", ".join(f'"{c}"' for c in columns)
        return con.execute(f"SELECT {quoted} FROM {table} ORDER BY ALL").fetchall()


def test_a_sliced_run_parses_each_next_slice_ahead_and_writes_the_rows_of_one_run(tmp_path, monkeypatch):
    made_on = []
    own = assets._parsed_frames

    def recorded(dreval, frame, keys, run_id):
        made_on.append((threading.current_thread().name, len(keys)))
        return own(dreval, frame, keys, run_id)

    monkeypatch.setattr(assets, "_parsed_frames", recorded)
    monkeypatch.setenv("DREVAL_RUN_PARTITIONS", "2")
    sliced = slice_home(tmp_path / "sliced", tmp_path / "a")
    assert main(["--home", str(sliced), "run"]) == 0
    # four slices of two: the first parsed by its step, each next one while the one before was judged
    assert made_on == [("MainThread", 2)] + [("dreval-parse-ahead", 2)] * 3

    made_on.clear()
    monkeypatch.setenv("DREVAL_RUN_PARTITIONS", "250")
    whole = slice_home(tmp_path / "whole", tmp_path / "b")
    assert main(["--home", str(whole), "run"]) == 0
    assert made_on == [("MainThread", 8)]
    assert len(rows(whole, "parsed_reports")) == 8
    for table in ("parsed_reports", "report_claims", "claim_verdicts", "metric_scores"):
        assert rows(sliced, table) == rows(whole, table), table


def test_statements_asked_ahead_are_the_next_runs_own(tmp_path, monkeypatch):
    """The next slice's statement requests, asked while the slice before it is judged, name the run that
    materialises that slice's parsed_reports (its spend in the UI counts them)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from judge_answers import dreval_answer
    from loopback_llm import LoopbackLLM

    monkeypatch.setenv("DREVAL_RUN_PARTITIONS", "2")
    with LoopbackLLM(answer=dreval_answer) as llm:
        for name, value in {"DREVAL_JUDGE": "openai", "DREVAL_JUDGE_MODEL": "loopback-model",
                            "OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "test"}.items():
            monkeypatch.setenv(name, value)
        home = slice_home(tmp_path / "home", tmp_path / "reports")
        assert main(["--home", str(home), "run"]) == 0
    instance = DagsterInstance.from_config(str(home / "dagster"))
    materialised_in = {str(r.asset_materialization.partition): r.run_id for r in
                       instance.fetch_materializations(AssetKey("parsed_reports"), limit=100).records}
    with duckdb.connect(str(home / "dreval.duckdb"), read_only=True) as con:
        asked_in = dict(((system + "|" + task), run) for system, task, run in con.execute(
            "SELECT DISTINCT system, task, run_id FROM judge_ledger WHERE template = 'statement_extraction'").fetchall())
    assert len(set(materialised_in.values())) == 4  # four slices, four runs
    assert asked_in == materialised_in
