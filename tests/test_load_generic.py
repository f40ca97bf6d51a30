"""Our generic layout's loader, on a miniature folder (fixtures/releases/generic) and on the bundled demo."""
import inspect
import json
import shutil
from pathlib import Path

from release_helpers import (
    RELEASES,
    layout_problems,
    load_reports,
    load_tasks,
    problems,
)

from dreval_assets.releases import generic_layout as generic
from dreval_assets.releases.generic import load_generic
from dreval_assets.releases.records import ImportLog, SystemInfo

ROOT = RELEASES / "generic"
DEMO = Path(generic.__file__).parents[1] / "demo"
ALPHA, BETA, GAMMA = "systems/alpha", "systems/beta.jsonl", "systems/gamma"


def test_layout_problem(tmp_path):
    assert layout_problems(generic, ROOT, tmp_path) == (
        None, "no tasks.jsonl: not a folder in our generic layout", f"{tmp_path / 'absent'} is not a folder")


def test_tasks_and_keys_take_their_prefix_from_the_benchmark_field():
    tasks, _ = load_tasks(generic, ROOT)
    assert [(k, t.benchmark, t.original_id) for k, t in tasks.items()] == [
        ("generic.harbor-1", "generic", "harbor-1"), ("drb.7", "drb", "7"), ("mmdr.q3", "mmdr", "Q3"),
        ("custom-bench.notes", "custom-bench", "notes"), ("generic.7", "generic", "7")]  # id 7 twice: two benchmarks


def test_task_fields_come_from_the_record_and_the_files_it_names():
    task = load_tasks(generic, ROOT)[0]["generic.harbor-1"]
    assert task.query.startswith("How did ferry traffic") and (task.language, task.domain) == ("en", "transport")
    assert task.checklist == ["Gives passenger numbers for 2022 and 2023", "Names the operator"]
    assert task.attachments == ["files/ferry_brief.md", "files/ferry_chart.png"]
    assert task.modality == "multimodal"  # an image attachment, no modality given
    assert list(task.attachment_texts) == ["files/ferry_brief.md"]
    assert "39,000" in task.attachment_texts["files/ferry_brief.md"]
    assert task.reference_article == (ROOT / "references/harbor.md").read_text(encoding="utf-8")
    assert task.attributes == {"difficulty": "hard", "reviewed": "true"}  # the tags list is not a label
    assert [(p.url, p.title, p.role) for p in task.sandbox] == [
        ("https://ferries.example/lowmarsh-2023", "Lowmarsh ferry annual note", "supportive"),
        ("https://ferries.example/lowmarsh-plan", "", "distractor")]


def test_inline_reference_criteria_urls_and_single_values():
    tasks, _ = load_tasks(generic, ROOT)
    drb = tasks["drb.7"]
    assert drb.original_id == "7" and drb.language == "zh" and drb.modality == "text"  # a number as id
    assert drb.reference_article.startswith("The tide mill at Brackwater closed in 1893")
    assert drb.race_criteria.dimension_weights == {"insight": 0.6, "readability": 0.4}
    assert [c.criterion for c in drb.race_criteria.criteria["insight"]] == ["Explains why the tide mill closed"]
    mmdr = tasks["mmdr.q3"]
    assert mmdr.attachments == ["https://example.org/q3_lanterns.png"]  # a URL, one value, kept as given
    assert (mmdr.visual_ground_truth, mmdr.visual_ground_truth_version) == (
        "Bar chart of lantern sales 2018-2023; lowest bar in 2021 at about 4,000.", "v1")
    assert mmdr.gold_facts == ["Lantern sales fell in 2021."]  # one string
    assert mmdr.gold_insights == ["The festival was cancelled in 2021."]
    assert [(p.title, p.role) for p in mmdr.sandbox] == [("", "noise")]


