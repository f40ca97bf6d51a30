"""DeepResearch Bench release loader, on a miniature release in the official layout."""
from __future__ import annotations

import inspect
import json
import shutil

import pytest
from release_helpers import RELEASES, layout_problems, load_tasks, problems

from dreval_assets.benchmarks.drb import loader as load_drb
from dreval_assets.releases.records import ImportLog, SystemInfo

ROOT = RELEASES / "drb"
QUERIES = "data/prompt_data/query.jsonl"
CRITERIA = "data/criteria_data/criteria.jsonl"
REFERENCES = "data/test_data/cleaned_data/reference.jsonl"
ALPHA = "data/test_data/raw_data/alpha-dr.jsonl"
BETA = "data/test_data/raw_data/beta-agent.jsonl"
CLEANED_ALPHA = "data/test_data/cleaned_data/alpha-dr.jsonl"
CLEANED_BETA = "data/test_data/cleaned_data/beta-agent.jsonl"


def first_record(name: str) -> dict:
    return json.loads((ROOT / name).read_bytes().splitlines()[0])


@pytest.fixture
def tasks():
    return load_tasks(load_drb, ROOT)


def test_layout_problem(tmp_path):
    assert layout_problems(load_drb, ROOT, tmp_path) == (
        None, "no data/prompt_data/query.jsonl: not a DeepResearch Bench release",
        f"{tmp_path / 'absent'} is not a folder")


def test_tasks_and_keys(tasks):
    by_key, _ = tasks
    assert [(k, t.original_id, t.language, t.domain) for k, t in by_key.items()] == [
        ("drb.1", "1", "en", "Finance & Business"), ("drb.2", "2", "zh", "Energy & Environment"),
        ("drb.3", "3", "en", "Health"), ("drb.8", "8", "en", "Travel")]  # "EN" as given, lower-cased


def test_query_criteria_and_reference_come_from_their_files(tasks):
    task = tasks[0]["drb.1"]
    assert task.query == first_record(QUERIES)["prompt"] and task.benchmark == "drb"
    criteria = first_record(CRITERIA)
    assert task.race_criteria.dimension_weights == criteria["dimension_weight"]
    assert {d: [(c.criterion, c.explanation, c.weight) for c in items]
            for d, items in task.race_criteria.criteria.items()} == {
        d: [(c["criterion"], c["explanation"], c["weight"]) for c in items] for d, items in criteria["criterions"].items()}
    assert task.reference_article == first_record(REFERENCES)["article"]


def test_unusable_criteria_are_skipped_and_the_task_kept(tasks):
    by_key, log = tasks
    assert by_key["drb.2"].race_criteria is None and by_key["drb.2"].reference_article.startswith("# 潮汐")
    assert by_key["drb.3"].race_criteria is None and by_key["drb.3"].reference_article is None
    assert by_key["drb.8"].race_criteria is None and by_key["drb.8"].reference_article
    assert problems(log.skipped, CRITERIA) == [
        f"{CRITERIA}:4: malformed JSON (Expecting property name enclosed in double quotes at column 1)",
        f"{CRITERIA}:5: duplicate id '1' (first seen at {CRITERIA}:1)",
        f"{CRITERIA}:2: criteria not used: dimension weights sum to 0.9, not 1",
        f"{CRITERIA}:3: criteria not used: negative weight -0.2 for a criterion of 'insight'"]
    assert problems(log.notes) == [
        f"{QUERIES}:2: no usable RACE criteria for this task: RACE will be N/A",
        f"{QUERIES}:3: unknown field(s) kept out: source",
        f"{QUERIES}:3: no language: en guessed from the prompt",
        f"{QUERIES}:3: no usable RACE criteria for this task: RACE will be N/A",
        f"{QUERIES}:3: no reference article for this task: RACE will be N/A",  # its reference article is blank
        f"{QUERIES}:8: no RACE criteria for this task: RACE will be N/A"]


def test_bad_task_lines_are_skipped_with_line_and_reason(tasks):
    _, log = tasks
    assert problems(log.skipped, QUERIES) == [
        f"{QUERIES}:4: malformed JSON (Expecting value at column 1)",
        f"{QUERIES}:5: duplicate task id '1' (first seen at {QUERIES}:1)",
        f"{QUERIES}:6: not UTF-8 (invalid continuation byte at byte 58)",
        f"{QUERIES}:7: empty prompt"]
    assert not log.missing


@pytest.mark.parametrize("change, reason", [
    ({"dimension_weights": {"insight": 1.0}, "dimension_weight": None}, ("dimensions with weights (insight) and with "
                                                                        "criteria (comprehensiveness, insight) differ")),
    ({"dimension_weight": {"comprehensiveness": 0.5, "insight": "half"}}, "a dimension weight is not a number"),
    ({"criterions": None}, "no criterions object"),
])
def test_criteria_checks(change, reason):
    record = {"dimension_weight": {"comprehensiveness": 0.5, "insight": 0.5},
              "criterions": {"comprehensiveness": [{"criterion": "a", "weight": 1}],
                             "insight": [{"criterion": "b", "explanation": "why", "weight": 1}]}}
    assert not isinstance(load_drb.race_criteria(record), str)
    record.update(change)
    assert load_drb.race_criteria(record) == reason


