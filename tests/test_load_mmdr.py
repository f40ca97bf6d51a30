"""MMDeepResearch-Bench release loader on a miniature release in the official layout (fixtures/releases/mmdr)."""
import hashlib
import inspect
import json
import shutil

from release_helpers import RELEASES, layout_problems, load_reports, load_tasks, problems

from dreval_assets.benchmarks.mmdr import loader as mmdr
from dreval_assets.releases.records import ImportLog

ROOT = RELEASES / "mmdr"
QUIZ = "data/quiz.jsonl"
VEF = "data/quiz_vef.jsonl"
Q0_GT = ("Two bar series, City A (blue) and City B (orange); y axis rainfall in mm, 0-300; "
         "City A peaks in July at about 280 mm.")


def test_layout_is_recognised_and_an_empty_folder_is_not(tmp_path):
    assert layout_problems(mmdr, ROOT, tmp_path) == (
        None, "no data/quiz.jsonl: not an MMDeepResearch-Bench release", f"{tmp_path / 'absent'} is not a folder")


def test_exact_tasks_and_keys_in_file_order():
    tasks, _ = load_tasks(mmdr, ROOT)
    assert list(tasks) == ["mmdr.q0", "mmdr.q1", "mmdr.q100"]
    assert [t.original_id for t in tasks.values()] == ["Q0", "Q1", "Q100"]
    assert {(t.benchmark, t.modality) for t in tasks.values()} == {("mmdr", "multimodal")}


def test_task_fields_and_field_variants():
    tasks, _ = load_tasks(mmdr, ROOT)
    q0, q1, q100 = tasks["mmdr.q0"], tasks["mmdr.q1"], tasks["mmdr.q100"]
    # qid / caption / body / image_url as a string under data/images/; tags as a list
    assert q0.query == ("Rainfall chart\n\nThe chart shows monthly rainfall in two cities. Which city has the wetter "
                        "summer, and what do climate records say about the trend since 1990?")
    assert q0.attachments == ["data/images/q0_rain.png"] and q0.language == "en"
    # the task's image travels with it, judge-ready, for VEF's vision judge (the remote one is not fetched)
    assert list(q0.attachment_images) == ["data/images/q0_rain.png"]
    assert q0.attachment_images["data/images/q0_rain.png"].startswith("data:image/png;base64,")
    assert q0.attributes == {"set": "research", "difficulty": "hard", "tags": "climate, charts"}
    # id / title / text / images as a list; a path relative to data/; a URL kept as given; tags as a string
    assert q1.query == "电价截图\n\n截图中是某地分时电价表。请解释峰谷价差，并查找该地区最新的电价政策。"
    assert q1.attachments == ["data/images/q1_tariff.png", "https://example.org/q1_extra.png"]
    assert q1.language == "zh" and q1.attributes == {"set": "research", "difficulty": "medium", "tags": "energy"}
    assert q100.attachments == ["data/screens/q100.png"]
    assert q100.attributes == {"set": "daily", "difficulty": "easy"}  # empty tags list: no label
    assert all((ROOT / a).is_file() for t in tasks.values() for a in t.attachments if not a.startswith("https://"))


def test_visual_ground_truth_is_matched_by_id_not_by_line():
    tasks, _ = load_tasks(mmdr, ROOT)
    # quiz_vef.jsonl lists Q1 before Q0; pairing by line would swap them
    assert tasks["mmdr.q0"].visual_ground_truth == Q0_GT
    assert tasks["mmdr.q0"].visual_ground_truth_version == "sha256:" + hashlib.sha256(Q0_GT.encode()).hexdigest()[:12]
    assert tasks["mmdr.q1"].visual_ground_truth.startswith("Table with three rows")  # the `answer` variant
    assert tasks["mmdr.q1"].visual_ground_truth_version == mmdr.gt_version(tasks["mmdr.q1"].visual_ground_truth)
    assert tasks["mmdr.q100"].visual_ground_truth is None and tasks["mmdr.q100"].visual_ground_truth_version is None


def test_ground_truth_index_holds_offsets_not_texts():
    index = mmdr.VisualGroundTruth(ROOT, ImportLog())
    assert set(index.index.entries) == {"Q1", "Q0", "Q999", "Q102"}
    assert all(isinstance(line, int) and isinstance(offset, int)
               for found in index.index.entries.values() for line, offset in found)
    assert index.text("Q999") == "Ground truth for a task that is not in the quiz."


def test_every_bad_record_is_reported_and_nothing_is_half_imported():
    tasks, log = load_tasks(mmdr, ROOT)
    assert problems(log.skipped) == [
        f"{VEF}:5: duplicate visual ground truth id 'Q0' (first seen at {VEF}:2)",
        f"{VEF}:6: visual ground truth Q5: empty (no body/text/answer/gt)",
        f"{QUIZ}:3: malformed JSON (Expecting value at column 49)",
        f"{QUIZ}:5: duplicate task id 'Q0' (first seen at {QUIZ}:1)",
        f"{QUIZ}:6: not UTF-8 (invalid continuation byte at byte 31)",
        f"{QUIZ}:7: task Q102 skipped: 1 image(s) missing",
    ]
    assert problems(log.missing) == [
        f"{QUIZ}:7: task Q102: image not found: q102_bridge.jpg (looked in data/images/ and data/)"]
    unreadable = "left out of the evidence (not a readable image: UnidentifiedImageError: cannot identify image file)"
    assert problems(log.notes) == [
        f"{VEF}:4: unknown field(s) kept out: reviewer",
        f"{QUIZ}:2: task Q1: image attachment data/images/q1_tariff.png {unreadable}",
        f"{QUIZ}:4: unknown field(s) kept out: source",
        f"{QUIZ}:4: task Q100: image attachment data/screens/q100.png {unreadable}",
        f"{QUIZ}:4: task Q100: no visual ground truth in {VEF}",
        f"{VEF}:3: visual ground truth Q999: no task in {QUIZ} has this id; not used",
    ]
    assert "mmdr.q102" not in tasks and tasks["mmdr.q0"].query.startswith("Rainfall chart")


