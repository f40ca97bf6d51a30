"""Bad input gets a clear message or an N/A row with a reason, and no other partition changes."""
import json
from pathlib import Path

import pytest

from dreval_assets.benchmarks.generic import load_generic
from dreval_assets.cli import main
from dreval_assets.config import Settings
from dreval_assets.defs.definitions import build_definitions
from dreval_assets.defs.runner import Plan, execute, open_instance, sync_partitions
from dreval_assets.store.db import Store
from dreval_assets.store.registry import register_tasks

WEIRD_ID = 'pipe|and "quotes"'
PAGE = ("The Lowmarsh ferry carried 41,200 passengers in 2023, up from 36,900 in 2022. "
        "The operator, Estuary Links, added a third vessel named Curlew in March 2023. "
        "Average crossing time fell to 14 minutes after the new pier opened at Saltcote. ") * 3

GOOD_REPORT = """# Lowmarsh ferry

The Lowmarsh ferry carried 41,200 passengers in 2023, up from 36,900 in 2022 [1].
Estuary Links added a third vessel named Curlew in March 2023 [1].

## References
[1] Lowmarsh ferry annual note https://ferries.example/lowmarsh
"""

REPORTS = {
    "good": GOOD_REPORT,
    "empty": "",
    "no_reference_section": "# Ferry\n\nThe Lowmarsh ferry carried 41,200 passengers in 2023 [1].\n",
    "index_without_url": GOOD_REPORT.replace("[1] Lowmarsh ferry annual note https://ferries.example/lowmarsh",
                                             "[1] Lowmarsh ferry annual note (no link)"),
}


@pytest.fixture
def bench(tmp_path: Path):
    """A two-task benchmark in our generic layout, and one system folder per kind of bad report."""
    folder = tmp_path / "bench"
    folder.mkdir()
    tasks = [{"id": "ferry", "query": "Write a report on the Lowmarsh ferry."},
             {"id": WEIRD_ID, "query": "Write a report on the Lowmarsh ferry, again."}]
    (folder / "tasks.jsonl").write_text("\n".join(json.dumps(t) for t in tasks) + "\n")
    (folder / "sandbox.jsonl").write_text("\n".join(
        json.dumps({"task_id": t["id"], "url": "https://ferries.example/lowmarsh", "title": "Lowmarsh ferry annual note",
                    "role": "supportive", "text": PAGE}) for t in tasks) + "\n")
    systems = tmp_path / "systems"
    for name, text in REPORTS.items():
        (systems / name).mkdir(parents=True)
        (systems / name / "ferry.md").write_text(text)
        (systems / name / f"{WEIRD_ID}.md").write_text(GOOD_REPORT)
    (systems / "binary").mkdir()
    (systems / "binary" / "ferry.md").write_bytes(bytes(range(256)) * 4)
    (systems / "binary" / f"{WEIRD_ID}.md").write_text(GOOD_REPORT)
    return folder, systems


def setup_home(home: Path, bench) -> Path:
    folder, systems = bench
    loaded = load_generic(folder)
    assert not loaded.skipped
    store = Store(home / "dreval.duckdb")
    store.ensure_schema()
    register_tasks(store, loaded.tasks, source="test")
    assert main(["--home", str(home), "add-system", "good", "--reports", str(systems / "good")]) == 0
    assert main(["--home", str(home), "run"]) == 0
    return systems


def scores(home: Path, where: str = "TRUE"):
    return Store(home / "dreval.duckdb").query(f"SELECT * FROM metric_scores WHERE {where} ORDER BY ALL")


def test_task_id_with_pipe_and_quotes_gets_a_safe_key_and_keeps_its_id(home, bench):
    setup_home(home, bench)
    rows = Store(home / "dreval.duckdb").query("SELECT task, original_id FROM tasks ORDER BY task").rows()
    assert rows == [("generic.ferry", "ferry"), ("generic.pipe-and-quotes", WEIRD_ID)]
    good = scores(home, "system = 'good' AND task = 'generic.pipe-and-quotes' AND metric = 'supported_ratio'")
    assert good["value"].to_list() == [100.0]


@pytest.mark.parametrize("system, status, detail", [
    ("empty", "empty", "report is empty"),
    ("binary", "binary", "binary (NUL bytes)"),
])
def test_unreadable_reports_give_na_rows_and_touch_nothing_else(home, bench, system, status, detail):
    systems = setup_home(home, bench)
    before = scores(home)
    assert main(["--home", str(home), "add-system", system, "--reports", str(systems / system)]) == 0
    assert main(["--home", str(home), "run", "--system", system]) == 0
    store = Store(home / "dreval.duckdb")
    report = store.query("SELECT status, na_reason, detail FROM reports WHERE system = ? AND task = 'generic.ferry'", [system])
    assert report["status"].item() == status and detail in report["detail"].item()
    na = scores(home, f"system = '{system}' AND task = 'generic.ferry'")
    assert na.height > 0 and na["value"].is_null().all()
    assert set(na["na_reason"]) == {"model_failure"}
    # its other task is fine, and the first system's rows did not move
    assert scores(home, f"system = '{system}' AND task = 'generic.pipe-and-quotes'")["value"].is_not_null().any()
    assert scores(home, "system = 'good'").equals(before)


