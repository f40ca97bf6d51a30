"""Every benchmark's headline number exists as a row, per report and per system, computed the way its
paper computes it; a part that cannot be computed makes the aggregate N/A naming that part.

Per report: the suites score hand-built evidence. Per system: `build_leaderboard` aggregates hand-built
metric_scores rows by each metric's rule (the paper's choice, or the policy's)."""
from __future__ import annotations

import polars as pl
import pytest

from dreval_assets.benchmarks.aggregation import TaskValue, aggregate, validity
from dreval_assets.benchmarks.evidence import ClaimEvidence, ReportEvidence, SourceVerdict
from dreval_assets.benchmarks.suites import SUITES
from dreval_assets.core.models import AdaptiveRubric, RubricCriterion, RubricDimension
from dreval_assets.core.stats import bootstrap_ci
from dreval_assets.presentation.leaderboard_view import leaderboard_tables, render
from dreval_assets.stages.frames import frame
from dreval_assets.stages.leaderboard import build_leaderboard

URL = "https://a.example/1"
FIGURE = {"caption": "Figure 1: ferry traffic [1]", "src": "images/f1.png", "citation_indices": [1], "section": ""}


def scored(suite: str, evidence: ReportEvidence) -> dict:
    return {v.metric: v for v in SUITES[suite].score(evidence)}


def evidence(benchmark: str, **extra) -> ReportEvidence:
    claims = [ClaimEvidence("c1", "sentence", "The ferry carried 1.2 million people in 2023.", (URL,), (),
                            (SourceVerdict(URL, "supported"),))]
    return ReportEvidence("s", "t", benchmark, "judge-x", claims=claims, **extra)


# -- TVIR


TVIR_TEXT = {"tvir.wq.a": 8.0, "tvir.wq.b": 6.0, "tvir.adb.a": 5.0, "tvir.flc.count": 1.0}


def test_tvir_textual_assessment_is_the_mean_of_its_five_parts():
    m = scored("tvir", evidence("tvir", checklist=[1.0, 0.5], rubric_scores=dict(TVIR_TEXT)))
    parts = [m[p].value for p in ("cs", "ia", "wq", "adb", "flc")]
    assert parts == pytest.approx([100.0, 75.0, 70.0, 50.0, 90.0])
    assert m["ta"].value == pytest.approx(sum(parts) / 5)
    assert m["ta"].policy.startswith("TA = mean(CS, IA, WQ, ADB, FLC)")


def test_tvir_report_without_figures_scores_zero_on_each_visual_metric():
    """App. B: "if no figure/image/chart is present, the score is set to 0" - deleting figures never pays."""
    m = scored("tvir", evidence("tvir", checklist=[1.0], rubric_scores=dict(TVIR_TEXT)))
    assert all(m[p].value == 0.0 and "no figure in the report" in m[p].detail for p in ("fq", "mc", "fcq", "fci", "csc"))
    assert m["va"].value == 0.0 and m["overall"].value == pytest.approx(m["ta"].value / 2)


def test_tvir_report_with_figures_says_the_visual_part_is_not_built():
    m = scored("tvir", evidence("tvir", checklist=[1.0], rubric_scores=dict(TVIR_TEXT), figures=[FIGURE]))
    assert m["fq"].na_reason == "pipeline_failure" and "1 figure(s)" in m["fq"].detail
    assert m["va"].na_reason == "pipeline_failure" and "needs fq, mc, fcq, fci, csc" in m["va"].detail
    assert m["overall"].na_reason == "pipeline_failure" and m["ta"].value is not None


def test_tvir_missing_text_part_names_it_with_its_reason():
    m = scored("tvir", evidence("tvir", checklist=[None], rubric_scores=dict(TVIR_TEXT),
                                judgment_failures={"checklist.i1": ("provider_failure", "HTTP 500")}))
    assert m["ta"].value is None and m["ta"].na_reason == "provider_failure"
    assert m["ta"].detail.startswith("needs ia: ia N/A (provider_failure")


