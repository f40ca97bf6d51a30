"""DeepResearch Bench RACE as published, seen from the judge's side: a release with cleaned articles for
one system and none for another is imported, its reports read back from the store, and RACE judged by
the OpenAI judge against the loopback server; the captured prompts show one call per report, the
report first, the release's cleaned article when it has one and no citation marker otherwise."""
from __future__ import annotations

import json
import re
from pathlib import Path

from judge_answers import dreval_answer, prompt_text
from loopback_llm import LoopbackLLM

from dreval_assets.benchmarks.drb.judgments import judge_race
from dreval_assets.operations.importer import import_release
from dreval_assets.judges.heuristic import HeuristicJudge
from dreval_assets.judges.openai_config import OpenAIJudgeConfig
from dreval_assets.judges.openai_judge import OpenAIJudge
from dreval_assets.stages.reports import read_reports
from dreval_assets.stages.tasks import task_frames
from dreval_assets.stages.task_rubrics import generate_rubrics
from dreval_assets.store.db import Store
from dreval_assets.store.imports import imported_reports
from dreval_assets.store.registry import load_systems, load_tasks

WEIGHTS = {"comprehensiveness": 0.4, "insight": 0.3, "instruction_following": 0.2, "readability": 0.1}
TASKS = {1: ("en", "Assess how harbour ferries priced winter fares after 2020."),
         2: ("zh", "请分析2015年以来内陆湖泊小型潮汐发电试点的成本变化。")}
REFERENCES = {1: "# Harbour ferries\n\nWinter fares rose by a tenth while timetables thinned.",
              2: "# 潮汐发电试点\n\n试点的单位成本逐年下降。"}
RAW = {  # as systems hand them in: chatter, dagger markers, links, reference lists
    ("cleaned-agent", 1): "Sure! Here is the report.\n\n# Ferries\n\nWinter fares rose 12% [15†L10] per the "
                          "[harbour board](https://ferries.example.com/fares).\n\n## References\n"
                          "[15] Harbour board https://ferries.example.com/fares",
    ("cleaned-agent", 2): "# 潮汐发电\n\n潮汐发电成本下降了三成[1]。\n\n## 参考文献\n[1] https://tides.example.cn/cost",
    ("raw-agent", 1): "# Ferries\n\nWinter fares rose 12% [15†L10] and timetables thinned [2].\n\n## References\n"
                      "[2] https://ferries.example.com/timetable",
    ("raw-agent", 2): "# 潮汐发电\n\n成本下降了三成【1】。\n\n参考文献\n[1] https://tides.example.cn/cost",
}
CLEANED = {1: "# Ferries\n\nWinter fares rose 12% according to the harbour board.",
           2: "# 潮汐发电\n\n潮汐发电成本下降了三成。"}
MARKERS = re.compile(r"\[\d+(†[^\]]*)?\]|【\d+】|https?://|References|参考文献")


def jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def write_release(root: Path) -> Path:
    data = root / "data"
    jsonl(data / "prompt_data/query.jsonl", [{"id": i, "topic": "Transport", "language": lang, "prompt": prompt}
                                             for i, (lang, prompt) in TASKS.items()])
    jsonl(data / "criteria_data/criteria.jsonl", [
        {"id": i, "prompt": prompt, "dimension_weight": WEIGHTS,
         "criterions": {d: [{"criterion": f"{d} of the fares and costs", "explanation": f"why {d} matters here",
                             "weight": 1.0}] for d in WEIGHTS}} for i, (_, prompt) in TASKS.items()])
    jsonl(data / "test_data/cleaned_data/reference.jsonl", [{"id": i, "prompt": TASKS[i][1], "article": a}
                                                            for i, a in REFERENCES.items()])
    for system in ("cleaned-agent", "raw-agent"):
        jsonl(data / f"test_data/raw_data/{system}.jsonl",
              [{"id": i, "prompt": TASKS[i][1], "article": RAW[(system, i)]} for i in TASKS])
    # the benchmark's cleaning ran for one system only; the other has no cleaned file at all
    jsonl(data / "test_data/cleaned_data/cleaned-agent.jsonl", [{"id": i, "prompt": TASKS[i][1], "article": a}
                                                                for i, a in CLEANED.items()])
    return root


def imported(tmp_path: Path):
    store = Store(tmp_path / "home" / "dreval.duckdb")
    store.ensure_schema()
    release = write_release(tmp_path / "deep_research_bench")
    import_release(store, "drb", release)
    tasks = load_tasks(store)
    keys = [(s, t) for s in ("cleaned-agent", "raw-agent") for t in sorted(tasks)]
    reports = read_reports(keys, load_systems(store), {k: t.original_id for k, t in tasks.items()},
                           imported_reports(store, keys))
    frames = task_frames([tasks[k] for k in sorted(tasks)])
    return store, release, keys, reports, frames["tasks"], generate_rubrics(frames["tasks"], {}, HeuristicJudge())


