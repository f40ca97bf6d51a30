"""`dreval verify` on MMDR and DeepResearch Bench published scores: consistent numbers give no
mismatch, a planted one is named and exits 1, an aggregate over more tasks than the release holds
is "not comparable", a value no paper identity allows is named impossible, the MMDR rows that break
Eq. 3 in the release itself are "inconsistent in the release", and a home without published scores
says so."""
from __future__ import annotations

import copy
from pathlib import Path

import polars as pl
import pytest

from dreval_assets.benchmarks.mmdr.published_checks import published_checks as mmdr_checks
from dreval_assets.cli import main
from dreval_assets.releases.published import Check, Rounding, half_unit
from published_releases import (BOARD_ROW, DRB_FACT_ALL, DRB_TASKS, MANIFEST, RESULTS, TASK_ROWS, drb_race_result,
                                write_drb, write_drb_release, write_mmdr)


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
    # mmdr: 3 task Overall, 3 Overall Delta, 3 TRACE, 3 FINAL_MMDR (Q5's is null), 8 leaderboard means, 5 counts;
    # identities: per task row range, VEF, FLAE, EVI (4 x 3) and Q3's closed gate; per results line range and
    # VEF (2 x 4) and Q3's closed gate
    assert "mmdr: 81 published scores; checks 47: matched 47, not comparable 0, inconsistent in the release 0, " \
           "mismatched 0; largest |difference| 0.00333333" in out  # TRACE 35.33 against 106 / 3
    # drb: 5 race_result means (a run over 3 tasks: its means are theirs), per task range and overall within
    # its dimensions (2 x 3), the pooled valid_rate
    assert "drb: 23 published scores; checks 12: matched 12, not comparable 0, inconsistent in the release 0, " \
           "mismatched 0" in out
    assert "MISMATCH" not in out and "IMPOSSIBLE" not in out
    status, out = verify(home, capsys, "drb")
    assert status == 0 and out.startswith("drb:") and "mmdr" not in out


def test_a_planted_task_overall_mismatch_is_named(tmp_path, capsys):
    rows = copy.deepcopy(TASK_ROWS)
    rows[0][3] = "60.00"  # Q1 Overall: 0.2*60 + 0.5*70 + 0.3*40 = 59
    status, out = verify(imported(tmp_path, task_rows=rows), capsys, "mmdr")
    assert status == 1
    assert ("MISMATCH system run-a, task mmdr.q1: task Overall = 0.2 FLAE + 0.5 TRACE + 0.3 MOSAIC (MOSAIC only "
            "when FLAE, TRACE > 0): published 60, recomputed 59") in out
    assert "mismatched 3" in out  # also Q1's Overall Delta and the leaderboard Overall mean


def test_the_gate_and_the_sub_metric_rule_are_the_papers(tmp_path, capsys):
    """Q3 has FLAE 0: a MOSAIC of 80 is impossible, and must not count in its Overall. Sem. is averaged
    over Q1 only: a mean over all three tasks (an empty cell as 0) would be 16.67, not the published 50.00."""
    rows = copy.deepcopy(TASK_ROWS)
    rows[2][15] = "80.00"  # Q3 MOSAIC with the gate closed
    rows[2][3] = "30.00"  # what Overall would be with MOSAIC counted: 6 + 0.3*80
    board = list(BOARD_ROW)
    board[6] = "16.67"
    status, out = verify(imported(tmp_path, task_rows=rows, board_row=board), capsys, "mmdr")
    assert status == 1
    assert "IMPOSSIBLE system run-a, task mmdr.q3: task MOSAIC is 0 with the gate closed (FLAE or TRACE 0): " \
           "published 80, nearest possible 0" in out
    assert "task mmdr.q3: task Overall" in out and "published 30, recomputed 6" in out
    assert "leaderboard Sem. = mean of the task rows over the tasks where it applies: published 16.67, " \
           "recomputed 50" in out


def test_trace_and_results_totals_are_checked_against_evi(tmp_path, capsys):
    results = copy.deepcopy(RESULTS)
    results[1]["scores"]["EVI"] = 0.5  # Q2: TRACE 24.00 = 0.6*40 + 0.4*0; 0.6*50 would be 30
    status, out = verify(imported(tmp_path, results=results), capsys, "mmdr")
    assert status == 1
    assert "task mmdr.q2: task TRACE = 0.6 EVI (results jsonl) + 0.4 Vef.: published 24, recomputed 30" in out
    assert "task mmdr.q2: results FINAL_MMDR" in out and "published 21.1, recomputed 24.1" in out
    # an EVI of 50 above Con. 41, Cov. 38, Fid. 41: Eq. 3, which the release breaks itself
    assert "inconsistent in the release 1," in out
    assert "inconsistent in the release: system run-a, task mmdr.q2: task EVI (results jsonl) is a weighted mean " \
           "of Con., Cov., Fid. (Eq. 3): published 50, nearest possible 41; allowed 38-41" in out


