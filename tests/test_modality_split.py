"""Headline numbers per task attribute (MiroEval's text-only and multimodal leaderboards, DR³'s English
and Chinese sets; any attribute on request) and totals (MiroEval's RIGHT / WRONG / CONFLICT / UNKNOWN
counts): the leaderboard aggregates a suite's breakdown metrics again over the tasks of each value of
the attribute, as `<metric>.<value>`, composites from their parts on those tasks. Reports never get
split rows of their own (the per-modality rows used to be written per report; they are the
leaderboard's now, so one mechanism serves every attribute)."""
import json
from dataclasses import asdict

import polars as pl
import pytest

from dreval_assets.benchmarks.aggregation import TaskValue, aggregate
from dreval_assets.benchmarks.evidence import ReportEvidence
from dreval_assets.benchmarks.miroeval.metrics import SUITE as MIROEVAL
from dreval_assets.benchmarks.suite import Breakdown, Composite, MetricSpec, Suite, mean_of_all
from dreval_assets.core.metrics import MetricValue
from dreval_assets.stages.frames import frame
from dreval_assets.stages.leaderboard import build_leaderboard, task_attributes

VALUES = {("s1", "t-text"): (80.0, 60.0), ("s1", "t-mm"): (40.0, 20.0),
          ("s2", "t-text"): (70.0, 70.0), ("s2", "t-mm"): (90.0, 50.0)}
MODALITY = {"t-text": "text", "t-mm": "multimodal"}
ATTRIBUTES = {"t-text": {"modality": "text", "language": "en", "set": "dev"},
              "t-mm": {"modality": "multimodal", "language": "zh", "set": "dev"}}


def toy_suite() -> Suite:
    metrics = (MetricSpec("a", "0-100", True, "part a"), MetricSpec("b", "0-100", True, "part b"),
               MetricSpec("n", "count", True, "a count", better=0, aggregate="sum"),
               MetricSpec("c", "0-100", True, "mean of a and b", aggregate="of_parts"))
    composites = (Composite("c", ("a", "b"), mean_of_all, "c = mean(a, b)"),)

    def compute(ev: ReportEvidence) -> list[MetricValue]:
        a, b = VALUES[(ev.system, ev.task)]
        return [MetricValue("toy", "a", a, "0-100", 1, judge=ev.judge), MetricValue("toy", "b", b, "0-100", 1,
                                                                                     judge=ev.judge),
                MetricValue("toy", "n", a / 10, "count", 1, judge=ev.judge)]
    return Suite("toy", "Toy", metrics, compute, headline=("c", "c.text", "c.multimodal", "a", "b"),
                 composites=composites, breakdowns=(Breakdown("modality", ("a", "b", "c"), ("text", "multimodal")),))


def scored(suite: Suite) -> pl.DataFrame:
    rows = []
    for (system, task) in VALUES:
        ev = ReportEvidence(system, task, "toy", "judge-a", modality=MODALITY[task])
        rows += [{"system": system, "task": task, **asdict(v)} for v in suite.score(ev)]
    return frame("metric_scores", rows)


def board_of(suite: Suite, **kwargs) -> pl.DataFrame:
    import dreval_assets.benchmarks.suites as suites

    suites.SUITES["toy"] = suite
    try:
        return build_leaderboard(scored(suite), **kwargs)
    finally:
        del suites.SUITES["toy"]


def test_a_report_gets_no_split_rows():
    suite = toy_suite()
    assert set(scored(suite)["metric"]) == {"a", "b", "n", "c"}
    assert {v.metric for v in suite.unreadable("model_failure", "no report", "judge-a")} == {"a", "b", "n", "c"}
    assert suite.spec("c.text").aggregate == "of_parts" and suite.broken_down("c.multimodal") == ("c", "multimodal")
    assert suite.spec("c.audio") is None  # not a declared value


