"""Who is at fault: the leaderboard rows users read count a `not_applicable` task as no task, never rank
systems by what our judge could not judge, compute composites only over complete tasks, and carry
partial judging into validity. TVIR's zero rules: a report without figures scores 0 on each visual
metric; a system without a figure anywhere is not applicable for VA and Overall.

Rows are metric_scores rows built by hand (as the stages write them) or by the suites from evidence."""
from __future__ import annotations

import polars as pl
import pytest

from dreval_assets.benchmarks.aggregation import TaskValue, validity
from dreval_assets.benchmarks.evidence import ClaimEvidence, ReportEvidence, SourceVerdict
from dreval_assets.benchmarks.suites import SUITES
from dreval_assets.core.metrics import JUDGE_LIMIT
from dreval_assets.judges.base import JudgmentRequest
from dreval_assets.judges.heuristic import HeuristicJudge
from dreval_assets.core.models import ContradictionCount
from dreval_assets.presentation.leaderboard_view import leaderboard_tables, render, wide_leaderboard
from dreval_assets.stages.frames import frame
from dreval_assets.stages.leaderboard import build_leaderboard

BLIND = JUDGE_LIMIT + "the offline judge cannot see images: MOSAIC's DATACHART item"


def row(system: str, task: str, metric: str, value: float | None, suite: str = "mmdr", reason: str | None = None,
        detail: str = "", judge: str = "judge-a", **extra) -> dict:
    return {"system": system, "task": task, "suite": suite, "metric": metric, "value": value, "scale": "0-100",
            "n_items": 1, "na_reason": reason if value is None else None, "detail": detail, "policy": "",
            "judge": judge, **extra}


def board(rows: list[dict]) -> dict[tuple[str, str], dict]:
    built = build_leaderboard(frame("metric_scores", rows))
    return {(r["system"], r["metric"]): r for r in built.iter_rows(named=True)}


# -- not applicable


def test_not_applicable_tasks_are_no_tasks_of_the_metric():
    rows = [row("a", "t1", "sem", 60.0), row("a", "t2", "sem", None, reason="not_applicable",
                                              detail="no PHOTO item in the report"),
            row("b", "t1", "sem", None, reason="not_applicable", detail="no PHOTO item in the report"),
            row("b", "t2", "sem", None, reason="not_applicable", detail="no PHOTO item in the report")]
    got = board(rows)
    a, b = got[("a", "sem")], got[("b", "sem")]
    assert (a["mean"], a["n_scored"], a["n_tasks"], a["coverage"], a["validity"]) == (60.0, 1, 1, 1.0, 1.0)
    assert a["status"] == "scored" and a["rank"] == 1
    assert b["status"] == "not_applicable" and b["mean"] is None and b["validity"] is None and b["rank"] is None
    assert b["coverage"] is None and "no PHOTO item" in b["coverage_note"]
    table, = leaderboard_tables(build_leaderboard(frame("metric_scores", rows)))
    cells = dict(wide_leaderboard(table).select("system", "mmdr.sem").iter_rows())
    assert cells == {"a": "60.0 (1/1)", "b": "not applicable"}


def test_validity_counts_partial_judging_and_ignores_not_applicable_rows():
    rows = [TaskValue(80.0, judged_share=0.25, unjudged_reason="data_accessibility"),  # 1 of 4 sources read
            TaskValue(None, na_reason="not_applicable"), TaskValue(50.0)]
    assert validity(rows) == pytest.approx((0.25 + 0.75 * 0.9 + 1.0) / 2)
    assert validity([TaskValue(None, na_reason="not_applicable")]) is None


def test_a_partly_judged_score_carries_its_share_into_the_board():
    rows = [row("a", "t1", "con", 100.0, judged_share=1 / 21, unjudged_reason="data_accessibility"),
            row("b", "t1", "con", 50.0)]
    got = board(rows)
    assert got[("a", "con")]["validity"] == pytest.approx(1 / 21 + 20 / 21 * 0.9)
    assert got[("a", "con")]["adjusted_mean"] < 100.0 and got[("b", "con")]["validity"] == 1.0


# -- our judge's limits


