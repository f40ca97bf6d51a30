"""DR³-Eval release loader against a miniature release in the official layout (tests/fixtures/releases/dr3)."""
import inspect
import json
import shutil

import pytest
from release_helpers import RELEASES, layout_problems, load_release, problems

from dreval_assets.benchmarks.dr3 import loader as load_dr3
from dreval_assets.releases.records import ImportLog

FIXTURE = RELEASES / "dr3"


def copy_release(root):
    """The fixture release, plus the retrieval cache a real run leaves beside a corpus (a database
    file, written here rather than kept in git) that the loader must pass over."""
    shutil.copytree(FIXTURE, root)
    (root / "datasets_en/1/long_context_sampled_32k.json.chunks.db").write_bytes(b"\x00cache")
    return root


@pytest.fixture(scope="module")
def loaded_root(tmp_path_factory):
    return copy_release(tmp_path_factory.mktemp("dr3") / "dr3")


@pytest.fixture(scope="module")
def loaded(loaded_root):
    return load_release(load_dr3, loaded_root)


@pytest.fixture
def release(tmp_path):
    return copy_release(tmp_path / "dr3")


def test_tasks_and_keys_keep_the_set_apart(loaded):
    tasks, _, _ = loaded
    assert list(tasks) == ["dr3.en-1", "dr3.en-2", "dr3.zh-1"]
    assert [(t.original_id, t.language, t.attributes["set"]) for t in tasks.values()] == [
        ("1", "en", "en"), ("2", "en", "en"), ("1", "zh", "zh")]
    assert all(t.benchmark == "dr3" for t in tasks.values())
    assert tasks["dr3.zh-1"].query.startswith("结合附件中的图表")


def test_user_files_become_attachments_with_text_and_modality(loaded):
    tasks, _, _ = loaded
    memo = tasks["dr3.en-1"]
    assert memo.attachments == ["datasets_en/1/coop_memo.md"]  # corpora, useful_search and caches are not user files
    assert "140 to 410 installations" in memo.attachment_texts["datasets_en/1/coop_memo.md"]
    assert memo.modality == "text"
    notes = tasks["dr3.en-2"]  # the folder is zero-padded: datasets_en/002
    assert notes.attachments == ["datasets_en/002/field_notes.txt"]
    assert list(notes.attachment_texts) == ["datasets_en/002/field_notes.txt"]
    media = tasks["dr3.zh-1"]
    assert media.attachments == ["datasets_zh/1/export_chart.png", "datasets_zh/1/interview.mp3"]
    assert media.modality == "multimodal" and media.attachment_texts == {}


def test_sandbox_is_the_union_of_sizes_deduplicated_by_title(loaded):
    tasks, _, _ = loaded
    pages = tasks["dr3.en-1"].sandbox
    assert [(p.title, p.role, p.url) for p in pages] == [
        ("Valley rebate programme results", "supportive", "doc:Valley rebate programme results"),
        ("Alpine cheese festival guide", "noise", "doc:Alpine cheese festival guide"),
        ("Installer workforce survey 2023", "supportive", "https://example.org/installers"),
    ]
    assert pages[0].text.startswith("The district rebate paid")  # the smallest corpus's copy wins
    assert tasks["dr3.en-1"].attributes["context_sizes"] == "32k,64k"
    assert [(p.title, p.role) for p in tasks["dr3.en-2"].sandbox] == [  # useful_search.jsonl variant
        ("Trail closure survey", "supportive"), ("Ski resort opening hours", "noise")]
    assert tasks["dr3.zh-1"].attributes["context_sizes"] == "128k"
    assert [p.role for p in tasks["dr3.zh-1"].sandbox] == ["noise"]  # no useful_search file


def test_gold_insights_and_checklists_from_qualified_and_flat_folders(loaded):
    tasks, _, _ = loaded
    assert tasks["dr3.en-1"].gold_insights == [  # from the user files (gold_insights_from_source.json)
        "The rebate paid 1,200 per unit.", "Uptake rose from 140 to 410 installations."]
    assert tasks["dr3.en-1"].gold_insights_sandbox == [  # from the sandbox (gold_insights_from_long_context.json)
        "Installations roughly tripled in 2023.", "The rebate paid 1,200 per unit."]
    assert tasks["dr3.en-1"].checklist == ["States the change in installations with numbers.",
                                           "Cites the cooperative memo."]
    assert tasks["dr3.en-2"].gold_insights == ["Moss cover reached 60 percent by spring 2023."]  # insights/2/
    assert tasks["dr3.en-2"].checklist == ["Compares field notes with surveys."]
    assert tasks["dr3.en-2"].gold_insights_sandbox == []
    assert tasks["dr3.zh-1"].gold_insights == [] and tasks["dr3.zh-1"].gold_insights_sandbox == [
        "出口量下降百分之十八。"]  # insights/zh/1/gold_insights_from_long_context.json
    assert tasks["dr3.zh-1"].checklist == ["分析出口下降的原因。"]


