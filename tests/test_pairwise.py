"""Wiki Live: pairwise writing criteria against the reference (position-bias policy, the published
protocol, the weighted writing overall) and the per-statement labels of Ref. Acc. / Ref. Conf."""
import pytest

from dreval_assets.benchmarks.evidence import ClaimEvidence, ReportEvidence, SourceVerdict
from dreval_assets.benchmarks.suites import SUITES
from dreval_assets.benchmarks.wlc.criteria import CATEGORIES
from dreval_assets.core.article_features import compare
from dreval_assets.core.models import CriterionWinner, PairwiseOutcomes
from dreval_assets.judges.base import Judgment, JudgeStats, Provenance
from dreval_assets.judges.heuristic import HeuristicJudge
from dreval_assets.judges.prompts import render
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
        self.requests = []

    def judge_many(self, requests):
        self.requests += requests
        return [Judgment(PairwiseOutcomes(outcomes=[CriterionWinner(criterion_id=c["criterion_id"], winner="A")
                                                    for c in r.variables["criteria_list"]]),
                         Provenance("biased", r.template, "h")) for r in requests]


def inputs(report=PUFFED):
    tasks = tasks_table(key="wlc.h", benchmark="wlc", original_id="h", reference_article=REFERENCE)
    reports = frame("reports", [{"system": "s", "task": "wlc.h", "status": "ok", "text": report, "n_chars": 1,
                                 "content_hash": "x", "source_path": None, "na_reason": None, "detail": ""}])
    return reports, tasks


BOTH_ORDERS = {"wlc.position_bias": "both_orders"}


def test_both_orders_cancel_a_position_biased_judge():
    rows = judge_pairwise([("s", "wlc.h")], *inputs(), BiasedJudge(), policies=BOTH_ORDERS)
    assert rows.height == 39 and set(rows["score"]) == {0.5}  # every criterion a tie: the bias cancels out
    for seed in ("0", "1", "2", "3"):  # one order per category: the bias decides, and the seed flips it
        single = judge_pairwise([("s", "wlc.h")], *inputs(), BiasedJudge(),
                                policies={"wlc.position_bias": "random_order", "wlc.seed": seed})
        assert set(single["score"]) <= {0.0, 1.0}


def test_swapping_the_articles_cannot_change_the_outcome_under_both_orders():
    one = judge_pairwise([("s", "wlc.h")], *inputs(), BiasedJudge(), policies=BOTH_ORDERS)
    # the same comparison with the report and the reference swapped in the task/report roles
    swapped_reports, swapped_tasks = inputs(report=REFERENCE)
    swapped_tasks = swapped_tasks.with_columns(reference_article=swapped_tasks["reference_article"].str.replace(
        "(?s).*", PUFFED))
    two = judge_pairwise([("s", "wlc.h")], swapped_reports, swapped_tasks, BiasedJudge(), policies=BOTH_ORDERS)
    assert one["score"].to_list() == two["score"].to_list()


def test_the_offline_judge_compares_measured_features():
    rows = judge_pairwise([("s", "wlc.h")], *inputs(), HeuristicJudge(), policies=BOTH_ORDERS)
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
    # category rates weighted by criteria counts (21 WW + 8 B + 10 N) / 39, not micro over the 34 judged
    assert m["writing"].value == pytest.approx(100 * (21 * 7 / 21 + 8 * 0 + 10 * 1.0) / 39)
    assert "(21 well_written + 8 broad + 10 neutral) / 39" in m["writing"].policy
    assert "position bias: published" in m["writing"].policy  # the release's protocol is the default
    assert "criteria texts: ours" in m["writing"].policy  # no release texts reached this evidence
    none = {v.metric: v for v in SUITES["wlc"].score(ReportEvidence("s", "t", "wlc", "j"))}
    assert none["writing"].value is None and none["writing"].na_reason == "pipeline_failure"


def test_writing_is_na_naming_a_category_with_nothing_judged():
    scores = {f"wlc.{c}.{cid}": 1.0 for c in ("well_written", "broad") for cid, _, _ in CATEGORIES[c]}
    scores |= {f"wlc.neutral.{cid}": None for cid, _, _ in CATEGORIES["neutral"]}
    ev = ReportEvidence("s", "t", "wlc", "j", rubric_scores=scores,
                        judgment_failures={f"wlc.neutral.{cid}": ("provider_failure", "HTTP 503")
                                           for cid, _, _ in CATEGORIES["neutral"]})
    m = {v.metric: v for v in SUITES["wlc"].score(ev)}
    assert m["well_written"].value == 100.0 and m["broad"].value == 100.0  # the categories that were judged stand
    assert m["writing"].value is None and m["writing"].na_reason == "provider_failure"
    assert "neutral has none judged" in m["writing"].detail and "HTTP 503" in m["writing"].detail


