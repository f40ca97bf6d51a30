"""The house is open: a benchmark that lives in one folder of the tests (toy_benchmark/: suite, loader,
report judgment, offline handler, prompt, live refresh) is registered here and goes through `dreval import` and
`dreval run` end to end, with no edit to any file of the package."""
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import toy_benchmark  # noqa: E402
from toy_benchmark import live as toy_live  # noqa: E402

from dreval_assets.benchmarks import registry  # noqa: E402
from dreval_assets.cli import main  # noqa: E402
from dreval_assets.store.db import Store  # noqa: E402

QUERIES = {"t1": "Explain how harbour cranes unload container ships and what limits their speed.",
           "t2": "Describe the migration routes of arctic terns and the distances they travel."}


@pytest.fixture
def toy():
    registry.register(toy_benchmark.BENCHMARK)
    yield toy_benchmark.BENCHMARK
    registry.BENCHMARKS.pop("toy")  # this process's other tests see the six benchmarks only
    registry.SUITES.pop("toy")
    toy_live.FEED.clear()


def write_release(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "tasks.jsonl").write_text("".join(json.dumps({"id": k, "query": q}) + "\n" for k, q in QUERIES.items()))
    for system, texts in {"focused": ["Harbour cranes unload container ships in cycles; wind limits their speed.",
                                      "Arctic terns follow migration routes over vast distances each year."],
                          "drifting": ["Ports are busy places.", "Birds are interesting animals."]}.items():
        folder = root / "reports" / system
        folder.mkdir(parents=True)
        for task, text in zip(QUERIES, texts):
            (folder / f"{task}.md").write_text(f"# Report\n\n{text}\n")
    return root


def test_a_toy_benchmark_folder_runs_through_import_and_run(toy, home, tmp_path, capsys):
    release = write_release(tmp_path / "toy-release")
    assert main(["--home", str(home), "import", "toy", str(release)]) == 0
    assert main(["--home", str(home), "run"]) == 0
    store = Store(home / "dreval.duckdb")
    rows = store.query("SELECT system, task, value, judge, na_reason FROM metric_scores "
                       "WHERE suite = 'toy' AND metric = 'focus' ORDER BY system, task")
    assert rows.height == 4 and rows["na_reason"].null_count() == 4
    values = {(s, t): v for s, t, v, _, _ in rows.iter_rows()}
    assert values[("focused", "toy.t1")] > values[("drifting", "toy.t1")]
    assert values[("focused", "toy.t2")] > values[("drifting", "toy.t2")]
    assert set(rows["judge"]) == {"heuristic-v1"}
    assert store.query("SELECT count(*) FROM report_judgments WHERE template = 'toy_focus'").item() == 4
    capsys.readouterr()
    assert main(["--home", str(home), "leaderboard", "--suite", "toy"]) == 0
    assert "toy.focus" in capsys.readouterr().out
    assert main(["--home", str(home), "run"]) == 0
    assert "nothing to do" in capsys.readouterr().out


def test_without_registration_the_toy_release_is_an_unknown_benchmark(home, tmp_path, capsys):
    release = write_release(tmp_path / "toy-release")
    assert main(["--home", str(home), "import", "toy", str(release)]) == 2
    assert "unknown benchmark 'toy'" in capsys.readouterr().err


def test_the_toy_refreshes_itself_from_its_own_folder(toy, home, capsys, monkeypatch):
    monkeypatch.setattr(toy_live, "FEED", [("a1", QUERIES["t1"]), ("a2", QUERIES["t2"])])
    assert main(["--home", str(home), "refresh", "toy"]) == 0
    assert "refresh toy: 2 new task(s)" in capsys.readouterr().out
    store = Store(home / "dreval.duckdb")
    assert set(store.query("SELECT task FROM registered_tasks")["task"]) == {"toy.live-a1", "toy.live-a2"}
    toy_live.FEED.append(("a3", "Explain how tidal barrages generate power and what they cost estuaries."))
    assert main(["--home", str(home), "refresh", "toy"]) == 0
    out = capsys.readouterr().out
    assert "refresh toy: 1 new task(s)" in out and "toy.live-a3" in out and "toy.live-a1" not in out


def test_a_benchmark_without_a_live_refresh_is_no_live_source(home, capsys):
    assert main(["--home", str(home), "refresh", "drb"]) == 2
    assert "unknown live source 'drb'; choose one of wlc, miroeval" in capsys.readouterr().err
