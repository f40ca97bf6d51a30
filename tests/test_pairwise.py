"""Wiki Live writing: pairwise criteria against the reference, and the position-bias policy."""
import pytest

from dreval_assets.benchmarks.evidence import ReportEvidence
from dreval_assets.benchmarks.suites import SUITES
from dreval_assets.benchmarks.wlc.criteria import CATEGORIES
from dreval_assets.core.article_features import compare
from dreval_assets.core.models import CriterionWinner, PairwiseOutcomes
from dreval_assets.judges.base import Judgment, JudgeStats, Provenance
from dreval_assets.judges.heuristic import HeuristicJudge
from dreval_assets.stages.frames import frame
from dreval_assets.benchmarks.wlc.judgments import judge_pairwise
from task_frames import tasks_table

REFERENCE = """# Harrowgate Tidal Barrage

The Harrowgate Tidal Barrage is a tidal power station across the Harrow estuary. It opened in 1994
and generates about 240 megawatts at peak. It was built by the county council with national funds,
and it remains the largest tidal plant in the region, supplying power to some 90,000 homes each year.

## History
Construction began in 1988 after a decade of surveys of the estuary and its bird populations.

## Operation
The barrage generates on the ebb tide through 24 turbines set in sluice caissons.
"""
PUFFED = """# Harrowgate Tidal Barrage

The legendary, iconic and world-class Harrowgate barrage is clearly the most breathtaking plant.
Recently, many believe it is obviously a game changer.
"""


class BiasedJudge:
    """Always prefers the article shown first, whatever the criterion: pure position bias."""

    judge_id = "biased"
    source_token_budget = None

    def __init__(self):
        self.stats = JudgeStats()

    def judge_many(self, requests):
        return [Judgment(PairwiseOutcomes(outcomes=[CriterionWinner(criterion_id=c["criterion_id"], winner="A")
                                                    for c in r.variables["criteria_list"]]),
                         Provenance("biased", r.template, "h")) for r in requests]


def inputs(report=PUFFED):
    tasks = tasks_table(key="wlc.h", benchmark="wlc", original_id="h", reference_article=REFERENCE)
    reports = frame("reports", [{"system": "s", "task": "wlc.h", "status": "ok", "text": report, "n_chars": 1,
                                 "content_hash": "x", "source_path": None, "na_reason": None, "detail": ""}])
    return reports, tasks


def test_both_orders_cancel_a_position_biased_judge():
    rows = judge_pairwise([("s", "wlc.h")], *inputs(), BiasedJudge())
    assert rows.height == 39 and set(rows["score"]) == {0.5}  # every criterion a tie: the bias cancels out
    for seed in ("0", "1", "2", "3"):  # one order per category: the bias decides, and the seed flips it
        single = judge_pairwise([("s", "wlc.h")], *inputs(), BiasedJudge(),
                                policies={"wlc.position_bias": "random_order", "wlc.seed": seed})
        assert set(single["score"]) <= {0.0, 1.0}


def test_swapping_the_articles_cannot_change_the_outcome_under_both_orders():
    one = judge_pairwise([("s", "wlc.h")], *inputs(), BiasedJudge())
    # the same comparison with the report and the reference swapped in the task/report roles
    swapped_reports, swapped_tasks = inputs(report=REFERENCE)
    swapped_tasks = swapped_tasks.with_columns(reference_article=swapped_tasks["reference_article"].str.replace(
        "(?s).*", PUFFED))
    two = judge_pairwise([("s", "wlc.h")], swapped_reports, swapped_tasks, BiasedJudge())
    assert one["score"].to_list() == two["score"].to_list()


def test_the_offline_judge_compares_measured_features():
    rows = judge_pairwise([("s", "wlc.h")], *inputs(), HeuristicJudge())
    by_id = dict(zip(rows["item_id"], rows["score"]))
    assert by_id["wlc.well_written.puffery"] == 0.0 and by_id["wlc.well_written.cliches"] == 0.0
    assert by_id["wlc.broad.subtopic_sections"] == 0.0  # the reference has sections, the report none
    assert compare("puffery", PUFFED, REFERENCE) == "second" and compare("puffery", REFERENCE, REFERENCE) == "tie"


def test_win_rates_by_hand_and_na_without_reference():
    scores = {f"wlc.well_written.{cid}": 1.0 for cid, _, _ in CATEGORIES["well_written"][:7]}
    scores |= {f"wlc.well_written.{cid}": 0.5 for cid, _, _ in CATEGORIES["well_written"][7:]}
    scores |= {f"wlc.broad.{cid}": 0.0 for cid, _, _ in CATEGORIES["broad"]}
    scores |= {f"wlc.neutral.{cid}": 1.0 for cid, _, _ in CATEGORIES["neutral"][:5]}
    scores |= {f"wlc.neutral.{cid}": None for cid, _, _ in CATEGORIES["neutral"][5:]}
    m = {v.metric: v for v in SUITES["wlc"].score(ReportEvidence("s", "t", "wlc", "j", rubric_scores=scores))}
    assert m["well_written"].value == pytest.approx(100 * 7 / 21) and m["broad"].value == 0.0
    assert m["neutral"].value == pytest.approx(100.0) and m["neutral"].n_items == 5
    assert m["writing"].value == pytest.approx(100 * 12 / 34)  # micro over the 34 judged criteria
    none = {v.metric: v for v in SUITES["wlc"].score(ReportEvidence("s", "t", "wlc", "j"))}
    assert none["writing"].value is None and none["writing"].na_reason == "pipeline_failure"
