"""Bad input gets a clear message or an N/A row with a reason, and no other partition changes."""
import json
import time
from pathlib import Path

import pytest

from cli_output import without_home_line  # noqa: E402

from dreval_assets.releases.generic import load_generic
from dreval_assets.cli import main
from dreval_assets.config import Settings
from dreval_assets.defs.definitions import build_definitions
from dreval_assets.defs.runner import execute, open_instance, sync_partitions
from dreval_assets.operations.planner import Plan
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
                       Plan(per_system={"good": ["generic.ferry"]}))
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


# --- report files for no task, other encodings, the size limit ------------------------------------

ACCENTED_PAGE = ("The café at Saltcote served 41,200 passengers in 2023, says the Señora Muñoz survey. "
                 "Its crêpe stall opened in March 2023 beside the new pier. ") * 3
ACCENTED_REPORT = """# Café at Saltcote

The café at Saltcote served 41,200 passengers in 2023 [1].
Its crêpe stall opened in March 2023 beside the new pier [1].

## References
[1] Señora Muñoz survey https://cafe.example/saltcote
"""
CHINESE_REPORT = """# 渡轮报告

低沼渡轮在2023年运送了41,200名乘客，比2022年的36,900名有所增加 [1]。

## 参考文献
[1] 低沼渡轮年度报告 https://ferries.example/lowmarsh-zh
"""
ENCODED = {"latin1": ("latin-1", ACCENTED_REPORT), "cp1252": ("cp1252", ACCENTED_REPORT.replace("café", "“café”")),
           "gbk": ("gbk", CHINESE_REPORT), "utf16": ("utf-16", ACCENTED_REPORT)}


def encoded_bench(tmp_path: Path) -> tuple[Path, Path]:
    """One task per encoding (and one for a report over the size limit), and one system folder
    holding each task's report in that encoding."""
    folder, reports = tmp_path / "enc_bench", tmp_path / "encoded"
    folder.mkdir()
    reports.mkdir()
    ids = [*ENCODED, "huge"]
    (folder / "tasks.jsonl").write_text("".join(json.dumps({"id": i, "query": f"Report {i}."}) + "\n" for i in ids))
    pages = [{"task_id": i, "url": "https://cafe.example/saltcote", "title": "Survey", "text": ACCENTED_PAGE}
             for i in ids]
    pages.append({"task_id": "gbk", "url": "https://ferries.example/lowmarsh-zh", "title": "年度报告",
                  "text": "低沼渡轮在2023年运送了41,200名乘客，比2022年的36,900名有所增加。" * 3})
    (folder / "sandbox.jsonl").write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in pages))
    for task, (codec, text) in ENCODED.items():
        (reports / f"{task}.md").write_bytes(text.encode(codec))
    (reports / "huge.md").write_text(ACCENTED_REPORT + "Padding sentence without any facts in it. " * 60)
    return folder, reports


def test_reports_in_other_encodings_are_read_with_a_warning_and_scored(home, tmp_path, monkeypatch, capsys):
    folder, reports = encoded_bench(tmp_path)
    monkeypatch.setenv("DREVAL_REPORT_MAX_BYTES", "2000")
    store = registered(home, folder)
    assert main(["--home", str(home), "add-system", "encoded", "--reports", str(reports)]) == 0
    out = capsys.readouterr().out
    assert "5 report file(s) found: 5 for a registered task" in out
    assert "latin1.md: not UTF-8 (invalid continuation byte at byte 5): decoded as cp1252 (detected)" in out
    assert "huge.md: report is larger than the 2,000-byte limit (DREVAL_REPORT_MAX_BYTES): its scores will be N/A" in out
    assert main(["--home", str(home), "run"]) == 0
    rows = {r["task"]: r for r in store.query("SELECT * FROM reports").to_dicts()}
    for task, (codec, text) in ENCODED.items():
        row = rows[f"generic.{task}"]
        assert row["status"] == "ok" and row["text"] == text and "decoded as" in row["detail"], task
    assert "decoded as gb18030" in rows["generic.gbk"]["detail"]  # GBK's superset
    claims = store.query("SELECT text FROM report_claims WHERE task = 'generic.latin1' ORDER BY claim_id")
    assert claims["text"].to_list()[0].startswith("The café at Saltcote served 41,200 passengers")
    supported = dict(scores(home, "metric = 'supported_ratio' AND task <> 'generic.gbk'")
                     .select("task", "value").iter_rows())
    assert supported == {"generic.latin1": 100.0, "generic.cp1252": 100.0, "generic.utf16": 100.0,
                         "generic.huge": None}
    huge = scores(home, "task = 'generic.huge'")
    # our size limit, not the system's fault (a binary or empty report would be)
    assert huge["value"].is_null().all() and set(huge["na_reason"]) == {"pipeline_failure"}
    assert rows["generic.huge"]["detail"] == "report is larger than the 2,000-byte limit (DREVAL_REPORT_MAX_BYTES)"