def test_a_blind_judge_decides_no_ranking():
    """MMDR on the offline demo: the system without images scores MOSAIC 0 and Overall 29.9; the two
    with images cannot be judged. Nobody is ranked on them; the two are not comparable, not failed."""
    rows = [row("quiet", "t1", "mosaic", 0.0), row("quiet", "t1", "overall", 29.91),
            row("careful", "t1", "mosaic", None, reason="pipeline_failure",
                detail=f"1 of 1 items not judged ({BLIND})"),
            row("careful", "t1", "overall", None, reason="pipeline_failure", detail="needs mosaic: mosaic N/A (…)"),
            row("loose", "t1", "mosaic", None, reason="pipeline_failure", detail=f"1 of 1 items not judged ({BLIND})"),
            row("loose", "t1", "overall", None, reason="pipeline_failure", detail="needs mosaic: mosaic N/A (…)")]
    got = board(rows)
    for metric in ("mosaic", "overall"):  # overall is limited through its part, whatever its own detail says
        assert all(got[(s, metric)]["rank"] is None for s in ("quiet", "careful", "loose"))
        assert got[("careful", metric)]["status"] == got[("loose", metric)]["status"] == "not_comparable"
        assert "the judge, not the system" in got[("careful", metric)]["coverage_note"]
        assert got[("quiet", metric)]["status"] == "scored"
        assert "our judge could not judge careful, loose" in got[("quiet", metric)]["coverage_note"]
    table = leaderboard_tables(build_leaderboard(frame("metric_scores", rows)))[0]
    cells = dict(wide_leaderboard(table).select("system", "mmdr.overall").iter_rows())
    assert cells["careful"] == "not comparable (0/1)" and cells["quiet"].startswith("29.91 (1/1)")


def test_tasks_the_judge_could_not_read_for_everyone_leave_the_rest_ranked():
    """A Chinese task the offline judge reads for nobody: ranks rest on the tasks it read for all."""
    zh = dict(reason="pipeline_failure", detail=JUDGE_LIMIT + "heuristic judge does not read Chinese (zh)")
    rows = [row("a", "en", "cs", 80.0, suite="tvir"), row("a", "zh", "cs", None, suite="tvir", **zh),
            row("b", "en", "cs", 60.0, suite="tvir"), row("b", "zh", "cs", None, suite="tvir", **zh)]
    got = board(rows)
    assert (got[("a", "cs")]["rank"], got[("b", "cs")]["rank"]) == (1, 2)
    assert got[("a", "cs")]["status"] == "scored" and "1 of 2 task(s) not judged" in got[("a", "cs")]["coverage_note"]


def test_offline_judge_limits_are_ours_never_the_systems():
    judge = HeuristicJudge()
    report = "渡轮在二零二三年运送了四万一千名乘客。" * 5
    zh, = judge.judge_many([JudgmentRequest("tvir/contradictions", {"report": report}, ContradictionCount)])
    assert zh.answer is None and zh.na_reason == "pipeline_failure" and zh.error.startswith(JUDGE_LIMIT)


# -- composites over complete tasks


def miroeval_rows(system: str, parts: dict[str, dict[str, float | None]]) -> list[dict]:
    rows = []
    for task, values in parts.items():
        for metric, value in values.items():
            rows.append(row(system, task, metric, value, suite="miroeval", reason="data_accessibility",
                            detail="no trace in the release"))
        complete = all(v is not None for v in values.values())
        rows.append(row(system, task, "overall", sum(values.values()) / 3 if complete else None, suite="miroeval",
                        reason="data_accessibility", detail="needs …"))
    return rows


def test_a_composite_without_a_complete_task_has_no_number_and_no_rank():
    """MiroEval Overall was 41.49 and #1 with 0 of 6 tasks having all three layers."""
    scattered = miroeval_rows("scattered", {
        "t1": {"synthesis": 60.0, "factuality": None, "process": None},
        "t2": {"synthesis": None, "factuality": 80.0, "process": None},
        "t3": {"synthesis": None, "factuality": None, "process": 50.0}})
    complete = miroeval_rows("complete", {
        "t1": {"synthesis": 40.0, "factuality": 50.0, "process": 30.0},
        "t2": {"synthesis": 20.0, "factuality": None, "process": 30.0}})
    got = board(scattered + complete)
    s, c = got[("scattered", "overall")], got[("complete", "overall")]
    assert s["mean"] is None and s["rank"] is None and "no task has every part of overall" in s["coverage_note"]
    assert c["mean"] == pytest.approx(40.0)  # t1 only: mean(40, 50, 30), not mean(30, 50, 30)
    assert c["rank"] == 1 and c["n_scored"] == 1