def tvir_rows(system: str, values: dict[str, float]) -> list[dict]:
    return [{"system": system, "task": "t1", "suite": "tvir", "metric": metric, "value": value, "scale": "0-100",
             "n_items": 1, "na_reason": None, "detail": "", "policy": "", "judge": "judge-x"}
            for metric, value in values.items()]


def test_tvir_system_row_reproduces_the_papers_claude_row():
    """The paper's Claude-4.5-Sonnet w/Search row: the parts give TA 70.15, VA 67.30, Overall 68.72."""
    parts = {"cs": 47.53, "ia": 79.32, "wq": 69.37, "adb": 70.52, "flc": 84.00,
             "fq": 90.24, "mc": 63.85, "fcq": 61.47, "fci": 53.43, "csc": 67.49}
    per_task = dict(parts, ta=0.0, va=0.0, overall=0.0)  # the task rows' own values are replaced by the formula
    board = build_leaderboard(frame("metric_scores", tvir_rows("claude", per_task)))
    got = {r["metric"]: r for r in board.iter_rows(named=True)}
    assert round(got["ta"]["mean"], 2) == 70.15 and round(got["va"]["mean"], 2) == 67.30
    assert got["overall"]["mean"] == pytest.approx(68.72, abs=0.01)
    assert got["overall"]["aggregation"].startswith("of_parts")
    assert got["cs"]["aggregation"].startswith("mean:")


# -- MMDR


def test_mmdr_report_without_visual_items_scores_mosaic_zero_and_its_parts_do_not_apply():
    m = scored("mmdr", evidence("mmdr"))
    assert m["mosaic"].value == 0.0 and m["mosaic"].detail == "no visual item in the report"
    assert {m[p].value for p in ("sem", "acc", "vqa")} == {None}
    assert m["sem"].na_reason == "not_applicable" and m["sem"].detail == "no visual item in the report"


def test_mmdr_report_with_items_leaves_mosaic_na_until_judged():
    m = scored("mmdr", evidence("mmdr", figures=[FIGURE]))
    assert m["mosaic"].value is None and m["mosaic"].na_reason == "pipeline_failure"


def test_mmdr_overall_gate_needs_no_mosaic_when_it_is_closed():
    overall = SUITES["mmdr"].composite("overall").formula
    assert overall({"flae": 60.0, "trace": 0.0, "mosaic": None}) == pytest.approx(12.0)  # gate closed: MOSAIC 0
    assert overall({"flae": 60.0, "trace": 50.0, "mosaic": None}) is None  # gate open: MOSAIC needed
    assert overall({"flae": 60.0, "trace": 50.0, "mosaic": 40.0}) == pytest.approx(12 + 25 + 12)
    trace = SUITES["mmdr"].composite("trace").formula
    assert trace({"evi": 50.0, "vef": 100.0}) == pytest.approx(70.0)


def test_mmdr_mosaic_zero_enters_the_mean_while_sem_is_averaged_where_it_applies():
    """A report with no visual item counts MOSAIC 0 in the mean (36.4, not 57.1, in the issue's example)."""
    rows = []
    for task, mosaic, sem in (("t1", 0.0, None), ("t2", 57.1, 70.0), ("t3", 52.1, 60.0)):
        for metric, value in (("mosaic", mosaic), ("sem", sem)):
            rows.append({"system": "s", "task": task, "suite": "mmdr", "metric": metric, "value": value,
                         "scale": "0-100", "n_items": 1, "na_reason": None if value is not None else "model_failure",
                         "detail": "", "policy": "", "judge": "judge-x"})
    board = {r["metric"]: r for r in build_leaderboard(frame("metric_scores", rows)).iter_rows(named=True)}
    assert board["mosaic"]["mean"] == pytest.approx((0 + 57.1 + 52.1) / 3)
    assert board["sem"]["mean"] == pytest.approx(65.0) and board["sem"]["n_scored"] == 2


# -- DR3


def test_dr3_avg_waits_for_information_recall_and_says_so():
    m = scored("dr3", evidence("dr3", checklist=[1.0], rubric_scores={"dr3.dq.depth": 7.0}))
    assert m["ir"].value is None and m["ir"].na_reason == "data_accessibility"  # no gold insights: never 100
    assert "no gold insights" in m["ir"].detail
    assert m["avg"].value is None and m["avg"].detail.startswith("needs ir")
    assert m["avg"].policy.startswith("Avg = mean(IR, CC, FA, IF, DQ)")


