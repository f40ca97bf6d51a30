"""Checklist judging: the offline matcher, the stage, and the IA / IF metrics built on it."""
import pytest

from dreval_assets.benchmarks.evidence import ReportEvidence
from dreval_assets.benchmarks.suites import SUITES
from dreval_assets.core.checklist_match import item_credit
from dreval_assets.judges.heuristic import HeuristicJudge
from dreval_assets.stages.frames import frame
from dreval_assets.stages.judgments import judge_checklists
from dreval_assets.stages.task_rubrics import generate_rubrics
from task_frames import tasks_table

REPORT = """# Ferry services

Passenger numbers on the Lowmarsh ferry rose to 41,200 in 2023. Fares increased by 4 percent in April.

## Environmental impact
Figure to be inserted: emissions per crossing compared with the bridge alternative.
"""


def test_item_credit_full_partial_none_and_placeholders():
    assert item_credit("Report passenger numbers for 2023", REPORT)[0] == 1.0
    assert item_credit("Fares increased and the timetable changed", REPORT)[0] == 0.5
    assert item_credit("Assess the seagrass habitat near the pier", REPORT)[0] == 0.0
    # the placeholder sentence mentions emissions, but a placeholder does not meet a requirement
    assert item_credit("Compare emissions per crossing with the bridge alternative", REPORT)[0] == 0.0


def tasks_frame(checklist):
    """The task's rubrics frame: its checklist as loaded into task_rubrics."""
    return generate_rubrics(tasks_table(benchmark="tvir", checklist=checklist), {}, HeuristicJudge())


def reports_frame(status="ok", text=REPORT):
    return frame("reports", [{"system": "s", "task": "t", "status": status, "text": text if status == "ok" else None,
                              "n_chars": 0, "content_hash": None, "source_path": None,
                              "na_reason": None if status == "ok" else "model_failure",
                              "detail": "" if status == "ok" else "report is empty"}])


def test_stage_credits_every_item_in_chunks():
    checklist = ["Report passenger numbers for 2023"] * 20
    judge = HeuristicJudge()
    rows = judge_checklists([("s", "t")], reports_frame(), tasks_frame(checklist), judge)
    assert rows.height == 20 and set(rows["credit"]) == {1.0} and judge.stats.requests == 2  # 15 + 5
    assert rows["item_id"].to_list()[:2] == ["i01", "i02"] and set(rows["judge"]) == {"heuristic-v1"}


def test_unreadable_report_gives_na_items_and_no_checklist_gives_no_rows():
    rows = judge_checklists([("s", "t")], reports_frame("empty"), tasks_frame(["Report passenger numbers"]),
                            HeuristicJudge())
    assert rows["credit"].to_list() == [None] and rows["na_reason"].to_list() == ["model_failure"]
    assert judge_checklists([("s", "t")], reports_frame(), tasks_frame([]), HeuristicJudge()).height == 0


def evidence(checklist):
    return ReportEvidence("s", "t", "tvir", "judge-x", checklist=checklist)


def test_tvir_ia_and_dr3_if_by_hand():
    ia = {v.metric: v for v in SUITES["tvir"].score(evidence([1.0, 0.5, 0.0, 1.0]))}["ia"]
    assert ia.value == pytest.approx(62.5)
    dr3 = {v.metric: v for v in SUITES["dr3"].score(evidence([1.0, 0.5, 0.0, 1.0]))}["if"]
    assert dr3.value == pytest.approx(50.0)  # only fully met items count by default
    half = ReportEvidence("s", "t", "dr3", "j", checklist=[1.0, 0.5, 0.0, 1.0], policies={"dr3.if.partial": "half"})
    assert {v.metric: v for v in SUITES["dr3"].score(half)}["if"].value == pytest.approx(62.5)
    none = {v.metric: v for v in SUITES["tvir"].score(evidence([]))}["ia"]
    assert none.value is None and none.na_reason == "pipeline_failure"