def test_the_leaderboard_aggregates_a_split_over_its_modality_and_totals_counts():
    board = board_of(toy_suite(), task_attributes=ATTRIBUTES)
    mean = {(r["system"], r["metric"]): r["mean"] for r in board.iter_rows(named=True)}
    assert mean[("s1", "c.text")] == pytest.approx(70.0) and mean[("s1", "c.multimodal")] == pytest.approx(30.0)
    assert mean[("s2", "c.text")] == pytest.approx(70.0) and mean[("s2", "c.multimodal")] == pytest.approx(70.0)
    assert mean[("s1", "a.multimodal")] == pytest.approx(40.0)
    assert mean[("s1", "c")] == pytest.approx(50.0)  # both tasks
    assert ("s1", "n.text") not in mean  # not a breakdown metric
    assert mean[("s1", "n")] == pytest.approx(12.0)  # 8 + 4: a total, not a mean
    n_row = board.filter((pl.col("system") == "s1") & (pl.col("metric") == "n")).row(0, named=True)
    assert n_row["aggregation"].startswith("sum") and n_row["ci_low"] >= 8.0 and n_row["ci_high"] <= 16.0
    split = board.filter(pl.col("metric") == "c.multimodal")
    assert set(split["breakdown"]) == {"modality=multimodal"} and set(split["n_tasks"]) == {1}
    assert set(board.filter(pl.col("metric") == "c")["breakdown"]) == {""}
    # ranked among themselves: s2 leads on the multimodal task, the two tie on the text one
    ranks = {(r["system"], r["metric"]): r["rank"] for r in split.vstack(
        board.filter(pl.col("metric") == "c.text")).iter_rows(named=True)}
    assert ranks[("s2", "c.multimodal")] == 1 and ranks[("s1", "c.multimodal")] == 2
    assert ranks[("s1", "c.text")] == ranks[("s2", "c.text")] == 1


def test_no_task_attributes_no_breakdown_rows():
    board = board_of(toy_suite())
    assert set(board["metric"]) == {"a", "b", "n", "c"}


def test_any_attribute_on_request_breaks_down_every_metric():
    board = board_of(toy_suite(), task_attributes=ATTRIBUTES, by=("language",))
    by_language = board.filter(pl.col("breakdown").str.starts_with("language="))
    assert set(by_language["metric"]) == {f"{m}.{v}" for m in ("a", "b", "n", "c") for v in ("en", "zh")}
    mean = {(r["system"], r["metric"]): r["mean"] for r in by_language.iter_rows(named=True)}
    assert mean[("s2", "c.zh")] == pytest.approx(70.0) and mean[("s1", "n.en")] == pytest.approx(8.0)
    # a release label in tasks.attributes is an attribute like any column; one value: one group
    board = board_of(toy_suite(), task_attributes=ATTRIBUTES, by=("set",))
    assert set(board.filter(pl.col("breakdown") == "set=dev")["n_tasks"]) == {2}


def test_task_attributes_read_columns_and_release_labels():
    tasks = pl.DataFrame({"task": ["t1", "t2"], "language": ["en", "zh"], "domain": ["", "economy"],
                          "modality": ["text", "multimodal"],
                          "attributes": [json.dumps({"set": "en", "sandbox.32k": "x"}), None]})
    found = task_attributes(tasks)
    assert found["t1"] == {"language": "en", "modality": "text", "set": "en", "sandbox.32k": "x"}
    assert found["t2"] == {"language": "zh", "domain": "economy", "modality": "multimodal"}


def test_sum_is_a_total_over_scored_tasks():
    rows = [TaskValue(3.0), TaskValue(None, na_reason="provider_failure"), TaskValue(5.0)]
    assert aggregate("sum", rows) == 8.0 and aggregate("sum", rows[1:2]) is None


def test_miroeval_reports_text_and_multimodal_apart_and_its_label_counts_as_totals():
    assert MIROEVAL.headline[:3] == ("overall", "overall.text", "overall.multimodal")
    assert {MIROEVAL.spec(m).aggregate for m in ("right", "wrong", "conflict", "unknown")} == {"sum"}
    assert MIROEVAL.breakdowns == (Breakdown("modality", ("overall", "synthesis", "factuality", "process"),
                                             ("text", "multimodal")),)
    assert MIROEVAL.spec("factuality.multimodal").aggregate_policy == "miroeval.factuality.aggregate"
    assert MIROEVAL.spec("process.search_breadth").metric == "process.search_breadth"  # a metric, not a split