# -- MiroEval


def dim(dimension_id: str, dynamic: bool = False) -> RubricDimension:
    return RubricDimension(dimension_id=dimension_id, name=dimension_id, dynamic=dynamic,
                           criteria=[RubricCriterion(criterion_id="c1", text="x", weight=1.0)])


def test_miroeval_specificity_is_the_weighted_task_specific_part():
    rubric = AdaptiveRubric(dimensions=[dim("coverage"), dim("insight"), dim("instruction_following"), dim("clarity"),
                                        dim("policy_pragmatism", True), dim("grid_economics", True)],
                            weights={"coverage": 0.2, "insight": 0.2, "instruction_following": 0.15, "clarity": 0.15,
                                     "policy_pragmatism": 0.2, "grid_economics": 0.1})
    scores = {"miroeval.coverage.c1": 8.0, "miroeval.insight.c1": 6.0, "miroeval.instruction_following.c1": 7.0,
              "miroeval.clarity.c1": 9.0, "miroeval.policy_pragmatism.c1": 5.0, "miroeval.grid_economics.c1": 8.0}
    m = scored("miroeval", evidence("miroeval", inputs={"miroeval.rubric": rubric}, rubric_scores=scores))
    assert m["specificity"].value == pytest.approx(10 * (0.2 * 5 + 0.1 * 8) / 0.3)
    assert m["grounding"].value is None and "attachment" in m["grounding"].detail
    assert m["process"].value is None and m["process"].na_reason == "pipeline_failure"
    assert m["overall"].value is None and m["overall"].detail.startswith("needs process")
    assert m["synthesis"].value == pytest.approx(10 * (0.2 * 8 + 0.2 * 6 + 0.15 * 7 + 0.15 * 9 + 0.2 * 5 + 0.1 * 8))


def factuality_rows(system: str, per_task: list[tuple[float | None, int]]) -> list[dict]:
    return [{"system": system, "task": f"t{i}", "suite": "miroeval", "metric": "factuality", "value": value,
             "scale": "0-100", "n_items": n, "na_reason": None if value is not None else "model_failure",
             "detail": "", "policy": "", "judge": "judge-x"} for i, (value, n) in enumerate(per_task)]


def test_miroeval_factuality_pools_counts_by_default_and_the_policy_changes_it():
    # 3 right of 4 statements, 1 of 1, and a task with no verifiable statement
    rows = frame("metric_scores", factuality_rows("s", [(75.0, 4), (100.0, 1), (None, 0)]))
    pooled = build_leaderboard(rows).row(0, named=True)
    assert pooled["mean"] == pytest.approx(80.0)  # 4 right of 5, as the paper's right ratio
    assert pooled["aggregation"].startswith("micro (miroeval.factuality.aggregate)")
    per_task = build_leaderboard(rows, {"miroeval.factuality.aggregate": "mean"}).row(0, named=True)
    assert per_task["mean"] == pytest.approx(87.5)
    zero = build_leaderboard(rows, {"miroeval.factuality.aggregate": "mean_na_zero"}).row(0, named=True)
    assert zero["mean"] == pytest.approx(175 / 3)


# -- DRB