def test_every_bad_record_is_reported_where_it_is(loaded):
    _, _, log = loaded
    task_skips = [p for p in problems(log.skipped) if not p.startswith("results/")]
    assert task_skips == [
        "datasets_en/query.jsonl:3: task en-3 skipped: 1 task folder(s) missing",
        "datasets_en/query.jsonl:4: duplicate task id 'en-1' (first seen at datasets_en/query.jsonl:1)",
        "datasets_en/query.jsonl:5: malformed JSON (Invalid control character at at column 32)",
        "datasets_zh/query.jsonl:2: not UTF-8 (invalid continuation byte at byte 25)",
        ("datasets_zh/5/long_context_sampled_32k.json:2: malformed JSON (Expecting property name enclosed in "
        "double quotes); rest of file skipped"),
        "datasets_zh/query.jsonl:3: task zh-5 skipped: its sandbox could not be read whole",
        "datasets_zh/query.jsonl:4: empty query",
    ]
    assert problems(log.missing) == ["datasets_en/query.jsonl:3: task en-3: task folder not found: datasets_en/3/"]
    assert set(problems(log.notes)) >= {
        "datasets_en/query.jsonl:2: unknown field(s) kept out: annotator",
        "datasets_en/002/long_context_sampled_32k.json:1: unknown field(s) kept out: lang",
        "datasets_en/1/long_context_sampled_64k.json:4: document without a title left out of the sandbox",
        "datasets_en/query.jsonl:2: file(s) of an unknown type left out of the attachments: datasets_en/002/scan.zip",
        "datasets_zh/1: no useful_search.json(l): no document is marked supportive",
    }


def test_reports_resolve_to_the_right_set(loaded, loaded_root):
    _, reports, log = loaded
    assert [(r.system, r.task, r.task_id, r.where) for r in reports] == [
        ("claude-sonnet-4-128k", "dr3.zh-1", "1", "results/128k/claude-sonnet-4/zh/1/final_report.md"),
        ("gpt-4.1-32k", "dr3.en-2", "2", "results/32k/gpt-4.1/2/final_report.md"),
        ("gpt-4.1-32k", "dr3.en-1", "1", "results/32k/gpt-4.1/en-1/final_report.md"),
    ]
    zh = reports[0]
    assert zh.path == loaded_root / "results/128k/claude-sonnet-4/zh/1/final_report.md" and zh.text is None
    assert zh.base_dir == loaded_root / "results/128k/claude-sonnet-4/zh/1"
    assert zh.trace_path == loaded_root / "results/128k/claude-sonnet-4/zh/1/execution_log.json"
    assert reports[1].trace_path is None
    assert problems(log.skipped, "results/") == [
        "results/128k/claude-sonnet-4/9/final_report.md: no task with id '9'",
        "results/128k/claude-sonnet-4/en-2: no final_report.md (the run left no report)",
        "results/128k/claude-sonnet-4/zh/5/final_report.md: empty report",
        ("results/32k/gpt-4.1/1/final_report.md: task id '1' exists in both the en and zh sets and the folder "
        "does not say which (name it en-1 / zh-1 or put it under an en/ or zh/ folder)"),
    ]


def test_a_second_folder_for_the_same_task_is_skipped(release):
    shutil.copytree(release / "results/32k/gpt-4.1/2", release / "results/32k/gpt-4.1/en-002")
    log = ImportLog()
    assert [r.where for r in load_dr3.iter_reports(release, log) if r.task == "dr3.en-2"] == [
        "results/32k/gpt-4.1/2/final_report.md"]
    assert ("results/32k/gpt-4.1/en-002/final_report.md: second report of gpt-4.1-32k for task en-2 "
            "(first: results/32k/gpt-4.1/2/final_report.md)") in problems(log.skipped)