def test_every_bad_record_is_reported_and_nothing_is_half_imported():
    tasks, log = load_tasks(generic, ROOT)
    assert problems(log.skipped) == [
        ("sandbox.jsonl:4: invalid sandbox page: role (Input should be 'supportive', 'distractor', 'noise' or "
         "'attachment')"),
        "sandbox.jsonl:6: record has no task_id",
        "tasks.jsonl:4: malformed JSON (Invalid control character at at column 40)",
        "tasks.jsonl:5: duplicate task id 'harbor-1' (first seen at tasks.jsonl:1)",
        "tasks.jsonl:6: not UTF-8 (invalid continuation byte at byte 11)",
        "tasks.jsonl:7: task gone skipped: 2 file(s) missing",
        "tasks.jsonl:8: empty query",
        "tasks.jsonl:9: task odd: invalid modality (Input should be 'text' or 'multimodal')",
        "tasks.jsonl:10: task escape: attachment '../outside.txt' points outside the folder"]
    assert problems(log.missing) == ["tasks.jsonl:7: task gone: file not found: files/survey.pdf",
                                     "tasks.jsonl:7: task gone: file not found: references/absent.md"]
    assert problems(log.notes) == [
        "sandbox.jsonl:3: unknown field(s) kept out: lang",
        "tasks.jsonl:1: label(s) not scalar, kept out: tags",
        "tasks.jsonl:3: unknown field(s) kept out: source",
        ("tasks.jsonl:11: task notes: attachment files/short_note.txt left out of the evidence "
         "(empty: only 7 words of text)"),
        "sandbox.jsonl:5: sandbox page(s) for task 'nobody' not used: no task in tasks.jsonl has this id"]
    assert not {"generic.gone", "generic.odd", "generic.escape", "generic.blank"} & set(tasks)


def test_fields_of_unusual_shapes(tmp_path):
    (tmp_path / "empty.md").write_text("  \n")
    (tmp_path / "latin.txt").write_bytes("caf\u00e9".encode("latin-1"))
    records = [{"id": "a", "query": "q", "attributes": "hard", "reference_article": "empty.md"},
               {"id": "b", "query": "q", "benchmark": 5},
               {"id": "c", "query": "q", "reference_article": "../secret.md"},
               {"id": "d", "query": "q", "reference_article": "latin.txt"},
               {"id": "e", "query": "q", "reference_article": "# Tide mill\n\nMore in the appendix.md"},  # text
               {"id": "f", "query": "q", "language": 3}]
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    tasks, log = load_tasks(generic, tmp_path)
    assert list(tasks) == ["generic.a", "generic.d", "generic.e"] and tasks["generic.a"].reference_article is None
    assert tasks["generic.d"].reference_article == "caf\u00e9"  # Latin-1, decoded with a note
    assert tasks["generic.a"].attributes == {} and tasks["generic.e"].reference_article.startswith("# Tide mill")
    assert problems(log.skipped) == [
        "tasks.jsonl:2: benchmark is a int, expected a name",
        "tasks.jsonl:3: task c: reference article '../secret.md' points outside the folder",
        "tasks.jsonl:6: task f: invalid language (Input should be a valid string)"]
    assert problems(log.notes) == ["tasks.jsonl:1: reference article empty.md is empty: the task has none",
                                   "tasks.jsonl:1: attributes is not an object; its labels are kept out",
                                   "latin.txt: not UTF-8 (unexpected end of data at byte 3): decoded as cp1252 (detected)"]


def test_an_unreadable_attachment_is_noted_and_the_task_kept():
    task = load_tasks(generic, ROOT)[0]["custom-bench.notes"]
    assert task.attachments == ["files/short_note.txt"] and task.attachment_texts == {}