def test_a_malformed_report_limit_is_refused_in_one_line(home, monkeypatch, capsys):
    monkeypatch.setenv("DREVAL_REPORT_MAX_BYTES", "5MB")
    assert main(["--home", str(home), "run"]) == 2
    assert capsys.readouterr().err == "dreval: error: DREVAL_REPORT_MAX_BYTES='5MB' is not a whole number\n"


def test_report_files_for_no_task_are_named_and_kept(home, bench, tmp_path, capsys):
    folder, systems = bench
    store = registered(home, folder)
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "ferry.md").write_text(GOOD_REPORT)
    (stray / "ferri.md").write_text(GOOD_REPORT)  # a typo: no task has this id
    (stray / "README.md").write_text("notes about this folder")
    assert main(["--home", str(home), "add-system", "stray", "--reports", str(stray)]) == 0
    out = capsys.readouterr().out
    assert "3 report file(s) found: 1 for a registered task, 2 for no registered task (not evaluated)" in out
    assert "  ferri.md: no registered task has the key or id 'ferri'" in out
    assert "  README.md: no registered task has the key or id 'README'" in out
    kept = store.query("SELECT p.kind, p.file, i.benchmark, i.source FROM import_problems p JOIN imports i "
                       "USING (import_id) ORDER BY p.file")
    assert kept.rows() == [("skipped", "README.md", "folder", str(stray)), ("skipped", "ferri.md", "folder", str(stray))]


@pytest.mark.parametrize("how", ["release", "reports_folder"])
def test_an_import_names_reports_for_no_task(home, bench, tmp_path, capsys, how):
    folder, _ = bench
    reports = folder / "systems" / "writer" if how == "release" else tmp_path / "writer"
    reports.mkdir(parents=True)
    (reports / "ferry.md").write_text(GOOD_REPORT)
    (reports / "ferri.md").write_text(GOOD_REPORT)
    (reports / "latin.md").write_bytes(ACCENTED_REPORT.encode("latin-1"))
    extra = [] if how == "release" else ["--system", "writer", "--reports", str(reports)]
    assert main(["--home", str(home), "import", "generic", str(folder), *extra]) == 0
    out = capsys.readouterr().out
    assert "reports found: 1 (1 new, 0 changed, 0 unchanged)" in out
    assert "ferri.md: no task with id 'ferri'" in out and "latin.md: no task with id 'latin'" in out
    kept = Store(home / "dreval.duckdb").query("SELECT file, reason FROM import_problems WHERE kind = 'skipped' "
                                               "ORDER BY file")
    assert [(Path(f).name, r) for f, r in kept.rows()] == [("ferri.md", "no task with id 'ferri'"),
                                                          ("latin.md", "no task with id 'latin'")]


def test_an_imported_report_in_another_encoding_is_kept_with_a_note(home, bench, capsys):
    folder, _ = bench
    (folder / "systems" / "zh").mkdir(parents=True)
    (folder / "systems" / "zh" / "ferry.md").write_bytes(CHINESE_REPORT.encode("gbk"))
    assert main(["--home", str(home), "import", "generic", str(folder)]) == 0
    assert ("systems/zh/ferry.md: not UTF-8 (invalid start byte at byte 2): decoded as gb18030 (detected)"
            in capsys.readouterr().out)
    store = Store(home / "dreval.duckdb")
    assert store.query("SELECT text FROM imported_reports WHERE system = 'zh'").item() == CHINESE_REPORT
    notes = store.query("SELECT reason FROM import_problems WHERE kind = 'note'")["reason"].to_list()
    assert notes.count("not UTF-8 (invalid start byte at byte 2): decoded as gb18030 (detected)") == 1


# --- dreval sql -------------------------------------------------------------------------------