def test_planted_impossible_values_are_caught_and_named(tmp_path, capsys):
    """VEF 50 (a pass/fail), READ = INSH = STRU = 10 under FLAE 60, a score above 100: each a mismatch."""
    rows = copy.deepcopy(TASK_ROWS)
    rows[1][11] = "50.00"  # Q2 Vef.
    rows[0][7:10] = ["10.00", "10.00", "10.00"]  # Q1 Read./Insh./Stru. under FLAE 60.00
    rows[1][14] = "141.00"  # Q2 Fid. above 100
    results = copy.deepcopy(RESULTS)
    results[0]["scores"]["VEF"] = 0.5  # Q1's results line: VEF 50 (its TRACE then breaks too)
    status, out = verify(imported(tmp_path, task_rows=rows, results=results), capsys, "mmdr")
    assert status == 1
    assert "IMPOSSIBLE system run-a, task mmdr.q2: task VEF is a strict pass/fail: published 50, nearest possible 0 " \
           "(difference 50, allowed 1e-07); allowed 0 or 100" in out
    assert "IMPOSSIBLE system run-a, task mmdr.q1: results VEF is a strict pass/fail: published 50" in out
    assert "IMPOSSIBLE system run-a, task mmdr.q1: task FLAE is a weighted mean of READ, INSH, STRU: published 60, " \
           "nearest possible 10" in out
    assert "IMPOSSIBLE system run-a, task mmdr.q2: task scores within 0-100: published 141, nearest possible 100" \
           in out and "the farthest out: Fid." in out


def test_release_rows_breaking_eq3_are_inconsistent_in_the_release_not_mismatches(tmp_path, capsys):
    """Rows shaped like the release's own: an EVI above the largest of CON, COV, FID (its Q4, Q111) and
    EVI 0 with FID 100 (its Q2, Q8, Q109). Verify lists them and still exits 0."""
    rows = copy.deepcopy(TASK_ROWS)
    rows[1][12:15] = ["0.00", "0.00", "100.00"]  # Q2: Con. 0, Cov. 0, Fid. 100 ...
    rows[1][10], rows[1][3], rows[1][4] = "0.00", "9.10", "9.10"  # ... with TRACE 0: EVI 0 (and Overall 0.2*45.5)
    rows[0][12:15] = ["8.40", "0.00", "0.00"]  # Q1: EVI 50 above Con. 8.4, Cov. 0, Fid. 0
    board = list(BOARD_ROW)
    board[1], board[3] = "24.70", "27.33"  # Overall (59 + 9.1 + 6) / 3, TRACE (70 + 0 + 12) / 3
    results = copy.deepcopy(RESULTS)
    results[1]["scores"].update(EVI=0.0, FINAL_MMDR=0.091)
    status, out = verify(imported(tmp_path, task_rows=rows, board_row=board, results=results), capsys, "mmdr")
    assert status == 0, out
    assert "inconsistent in the release 2, mismatched 0" in out
    assert "inconsistent in the release: system run-a, task mmdr.q1: task EVI (results jsonl) is a weighted mean " \
           "of Con., Cov., Fid. (Eq. 3): published 50, nearest possible 8.4; allowed 0-8.4; Con. 8.4, Cov. 0, Fid. 0" \
           in out
    assert "inconsistent in the release: system run-a, task mmdr.q2: task EVI (results jsonl) is 0 only when Con., " \
           "Cov. and Fid. all are (each part weighs > 0): published 100, nearest possible 0; allowed 0; EVI 0 with " \
           "Fid. 100" in out
    assert "MISMATCH" not in out and "IMPOSSIBLE" not in out


def test_evi_is_derived_from_trace_where_no_results_line_gives_it(tmp_path, capsys):
    rows = copy.deepcopy(TASK_ROWS)
    rows[0][12:15] = ["8.40", "0.00", "0.00"]  # Q1: TRACE 70 with Vef. 100 gives EVI 50
    results = [r for r in RESULTS if r["qid"] != "Q1"]
    status, out = verify(imported(tmp_path, task_rows=rows, results=results), capsys, "mmdr")
    assert status == 0, out
    assert "inconsistent in the release: system run-a, task mmdr.q1: task EVI = (TRACE - 0.4 Vef.) / 0.6 is a " \
           "weighted mean of Con., Cov., Fid. (Eq. 3): published 50, nearest possible 8.4" in out


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
    manifest["contributing_counts"]["Overall"] = 2
    status, out = verify(imported(tmp_path, manifest=manifest), capsys, "mmdr")
    assert status == 1
    assert "manifest contributing tasks of overall = task rows of the release it is averaged over: published 2, " \
           "recomputed 3" in out


