"""`dreval verify` on MMDR and DeepResearch Bench published scores: consistent numbers give no
mismatch, a planted one is named and exits 1, an aggregate over more tasks than the release holds
is "not comparable", and a home without published scores says so."""
from __future__ import annotations

import copy
from pathlib import Path

import polars as pl
import pytest

from dreval_assets.benchmarks.mmdr.published_checks import published_checks as mmdr_checks
from dreval_assets.cli import main
from dreval_assets.releases.published import Check, Rounding, half_unit
from published_releases import BOARD_ROW, MANIFEST, RACE_RESULT, RESULTS, TASK_ROWS, write_drb, write_mmdr


def imported(tmp_path: Path, **mmdr_changes) -> str:
    home = str(tmp_path / "home")
    assert main(["--home", home, "import", "mmdr", str(write_mmdr(tmp_path / "mmdr", **mmdr_changes))]) == 0
    return home


def verify(home: str, capsys, *benchmark: str) -> tuple[int, str]:
    capsys.readouterr()
    status = main(["--home", home, "verify", *benchmark])
    return status, capsys.readouterr().out


def test_consistent_releases_verify_with_no_mismatch(tmp_path, capsys):
    home = imported(tmp_path)
    assert main(["--home", home, "import", "drb", str(write_drb(tmp_path / "drb"))]) == 0
    status, out = verify(home, capsys)
    assert status == 0, out
    # mmdr: 3 task Overall, 3 Overall Delta, 3 TRACE, 3 FINAL_MMDR (Q5's is null), 8 leaderboard means, 5 counts
    assert "mmdr: 81 published scores; aggregates checked 25, matched 25, mismatched 0, not comparable 0; " \
           "largest |difference| 0.00333333" in out  # Overall 30.37 against 91.10 / 3
    assert "drb: 23 published scores; aggregates checked 6, matched 6, mismatched 0, not comparable 0" in out
    assert "MISMATCH" not in out
    status, out = verify(home, capsys, "drb")
    assert status == 0 and out.startswith("drb:") and "mmdr" not in out


def test_a_planted_task_overall_mismatch_is_named(tmp_path, capsys):
    rows = copy.deepcopy(TASK_ROWS)
    rows[0][3] = "55.00"  # Q1 Overall: 0.2*60 + 0.5*60 + 0.3*40 = 54
    status, out = verify(imported(tmp_path, task_rows=rows), capsys, "mmdr")
    assert status == 1
    assert ("MISMATCH system run-a, task mmdr.q1: task Overall = 0.2 FLAE + 0.5 TRACE + 0.3 MOSAIC (MOSAIC only "
            "when FLAE, TRACE > 0): published 55, recomputed 54") in out
    assert "mismatched 3" in out  # also Q1's Overall Delta and the leaderboard Overall mean


def test_the_gate_and_the_sub_metric_rule_are_the_papers(tmp_path, capsys):
    """Q3 has FLAE 0: its MOSAIC 80 must not count. Sem. is averaged over Q1 and Q3 only: a mean over
    all three tasks (an empty cell as 0) would be 46.67, not the published 70.00."""
    rows = copy.deepcopy(TASK_ROWS)
    rows[2][3] = "40.00"  # what Overall would be with MOSAIC counted: 16 + 0.3*80
    board = list(BOARD_ROW)
    board[6] = "46.67"
    status, out = verify(imported(tmp_path, task_rows=rows, board_row=board), capsys, "mmdr")
    assert status == 1
    assert "task mmdr.q3: task Overall" in out and "published 40, recomputed 16" in out
    assert "leaderboard Sem. = mean of the task rows over the tasks where it applies: published 46.67, " \
           "recomputed 70" in out


def test_trace_and_results_totals_are_checked_against_evi(tmp_path, capsys):
    results = copy.deepcopy(RESULTS)
    results[1]["scores"]["EVI"] = 0.5  # Q2: TRACE 24.00 = 0.6*40 + 0.4*0; 0.6*50 would be 30
    status, out = verify(imported(tmp_path, results=results), capsys, "mmdr")
    assert status == 1
    assert "task mmdr.q2: task TRACE = 0.6 EVI (results jsonl) + 0.4 Vef.: published 24, recomputed 30" in out
    assert "task mmdr.q2: results FINAL_MMDR" in out and "published 21.1, recomputed 24.1" in out