def test_criteria_field_variants():
    record = {"dimension_weights": {"insight": 0.6, "readability": 0.4},
              "criteria": {"insight": [{"criterion": "a", "weight": 0.7}, {"criterion": "b", "weight": 0.3}],
                           "readability": [{"criterion": "c", "weight": 1}]}}
    criteria = load_drb.race_criteria(record)
    assert criteria.dimension_weights == {"insight": 0.6, "readability": 0.4}
    assert [c.criterion for c in criteria.criteria["insight"]] == ["a", "b"]


def test_missing_side_files_are_logged_once(tmp_path):
    (tmp_path / "data/prompt_data").mkdir(parents=True)
    shutil.copy(ROOT / QUERIES, tmp_path / QUERIES)
    log = ImportLog()
    tasks = list(load_drb.iter_tasks(tmp_path, log))
    assert len(tasks) == 4 and all(t.race_criteria is None and t.reference_article is None for t in tasks)
    assert problems(log.missing) == [f"{CRITERIA}: file missing: RACE will be N/A for every task",
                                     f"{REFERENCES}: file missing: RACE will be N/A for every task"]
    assert not [n for n in problems(log.notes) if "N/A" in n]


def test_systems_are_the_raw_data_files():
    assert list(load_drb.iter_systems(ROOT, ImportLog())) == [SystemInfo("alpha-dr"), SystemInfo("beta-agent")]


def test_reports_resolve_to_task_keys_and_bad_lines_are_skipped():
    log = ImportLog()
    found = list(load_drb.iter_reports(ROOT, log))
    assert [(r.system, r.task, r.task_id, r.where) for r in found] == [
        ("alpha-dr", "drb.1", "1", f"{ALPHA}:1"), ("alpha-dr", "drb.2", "2", f"{ALPHA}:2"),
        ("beta-agent", "drb.8", "8", f"{BETA}:1"), ("beta-agent", "drb.3", "3", f"{BETA}:3")]
    assert found[1].text == "潮汐发电成本下降了三成[15†L10]。" and found[0].path is None and found[0].trace is None
    assert found[2].text.startswith("Sure! Here is the report.")  # agent chatter kept as given
    assert {r.task for r in found} <= {t.key for t in load_drb.iter_tasks(ROOT, ImportLog())}
    assert problems(log.skipped) == [
        f"{ALPHA}:3: no task with id '99'",
        f"{ALPHA}:4: empty report",
        f"{ALPHA}:5: second report of alpha-dr for task 1 (first: {ALPHA}:1)",
        f"{ALPHA}:6: malformed JSON (Invalid control character at at column 35)",
        f"{BETA}:2: not UTF-8 (invalid continuation byte at byte 55)"]
    assert problems(log.notes) == [f"{ALPHA}:2: unknown field(s) kept out: model",
                                   f"{CLEANED_BETA}: no cleaned article for 1 report(s) of beta-agent (id 3): "
                                   "RACE reads them with citations stripped by our parser"]
    assert not problems(log.skipped, QUERIES)  # the task pass behind the id check logs nothing twice


def test_each_report_carries_the_release_s_cleaned_article_when_it_has_one():
    found = {(r.system, r.task): r.cleaned_text for r in load_drb.iter_reports(ROOT, ImportLog())}
    assert found[("alpha-dr", "drb.1")].startswith("# Storm risk pricing") and "[1]" not in found[("alpha-dr", "drb.1")]
    assert found[("alpha-dr", "drb.2")] == "潮汐发电成本下降了三成。"  # the Chinese report's, marker removed by the release
    assert found[("beta-agent", "drb.8")] == "# Ferries\n\nFerries run twice a week in winter."  # matched by id "8"
    assert found[("beta-agent", "drb.3")] is None  # a null article: our stripping will stand in


def test_a_model_without_a_cleaned_file_is_noted_once(tmp_path):
    root = tmp_path / "drb"
    shutil.copytree(ROOT, root)
    (root / CLEANED_ALPHA).unlink()
    log = ImportLog()
    found = [r for r in load_drb.iter_reports(root, log) if r.system == "alpha-dr"]
    assert len(found) == 2 and all(r.cleaned_text is None for r in found)
    assert f"{CLEANED_ALPHA}: no cleaned articles of alpha-dr: RACE reads its reports with citations stripped by " \
           "our parser" in problems(log.notes)


def test_loaders_are_lazy(tmp_path):
    assert inspect.isgenerator(load_drb.iter_tasks(tmp_path / "nowhere", ImportLog()))
    assert inspect.isgenerator(load_drb.iter_reports(tmp_path / "nowhere", ImportLog()))
    root = tmp_path / "drb"
    shutil.copytree(ROOT, root)
    queries = root / QUERIES
    first = queries.read_bytes().splitlines()[0]
    queries.write_bytes(first + b"\n" + b"{garbage\n" * 5000)
    log = ImportLog()
    tasks = load_drb.iter_tasks(root, log)
    assert next(tasks).key == "drb.1"
    assert not problems(log.skipped, QUERIES)  # the garbage lines are not read yet
    report = root / ALPHA
    report.write_bytes(report.read_bytes().splitlines()[0] + b"\n" + b"{garbage\n" * 5000)
    reports = load_drb.iter_reports(root, log)
    assert next(reports).task == "drb.1"
    assert not problems(log.skipped, ALPHA)