def test_drb_citation_accuracy_is_micro_and_effective_citations_a_mean_over_tasks_with_citations():
    rows = []
    for task, (accuracy, decided, effective, pairs) in {"t1": (90.0, 10, 9.0, 10), "t2": (50.0, 2, 1.0, 2),
                                                        "t3": (None, 0, 0.0, 0)}.items():
        rows += [{"system": "s", "task": task, "suite": "drb", "metric": "fact_accuracy", "value": accuracy,
                  "scale": "0-100", "n_items": decided, "na_reason": None if accuracy is not None else "model_failure",
                  "detail": "", "policy": "", "judge": "judge-x"},
                 {"system": "s", "task": task, "suite": "drb", "metric": "effective_citations", "value": effective,
                  "scale": "count", "n_items": pairs, "na_reason": None, "detail": "", "policy": "",
                  "judge": "judge-x"}]
    board = {r["metric"]: r for r in build_leaderboard(frame("metric_scores", rows)).iter_rows(named=True)}
    assert board["fact_accuracy"]["mean"] == pytest.approx(100 * 10 / 12)  # 10 supported of 12 decided
    # the reference code's stat.py: supported citations over the tasks that have citations (t3 has none)
    assert board["effective_citations"]["mean"] == pytest.approx(5.0)
    assert board["effective_citations"]["aggregation"].startswith("mean_with_items")
    over_all = {r["metric"]: r for r in build_leaderboard(
        frame("metric_scores", rows), {"drb.effective_citations.aggregate": "mean"}).iter_rows(named=True)}
    assert over_all["effective_citations"]["mean"] == pytest.approx(10 / 3)  # our policy: every task


# -- validity, CIs and the printed board


def test_validity_weights_na_reasons_and_adjusts_the_score():
    rows = [TaskValue(80.0), TaskValue(60.0), TaskValue(None, 0, "provider_failure"), TaskValue(None, 0, "model_failure")]
    assert validity(rows) == pytest.approx((1 + 1 + 0.8 + 0) / 4)
    board = build_leaderboard(frame("metric_scores", [
        {"system": "s", "task": f"t{i}", "suite": "tvir", "metric": "cs", "value": r.value, "scale": "0-100",
         "n_items": 1, "na_reason": r.na_reason, "detail": "", "policy": "", "judge": "judge-x"}
        for i, r in enumerate(rows)])).row(0, named=True)
    assert board["validity"] == pytest.approx(0.7) and board["adjusted_mean"] == pytest.approx(70.0 * 0.7)


def test_rules_refuse_an_unknown_name_and_pool_only_positive_counts():
    with pytest.raises(ValueError, match="unknown aggregation rule"):
        aggregate("median", [TaskValue(1.0)])
    assert aggregate("micro", [TaskValue(50.0, 0), TaskValue(None, 0, "model_failure")]) is None


def test_weighted_bootstrap_interval_brackets_the_pooled_ratio():
    ci = bootstrap_ci([90.0, 50.0, 70.0], weights=[10, 2, 5])
    pooled = (900 + 100 + 350) / 17
    assert ci is not None and ci[0] <= pooled <= ci[1] and 50.0 <= ci[0] and ci[1] <= 90.0


def test_printed_board_leads_with_the_headline_and_states_non_mean_rules():
    rows = factuality_rows("s", [(75.0, 4), (100.0, 1)])
    rows += [dict(r, metric="synthesis", value=60.0, n_items=1) for r in rows]
    board = build_leaderboard(frame("metric_scores", rows))
    text = render(leaderboard_tables(board, "miroeval"), "table")
    header = next(line for line in text.splitlines() if line.startswith("system"))
    assert header.split()[3:5] == ["miroeval.synthesis", "miroeval.factuality"]
    assert "miroeval.factuality: micro (miroeval.factuality.aggregate)" in text
    assert pl.DataFrame(board).filter(pl.col("metric") == "synthesis").row(0, named=True)["aggregation"].startswith("mean")


def test_changed_scoring_code_makes_metric_scores_due(monkeypatch, tmp_path):
    """A formula change re-scores the stored verdicts: rows made under the old formula never stay
    under the new meaning (e.g. MMDR `trace`, once the EVI alone)."""
    from dreval_assets.benchmarks import registry
    from dreval_assets.benchmarks.suite import MetricSpec, Suite
    from dreval_assets.config import Settings

    settings = Settings(tmp_path)
    before = settings.shaping_version("metric_scores"), settings.shaping_version("claim_verdicts")
    toy = Suite("toy", "Toy", (MetricSpec("m", "0-100", False, "a metric"),), lambda evidence: [], ("m",))
    monkeypatch.setitem(registry.SUITES, "toy", toy)  # a suite whose code lives in this file
    assert settings.shaping_version("metric_scores") != before[0]
    assert settings.shaping_version("claim_verdicts") == before[1]  # verdicts do not depend on formulas