@pytest.mark.parametrize("system", ["no_reference_section", "index_without_url"])
def test_citations_without_urls_are_reported_as_unresolved(home, bench, system):
    systems = setup_home(home, bench)
    assert main(["--home", str(home), "add-system", system, "--reports", str(systems / system)]) == 0
    assert main(["--home", str(home), "run", "--system", system]) == 0
    store = Store(home / "dreval.duckdb")
    verdicts = store.query("SELECT source, verdict, na_reason, reason FROM claim_verdicts WHERE system = ? AND task = 'generic.ferry'", [system])
    assert set(verdicts["source"]) == {"[1]"} and set(verdicts["verdict"]) == {"unknown"}
    assert set(verdicts["na_reason"]) == {"model_failure"}
    assert "no URL" in verdicts["reason"][0]
    unresolved = scores(home, f"system = '{system}' AND task = 'generic.ferry' AND metric = 'unresolved_citations'")
    assert unresolved["value"].to_list() == [1.0]


def test_missing_report_file_is_na_not_a_crash(home, bench, tmp_path):
    setup_home(home, bench)
    partial = tmp_path / "partial"
    partial.mkdir()
    (partial / "ferry.md").write_text(GOOD_REPORT)
    assert main(["--home", str(home), "add-system", "partial", "--reports", str(partial)]) == 0
    assert main(["--home", str(home), "run"]) == 0
    report = Store(home / "dreval.duckdb").query(
        "SELECT status, na_reason FROM reports WHERE system = 'partial' AND task = 'generic.pipe-and-quotes'")
    assert report.rows() == [("missing", "model_failure")]


def test_add_system_refuses_bad_names_and_folders(home, bench, capsys, tmp_path):
    _, systems = bench
    assert main(["--home", str(home), "add-system", "x", "--reports", str(tmp_path / "nowhere")]) == 2
    assert "not a folder" in capsys.readouterr().err
    (tmp_path / "empty_dir").mkdir()
    assert main(["--home", str(home), "add-system", "x", "--reports", str(tmp_path / "empty_dir")]) == 2
    assert "no .md reports" in capsys.readouterr().err


def test_missing_upstream_partition_fails_loudly(home, bench):
    folder, systems = bench
    settings = Settings.from_env(home)
    store = Store(settings.db_path)
    store.ensure_schema()
    register_tasks(store, load_generic(folder).tasks, source="test")
    assert main(["--home", str(home), "add-system", "good", "--reports", str(systems / "good")]) == 0
    instance = open_instance(settings)
    sync_partitions(instance, store)
    # evaluate without materialising the task partitions first
    outcomes = execute(build_definitions(settings), instance,
                       Plan(per_system={"good": ["generic.ferry"]}), echo=lambda _: None)
    assert [o.success for o in outcomes] == [False]
    assert "upstream asset 'tasks' has no materialisation" in outcomes[0].error
    assert store.query("SELECT count(*) FROM reports").item() == 0


def test_readable_attachments_are_loaded_as_evidence_and_images_are_not(tmp_path):
    folder = tmp_path / "bench"
    (folder / "files").mkdir(parents=True)
    (folder / "files" / "brief.md").write_text("The ferry carried 39,000 passengers in 2023 according to the council. " * 5)
    (folder / "files" / "chart.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32)
    (folder / "tasks.jsonl").write_text(json.dumps(
        {"id": "ferry", "query": "Report on the ferry.", "attachments": ["files/brief.md", "files/chart.png"]}) + "\n")
    loaded = load_generic(folder)
    [task] = loaded.tasks
    assert list(task.attachment_texts) == ["files/brief.md"] and "39,000" in task.attachment_texts["files/brief.md"]


def test_a_task_with_a_missing_attachment_is_skipped_whole(tmp_path):
    folder = tmp_path / "bench"
    folder.mkdir()
    (folder / "tasks.jsonl").write_text(json.dumps({"id": "gone", "query": "q", "attachments": ["files/gone.pdf"]}) + "\n")
    loaded = load_generic(folder)
    assert loaded.tasks == [] and loaded.skipped == ["tasks.jsonl:1: task gone: file not found: files/gone.pdf",
                                                     "tasks.jsonl:1: task gone skipped: 1 file(s) missing"]
