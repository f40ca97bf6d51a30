"""`dreval import` reads the score files a release publishes into `published_scores`: MMDR reference
outputs and results, DeepResearch Bench RACE and FACT results; whole records or none, re-import
replaces, a folder of published files alone imports those."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dreval_assets.cli import main
from dreval_assets.operations.importer import ImportFailed, import_release
from dreval_assets.store.db import Store
from published_releases import TASK_HEADER, TASK_ROWS, write_drb, write_mmdr
from release_helpers import RELEASES


def store_at(home: Path) -> Store:
    store = Store(home / "dreval.duckdb")
    store.ensure_schema()
    return store


def rows(store: Store, where: str = "true") -> dict[tuple, dict]:
    """(system, task, metric) -> the row, for the rows users read."""
    frame = store.query(f"SELECT * FROM published_scores WHERE {where}")
    return {(r["system"], r["task"], r["metric"]): r for r in frame.iter_rows(named=True)}


def problems(store: Store, import_id: str) -> list[str]:
    return [f"{k} {f}:{line}: {r}" for k, f, line, r in store.query(
        "SELECT kind, file, line, reason FROM import_problems WHERE import_id = ? ORDER BY file, line",
        [import_id]).iter_rows()]


@pytest.fixture()
def mmdr_only(tmp_path) -> tuple[Store, object]:
    store = store_at(tmp_path / "home")
    return store, import_release(store, "mmdr", write_mmdr(tmp_path / "mmdr"))


def test_mmdr_task_scores_csv_with_bom_crlf_and_empty_cells(mmdr_only):
    store, summary = mmdr_only
    got = rows(store, "file LIKE '%task_scores.csv'")
    q1 = got[("run-a", "mmdr.q1", "overall")]
    assert (q1["value"], q1["scale"], q1["published_metric"], q1["published_value"], q1["line"]) == \
        (59.0, "0-100", "Overall", 59.0, 2)
    assert q1["file"] == "reference_outputs/run-a/run-a.task_scores.csv"
    assert got[("run-a", "mmdr.q2", "sem")]["value"] is None  # empty MOSAIC sub-metric: a NULL, not a 0
    assert got[("run-a", "mmdr.q2", "mosaic")]["value"] == 0.0
    assert got[("run-a", "mmdr.q1", "vqa")]["value"] == 70.0
    assert got[("run-a", "mmdr.q3", "vqa")]["value"] is None
    assert got[("run-a", "mmdr.q1", "stored_overall")]["value"] == 58.9
    assert {m for (_, t, m) in got if t == "mmdr.q1"} == {
        "overall", "stored_overall", "overall_delta", "flae", "read", "insh", "stru", "trace", "vef", "con", "cov",
        "fid", "mosaic", "sem", "acc", "vqa"}
    # the malformed row is skipped whole, with its line, and nothing of it is stored
    assert not [k for k in got if k[1] == "mmdr.q4"]
    assert "skipped reference_outputs/run-a/run-a.task_scores.csv:5: column 'FLAE': 'abc' is not a number" in \
        problems(store, summary.import_id)


def test_mmdr_leaderboard_manifest_and_results(mmdr_only):
    store, _ = mmdr_only
    board = rows(store, "task = '' AND file LIKE '%leaderboard.csv'")
    assert board[("run-a", "", "overall")]["value"] == 28.7
    assert board[("run-a", "", "sem")]["value"] == 50.0
    counts = rows(store, "scale = 'count'")
    assert {k[2]: r["value"] for k, r in counts.items()} == {
        "overall.n_tasks": 3, "mosaic.n_tasks": 3, "sem.n_tasks": 1, "acc.n_tasks": 1, "vqa.n_tasks": 1}
    assert counts[("run-a", "", "sem.n_tasks")]["published_metric"] == "contributing_counts.Sem."
    assert counts[("run-a", "", "sem.n_tasks")]["line"] is None
    results = rows(store, "file = 'results/run-a.jsonl'")
    gen = results[("run-a", "mmdr.q2", "flae")]  # a 0-1 file: x100 onto our scale, as written kept beside
    assert (gen["value"], gen["published_value"], gen["published_metric"], gen["line"]) == \
        (pytest.approx(45.5), 0.455, "scores.GEN", 2)
    assert results[("run-a", "mmdr.q1", "evi")]["value"] == pytest.approx(50.0)
    assert results[("run-a", "mmdr.q5", "overall")]["value"] is None  # a null total stays NULL
    assert results[("run-a", "mmdr.q5", "overall")]["published_value"] is None


def test_a_folder_of_published_files_alone_imports_them(mmdr_only, capsys):
    store, summary = mmdr_only
    assert summary.published_only
    assert store.query("SELECT count(*) AS n FROM registered_tasks")["n"][0] == 0
    text = "\n".join(summary.lines())
    assert "only its published scores were imported" in text
    assert "reference_outputs/run-a/run-a.task_scores.csv: 48 (run-a)" in text  # 3 rows x 16 metrics
    assert "results/run-a.jsonl: 20 (run-a)" in text
    assert "published scores: 81 from 4 file(s), 1 system(s)" in text
    assert not [p for p in problems(store, summary.import_id) if "cannot open" in p or "quiz" in p]


def test_reimport_replaces_each_file_rows(tmp_path):
    store = store_at(tmp_path / "home")
    release = write_mmdr(tmp_path / "mmdr")
    first = import_release(store, "mmdr", release)
    before = store.query("SELECT * EXCLUDE (import_id) FROM published_scores ORDER BY ALL")
    second = import_release(store, "mmdr", release)
    after = store.query("SELECT * EXCLUDE (import_id) FROM published_scores ORDER BY ALL")
    assert after.equals(before) and after.height == 81
    assert set(store.query("SELECT DISTINCT import_id FROM published_scores")["import_id"]) == {second.import_id}
    assert first.import_id != second.import_id
    assert len(first.published_changed) == 4 and second.published_changed == []  # the same files change nothing
    # a changed file replaces its own rows only
    write_mmdr(release, task_rows=TASK_ROWS[:1])
    third = import_release(store, "mmdr", release)
    assert "reference_outputs/run-a/run-a.task_scores.csv" in third.published_changed
    by_file = dict(store.query("SELECT file, count(*) FROM published_scores GROUP BY file").iter_rows())
    assert by_file["reference_outputs/run-a/run-a.task_scores.csv"] == 16
    assert by_file["results/run-a.jsonl"] == 20


def test_drb_race_and_fact_results(tmp_path):
    store = store_at(tmp_path / "home")
    summary = import_release(store, "drb", write_drb(tmp_path / "drb"))
    got = rows(store)
    task = got[("model-x", "drb.1", "race")]
    assert (task["value"], task["published_value"], task["published_metric"], task["scale"]) == \
        (pytest.approx(44.0), 0.44, "overall_score", "0-100")
    assert got[("model-x", "drb.2", "instruction_following")]["value"] == pytest.approx(50.0)
    overall = got[("model-x", "", "race")]
    assert (overall["value"], overall["published_metric"], overall["line"]) == \
        (pytest.approx(42.67), "Overall Score", 5)
    assert got[("model-x", "", "instruction_following")]["published_value"] == 0.45
    assert got[("model-x", "", "fact_accuracy")]["value"] == pytest.approx(75.0)
    assert got[("model-x", "", "total_citations")]["value"] == 200
    # stat.py's total_valid_citations is per task with citations: our effective citations, so agreement pairs it
    effective = got[("model-x", "", "effective_citations")]
    assert (effective["value"], effective["scale"], effective["published_metric"]) == (150, "count",
                                                                                       "total_valid_citations")
    assert ("model-x", "", "total_valid_citations") not in got
    assert not [k for k in got if k[1] in ("drb.4", "drb.9")]
    found = problems(store, summary.import_id)
    assert any(p.startswith("skipped results/race/Model X/raw_results.jsonl:2: malformed JSON") for p in found)
    assert "skipped results/race/Model X/raw_results.jsonl:5: insight: 'high' is not a number" in found
    assert summary.published_only
    assert "published scores by system: model-x 23" in summary.lines()


def test_a_result_file_with_a_bad_line_is_skipped_whole(tmp_path):
    store = store_at(tmp_path / "home")
    release = write_drb(tmp_path / "drb", race_result="Comprehensiveness: 0.4\nInsight: n/a?\n")
    summary = import_release(store, "drb", release)
    assert not rows(store, "file LIKE '%race_result.txt'")
    assert "skipped results/race/Model X/race_result.txt:2: Insight: 'n/a?' is not a number; file not imported" \
        in problems(store, summary.import_id)


def test_a_full_release_imports_tasks_reports_and_published_scores(tmp_path):
    release = tmp_path / "drb"
    shutil.copytree(RELEASES / "drb", release)
    write_drb(release)
    store = store_at(tmp_path / "home")
    summary = import_release(store, "drb", release)
    assert not summary.published_only and summary.tasks["new"] > 0 and sum(summary.reports.values()) > 0
    systems = set(store.query("SELECT DISTINCT system FROM published_scores")["system"])
    assert systems == {"alpha-dr", "model-x"}  # the fixture's own raw_results too


def test_a_folder_with_neither_tasks_nor_published_files_is_refused(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ImportFailed, match="not an MMDeepResearch-Bench release"):
        import_release(store_at(tmp_path / "home"), "mmdr", tmp_path / "empty")
    assert main(["--home", str(tmp_path / "home"), "import", "drb", str(tmp_path / "empty")]) == 2


def test_the_cli_summary_counts_published_scores(tmp_path, capsys):
    release = write_mmdr(tmp_path / "mmdr")
    (release / "reference_outputs" / "run-a" / "run-a.task_scores.csv").write_bytes(
        ",".join(TASK_HEADER).encode() + b"\n" + ",".join(TASK_ROWS[0]).encode() + b"\n")  # plain UTF-8, LF
    assert main(["--home", str(tmp_path / "home"), "import", "mmdr", str(release)]) == 0
    out = capsys.readouterr().out
    assert "reference_outputs/run-a/run-a.task_scores.csv: 16 (run-a)" in out
    assert "published scores by system: run-a" in out
