"""task_rubrics: loaded checklists and RACE criteria, attachment key facts, MiroEval Grounding."""
import json

import pytest

from dreval_assets.config import ConfigError, Settings
from dreval_assets.benchmarks.mmdr import metrics as mmdr
from dreval_assets.benchmarks.policies import all_policies, check_policies
from dreval_assets.core.key_facts import extract_key_facts, share_kept
from dreval_assets.core.models import RaceCriteria, RaceCriterion
from dreval_assets.judges.heuristic import HeuristicJudge
from dreval_assets.stages import task_rubrics
from dreval_assets.stages.frames import frame
from dreval_assets.benchmarks.drb.judgments import race_criteria
from dreval_assets.benchmarks.miroeval.judgments import adaptive_rubric, judge_synthesis, task_key_facts
from task_frames import tasks_table

BRIEF = """# Water brief

The authority runs four plants with a combined capacity of
540,000 cubic metres per day. Desalinated water met 41 percent of municipal
demand in 2023.

The average production cost was 0.71 dollars per cubic metre in 2023.
Staff were friendly.
"""
LIST = "- a list item with 3 numbers 4 and 5 stays its own line\n"


def test_key_facts_are_the_sentences_with_figures_unwrapped():
    facts = extract_key_facts(BRIEF + LIST, 2)  # most figures first (ties: earlier first), shown in document order
    assert facts == ["Desalinated water met 41 percent of municipal demand in 2023.",
                     "- a list item with 3 numbers 4 and 5 stays its own line"]
    everything = extract_key_facts(BRIEF, 10)
    assert everything[0] == "The authority runs four plants with a combined capacity of 540,000 cubic metres per day."
    assert "Desalinated water met 41 percent of municipal demand in 2023." in everything
    assert not any("friendly" in f for f in everything)


def test_a_fact_is_kept_when_its_numbers_are_in_the_report():
    facts = ["Capacity is 540,000 cubic metres per day.", "Cost was 0.71 dollars in 2023.",
             "The authority runs reverse osmosis plants."]
    share, kept = share_kept(facts, "Capacity: 540000 m3/day; reverse osmosis plants run by the authority.")
    assert kept == 2 and share == pytest.approx(2 / 3)  # 0.71 and 2023 missing; the word-only fact matches by words


def rubrics_for(**task):
    tasks = tasks_table(**task)
    return tasks, task_rubrics.generate_rubrics(tasks, {"t": {"brief.md": BRIEF}} if task.get("benchmark") == "miroeval"
                                                else {}, HeuristicJudge())


def test_loaded_artifacts_carry_their_content_hash_and_no_judge():
    criteria = RaceCriteria(dimension_weights={"insight": 1.0},
                            criteria={"insight": [RaceCriterion(criterion="c", explanation="e", weight=1)]})
    _, rows = rubrics_for(benchmark="drb", checklist=["a", "b"], race_criteria=criteria)
    by_kind = {r["kind"]: r for r in rows.iter_rows(named=True)}
    assert set(by_kind) == {"checklist", "race_criteria"}
    assert json.loads(by_kind["checklist"]["rubric"]) == ["a", "b"] and by_kind["checklist"]["judge"] == "loaded"
    assert race_criteria(rows)["t"] == criteria
    _, changed = rubrics_for(benchmark="drb", checklist=["a", "b", "c"], race_criteria=criteria)
    assert {r["kind"]: r["template_hash"] for r in changed.iter_rows(named=True)}["checklist"] != \
        by_kind["checklist"]["template_hash"]


def test_miroeval_task_gets_rubric_with_grounding_and_key_facts_per_attachment():
    tasks, rows = rubrics_for(benchmark="miroeval", query="How is desalination in the province doing?")
    kinds = sorted(rows["kind"])
    assert kinds == ["key_facts", "miroeval_rubric"]
    assert task_key_facts(rows)["t"][0].startswith("The authority runs four plants")
    rubric = adaptive_rubric(rows)["t"]
    assert "grounding" in {d.dimension_id for d in rubric.dimensions}

    def grounding_scores(report):
        reports = frame("reports", [{"system": "s", "task": "t", "status": "ok", "text": report, "n_chars": 1,
                                     "content_hash": "x", "source_path": None, "na_reason": None, "detail": ""}])
        judged = judge_synthesis([("s", "t")], reports, tasks, rows, HeuristicJudge())
        return set(judged.filter(judged["item_id"].str.starts_with("miroeval.grounding."))["score"])

    faithful = "Capacity is 540,000 cubic metres per day; 41 percent of demand in 2023; 0.71 dollars per cubic metre."
    careless = "Capacity is 450,000 cubic metres per day; 14 percent of demand; 1.70 dollars per cubic metre."
    assert grounding_scores(faithful) == {10.0} and grounding_scores(careless) == {0.0}