def test_fact_side_rows_are_declared_and_missing_and_headline_order():
    m = {v.metric: v for v in SUITES["wlc"].score(ReportEvidence("s", "t", "wlc", "j"))}
    for name in ("cov_wiki", "wiki_conf"):
        assert m[name].value is None and m[name].na_reason == "pipeline_failure"
        assert m[name].detail == "the task has no gold statements"  # built in wlc/coverage.py
    assert SUITES["wlc"].headline == ("writing", "well_written", "broad", "neutral", "cov_wiki", "ref_acc",
                                      "wiki_conf", "ref_conf", "leakage")


def test_published_protocol_is_the_default_reference_first_one_call_per_category_no_tie():
    judge = BiasedJudge()
    rows = judge_pairwise([("s", "wlc.h")], *inputs(), judge)
    assert len(judge.requests) == 3  # one call per category, never both orders
    assert all(r.variables["article_a"].startswith("# Harrowgate Tidal Barrage\n\nThe Harrowgate")
               for r in judge.requests)  # the reference is always article A
    assert set(rows["score"]) == {0.0}  # the biased judge picks A: the reference wins everything
    assert all(r.startswith("policy published") for r in rows["reason"])
    prompt = render(judge.requests[0].template, dict(judge.requests[0].variables))
    assert "Ties are not allowed" in prompt and "the winner (A or B)" in prompt
    both = BiasedJudge()
    judge_pairwise([("s", "wlc.h")], *inputs(), both, policies=BOTH_ORDERS)
    assert len(both.requests) == 6 and "or tie when they are equally good" in render(
        both.requests[0].template, dict(both.requests[0].variables))
    with pytest.raises(ValueError):  # the published protocol's answer cannot hold a tie
        judge.requests[0].response_model.model_validate({"outcomes": [{"criterion_id": "x", "winner": "tie"}]})


def test_offline_judge_gives_no_tie_under_the_published_protocol():
    report, tasks = inputs(report=REFERENCE)  # the report is the reference: every feature measures the same
    both = judge_pairwise([("s", "wlc.h")], report, tasks, HeuristicJudge(), policies=BOTH_ORDERS)
    assert set(both["score"]) == {0.5}
    published = judge_pairwise([("s", "wlc.h")], report, tasks, HeuristicJudge())
    assert published.height == 39 and published["na_reason"].null_count() == 39
    assert set(published["score"]) == {0.0}  # an even criterion stays with the reference (article A)
    puffed = judge_pairwise([("s", "wlc.h")], *inputs(), HeuristicJudge())
    assert 0.5 not in set(puffed["score"]) and puffed["na_reason"].null_count() == 39


def statement(claim_id, *verdicts, urls=None):
    urls = urls or tuple(f"https://s{i}.example/{claim_id}" for i in range(len(verdicts)))
    return ClaimEvidence(claim_id, "sentence", f"claim {claim_id}", urls=urls,
                         verdicts=tuple(SourceVerdict(u, v) for u, v in zip(urls, verdicts)))


def reference_rows(claims, **policies):
    ev = ReportEvidence("s", "t", "wlc", "j", claims=claims, policies=policies)
    return {v.metric: v for v in SUITES["wlc"].score(ev)}


def test_statement_label_support_beats_conflict_beats_not_support():
    m = reference_rows([statement("a", "partial", "contradicted")])
    assert m["ref_conf"].value == 100.0 and m["ref_acc"].value == 0.0  # a partial source cannot hide the conflict
    assert "else conflict if any contradicts it" in m["ref_conf"].policy
    assert "support_conflict_not_support" in m["ref_acc"].policy
    generic = reference_rows([statement("a", "partial", "contradicted")], **{"wlc.statement_label": "best_verdict"})
    assert generic["ref_conf"].value == 0.0 and "merge=best" in generic["ref_conf"].policy
    m = reference_rows([statement("a", "contradicted", "supported"), statement("b", "unsupported", "contradicted"),
                        statement("c", "unknown", "partial"), statement("d", "unknown", "unknown")])
    # a: support; b: conflict; c: not_support; d: unknown, dropped (drop_unreachable)
    assert m["ref_acc"].value == pytest.approx(100 / 3) and m["ref_conf"].value == pytest.approx(100 / 3)
    assert m["ref_acc"].n_items == 3 and "unknown 1" in m["ref_acc"].detail
    everything = reference_rows([statement("a", "contradicted", "supported"), statement("d", "unknown", "unknown")],
                                **{"wlc.ref_acc.denominator": "all"})
    assert everything["ref_acc"].value == 50.0
