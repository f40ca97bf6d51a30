"""DeepResearch Bench RACE: the release's cleaned article or citations stripped by the parser, both
reports scored per criterion in one call with the report first, T/(T+R) by hand, the position-bias
policy, and N/A with reasons."""
import pytest

from dreval_assets.benchmarks.evidence import ReportEvidence
from dreval_assets.benchmarks.suites import SUITES
from dreval_assets.core.models import RaceCriteria, RaceCriterion, RaceCriterionScores, RaceScores
from dreval_assets.core.report_parser import parse_report, without_citations
from dreval_assets.judges.base import Judgment, JudgeStats, Provenance
from dreval_assets.judges.heuristic import HeuristicJudge
from dreval_assets.stages.frames import frame
from dreval_assets.benchmarks.drb.judgments import judge_race
from dreval_assets.stages.task_rubrics import generate_rubrics
from task_frames import tasks_table

CRITERIA = RaceCriteria(
    dimension_weights={"comprehensiveness": 0.6, "readability": 0.4},
    criteria={"comprehensiveness": [RaceCriterion(criterion="Tidal output", explanation="gives megawatts and homes",
                                                  weight=3),
                                    RaceCriterion(criterion="History", explanation="construction dates", weight=1)],
              "readability": [RaceCriterion(criterion="Structure", explanation="sections and headings", weight=1)]})
REFERENCE = """# Barrage

The barrage generates 240 megawatts for 90,000 homes [1]. Construction dates from 1988 [2].

## References
[1] Energy report https://a.example/energy
[2] History https://b.example/history
"""
REPORT = "# Barrage\n\nIt generates 240 megawatts [1](https://a.example/energy).\n"
CLEANED_REFERENCE = without_citations(REFERENCE)  # a release's reference.jsonl is already cleaned


def test_without_citations_drops_markers_and_reference_lists_but_keeps_the_text():
    text = """# Title

Intro claim [1]. Another [2, 3] and a [linked source](https://a.example/x) here, plus a dagger [15†L10].
Code `x[1]` and years [2023] stay.

| a | b |
|---|---|
| 1 [3] | 2 |

```
print(a[1])
```

## References
[1] Foo https://a.example
[2] Bar https://b.example

### Further reading
- https://c.example
"""
    stripped = without_citations(text)
    assert "Intro claim. Another and a linked source here, plus a dagger." in stripped
    assert "`x[1]`" in stripped and "[2023]" in stripped and "print(a[1])" in stripped and "| 1 | 2 |" in stripped
    for gone in ("References", "Further reading", "https://", "[1]", "[2, 3]", "†"):
        assert gone not in stripped.replace("`x[1]`", "").replace("print(a[1])", ""), gone
    parsed = parse_report(stripped)
    assert not parsed.has_inline_citations and not parsed.has_reference_list and not parsed.references
    assert without_citations(stripped) == stripped  # idempotent


def evidence(scores, criteria=CRITERIA, reference=True, policies=None):
    return ReportEvidence("s", "drb.t", "drb", "j", rubric_scores=scores,
                          inputs={"drb.race_criteria": criteria} if criteria else {},
                          has_reference=reference, policies=policies or {})


def metrics(ev):
    return {m.metric: m for m in SUITES["drb"].score(ev)}


def test_race_by_hand():
    scores = {"drb.race.comprehensiveness.c1.target": 8, "drb.race.comprehensiveness.c1.reference": 6,
              "drb.race.comprehensiveness.c2.target": 4, "drb.race.comprehensiveness.c2.reference": 8,
              "drb.race.readability.c1.target": 5, "drb.race.readability.c1.reference": 5}
    m = metrics(evidence(scores))
    t_comp, r_comp = (3 * 8 + 1 * 4) / 4, (3 * 6 + 1 * 8) / 4  # 7.0 and 6.5
    assert m["comprehensiveness"].value == pytest.approx(100 * 7.0 / 13.5)
    assert m["readability"].value == pytest.approx(50.0)
    t, r = 0.6 * t_comp + 0.4 * 5, 0.6 * r_comp + 0.4 * 5
    assert m["race"].value == pytest.approx(100 * t / (t + r))
    assert m["race"].n_items == 3 and "order: target_first" in m["race"].policy
    assert "report text scored: not recorded" in m["race"].policy
    cleaned = metrics(evidence({**scores, "drb.race.target_text": 1.0}))["race"]
    assert cleaned.value == m["race"].value and "report text scored: the release's cleaned article" in cleaned.policy
    ours = metrics(evidence({**scores, "drb.race.target_text": 0.0}))["race"]
    assert "report text scored: citations stripped by our parser" in ours.policy
    assert m["insight"].value is None and m["insight"].na_reason == "pipeline_failure"  # not in this task's criteria


def test_race_na_reasons():
    assert metrics(evidence({}, criteria=None))["race"].detail == "the task has no RACE criteria"
    assert metrics(evidence({}, reference=False))["race"].detail == "the task has no reference report"
    partial = {"drb.race.comprehensiveness.c1.target": 8, "drb.race.comprehensiveness.c1.reference": 6,
               "drb.race.comprehensiveness.c2.target": None, "drb.race.comprehensiveness.c2.reference": None,
               "drb.race.readability.c1.target": 5, "drb.race.readability.c1.reference": 5}
    m = metrics(evidence(partial))
    assert m["comprehensiveness"].na_reason == "provider_failure"
    assert m["race"].value is None and "comprehensiveness" in m["race"].detail
    assert m["readability"].value == pytest.approx(50.0)  # the scored dimension still reports