def test_systems_are_model_and_sandbox_size():
    assert [s.name for s in load_dr3.iter_systems(FIXTURE, ImportLog())] == ["claude-sonnet-4-128k", "gpt-4.1-32k"]


def test_set_folder_above_the_sizes_is_understood(release):
    shutil.move(release / "results", release / "zh_results")
    (release / "results").mkdir()
    shutil.move(release / "zh_results", release / "results" / "datasets_zh")
    reports = list(load_dr3.iter_reports(release, ImportLog()))
    assert ("gpt-4.1-32k", "dr3.zh-1") in [(r.system, r.task) for r in reports]  # results/datasets_zh/32k/gpt-4.1/1


def test_flat_gold_folder_of_a_shared_id_is_ambiguous(release):
    shutil.rmtree(release / "checklists" / "datasets_en")
    shutil.rmtree(release / "checklists" / "datasets_zh")
    (release / "checklists" / "1").mkdir()
    (release / "checklists" / "1" / "checklist.json").write_text(json.dumps({"checklist": []}))
    log = ImportLog()
    assert [t.key for t in load_dr3.iter_tasks(release, log)] == ["dr3.en-2"]
    reasons = [p.reason for p in log.skipped if p.file == "datasets_en/query.jsonl" and p.line == 1]
    assert reasons == [("task en-1 skipped: checklists/1/ could belong to en-1 or zh-1 (the id is in both sets "
                       "and the folder does not say which); put it under checklists/datasets_en/")]


def test_malformed_gold_file_skips_the_task(release):
    (release / "insights/2/gold_insights_from_source.json").write_text('{"gold_insights": [')
    log = ImportLog()
    assert "dr3.en-2" not in [t.key for t in load_dr3.iter_tasks(release, log)]
    assert any(p.line == 2 and "insights/2/gold_insights_from_source.json is malformed JSON" in p.reason
               for p in log.skipped)


def test_dangling_user_file_skips_the_task(release):
    (release / "datasets_en/1/site_photo.jpg").symlink_to(release / "nowhere.jpg")
    log = ImportLog()
    assert "dr3.en-1" not in [t.key for t in load_dr3.iter_tasks(release, log)]
    assert problems(log.missing)[0] == ("datasets_en/query.jsonl:1: task en-1: user file not found: "
                                        "datasets_en/1/site_photo.jpg (dangling link)")
    assert "datasets_en/query.jsonl:1: task en-1 skipped: 1 user file(s) missing" in problems(log.skipped)


def test_task_without_corpus_is_skipped(release):
    for corpus in (release / "datasets_en/002").glob("long_context_sampled_*.json"):
        corpus.unlink()
    log = ImportLog()
    assert "dr3.en-2" not in [t.key for t in load_dr3.iter_tasks(release, log)]
    assert ("datasets_en/query.jsonl:2: task en-2: sandbox corpus file not found: "
            "datasets_en/002/long_context_sampled_<size>.json") in problems(log.missing)
    assert "datasets_en/query.jsonl:2: task en-2 skipped: 1 sandbox corpus file(s) missing" in problems(log.skipped)


def test_loaders_are_lazy(release):
    with (release / "datasets_en/query.jsonl").open("a") as handle:
        handle.write("{garbage\n" * 1000)
    log = ImportLog()
    tasks = load_dr3.iter_tasks(release, log)
    assert iter(tasks) is tasks
    assert next(tasks).key == "dr3.en-1"
    assert log.skipped == []  # the garbage after the first record has not been read yet
    assert all(inspect.isgenerator(f(release, log)) for f in (load_dr3.iter_reports, load_dr3.iter_systems))


def test_layout_problem(tmp_path):
    assert layout_problems(load_dr3, FIXTURE, tmp_path) == (
        None, "no datasets_en/query.jsonl or datasets_zh/query.jsonl: not a DR³-Eval release",
        f"{tmp_path / 'absent'} is not a folder")


def test_folder_names_and_ids():
    assert load_dr3.split_folder_name("en-12") == ("en", "12")
    assert load_dr3.split_folder_name("ZH_007") == ("zh", "7")
    assert load_dr3.split_folder_name("task_012") == (None, "12")
    assert load_dr3.split_folder_name("case3") == (None, "3")
    assert load_dr3.canonical_id(" 0042 ") == "42" and load_dr3.canonical_id("q-7") == "q-7"
