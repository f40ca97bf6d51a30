"""Headline numbers per task modality (MiroEval's text-only and multimodal leaderboards) and totals
(MiroEval's RIGHT / WRONG / CONFLICT / UNKNOWN counts): a suite's split metric is written again as
`<metric>.<modality>` for the report's own modality only, its composites computed from parts of the
same modality, and the leaderboard aggregates each over the tasks of that modality."""
from dataclasses import asdict

import polars as pl
import pytest

from dreval_assets.benchmarks.aggregation import TaskValue, aggregate
from dreval_assets.benchmarks.evidence import ReportEvidence
from dreval_assets.benchmarks.miroeval.metrics import SUITE as MIROEVAL
from dreval_assets.benchmarks.suite import Composite, MetricSpec, Suite, by_modality, mean_of_all
from dreval_assets.core.metrics import MetricValue
from dreval_assets.stages.frames import frame
from dreval_assets.stages.leaderboard import build_leaderboard

VALUES = {("s1", "t-text"): (80.0, 60.0), ("s1", "t-mm"): (40.0, 20.0),
          ("s2", "t-text"): (70.0, 70.0), ("s2", "t-mm"): (90.0, 50.0)}
MODALITY = {"t-text": "text", "t-mm": "multimodal"}


def toy_suite() -> Suite:
    metrics = (MetricSpec("a", "0-100", True, "part a"), MetricSpec("b", "0-100", True, "part b"),
               MetricSpec("n", "count", True, "a count", better=0, aggregate="sum"),
               MetricSpec("c", "0-100", True, "mean of a and b", aggregate="of_parts"))
    composites = (Composite("c", ("a", "b"), mean_of_all, "c = mean(a, b)"),)
    split_specs, split_composites = by_modality(metrics, composites, ("a", "b", "c"))

    def compute(ev: ReportEvidence) -> list[MetricValue]:
        a, b = VALUES[(ev.system, ev.task)]
        return [MetricValue("toy", "a", a, "0-100", 1, judge=ev.judge), MetricValue("toy", "b", b, "0-100", 1,
                                                                                     judge=ev.judge),
                MetricValue("toy", "n", a / 10, "count", 1, judge=ev.judge)]
    return Suite("toy", "Toy", (*metrics, *split_specs), compute, headline=("c", "c.text", "c.multimodal"),
                 composites=(*composites, *split_composites), modality_split=("a", "b", "c"))


def scored(suite: Suite) -> pl.DataFrame:
    rows = []
    for (system, task) in VALUES:
        ev = ReportEvidence(system, task, "toy", "judge-a", modality=MODALITY[task])
        rows += [{"system": system, "task": task, **asdict(v)} for v in suite.score(ev)]
    return frame("metric_scores", rows)


def test_a_report_gets_the_split_rows_of_its_own_modality_only():
    suite = toy_suite()
    scores = scored(suite)
    text = set(scores.filter(pl.col("task") == "t-text")["metric"])
    assert {"a.text", "b.text", "c.text"} <= text and not any(m.endswith(".multimodal") for m in text)
    c_mm = scores.filter((pl.col("task") == "t-mm") & (pl.col("system") == "s2") & (pl.col("metric") == "c.multimodal"))
    assert c_mm["value"].item() == pytest.approx(70.0)  # from a.multimodal and b.multimodal
    unreadable = {v.metric for v in suite.unreadable("model_failure", "no report", "judge-a", "multimodal")}
    assert "c.multimodal" in unreadable and "c.text" not in unreadable and "c" in unreadable


def test_the_leaderboard_aggregates_a_split_over_its_modality_and_totals_counts():
    import dreval_assets.benchmarks.suites as suites

    suites.SUITES["toy"] = toy_suite()
    try:
        board = build_leaderboard(scored(suites.SUITES["toy"]))
    finally:
        del suites.SUITES["toy"]
    mean = {(r["system"], r["metric"]): r["mean"] for r in board.iter_rows(named=True)}
    assert mean[("s1", "c.text")] == pytest.approx(70.0) and mean[("s1", "c.multimodal")] == pytest.approx(30.0)
    assert mean[("s2", "c.text")] == pytest.approx(70.0) and mean[("s2", "c.multimodal")] == pytest.approx(70.0)
    assert mean[("s1", "c")] == pytest.approx(50.0)  # both tasks
    assert mean[("s1", "n")] == pytest.approx(12.0)  # 8 + 4: a total, not a mean
    n_row = board.filter((pl.col("system") == "s1") & (pl.col("metric") == "n")).row(0, named=True)
    assert n_row["aggregation"].startswith("sum") and n_row["ci_low"] >= 8.0 and n_row["ci_high"] <= 16.0


def test_sum_is_a_total_over_scored_tasks():
    rows = [TaskValue(3.0), TaskValue(None, na_reason="provider_failure"), TaskValue(5.0)]
    assert aggregate("sum", rows) == 8.0 and aggregate("sum", rows[1:2]) is None


def test_miroeval_reports_text_and_multimodal_apart_and_its_label_counts_as_totals():
    assert MIROEVAL.headline[:3] == ("overall", "overall.text", "overall.multimodal")
    assert {MIROEVAL.spec(m).aggregate for m in ("right", "wrong", "conflict", "unknown")} == {"sum"}
    assert MIROEVAL.composite("overall.text").parts == ("synthesis.text", "factuality.text", "process.text")
    assert MIROEVAL.spec("factuality.multimodal").aggregate_policy == "miroeval.factuality.aggregate"