class BiasedRaceJudge:
    """Scores whatever is shown first 9 and the other 3, whatever the criterion: pure position bias."""

    judge_id = "biased"
    source_token_budget = None

    def __init__(self):
        self.stats = JudgeStats()
        self.requests = []

    def judge_many(self, requests):
        self.requests.extend(requests)
        return [Judgment(RaceScores(scores=[RaceCriterionScores(criterion_id=c["criterion_id"], score_a=9, score_b=3)
                                            for c in r.variables["criteria_list"]]),
                         Provenance("biased", r.template, "h")) for r in requests]


def inputs(report=REPORT, reference=CLEANED_REFERENCE, cleaned=None, benchmark="drb"):
    tasks = tasks_table(key="drb.t", benchmark=benchmark, reference_article=reference, race_criteria=CRITERIA)
    reports = frame("reports", [{"system": "s", "task": "drb.t", "status": "ok", "text": report, "n_chars": 1,
                                 "content_hash": "x", "source_path": None, "na_reason": None, "detail": "",
                                 "cleaned_text": cleaned}])
    return reports, tasks, generate_rubrics(tasks, {}, HeuristicJudge())


def race_scores(rows):
    return {r["item_id"]: r["score"] for r in rows.iter_rows(named=True)}


def test_one_call_per_report_with_the_report_first_by_default():
    reports, tasks, rubrics = inputs()
    judge = BiasedRaceJudge()
    rows = judge_race([("s", "drb.t")], reports, tasks, rubrics, judge)
    assert len(judge.requests) == 1  # one call covering every criterion, never one per criterion or per order
    shown = judge.requests[0].variables
    assert "240 megawatts" in shown["article_a"] and shown["article_b"] == CLEANED_REFERENCE
    scores = race_scores(rows)
    assert rows.height == 7 and scores.pop("drb.race.target_text") == 0.0  # six criterion rows and what was read
    assert {k.rsplit(".", 1)[1]: v for k, v in scores.items()} == {"target": 9.0, "reference": 3.0}


def test_both_orders_policy_averages_out_a_position_biased_judge():
    reports, tasks, rubrics = inputs()
    judge = BiasedRaceJudge()
    rows = judge_race([("s", "drb.t")], reports, tasks, rubrics, judge,
                      policies={"drb.race.position_bias": "both_orders"})
    assert len(judge.requests) == 2 and judge.requests[1].variables["article_a"] == CLEANED_REFERENCE
    scores = race_scores(rows)
    scores.pop("drb.race.target_text")
    assert set(scores.values()) == {6.0}  # target and reference alike: (9 + 3) / 2
    assert all("policy both_orders" in r for r in rows.filter(rows["item_id"] != "drb.race.target_text")["reason"])


def test_the_release_s_cleaned_article_is_what_the_judge_reads():
    cleaned = "# Barrage\n\nThe release's own rewrite: it generates 240 megawatts."
    reports, tasks, rubrics = inputs(cleaned=cleaned)
    judge = BiasedRaceJudge()
    rows = judge_race([("s", "drb.t")], reports, tasks, rubrics, judge)
    assert judge.requests[0].variables["article_a"] == cleaned
    marker = rows.filter(rows["item_id"] == "drb.race.target_text").row(0, named=True)
    assert marker["score"] == 1.0 and "cleaned article" in marker["reason"]
    assert "target text release cleaned" in rows["reason"][1]


def test_without_a_cleaned_article_the_judge_reads_both_reports_without_citations():
    reports, tasks, rubrics = inputs(report=REPORT + "\n\n## References\n[1] https://a.example/energy\n",
                                     reference=REFERENCE, benchmark="generic")
    judge = BiasedRaceJudge()
    judge_race([("s", "drb.t")], reports, tasks, rubrics, judge, extra_suites=("drb",))
    shown = judge.requests[0].variables
    assert "240 megawatts" in shown["article_a"] and "https://" not in shown["article_a"] + shown["article_b"]
    assert "[1]" not in shown["article_b"] and "References" not in shown["article_a"] + shown["article_b"]
    assert [c["criterion_id"] for c in shown["criteria_list"]] == ["comprehensiveness.c1", "comprehensiveness.c2",
                                                                   "readability.c1"]
    assert all(c["explanation"] for c in shown["criteria_list"])
    assert "gives megawatts and homes" in shown["criteria"] and shown["query"] == "q"


def test_offline_judge_measures_criterion_coverage_and_identical_reports_tie():
    reports, tasks, rubrics = inputs(report=REFERENCE)  # stripped, it is the cleaned reference
    rows = judge_race([("s", "drb.t")], reports, tasks, rubrics, HeuristicJudge())
    scores = {r["item_id"]: r["score"] for r in rows.iter_rows(named=True)}
    for cid in ("comprehensiveness.c1", "comprehensiveness.c2", "readability.c1"):
        assert scores[f"drb.race.{cid}.target"] == scores[f"drb.race.{cid}.reference"]
    reports, tasks, rubrics = inputs()
    rows = judge_race([("s", "drb.t")], reports, tasks, rubrics, HeuristicJudge())
    scores = {r["item_id"]: r["score"] for r in rows.iter_rows(named=True)}
    # the short report mentions megawatts but not homes or construction dates
    assert scores["drb.race.comprehensiveness.c2.target"] < scores["drb.race.comprehensiveness.c2.reference"]


def test_no_criteria_no_calls():
    reports, tasks, _ = inputs()
    judge = BiasedRaceJudge()
    empty_rubrics = frame("task_rubrics", [])
    assert judge_race([("s", "drb.t")], reports, tasks, empty_rubrics, judge).height == 0 and not judge.requests