def test_reports_from_folders_and_jsonl_files_resolve_to_task_keys():
    reports, _ = load_reports(generic, ROOT)
    assert [(r.system, r.task, r.task_id, r.where) for r in reports] == [
        ("alpha", "mmdr.q3", "Q3", f"{ALPHA}/Q3.md"),
        ("alpha", "drb.7", "drb.7", f"{ALPHA}/drb.7.md"),  # named by its key: 7.md would not say which task
        ("alpha", "generic.harbor-1", "harbor-1", f"{ALPHA}/harbor-1.md"),
        ("beta", "generic.harbor-1", "harbor-1", f"{BETA}:1"),
        ("beta", "custom-bench.notes", "notes", f"{BETA}:5"),
        ("gamma", "generic.harbor-1", "harbor-1", f"{GAMMA}/harbor-1.md"),
        ("gamma", "drb.7", "drb.7", "systems/gamma.jsonl:2")]
    by = {(r.system, r.task): r for r in reports}
    harbor = by["alpha", "generic.harbor-1"]
    assert harbor.path == ROOT / ALPHA / "harbor-1.md" and harbor.text is None
    assert harbor.trace_path == ROOT / ALPHA / "harbor-1.trace.json" and harbor.trace is None
    assert harbor.base_dir == ROOT / ALPHA  # its figure is in the system's images/
    assert by["alpha", "mmdr.q3"].base_dir == ROOT  # its figure is in the root's images/, as in the demo
    embedded = by["beta", "generic.harbor-1"]
    assert embedded.text.startswith("The ferry grew busier") and embedded.path is None
    assert json.loads(embedded.trace)[1] == {"step": 2, "action": "read", "url": "https://ferries.example/lowmarsh-2023"}
    assert by["beta", "custom-bench.notes"].trace == "searched: eel pass"


def test_report_problems_are_logged():
    _, log = load_reports(generic, ROOT)
    assert problems(log.skipped) == [
        f"{ALPHA}/7.md: no task with id '7'",  # both drb.7 and generic.7 have this id
        f"{ALPHA}/notes.md: empty report",
        f"{ALPHA}/unknown.md: no task with id 'unknown'",
        f"{BETA}:2: empty report",
        f"{BETA}:3: malformed JSON (Invalid control character at at column 45)",
        f"{BETA}:4: second report of beta for task harbor-1 (first: {BETA}:1)",
        f"{BETA}:6: record has no id",
        f"systems/gamma.jsonl:1: second report of gamma for task harbor-1 (first: {GAMMA}/harbor-1.md)"]
    assert problems(log.missing) == [f"{ALPHA}/harbor-1.md:7: image not found: images/missing.png"]
    assert problems(log.notes) == [f"{BETA}:5: unknown field(s) kept out: model"]


def test_systems_are_folders_and_jsonl_files_with_their_system_json():
    log = ImportLog()
    assert list(generic.iter_systems(ROOT, log)) == [
        SystemInfo("alpha", "Invented test system that files one Markdown report per task.",
                   display_name="Alpha Researcher"),
        SystemInfo("beta"), SystemInfo("gamma")]
    assert problems(log.notes) == [f"{ALPHA}/system.json: unknown field(s) kept out: version"]


def test_a_report_folder_for_one_named_system(tmp_path):
    folder = tmp_path / "my-run"
    folder.mkdir()
    (folder / "ferry.md").write_text("# Ferry\n\n![chart](chart.png)\n")
    (folder / "ferry.trace.json").write_text("[]")
    (folder / "lost.md").write_text("# Lost\n")
    (folder / "extra.jsonl").write_text(json.dumps({"task_id": "harbor", "report": "From JSONL."}) + "\n")
    resolve = {"ferry": "generic.ferry", "harbor": "generic.harbor"}.get
    log = ImportLog()
    reports = list(generic.iter_report_folder(folder, "my system", resolve, log))
    assert [(r.system, r.task, r.task_id, r.where, r.trace_path) for r in reports] == [
        ("my system", "generic.ferry", "ferry", "my-run/ferry.md", folder / "ferry.trace.json"),
        ("my system", "generic.harbor", "harbor", "my-run/extra.jsonl:1", None)]
    assert problems(log.skipped) == ["my-run/lost.md: no task with id 'lost'"]
    assert problems(log.missing) == ["my-run/ferry.md:3: image not found: chart.png"]