def test_dr3_avg_does_not_mix_one_task_and_two_task_means():
    parts = ("ir", "cc", "fa", "if", "dq")
    rows = []
    for task, fa in (("t1", 100.0), ("t2", None)):
        for p in parts:
            value = fa if p == "fa" else (20.0 if task == "t1" else 60.0)
            rows.append(row("s", task, p, value, suite="dr3", reason="data_accessibility", detail="x"))
        rows.append(row("s", task, "avg", None if fa is None else (4 * 20.0 + fa) / 5, suite="dr3",
                        reason="data_accessibility", detail="needs fa"))
    got = board(rows)
    assert got[("s", "avg")]["mean"] == pytest.approx((4 * 20.0 + 100.0) / 5)  # t1 alone, not IR over t1 and t2


# -- TVIR's zero rules


TEXT = {"tvir.wq.a": 8.0, "tvir.adb.a": 5.0, "tvir.flc.count": 0.0}
URL = "https://a.example/1"


def tvir_evidence(system: str, task: str, figures: list[dict]) -> ReportEvidence:
    claims = [ClaimEvidence("c1", "sentence", "The ferry carried 1.2 million people in 2023.", (URL,), (),
                            (SourceVerdict(URL, "supported"),))]
    return ReportEvidence(system, task, "tvir", "judge-a", claims=claims, checklist=[1.0], rubric_scores=dict(TEXT),
                          figures=figures)


def scored_rows(evidence: ReportEvidence) -> list[dict]:
    from dataclasses import asdict
    return [{"system": evidence.system, "task": evidence.task, **asdict(v)} for v in SUITES["tvir"].score(evidence)]


def test_a_report_without_figures_scores_zero_on_each_visual_metric():
    values = {r["metric"]: r for r in scored_rows(tvir_evidence("s", "t1", []))}
    for metric in ("fq", "mc", "fcq", "fci", "csc", "va"):
        assert values[metric]["value"] == 0.0 and values[metric]["na_reason"] is None
    assert values["overall"]["value"] == pytest.approx(values["ta"]["value"] / 2)


def visual_rows(system: str, task: str, value: float) -> list[dict]:
    """A report whose figures were judged: each visual part `value`, VA and Overall from them."""
    rows = [row(system, task, m, value, suite="tvir", detail="figures=2") for m in ("fq", "mc", "fcq", "fci", "csc")]
    rows += [row(system, task, m, 70.0, suite="tvir") for m in ("cs", "ia", "wq", "adb", "flc")]
    rows += [row(system, task, "ta", 70.0, suite="tvir"), row(system, task, "va", value, suite="tvir"),
             row(system, task, "overall", (70.0 + value) / 2, suite="tvir")]
    return rows


def test_dropping_figures_lowers_va_and_no_figure_anywhere_is_not_applicable():
    with_figures = visual_rows("drawer", "t1", 60.0) + visual_rows("drawer", "t2", 60.0)
    dropped = visual_rows("dropper", "t1", 60.0) + scored_rows(tvir_evidence("dropper", "t2", []))
    never = scored_rows(tvir_evidence("plain", "t1", [])) + scored_rows(tvir_evidence("plain", "t2", []))
    got = board(with_figures + dropped + never)
    assert got[("dropper", "va")]["mean"] == pytest.approx(30.0) and got[("drawer", "va")]["mean"] == 60.0
    assert got[("dropper", "va")]["rank"] == 2
    for metric in ("va", "overall"):
        plain = got[("plain", metric)]
        assert plain["status"] == "not_applicable" and plain["mean"] is None and plain["rank"] is None
        assert "no figure in any report" in plain["coverage_note"]
    assert got[("plain", "ta")]["status"] == "scored" and got[("plain", "ta")]["rank"] is not None
    assert got[("plain", "fq")]["mean"] == 0.0  # each report's 0 stands; only VA and Overall do not apply
    text = render(leaderboard_tables(build_leaderboard(frame("metric_scores", with_figures + dropped + never))),
                  "table")
    assert "plain tvir.overall: not applicable: the system has no figure in any report" in text
