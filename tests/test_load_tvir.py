"""TVIR-Bench release loader against a miniature release in the official layout (tests/fixtures/releases/tvir)."""
import inspect
import json
import shutil
from pathlib import Path

import pytest
from release_helpers import RELEASES, layout_problems, load_release, problems

from dreval_assets.benchmarks.tvir import loader as load_tvir
from dreval_assets.releases.records import ImportLog

FIXTURE = RELEASES / "tvir"


@pytest.fixture(scope="module")
def loaded():
    return load_release(load_tvir, FIXTURE)


def write_release(root: Path, records: list) -> Path:
    (root / "benchmark/data").mkdir(parents=True)
    (root / "benchmark/data/query.json").write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    return root


def test_tasks_keys_and_language_from_the_id(loaded):
    tasks, _, _ = loaded
    assert list(tasks) == ["tvir.000001", "tvir.100001", "tvir.100002"]
    assert [(t.original_id, t.language, t.modality, t.benchmark) for t in tasks.values()] == [
        ("000001", "zh", "text", "tvir"), ("100001", "en", "text", "tvir"), ("100002", "en", "text", "tvir")]
    assert tasks["tvir.100001"].query.startswith("Write an illustrated report")


def test_checklist_is_flattened_and_sections_kept(loaded):
    tasks, _, _ = loaded
    assert tasks["tvir.000001"].checklist == ["给出五年投放量数据", "说明主要运营商", "至少一张折线图展示骑行量"]
    assert tasks["tvir.000001"].attributes == {"checklist_sections": "市场概况 | 图表要求"}
    assert tasks["tvir.100001"].checklist == ["Defines a community solar garden", "Gives installed capacity by year",
                                              "Cites at least two utility filings", "Includes a map or chart of adoption"]
    assert tasks["tvir.100001"].attributes["checklist_sections"] == "Background | Evidence | Visuals"
    # variants: a numeric id and a checklist given as a plain list
    assert tasks["tvir.100002"].checklist == ["Lists routes closed since 2010", "Shows ridership in a chart"]
    assert tasks["tvir.100002"].attributes == {}


def test_every_bad_record_is_reported_where_it_is(loaded):
    _, _, log = loaded
    assert problems(log.skipped, "benchmark/data") == [
        "benchmark/data/query.json:4: duplicate task id '000001' (first seen at benchmark/data/query.json:1)",
        "benchmark/data/query.json:5: empty query",
        "benchmark/data/query.json:6: expected a JSON object, found str",
        "benchmark/data/query.json:7: malformed JSON (Expecting ',' delimiter); rest of file skipped",
    ]
    assert problems(log.notes) == ["benchmark/data/query.json:2: unknown field(s) kept out: domain"]


def test_reports_with_images_beside_them(loaded):
    _, reports, _ = loaded
    assert [(r.system, r.task, r.task_id, r.where) for r in reports] == [
        ("claude-4.5-sonnet", "tvir.000001", "000001", "benchmark/reports/claude-4.5-sonnet/000001/report.md"),
        ("claude-4.5-sonnet", "tvir.100002", "100002", "benchmark/reports/claude-4.5-sonnet/100002/report.md"),
        ("gpt-5-search", "tvir.000001", "000001", "benchmark/reports/gpt-5-search/000001/report.md"),
        ("gpt-5-search", "tvir.100001", "100001", "benchmark/reports/gpt-5-search/100001/report.md"),
    ]
    report = reports[2]
    assert report.path == FIXTURE / "benchmark/reports/gpt-5-search/000001/report.md"
    assert report.base_dir == FIXTURE / "benchmark/reports/gpt-5-search/000001"
    assert report.text is None and report.trace is None and report.trace_path is None