def test_a_single_jsonl_file_for_one_named_system(tmp_path):
    path = tmp_path / "reports.jsonl"
    path.write_text(json.dumps({"task_id": "a", "report": "Text.", "trace": {"steps": 2}}) + "\n"
                    + json.dumps({"task_id": "b", "report": "Text."}) + "\n")
    log = ImportLog()
    reports = list(generic.iter_report_folder(path, "s", {"a": "drb.a"}.get, log))
    assert [(r.task, r.text, r.trace, r.where) for r in reports] == [
        ("drb.a", "Text.", '{"steps": 2}', "reports.jsonl:1")]
    assert problems(log.skipped) == ["reports.jsonl:2: no task with id 'b'"]
    log = ImportLog()
    assert list(generic.iter_report_folder(tmp_path / "absent", "s", {}.get, log)) == []
    assert problems(log.missing) == ["absent: no such folder or file"]


def test_loaders_are_lazy(tmp_path):
    for loader in (generic.iter_tasks, generic.iter_reports, generic.iter_systems):
        assert inspect.isgenerator(loader(tmp_path / "nowhere", ImportLog()))
    root = tmp_path / "generic"
    shutil.copytree(ROOT, root)
    tasks = root / "tasks.jsonl"
    tasks.write_bytes(tasks.read_bytes().splitlines(keepends=True)[0] + b"{garbage\n" * 5000)
    log = ImportLog()
    assert next(generic.iter_tasks(root, log)).key == "generic.harbor-1"
    assert not problems(log.skipped, "tasks.jsonl")  # the garbage is not read yet


def test_load_generic_returns_the_loaders_tasks_and_problems():
    loaded = load_generic(ROOT)
    tasks, log = load_tasks(generic, ROOT)
    assert loaded.tasks == list(tasks.values())
    assert loaded.skipped == problems(log.missing) + problems(log.skipped)


def test_the_bundled_demo_loads_whole():
    tasks, log = load_tasks(generic, DEMO)
    assert len(tasks) == 8 and all(t.sandbox for t in tasks.values())
    assert tasks["miroeval.37"].attachment_texts and tasks["wlc.harrowgate-tidal-barrage"].reference_article
    reports, report_log = load_reports(generic, DEMO)
    assert len(reports) == 3 * 8 and {r.task for r in reports} == set(tasks)
    assert ("careful-scholar", "wlc.harrowgate-tidal-barrage") in {(r.system, r.task) for r in reports}
    assert not (log.skipped + log.missing + log.notes + report_log.skipped + report_log.notes)
    # the one planted defect: loose-cannon shows a route map it never saved
    assert problems(report_log.missing) == [
        "systems/loose-cannon/100002.md:17: image not found: images/100002_route_map.png"]
    assert tasks["miroeval.37"].attachment_images and tasks["mmdr.q7"].visual_ground_truth
    systems = list(generic.iter_systems(DEMO, ImportLog()))
    assert [(s.name, s.display_name) for s in systems] == [("careful-scholar", "careful-scholar"),
                                                           ("loose-cannon", "loose-cannon"),
                                                           ("quiet-summarizer", "quiet-summarizer")]
    assert all(s.description.startswith("Demo system (fictional).") for s in systems)


def test_import_notes_a_benchmark_with_no_suite_once(tmp_path):
    from dreval_assets.operations.importer import import_release
    from dreval_assets.store.db import Store

    (tmp_path / "rel").mkdir()
    (tmp_path / "rel" / "tasks.jsonl").write_text(
        '{"id": "a", "benchmark": "custom-bench", "query": "Q one"}\n'
        '{"id": "b", "benchmark": "custom-bench", "query": "Q two"}\n')
    store = Store(tmp_path / "home.duckdb")
    store.ensure_schema()
    summary = import_release(store, "generic", tmp_path / "rel")
    notes = [p.reason for p in summary.log.notes]
    assert notes.count("benchmark 'custom-bench' has no suite of its own: only core metrics apply") == 1