def test_a_manifest_counting_more_tasks_than_the_release_holds_is_not_compared(tmp_path, capsys):
    manifest = copy.deepcopy(MANIFEST)
    manifest["contributing_counts"]["Overall"] = 140
    board = list(BOARD_ROW)
    board[1] = "49.41"  # a mean over 140 tasks: the 3 rows here cannot say whether it is right
    status, out = verify(imported(tmp_path, manifest=manifest, board_row=board), capsys, "mmdr")
    assert status == 0, out
    assert "not comparable 2" in out
    assert "not comparable (1): leaderboard Overall = mean of the task rows over all tasks: the manifest counts " \
           "140 contributing tasks; the release holds 3" in out
    assert "the release holds 3 of the 140 tasks the manifest counts" in out


def test_a_manifest_counting_fewer_tasks_than_present_is_a_mismatch(tmp_path, capsys):
    manifest = copy.deepcopy(MANIFEST)
    manifest["contributing_counts"]["Sem."] = 1
    status, out = verify(imported(tmp_path, manifest=manifest), capsys, "mmdr")
    assert status == 1
    assert "manifest contributing tasks of sem = task rows of the release it is averaged over: published 1, " \
           "recomputed 2" in out


def test_drb_planted_mismatches(tmp_path, capsys):
    home = str(tmp_path / "home")
    release = write_drb(tmp_path / "drb", race_result=RACE_RESULT.replace("Insight: 0.4400", "Insight: 0.4500"),
                        fact_result="total_citations: 200\ntotal_valid_citations: 150\nvalid_rate: 0.7123\n")
    assert main(["--home", home, "import", "drb", str(release)]) == 0
    status, out = verify(home, capsys)
    assert status == 1
    assert "mismatched 2" in out
    assert "MISMATCH system model-x, task (system aggregate): race_result Insight = mean over raw_results tasks: " \
           "published 0.45, recomputed 0.44" in out
    assert "fact_result valid_rate = total_valid_citations / total_citations (pooled): published 0.7123, " \
           "recomputed 0.75" in out


def test_no_published_scores_is_a_clear_error(tmp_path, capsys):
    home = str(tmp_path / "home")
    assert main(["--home", home, "verify"]) == 2
    assert "is not a dreval home" in capsys.readouterr().err  # and nothing is created
    assert main(["--home", home, "init"]) == 0
    assert main(["--home", home, "verify"]) == 2
    assert "no published scores are imported" in capsys.readouterr().err
    imported(tmp_path)
    assert main(["--home", home, "verify", "drb"]) == 2
    assert "no published scores for drb are imported" in capsys.readouterr().err
    assert main(["--home", home, "verify", "nosuch"]) == 2


def test_rounding_reads_a_columns_decimals():
    assert half_unit(49.41) == pytest.approx(0.005) and half_unit(0.4267) == pytest.approx(0.00005)
    assert half_unit(54.0) == 0.5  # 54.00 alone shows no decimals ...
    rounding = Rounding([("f.csv", "Overall", 54.0), ("f.csv", "Overall", 21.1), ("f.csv", "Overall", 30.37),
                         ("r.txt", "Insight", 0.44), ("r.txt", "Overall Score", 0.4267)])
    assert rounding.half("f.csv", "Overall") == pytest.approx(0.005)  # ... its column shows two
    assert rounding.half("r.txt", "Insight") == pytest.approx(0.00005)  # one value: the file's decimals


def test_checks_match_within_rounding_only():
    check = Check("mmdr", "x", "s", "", published=30.37, recomputed=30.3667, tolerance=0.01)
    assert check.matched
    assert not Check("mmdr", "x", "s", "", 30.37, 30.39, 0.01).matched
    assert not Check("mmdr", "x", "s", "", 30.37, None, 1.0).matched


def test_checks_read_only_the_rows_given():
    """The check function works on the table's rows alone (no store): an empty frame yields nothing."""
    empty = pl.DataFrame(schema={"benchmark": pl.String, "system": pl.String, "task": pl.String,
                                 "metric": pl.String, "value": pl.Float64, "scale": pl.String,
                                 "published_metric": pl.String, "published_value": pl.Float64,
                                 "file": pl.String, "line": pl.Int32, "import_id": pl.String})
    assert list(mmdr_checks(empty)) == []
