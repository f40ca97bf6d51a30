"""MiroEval release loader on a miniature release in the official layout (fixtures/releases/miroeval)."""
import inspect
import json
import shutil

from release_helpers import RELEASES, layout_problems, load_reports, load_tasks, problems

from dreval_assets.benchmarks.miroeval import loader as miro
from dreval_assets.releases.records import ImportLog

ROOT = RELEASES / "miroeval"
TEXT = "data/input_queries/mirobench_text.json"
MULTI = "data/input_queries/mirobench_multimodal.json"
ATTACHMENTS = "data/input_queries/multimodal-attachments"


def test_layout_is_recognised_and_an_empty_folder_is_not(tmp_path):
    assert layout_problems(miro, ROOT, tmp_path) == (
        None, "no data/input_queries/mirobench_text.json or mirobench_multimodal.json: not a MiroEval release",
        f"{tmp_path / 'absent'} is not a folder")


def test_exact_tasks_and_keys_in_file_order():
    tasks, _ = load_tasks(miro, ROOT)
    assert list(tasks) == ["miroeval.1", "miroeval.2", "miroeval.3", "miroeval.101", "miroeval.102"]
    assert [t.original_id for t in tasks.values()] == ["1", "2", "3", "101", "102"]
    assert {t.benchmark for t in tasks.values()} == {"miroeval"}


def test_text_task_fields_come_from_the_right_places():
    tasks, _ = load_tasks(miro, ROOT)
    first = tasks["miroeval.1"]
    assert first.query.startswith("I manage three office buildings")  # rewritten_query, not query
    assert (first.language, first.domain, first.modality) == ("en", "engineering", "text")
    assert first.attributes == {"category": "text", "pattern": "T2", "origin_id": "7",
                                "persona": "facilities manager", "topic": "heat pumps"}
    assert first.attachments == [] and first.attachment_texts == {}
    second = tasks["miroeval.2"]
    assert (second.language, second.domain) == ("zh", "finance")
    assert second.attributes == {"category": "text-auto", "pattern": "T5", "origin_id": "9",
                                 "anchored_event": "2025 port strike", "needs_review": "true"}


def test_query_falls_back_to_the_original_query_with_a_note():
    tasks, log = load_tasks(miro, ROOT)
    assert tasks["miroeval.3"].query == "Summarise the evidence on four-day work weeks and productivity."
    assert f"{TEXT}:4: task 3: no rewritten_query; the original query is used" in map(str, log.notes)


def test_multimodal_tasks_keep_root_relative_attachments_and_their_text():
    tasks, _ = load_tasks(miro, ROOT)
    image = tasks["miroeval.101"]
    assert image.modality == "multimodal" and image.language == "zh" and image.domain == ""
    assert image.attachments == [f"{ATTACHMENTS}/101/图表 1.png"]
    assert image.attachment_texts == {}  # images need a vision judge
    assert image.attributes == {"category": "image", "origin_id": "201"}
    docs = tasks["miroeval.102"]
    # the second file has no `dir`: the release's folder convention multimodal-attachments/<id>/ applies
    assert docs.attachments == [f"{ATTACHMENTS}/102/notes.md", f"{ATTACHMENTS}/102/table.txt"]
    assert all((ROOT / a).is_file() for a in docs.attachments)
    assert "melted sharply at 121 C" in docs.attachment_texts[f"{ATTACHMENTS}/102/notes.md"]
    assert "capillary tube" in docs.attachment_texts[f"{ATTACHMENTS}/102/table.txt"]


def test_every_bad_task_record_is_reported_and_nothing_is_half_imported():
    tasks, log = load_tasks(miro, ROOT)
    assert problems(log.skipped) == [
        f"{TEXT}:3: duplicate task id '2' (first seen at {TEXT}:2)",
        f"{TEXT}:5: task 4: empty query (no rewritten_query or query)",
        f"{MULTI}:3: task 103 skipped: 1 attachment(s) missing",
        f"{MULTI}:4: task 104: attachment '../../../outside.txt' points outside the release",
    ]
    assert problems(log.missing) == [f"{MULTI}:3: task 103: attachment not found: {ATTACHMENTS}/103/scan.pdf"]
    assert problems(log.notes) == [
        f"{TEXT}:2: unknown field(s) kept out: priority",
        f"{TEXT}:2: label(s) not scalar, kept out: keywords",
        f"{TEXT}:4: task 3: no rewritten_query; the original query is used",
    ]
    assert tasks["miroeval.2"].query.startswith("我在做航运研究")  # the first of the duplicates is kept
    assert "miroeval.103" not in tasks and "miroeval.104" not in tasks