def test_missing_images_are_logged_and_the_report_kept(loaded):
    _, reports, log = loaded
    # present: images/fleet.png, charts/rides.png, "charts/adoption%20map.png", file://charts/ridership.png;
    # remote URLs are not checked
    assert problems(log.missing) == [
        "benchmark/reports/gpt-5-search/000001/report.md:9: image not found: images/operators.png",
        "benchmark/reports/gpt-5-search/100001/report.md:7: image not found: images/field.png",
    ]
    assert {r.where for r in reports} >= {"benchmark/reports/gpt-5-search/000001/report.md",
                                          "benchmark/reports/gpt-5-search/100001/report.md"}


def test_reports_that_cannot_be_used_are_skipped(loaded):
    _, _, log = loaded
    assert problems(log.skipped, "benchmark/reports") == [
        "benchmark/reports/claude-4.5-sonnet/100003/report.md: empty report",
        "benchmark/reports/claude-4.5-sonnet/100004: no report.md",
        "benchmark/reports/claude-4.5-sonnet/999999/report.md: no task with id '999999'",
    ]


def test_systems_are_the_report_folders():
    assert [s.name for s in load_tvir.iter_systems(FIXTURE, ImportLog())] == ["claude-4.5-sonnet", "gpt-5-search"]


def test_numeric_ids_lose_their_padding_but_keep_their_set(tmp_path):
    root = write_release(tmp_path, [{"id": 12, "query": "短查询", "checklist": {"A": ["x"]}},
                                    {"id": "report-7", "query": "An English query", "checklist": {}}])
    (root / "benchmark/reports/sys/000012").mkdir(parents=True)
    (root / "benchmark/reports/sys/000012/report.md").write_text("# 报告\n", encoding="utf-8")
    log = ImportLog()
    tasks = list(load_tvir.iter_tasks(root, log))
    assert [(t.key, t.original_id, t.language) for t in tasks] == [("tvir.12", "12", "zh"),
                                                                   ("tvir.report-7", "report-7", "en")]
    assert "benchmark/data/query.json:2: id 'report-7' is not a TVIR number; language en guessed from the query" \
        in problems(log.notes)
    (root / "benchmark/reports/sys/12").mkdir(parents=True)
    (root / "benchmark/reports/sys/12/report.md").write_text("# 同一任务\n", encoding="utf-8")
    assert [(r.task, r.task_id, r.where) for r in load_tvir.iter_reports(root, log)] == [
        ("tvir.12", "12", "benchmark/reports/sys/000012/report.md")]
    assert problems(log.skipped) == [("benchmark/reports/sys/12/report.md: second report of sys for task 12 "
                                     "(first: benchmark/reports/sys/000012/report.md)")]


def test_unusable_checklist_skips_the_task(tmp_path):
    root = write_release(tmp_path, [{"id": "100009", "query": "q", "checklist": "see appendix"}])
    log = ImportLog()
    assert list(load_tvir.iter_tasks(root, log)) == []
    assert problems(log.skipped) == [("benchmark/data/query.json:1: checklist is a str, expected "
                                     "{section: [item, ...]} or a list of items")]


def test_loaders_are_lazy(tmp_path):
    root = tmp_path / "tvir"
    shutil.copytree(FIXTURE, root)
    query = root / "benchmark/data/query.json"
    text = query.read_text(encoding="utf-8")
    query.write_text(text.rstrip().rstrip("]") + ", {broken" * 5000 + "]", encoding="utf-8")
    log = ImportLog()
    tasks = load_tvir.iter_tasks(root, log)
    assert iter(tasks) is tasks
    assert next(tasks).key == "tvir.000001"
    assert log.skipped == []  # nothing past the first record has been read
    assert all(inspect.isgenerator(f(root, log)) for f in (load_tvir.iter_reports, load_tvir.iter_systems))


def test_layout_problem(tmp_path):
    assert layout_problems(load_tvir, FIXTURE, tmp_path) == (
        None, "no benchmark/data/query.json: not a TVIR-Bench release", f"{tmp_path / 'absent'} is not a folder")
