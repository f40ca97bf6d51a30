"""A user's story end to end: a DeepResearch Bench release with its tasks, three systems' reports and
the scores the benchmark published for them is imported, `dreval verify` recomputes the published
aggregates, `dreval run` scores the reports, and the `agreement` table compares our RACE with the
published one, task by task and system by system."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from dreval_assets.cli import main
from dreval_assets.store.db import Store

DIMENSIONS = {"comprehensiveness": 0.3, "insight": 0.3, "instruction_following": 0.2, "readability": 0.2}
TOPICS = {
    1: ("harbour ferries", ["ferry timetable reliability", "passenger fares", "diesel fuel costs", "winter storms"]),
    2: ("rooftop solar", ["solar panel output", "grid connection fees", "battery storage", "household savings"]),
    3: ("urban beekeeping", ["honey yields", "colony losses", "city regulations", "pollinator gardens"]),
}
# how much of each topic's terms each system's report covers: the heuristic RACE follows coverage
COVERAGE = {"thorough-agent": 4, "middling-agent": 2, "thin-agent": 1}
# the published RACE overall (0-1) per system and task, in the same order as the coverage
PUBLISHED = {"thorough-agent": (0.52, 0.55, 0.50), "middling-agent": (0.44, 0.41, 0.45),
             "thin-agent": (0.30, 0.33, 0.31)}


def jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def report(title: str, terms: list[str], n: int) -> str:
    body = " ".join(f"It is clear that the {t} of the town has changed, and this is what the data for 2024 show "
                    f"when it is read with care [{i}]." for i, t in enumerate(terms[:n], start=1))
    refs = "\n".join(f"[{i}] Source {i} https://example.org/{title.replace(' ', '-')}/{i}" for i in range(1, n + 1))
    return f"# {title.title()}\n\n## Findings\n\n{body}\n\n## References\n\n{refs}\n"


def write_release(root: Path) -> Path:
    data = root / "data"
    jsonl(data / "prompt_data" / "query.jsonl", [
        {"id": i, "topic": "Local economy", "language": "en", "prompt": f"Write a research report on {title}: "
         + ", ".join(terms) + "."} for i, (title, terms) in TOPICS.items()])
    jsonl(data / "criteria_data" / "criteria.jsonl", [
        {"id": i, "prompt": title, "dimension_weight": DIMENSIONS,
         "criterions": {dim: [{"criterion": f"The report discusses the {t} and what it is for",
                               "explanation": f"It is what the reader of the report is looking for: the {t}",
                               "weight": 1.0}
                              for t in terms] for dim in DIMENSIONS}}
        for i, (title, terms) in TOPICS.items()])
    jsonl(data / "test_data" / "cleaned_data" / "reference.jsonl", [
        {"id": i, "prompt": title, "article": report(title, terms, 3)} for i, (title, terms) in TOPICS.items()])
    for system, covered in COVERAGE.items():
        jsonl(data / "test_data" / "raw_data" / f"{system}.jsonl", [
            {"id": i, "prompt": title, "article": report(title, terms, covered)} for i, (title, terms) in TOPICS.items()])
        race = root / "results" / "race" / system
        per_task = [{"id": i, "prompt": title, **{d: v for d in DIMENSIONS}, "overall_score": v}
                    for (i, (title, _)), v in zip(TOPICS.items(), PUBLISHED[system])]
        jsonl(race / "raw_results.jsonl", per_task)
        means = {d: sum(PUBLISHED[system]) / 3 for d in ("Comprehensiveness", "Insight", "Instruction Following",
                                                          "Readability", "Overall Score")}
        (race / "race_result.txt").write_text("".join(f"{k}: {v:.4f}\n" for k, v in means.items()), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    root = tmp_path_factory.mktemp("agreement-e2e")
    home = root / "home"
    release = write_release(root / "deep_research_bench")
    assert main(["--home", str(home), "import", "drb", str(release)]) == 0
    assert main(["--home", str(home), "run"]) == 0
    return home


def test_verify_recomputes_the_published_means_from_the_task_rows(evaluated, capsys):
    assert main(["--home", str(evaluated), "verify", "drb"]) == 0
    out = capsys.readouterr().out
    # 5 means x 3 systems (a run over 3 tasks: its means are theirs) + per task row its range and its overall
    # within its dimensions (2 x 9)
    assert "checks 33: matched 33, not comparable 0, inconsistent in the release 0, mismatched 0" in out


def test_agreement_compares_our_race_with_the_published_race(evaluated):
    store = Store(evaluated / "dreval.duckdb")
    pairs = store.query("SELECT * FROM agreement_pairs WHERE metric = 'race' AND task <> '' ORDER BY system, task")
    assert pairs.height == 9
    assert set(pairs["published"].round(6)) == {round(v * 100, 6) for vs in PUBLISHED.values() for v in vs}
    # race_result.txt's system means beside our leaderboard numbers; the per-task pairs decide the row
    assert store.query("SELECT count(*) FROM agreement_pairs WHERE metric = 'race' AND task = ''").item() == 3
    row = store.query("SELECT * FROM agreement WHERE benchmark = 'drb' AND metric = 'race'").row(0, named=True)
    assert (row["n_pairs"], row["n_systems"], row["n_tasks"]) == (9, 3, 3)
    # both sides order the three systems the same way on every task
    assert row["par"] == pytest.approx(1.0) and row["osc"] == pytest.approx(1.0)
    assert row["pearson_r"] is not None and row["pearson_r"] > 0.8
    assert row["judge"] == "heuristic-v1"


def test_an_unchanged_reimport_leaves_nothing_to_run(evaluated, capsys):
    release = evaluated.parent / "deep_research_bench"
    assert main(["--home", str(evaluated), "import", "drb", str(release)]) == 0
    capsys.readouterr()
    assert main(["--home", str(evaluated), "run"]) == 0
    assert "nothing to do" in capsys.readouterr().out