def test_judge_that_finds_no_facts_is_na_not_an_empty_list():
    tasks = tasks_table(benchmark="miroeval")
    rows = task_rubrics.generate_rubrics(tasks, {"t": {"note.md": "No figures here at all, only words."}},
                                         HeuristicJudge())
    facts = rows.filter(rows["kind"] == "key_facts").row(0, named=True)
    assert facts["rubric"] is None and facts["na_reason"] == "data_accessibility" and "note.md" in facts["detail"]


def test_flae_alpha_policy():
    parts = {"alpha": 0.4, "alpha_judge": 0.1}
    assert mmdr.flae_alpha(parts, "det")[0] == 0.4
    assert mmdr.flae_alpha(parts, "judge") == (0.1, "alpha = 0.100 set by the judge (alpha_det would be 0.400)")
    value, text = mmdr.flae_alpha({"alpha": 0.4}, "judge")
    assert value == 0.4 and "the judge set no alpha" in text


def test_unknown_policies_fail_before_any_run(tmp_path):
    check_policies({"mmdr.flae.alpha": "judge", "wlc.seed": "7"})
    with pytest.raises(ValueError, match="choose one of det, judge"):
        check_policies({"mmdr.flae.alpha": "sometimes"})
    with pytest.raises(ConfigError, match="unknown policy 'drb.race.order'"):
        Settings(tmp_path, policies='{"drb.race.order": "both_orders"}').validate()
    assert all(p.allowed is None or p.default in p.allowed for p in all_policies().values())


def test_miroeval_synthesis_prompts_as_published(llm):
    """What the synthesis judge sees: every dimension's call carries the attachments' key facts, the
    criteria with their explanations and the anchored 0-10 bands, and leaves factual accuracy out;
    Grounding is a task-specific dimension and the judge's weights are kept uncapped."""
    from dreval_assets.benchmarks.miroeval.metrics import task_specific
    from dreval_assets.core.models import AdaptiveRubric, RubricCriterion, RubricDimension
    from dreval_assets.benchmarks.miroeval.rubric import finalise
    from dreval_assets.judges.openai_config import OpenAIJudgeConfig
    from dreval_assets.judges.openai_judge import OpenAIJudge

    tasks, rows = rubrics_for(benchmark="miroeval", query="How is desalination in the province doing?")
    rubric = adaptive_rubric(rows)["t"]
    assert "grounding" in task_specific(rubric)
    reports = frame("reports", [{"system": "s", "task": "t", "status": "ok", "text": "Capacity is 540,000 m3/day.",
                                 "n_chars": 1, "content_hash": "x", "source_path": None, "na_reason": None,
                                 "detail": ""}])
    judge = OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k", timeout_s=5))
    judge_synthesis([("s", "t")], reports, tasks, rows, judge)
    prompts = [r["messages"][0]["content"] for r in llm.requests]
    assert len(prompts) == len(rubric.dimensions)
    facts = task_key_facts(rows)["t"]
    for prompt in prompts:
        assert all(f in prompt for f in facts)  # key facts in every dimension's call, not only Grounding's
        assert "0-2:" in prompt and "9-10:" in prompt and "Most reports land between 4 and 8" in prompt
        assert "do not\njudge whether its facts are true" in prompt or "do not judge whether its facts are true" in \
            " ".join(prompt.split())

    explained = AdaptiveRubric(dimensions=[
        RubricDimension(dimension_id="coverage", name="Coverage", criteria=[
            RubricCriterion(criterion_id="c1", text="covers supply", explanation="names every plant", weight=1)]),
        RubricDimension(dimension_id="grounding", name="Grounding", criteria=[
            RubricCriterion(criterion_id="c1", text="reads the brief", weight=1)])],
        weights={"coverage": 0.4, "grounding": 0.6})
    final = finalise(explained)
    assert final.weights == {"coverage": 0.4, "grounding": 0.6} and task_specific(final) == ["grounding"]
    assert [d.dynamic for d in final.dimensions] == [False, True]


def test_a_benchmarks_task_artifacts_are_asked_at_once_and_come_out_as_one_after_another():
    import threading
    import time

    class OverlapCounting(HeuristicJudge):
        parallel_batches = True  # an endpoint's judge: independent batches may be asked together

        def __init__(self):
            super().__init__()
            self.lock, self.active, self.peak = threading.Lock(), 0, 0

        def judge_many(self, requests):
            with self.lock:
                self.active += 1
                self.peak = max(self.peak, self.active)
            time.sleep(0.2)  # an answer's latency: the other artifacts' batches start meanwhile
            try:
                return super().judge_many(requests)
            finally:
                with self.lock:
                    self.active -= 1

    tasks = tasks_table(benchmark="miroeval", query="How is desalination in the province doing?")
    judge = OverlapCounting()
    at_once = task_rubrics.generate_rubrics(tasks, {"t": {"brief.md": BRIEF}}, judge)
    one_by_one = task_rubrics.generate_rubrics(tasks, {"t": {"brief.md": BRIEF}}, HeuristicJudge())
    assert judge.peak >= 2
    assert at_once.to_dicts() == one_by_one.to_dicts()  # same rows, same order
