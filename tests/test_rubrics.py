"""Fixed rubrics and contradiction counts: offline measurements, the stage, and the metrics."""
import pytest

from dreval_assets.benchmarks.evidence import ReportEvidence
from dreval_assets.benchmarks.judging import JudgmentContext
from dreval_assets.benchmarks.tvir.judgments import tvir_judgments
from dreval_assets.benchmarks.suites import SUITES
from dreval_assets.core.report_features import analytical_depth, contradiction_candidates, writing_quality
from dreval_assets.judges.heuristic import HeuristicJudge
from dreval_assets.judges.prompts import render
from dreval_assets.stages.frames import frame
from dreval_assets.stages.judgments import judge_rubrics
from recording_judge import RecordingJudge
from task_frames import tasks_table

STRUCTURED = """# Ferry services

## Demand
Passenger numbers on the Lowmarsh ferry rose to 41,200 passengers in 2023 because a third vessel was added [1].
However, the growth may not last, since fares rose by 4 percent in April [1].

## Outlook
The operator should publish crossing times monthly, and the council expects demand to keep rising [2].

## References
[1] Annual note https://ferries.example/a
[2] Council plan https://council.example/b
"""
FLAT = "The ferry runs every day. The ferry runs every day. The ferry runs every day."
CONTRADICTING = """# Plant
The Punta Velas plant has a capacity of 250,000 cubic metres per day in 2023.
In 2023 the Punta Velas plant reached a capacity of 310,000 cubic metres per day.
Capacity grew from 200,000 cubic metres in 2019 to 250,000 cubic metres in 2023.
"""


def test_the_measures_of_one_report_parse_it_once(monkeypatch):
    """WQ, ADB and FLC read the same report in turn: one parse serves the three (and a changed text is
    parsed again)."""
    from dreval_assets.core import report_features

    parsed: list[str] = []
    real = report_features.parse_report
    monkeypatch.setattr(report_features, "parse_report", lambda text: parsed.append(text) or real(text))
    report_features._parsed.cache_clear()
    text = STRUCTURED + "\nA sentence only this test writes.\n"
    first = (writing_quality(text), analytical_depth(text), contradiction_candidates(text))
    assert parsed == [text]
    assert (writing_quality(text), analytical_depth(text), contradiction_candidates(text)) == first
    assert writing_quality(text + " More.") and len(parsed) == 2
    report_features._parsed.cache_clear()

def test_measurements_separate_structured_from_flat_text():
    good, bad = writing_quality(STRUCTURED), writing_quality(FLAT)
    assert good["coherence"] > bad["coherence"] and good["consistency"] == 10.0 and bad["conciseness"] < 10
    deep, shallow = analytical_depth(STRUCTURED), analytical_depth(FLAT)
    assert all(deep[d] >= shallow[d] for d in deep) and deep["causal"] > shallow["causal"]
    assert all(1 <= v <= 10 for v in {**good, **bad, **deep, **shallow}.values())


def test_contradiction_candidates_need_same_thing_same_unit_same_year():
    found = contradiction_candidates(CONTRADICTING)
    assert len(found) == 1 and "250000" in found[0] and "310000" in found[0]
    assert contradiction_candidates(STRUCTURED) == []


def tasks_frame(benchmark):
    return tasks_table(benchmark=benchmark)


def reports_frame(text):
    return frame("reports", [{"system": "s", "task": "t", "status": "ok", "text": text, "n_chars": len(text),
                              "content_hash": "x", "source_path": None, "na_reason": None, "detail": ""}])


def tvir_context(text, judge, query="q"):
    return JudgmentContext([("s", "t")], reports_frame(text), tasks_table(benchmark="tvir", query=query),
                           frame("task_rubrics", []), judge)


def test_one_call_per_rubric_never_per_dimension():
    judge = HeuristicJudge()
    rows = tvir_judgments(tvir_context(CONTRADICTING, judge))  # TVIR judges its rubrics itself
    assert judge.stats.requests == 3  # WQ (4 dimensions), ADB (5 dimensions), contradictions
    assert rows.filter(rows["kind"] == "rubric").height == 9
    assert rows.filter(rows["item_id"] == "tvir.flc.count")["score"].to_list() == [1.0]
    assert judge_rubrics([("s", "t")], reports_frame(CONTRADICTING), tasks_frame("tvir"), HeuristicJudge()).height == 0
    dr3 = judge_rubrics([("s", "t")], reports_frame(STRUCTURED), tasks_frame("dr3"), HeuristicJudge())
    assert dr3["item_id"].to_list() == ["dr3.dq.depth"]
    assert judge_rubrics([("s", "t")], reports_frame(STRUCTURED), tasks_frame("drb"), HeuristicJudge()).height == 0


def test_tvir_wq_adb_flc_and_dr3_dq_metrics():
    scores = {"tvir.wq.coherence": 8.0, "tvir.wq.clarity": 6.0, "tvir.wq.conciseness": None, "tvir.wq.consistency": 10.0,
              "tvir.adb.causal": 5.0, "tvir.flc.count": 3.0, "dr3.dq.depth": 7.0}
    ev = ReportEvidence("s", "t", "tvir", "j", rubric_scores=scores)
    tvir = {v.metric: v for v in SUITES["tvir"].score(ev)}
    assert tvir["wq"].value == pytest.approx(100 * 24 / 30)  # a dimension that failed is left out
    assert tvir["adb"].value == pytest.approx(50.0)
    assert tvir["flc"].value == pytest.approx(80.0)           # 3 contradictions -> 8/10
    assert {v.metric: v for v in SUITES["dr3"].score(ev)}["dq"].value == pytest.approx(70.0)
    empty = {v.metric: v for v in SUITES["tvir"].score(ReportEvidence("s", "t", "tvir", "j"))}
    assert empty["wq"].value is None and empty["flc"].na_reason == "pipeline_failure"


def test_every_rubric_prompt_shows_the_task_query():
    query = "Assess whether the Lowmarsh ferry should add a fourth vessel by 2026."
    judge = RecordingJudge()
    tvir_judgments(tvir_context(STRUCTURED, judge, query))
    scored = [r for r in judge.requests if r.template in ("tvir/writing_quality", "tvir/analytical_depth")]
    assert {r.variables["rubric_id"] for r in scored} == {"tvir.wq", "tvir.adb"}
    for request in scored:
        assert f"The request the report answers:\n{query}" in render(request.template, dict(request.variables))
    judge = RecordingJudge()
    judge_rubrics([("s", "t")], reports_frame(STRUCTURED), tasks_table(benchmark="dr3", query=query), judge)
    scored = [r for r in judge.requests if r.template == "rubric_scores"]
    assert {r.variables["rubric_id"] for r in scored} == {"dr3.dq"}
    prompt = render(scored[0].template, dict(scored[0].variables))
    assert f"The request the report answers (judge each dimension by what this request needs):\n{query}" in prompt