def test_reports_are_files_resolved_to_task_keys_with_runs_as_systems():
    reports, _ = load_reports(mmdr, ROOT)
    assert [(r.system, r.task, r.task_id, r.where) for r in reports] == [
        ("run_a", "mmdr.q0", "Q0", "reports_runs/run_a/reports/Q0.md"),
        ("run_a", "mmdr.q1", "Q1", "reports_runs/run_a/reports/Q1.md"),
        ("run_b", "mmdr.q0", "Q0", "reports_runs/run_b/reports/Q0.md"),
        ("run_b", "mmdr.q102", "Q102", "reports_runs/run_b/reports/Q102.md"),
    ]
    for report in reports:
        assert report.text is None and report.trace is None and report.trace_path is None
        assert report.path == ROOT / report.where and report.path.is_file()
        assert report.base_dir == ROOT / "reports_runs" / report.system / "reports"


def test_missing_report_images_are_logged_and_the_report_kept():
    reports, log = load_reports(mmdr, ROOT)
    assert problems(log.missing) == [
        "reports_runs/run_a/reports/Q0.md:6: image not found: file:///nonexistent/mmdr-run/fig1.png",
        "reports_runs/run_a/reports/Q0.md:11: image not found: images/fig3.png",
        "reports_runs/run_b/reports/Q0.md:3: image not found: file://images/missing.png",
    ]  # images/fig2.png exists beside the report; the https figure is not checked
    assert problems(log.skipped) == ["reports_runs/run_a/reports/Q100.md: empty report"]
    assert problems(log.notes) == ["reports_runs/notes_only: run has no reports/ folder; not read"]
    assert ("run_a", "Q0") in {(r.system, r.task_id) for r in reports}


def test_an_existing_file_url_image_is_found(tmp_path):
    folder = tmp_path / "reports_runs" / "r" / "reports"
    folder.mkdir(parents=True)
    image = tmp_path / "elsewhere" / "fig 1.png"
    image.parent.mkdir()
    image.write_bytes(b"\x89PNG")
    (folder / "Q3.md").write_text(f"Text [1].\n\n![Figure 1]({image.as_uri()})\n")
    log = ImportLog()
    assert [r.task for r in mmdr.iter_reports(tmp_path, log)] == ["mmdr.q3"]
    assert not log.missing


def test_published_results_are_not_loaded():
    reports, log = load_reports(mmdr, ROOT)
    assert not any(p.file.startswith("results/") for p in log.skipped + log.missing + log.notes)
    assert not any(r.where.startswith("results/") for r in reports)


def test_systems_are_the_runs_with_reports():
    assert [s.name for s in mmdr.iter_systems(ROOT, ImportLog())] == ["run_a", "run_b"]


def test_loaders_are_lazy_generators(tmp_path):
    log = ImportLog()
    for loader in (mmdr.iter_tasks, mmdr.iter_reports, mmdr.iter_systems):
        assert inspect.isgenerator(loader(ROOT, log))
    shutil.copytree(ROOT / "data", tmp_path / "data")
    first = (ROOT / QUIZ).read_bytes().splitlines(keepends=True)[0]
    garbage = b"{not json at all\n" * 50_000
    (tmp_path / QUIZ).write_bytes(first + garbage)
    tasks = mmdr.iter_tasks(tmp_path, log)
    assert next(tasks).key == "mmdr.q0"
    assert not [p for p in log.skipped if p.file == QUIZ]  # none of the garbage was read


def test_without_ground_truth_file_tasks_still_load(tmp_path):
    shutil.copytree(ROOT / "data", tmp_path / "data")
    (tmp_path / VEF).unlink()
    tasks, log = load_tasks(mmdr, tmp_path)
    assert list(tasks) == ["mmdr.q0", "mmdr.q1", "mmdr.q100"]
    assert all(t.visual_ground_truth is None for t in tasks.values())
    assert f"{VEF}: file not in the release; tasks have no visual ground truth" in map(str, log.notes)


def test_images_outside_the_release_are_not_followed(tmp_path):
    root = tmp_path / "release"
    (root / "data" / "images").mkdir(parents=True)
    (tmp_path / "secret.png").write_bytes(b"\x89PNG")  # exists, but beside the release, not in it
    record = {"qid": "Q7", "caption": "c", "body": "b", "image_url": "../../secret.png"}
    (root / QUIZ).write_text(json.dumps(record) + "\n")
    tasks, log = load_tasks(mmdr, root)
    assert tasks == {}
    assert [p.reason for p in log.missing] == [
        "task Q7: image not found: ../../secret.png (looked in data/images/ and data/)"]