def judged(tmp_path: Path, policies: dict | None = None):
    store, release, keys, reports, tasks, rubrics = imported(tmp_path)
    with LoopbackLLM(answer=dreval_answer) as llm:
        judge = OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k", timeout_s=5))
        rows = judge_race(keys, reports, tasks, rubrics, judge, policies=policies)
        prompts = [prompt_text(r, "<<<REPORT A") for r in llm.requests]
    return rows, prompts


def shown(prompt: str, side: str) -> str:
    return prompt.split(f"<<<REPORT {side}\n", 1)[1].split(f"\nREPORT {side}>>>", 1)[0]


def test_one_call_per_report_the_report_first_on_the_release_s_cleaned_article(tmp_path):
    rows, prompts = judged(tmp_path)
    assert len(prompts) == 4  # two systems x two tasks, one call each
    firsts = [shown(p, "A") for p in prompts]
    seconds = [shown(p, "B") for p in prompts]
    # the cleaned system's reports are the release's rewrites, verbatim, in the first place
    assert sorted(a for a in firsts if a in CLEANED.values()) == sorted(CLEANED.values())
    assert set(seconds) == set(REFERENCES.values())  # the reference second, as released
    for prompt in prompts:
        assert not MARKERS.search(shown(prompt, "A")), shown(prompt, "A")
        assert "Sure! Here is the report." not in shown(prompt, "A")  # the cleaning dropped the chatter
    # the raw system's reports: our stripping, text kept, markers gone
    raw_shown = [a for a in firsts if a not in CLEANED.values()]
    assert len(raw_shown) == 2 and any("timetables thinned" in a for a in raw_shown)
    assert any("成本下降了三成" in a for a in raw_shown)
    read = {(r["system"], r["task"]): r["score"] for r in rows.filter(rows["item_id"] == "drb.race.target_text")
            .iter_rows(named=True)}
    assert read == {("cleaned-agent", "drb.1"): 1.0, ("cleaned-agent", "drb.2"): 1.0,
                    ("raw-agent", "drb.1"): 0.0, ("raw-agent", "drb.2"): 0.0}


def test_the_judge_sees_the_query_and_every_criterion_with_its_explanation(tmp_path):
    _, prompts = judged(tmp_path)
    for prompt in prompts:
        task = next(p for _, p in TASKS.values() if p in prompt)
        assert task in prompt.split("<<<REPORT A", 1)[0]
        for dimension in WEIGHTS:
            assert f"{dimension} of the fares and costs: why {dimension} matters here" in prompt
        assert "weight" not in prompt.split("<<<REPORT A", 1)[0].lower()  # the judge never sees the weights


def test_both_orders_is_a_policy_of_two_calls(tmp_path):
    rows, prompts = judged(tmp_path, {"drb.race.position_bias": "both_orders"})
    assert len(prompts) == 8
    assert sum(shown(p, "A") in REFERENCES.values() for p in prompts) == 4  # the reference first in half


def test_a_changed_cleaned_file_makes_the_report_changed_on_reimport(tmp_path):
    store, release, *_ = imported(tmp_path)
    again = import_release(store, "drb", release)
    assert again.reports["unchanged"] == 4
    jsonl(release / "data/test_data/cleaned_data/cleaned-agent.jsonl",
          [{"id": 1, "prompt": TASKS[1][1], "article": CLEANED[1] + " Revised."}])
    after = import_release(store, "drb", release)
    assert (after.reports["changed"], after.reports["unchanged"]) == (2, 2)  # task 1 rewritten, task 2 lost its rewrite
    stored = dict(store.query("SELECT task, cleaned_text FROM imported_reports WHERE system = 'cleaned-agent'")
                  .iter_rows())
    assert stored == {"drb.1": CLEANED[1] + " Revised.", "drb.2": None}


def test_a_chinese_task_is_instructed_in_chinese_as_the_reference_code_does(tmp_path):
    rows, prompts = judged(tmp_path)
    chinese = [p for p in prompts if TASKS[2][1] in p]
    english = [p for p in prompts if TASKS[1][1] in p]
    assert len(chinese) == len(english) == 2
    assert all("评价标准" in p and "You score two research reports" not in p for p in chinese)
    assert all("You score two research reports" in p and "评价标准" not in p for p in english)
    templates = dict(rows.filter(rows["item_id"] == "drb.race.target_text").select("task", "template").unique()
                     .iter_rows())
    assert templates == {"drb.1": "drb/race_scores", "drb.2": "drb/race_scores_zh"}
    assert rows.filter(rows["task"] == "drb.2")["score"].null_count() == 0  # the Chinese answers were read