def test_an_mmdr_leaderboard_without_manifest_over_more_tasks_is_not_comparable(tmp_path, capsys):
    board = list(BOARD_ROW)
    board[1] = "49.41"  # over the benchmark's 140 tasks, no manifest to say so
    release = write_mmdr(tmp_path / "mmdr", board_row=board)
    (release / "reference_outputs" / "run-a" / "run-a.leaderboard_manifest.json").unlink()
    home = str(tmp_path / "home")
    assert main(["--home", home, "import", "mmdr", str(release)]) == 0
    status, out = verify(home, capsys, "mmdr")
    assert status == 0, out
    assert "not comparable (1): leaderboard Overall = mean of the task rows over all tasks: the release holds 3 of " \
           "the benchmark's 140 tasks; the published aggregate differs from the one over those 3 (28.7)" in out


def test_drb_planted_mismatches_on_a_full_release(tmp_path, capsys):
    """All 100 tasks present: race_result.txt and fact_result.txt are comparable; a changed mean and a
    citation count changed by 10 (its valid_rate no longer the ratio) are caught."""
    home = str(tmp_path / "home")
    race = drb_race_result(DRB_TASKS)
    insight = next(line for line in race.splitlines() if line.startswith("Insight"))
    planted = race.replace(insight, f"Insight: {float(insight.split()[1]) + 0.01:.4f}")
    release = write_drb_release(tmp_path / "drb", DRB_TASKS, planted,
                                DRB_FACT_ALL.replace("total_valid_citations: 18.7600", "total_valid_citations: 28.7600"))
    assert main(["--home", home, "import", "drb", str(release)]) == 0
    status, out = verify(home, capsys)
    assert status == 1
    assert "checks 206: matched 204, not comparable 0, inconsistent in the release 0, mismatched 2" in out
    assert "MISMATCH system model-y, task (system aggregate): race_result Insight = mean over raw_results tasks: " \
           "published 0.4" in out
    assert "fact_result valid_rate = total_valid_citations / total_citations (pooled): published 0.8, " \
           "recomputed 1.22644" in out


def test_drb_partial_release_aggregates_are_not_comparable_with_the_counts(tmp_path, capsys):
    """4 of the 100 tasks, with race_result.txt and fact_result.txt over all 100: no false alarm."""
    home = str(tmp_path / "home")
    release = write_drb_release(tmp_path / "drb", DRB_TASKS[:4], drb_race_result(DRB_TASKS))
    assert main(["--home", home, "import", "drb", str(release)]) == 0
    status, out = verify(home, capsys)
    assert status == 0, out
    assert "drb: 28 published scores; checks 14: matched 9, not comparable 5, inconsistent in the release 0, " \
           "mismatched 0" in out
    for label in ("Comprehensiveness", "Insight", "Instruction Following", "Readability", "Overall Score"):
        assert f"not comparable (1): race_result {label} = mean over raw_results tasks: the release holds 4 of the " \
               f"benchmark's 100 tasks; the published aggregate differs from the one over those 4" in out


def test_drb_partial_release_planted_overall_breaking_its_identity_is_caught(tmp_path, capsys):
    """Task 1 scores 0.44 on all four dimensions: an overall of 0.45 cannot be a weighted mean of them."""
    home = str(tmp_path / "home")
    tasks = copy.deepcopy(DRB_TASKS[:4])
    tasks[0]["overall_score"] = round(tasks[0]["overall_score"] + 0.01, 4)
    release = write_drb_release(tmp_path / "drb", tasks, drb_race_result(DRB_TASKS))
    assert main(["--home", home, "import", "drb", str(release)]) == 0
    status, out = verify(home, capsys)
    assert status == 1
    assert "mismatched 1" in out
    assert "IMPOSSIBLE system model-y, task drb.1: task overall_score = T/(T+R) lies within its four dimensions' " \
           "scores (a weighted mean of them): published 0.45, nearest possible 0.44" in out


def test_drb_task_scores_outside_0_1_are_impossible(tmp_path, capsys):
    home = str(tmp_path / "home")
    tasks = copy.deepcopy(DRB_TASKS[:4])
    tasks[2]["readability"] = 1.2
    release = write_drb_release(tmp_path / "drb", tasks, drb_race_result(DRB_TASKS))
    assert main(["--home", home, "import", "drb", str(release)]) == 0
    status, out = verify(home, capsys)
    assert status == 1
    assert "IMPOSSIBLE system model-y, task drb.3: task RACE scores within 0-1: published 1.2, nearest possible 1" \
           in out


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