def test_reports_resolve_to_task_keys_with_systems_from_file_names():
    reports, _ = load_reports(miro, ROOT)
    assert [(r.system, r.task, r.task_id, r.where) for r in reports] == [
        ("alpha", "miroeval.1", "1", "data/method_results/alpha_text.json:1"),
        ("alpha", "miroeval.2", "2", "data/method_results/alpha_text.json:2"),
        ("beta", "miroeval.1", "1", "data/method_results/beta_text.json:1"),
        ("beta", "miroeval.3", "3", "data/method_results/beta_text.json:2"),
        ("alpha", "miroeval.101", "101", "data/method_multimodal_results/alpha_multimodal.json:1"),
        ("beta", "miroeval.101", "101", "data/method_multimodal_results/beta_multimodal.json:1"),
        ("beta", "miroeval.102", "102", "data/method_multimodal_results/beta_multimodal.json:2"),
    ]
    tasks, _ = load_tasks(miro, ROOT)
    assert {r.task for r in reports} <= set(tasks)
    assert all(r.text and r.path is None and r.trace_path is None for r in reports)


def test_report_text_and_traces_as_the_release_holds_them():
    reports, _ = load_reports(miro, ROOT)
    by = {(r.system, r.task_id): r for r in reports}
    assert by["alpha", "1"].text.startswith("Ground-source units cost more to install [1].")
    assert by["alpha", "1"].trace == "[Step 1] searched heat pump field trials\n[Step 2] read the trial report"
    assert json.loads(by["alpha", "2"].trace)[1] == {"step": 2, "action": "scrape", "url": "https://example.org/ports"}
    assert "港口 吞吐量" in by["alpha", "2"].trace  # dumped without escaping
    assert json.loads(by["beta", "101"].trace) == {"steps": ["analyze_image", "web_search"]}
    assert by["beta", "3"].trace.startswith("<think>look for trials</think>")
    assert by["beta", "1"].trace == ""  # empty process: report kept, an empty trace (process: model_failure)
    assert by["beta", "102"].trace is None  # null process


def test_bad_report_records_are_reported():
    _, log = load_reports(miro, ROOT)
    assert problems(log.skipped) == [
        "data/method_results/alpha_text.json:3: empty report",
        ("data/method_results/alpha_text.json:4: malformed JSON (Expecting property name enclosed in double quotes); "
         "rest of file skipped"),
    ]
    assert problems(log.notes) == [
        "data/method_results/README.md: not a <model>_text.json results file; not read",
        "data/method_results/beta_text.json:1: unknown field(s) kept out: run_seconds",  # once per file
    ]
    assert not log.missing


def test_published_scores_are_not_loaded():
    reports, log = load_reports(miro, ROOT)
    problems = log.skipped + log.missing + log.notes
    assert not any("detail_results" in p.file for p in problems)
    assert not any("detail_results" in r.where for r in reports)


def test_systems_are_named_once_across_splits():
    assert [s.name for s in miro.iter_systems(ROOT, ImportLog())] == ["alpha", "beta"]


def test_a_second_report_for_the_same_task_is_skipped(tmp_path):
    results = tmp_path / "data" / "method_results"
    results.mkdir(parents=True)
    record = {"id": 1, "rewritten_query": "q", "response": "first", "process": ""}
    (results / "m_text.json").write_text(json.dumps([record, dict(record, response="second")]))
    log = ImportLog()
    assert [r.text for r in miro.iter_reports(tmp_path, log)] == ["first"]
    assert problems(log.skipped) == [
        "data/method_results/m_text.json:2: second report of m for task 1 (first: data/method_results/m_text.json:1)"]


def test_loaders_are_lazy_generators(tmp_path):
    log = ImportLog()
    for loader in (miro.iter_tasks, miro.iter_reports, miro.iter_systems):
        assert inspect.isgenerator(loader(ROOT, log))
    queries = tmp_path / "data" / "input_queries"
    queries.mkdir(parents=True)
    first = json.loads((ROOT / TEXT).read_text(encoding="utf-8"))[0]
    # a valid first record, then far more garbage than one read chunk: the first task needs none of it
    (queries / "mirobench_text.json").write_text("[" + json.dumps(first) + ", " + "x" * 500_000, encoding="utf-8")
    results = tmp_path / "data" / "method_results"
    results.mkdir(parents=True)
    report = dict(first, response="A report.", process="")
    (results / "m_text.json").write_text("[" + json.dumps(report) + ", " + "x" * 500_000, encoding="utf-8")
    tasks, reports = miro.iter_tasks(tmp_path, log), miro.iter_reports(tmp_path, log)
    assert next(tasks).key == "miroeval.1"
    assert next(reports).task == "miroeval.1"
    assert not log.skipped and not log.missing


def test_missing_split_is_noted_and_the_other_loads(tmp_path):
    shutil.copytree(ROOT / "data" / "input_queries", tmp_path / "data" / "input_queries")
    (tmp_path / MULTI).unlink()
    log = ImportLog()
    assert [t.key for t in miro.iter_tasks(tmp_path, log)] == ["miroeval.1", "miroeval.2", "miroeval.3"]
    assert f"{MULTI}: file not in the release; split not loaded" in map(str, log.notes)
    assert miro.layout_problem(tmp_path) is None