@pytest.mark.parametrize("query, message", [
    ("COPY (SELECT 1) TO '{tmp}/x.csv'", "refused: `dreval sql` reads the results database only"),
    ("SELECT * FROM read_csv('/etc/passwd')", "refused: `dreval sql` reads the results database only"),
    ("ATTACH '{tmp}/other.duckdb'", "refused: `dreval sql` reads the results database only"),
    ("SET enable_external_access = true", "the configuration has been locked"),
    ("DELETE FROM tasks", "refused: `dreval sql` is read-only"),
])
def test_sql_reads_the_results_and_nothing_else(home, tmp_path, capsys, query, message):
    Store(home / "dreval.duckdb").ensure_schema()
    assert main(["--home", str(home), "sql", query.format(tmp=tmp_path)]) == 2
    err = without_home_line(capsys.readouterr().err)
    assert message in err and err.count("\n") == 1  # one line, no traceback
    assert not (tmp_path / "x.csv").exists() and not (tmp_path / "other.duckdb").exists()


def test_sql_csv_writes_list_and_struct_columns_as_json(home, capsys):
    Store(home / "dreval.duckdb").ensure_schema()
    query = "SELECT 'a' AS name, [1, 2] AS ids, {'k': 'v'} AS meta, NULL::INT[] AS none UNION ALL SELECT 'b', [], NULL, [3]"
    assert main(["--home", str(home), "sql", query, "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines() == ["name,ids,meta,none", 'a,"[1, 2]","{""k"": ""v""}",',
                                                    "b,[],,[3]"]


def test_a_runaway_query_is_stopped_at_its_timeout_in_one_line(home, capsys):
    Store(home / "dreval.duckdb").ensure_schema()
    started = time.monotonic()
    assert main(["--home", str(home), "sql", "SELECT sum(i) FROM range(1000000000000) t(i)", "--timeout", "1"]) == 2
    assert time.monotonic() - started < 10  # it ran until killed before
    err = without_home_line(capsys.readouterr().err)
    assert err == "dreval: error: the query ran longer than 1 s and was stopped (--timeout)\n"


@pytest.mark.parametrize("command", [["leaderboard"], ["sql", "SELECT 1"], ["add-system", "x", "--reports", "."]])
def test_a_home_that_cannot_be_written_or_does_not_exist_is_one_line(tmp_path, capsys, command):
    unwritable = Path("/sys/dreval-home")  # sysfs: not even root may create it
    code = main(["--home", str(unwritable), *command])
    err = without_home_line(capsys.readouterr().err)
    assert code == 2 and err.count("\n") == 1 and err.startswith("dreval: error: ") and "Traceback" not in err
    assert not unwritable.exists()


def registered(home: Path, folder: Path) -> Store:
    """A home whose store holds the bench folder's tasks."""
    store = Store(home / "dreval.duckdb")
    store.ensure_schema()
    register_tasks(store, load_generic(folder).tasks, source="test")
    return store


# --- URL schemes no fetcher reads -------------------------------------------------------------

def test_unreadable_url_schemes_are_refused_by_name_in_sandbox_mode(home, bench, tmp_path):
    folder, _ = bench
    store = registered(home, folder)
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / "ferry.md").write_text(
        "# Ferry\n\nThe Lowmarsh ferry carried 41,200 passengers in 2023 [1].\n"
        "Estuary Links added a third vessel named Curlew in March 2023 [2].\n"
        "Average crossing time fell to 14 minutes [3].\n\n## References\n"
        "[1] Annual note javascript:history.back\n[2] Local copy file:///etc/passwd\n[3] Archive ftp://ferries.example/note.txt\n")
    assert main(["--home", str(home), "add-system", "odd", "--reports", str(odd)]) == 0
    assert main(["--home", str(home), "run", "--system", "odd"]) == 0
    fetched = dict(store.query("SELECT url, detail FROM fetched_references WHERE system = 'odd'").iter_rows())
    assert fetched == {"javascript:history.back": "refused: unsupported URL scheme 'javascript' (only http and https are fetched)",
                       "file:///etc/passwd": "refused: unsupported URL scheme 'file' (only http and https are fetched)",
                       "ftp://ferries.example/note.txt": "refused: unsupported URL scheme 'ftp' (only http and https "
                                                         "are fetched)"}
    verdicts = store.query("SELECT na_reason, reason FROM claim_verdicts WHERE system = 'odd' AND task = 'generic.ferry'")
    assert set(verdicts["na_reason"]) == {"data_accessibility"}
    assert all("unsupported URL scheme" in r for r in verdicts["reason"])
    ratio = scores(home, "system = 'odd' AND task = 'generic.ferry' AND metric = 'supported_ratio'")
    assert ratio["value"].to_list() == [None] and ratio["na_reason"].to_list() == ["data_accessibility"]
