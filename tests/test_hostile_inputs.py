"""Hostile inputs (issue 30, points 2 and 3): each is refused on its own, in one line, and the rest of
the import or run completes. Links out of a release are never read (their text reaches no table and
no file of the home), the databases are their owner's only, and no input crashes, hangs or bills
without bound: a `%00` image path, JSON nested 100,000 deep, a named pipe, a 13,000² px image, a
report with more figures than the cap."""
from __future__ import annotations

import io
import json
import os
import shutil
import stat
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import duckdb
import polars as pl
import pytest

from cli_output import without_home_line  # noqa: E402
from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).parent))

from recording_judge import RecordingJudge  # noqa: E402
from release_helpers import RELEASES, load_tasks  # noqa: E402

from dreval_assets.benchmarks.dr3 import loader as dr3_loader  # noqa: E402
from dreval_assets.benchmarks.judging import JudgmentContext  # noqa: E402
from dreval_assets.benchmarks.mmdr.mosaic import mosaic  # noqa: E402
from dreval_assets.cli import main  # noqa: E402
from dreval_assets.core import images  # noqa: E402
from dreval_assets.core.images import UnreadableImage, content_hash, for_judge, measure  # noqa: E402
from dreval_assets.fetch.images import RemoteImages  # noqa: E402
from dreval_assets.releases.json_readers import MAX_JSON_DEPTH, decode_json, TooDeep  # noqa: E402
from dreval_assets.releases.records import ImportLog  # noqa: E402
from dreval_assets.stages.frames import SCHEMAS, frame  # noqa: E402
from dreval_assets.stages.parse import parse_reports  # noqa: E402
from dreval_assets.stages.report_images import ImageRoots, figure_images, find_report_images  # noqa: E402
from dreval_assets.stages.reports import read_reports  # noqa: E402
from dreval_assets.store.registry import SystemEntry  # noqa: E402

CANARY = "CANARY-7f3a-the-text-of-a-file-outside-the-release"
REPORT = ("# Lowmarsh ferry\n\nThe Lowmarsh ferry carried 41,200 passengers in 2023 [1].\n\n"
          "## References\n[1] Lowmarsh ferry note https://ferries.example/lowmarsh\n")
DEEP = "[" * 100_000 + "]" * 100_000


def png(size=(240, 160), colour=(30, 90, 200)) -> bytes:
    image = Image.new("RGB", size, "white")
    ImageDraw.Draw(image).rectangle((20, 20, size[0] - 20, size[1] - 20), fill=colour)
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def write_jsonl(path: Path, records: list) -> None:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")


def generic_release(tmp_path: Path) -> Path:
    """A release in our generic layout with three tasks and one good system folder."""
    root = tmp_path / "release"
    (root / "systems" / "alpha").mkdir(parents=True)
    write_jsonl(root / "tasks.jsonl", [{"id": "t1", "query": "Write about the Lowmarsh ferry."},
                                       {"id": "t2", "query": "Write about the Lowmarsh ferry again."},
                                       {"id": "t3", "query": "And once more."}])
    (root / "systems" / "alpha" / "t1.md").write_text(REPORT, encoding="utf-8")
    return root


def import_release(home: Path, root: Path, capsys) -> tuple[int, str]:
    code = main(["--home", str(home), "import", "generic", str(root)])
    return code, capsys.readouterr().out


def lines_with(out: str, needle: str) -> list[str]:
    return [line for line in out.splitlines() if needle in line]


def every_value(db: Path) -> str:
    """Every cell of every table of a DuckDB file, as one text to search."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = [r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'").fetchall()]
        return "\n".join(str(con.execute(f'SELECT * FROM "{t}"').fetchall()) for t in tables)
    finally:
        con.close()


@contextmanager
def no_hang(*fifos: Path, seconds: float = 20):
    """Fail, rather than wait forever, when the code under test opens a named pipe and blocks: after
    `seconds` a watchdog opens each pipe for writing (which ends any read waiting on it) and the test
    fails. A signal cannot do this reliably: it may be delivered to another thread than the blocked one."""
    fired, done = threading.Event(), threading.Event()

    def release() -> None:
        fired.set()
        while not done.is_set():  # every later read of a pipe would block again
            for fifo in fifos:
                try:
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                except OSError:  # no reader now: nothing is blocked on this one
                    pass
            time.sleep(0.01)

    watchdog = threading.Timer(seconds, release)
    watchdog.start()
    try:
        yield
    finally:
        done.set()
        watchdog.cancel()
    assert not fired.is_set(), f"blocked on a named pipe for {seconds} s"


# -- point 2: links out of the release ------------------------------------------------------------

def test_links_out_of_the_release_are_refused_and_their_text_reaches_no_table_and_no_file(tmp_path, capsys):
    secret = tmp_path / "elsewhere"
    secret.mkdir()
    (secret / "secret.md").write_text(f"# Secret\n\n{CANARY}\n", encoding="utf-8")
    (secret / "secret.json").write_text(json.dumps({"display_name": CANARY, "description": CANARY}))
    (secret / "secret.jsonl").write_text(json.dumps({"task_id": "t3", "report": CANARY}) + "\n")
    root = generic_release(tmp_path)
    alpha = root / "systems" / "alpha"
    (alpha / "t2.md").symlink_to(secret / "secret.md")  # a report that is a link out
    (alpha / "t1.trace.json").symlink_to(secret / "secret.md")  # its trace, too
    (alpha / "system.json").symlink_to(secret / "secret.json")
    (root / "systems" / "beta.jsonl").symlink_to(secret / "secret.jsonl")
    (root / "files").mkdir()
    (root / "files" / "brief.md").symlink_to(secret / "secret.md")  # an attachment
    with (root / "tasks.jsonl").open("a") as handle:
        task = {"id": "t4", "query": "Summarise the brief.", "attachments": ["files/brief.md"]}
        handle.write(json.dumps(task) + "\n")
    inside = root / "shared.md"  # a link that stays inside the release is read as before
    inside.write_text(REPORT.replace("41,200", "41,300"), encoding="utf-8")
    (alpha / "t3.md").symlink_to(inside)

    home = tmp_path / "home"
    code, out = import_release(home, root, capsys)
    assert code == 0
    refused = lines_with(out, "leading outside the release")
    assert len(lines_with(out, "systems/alpha/t2.md")) == 1 and any("systems/alpha/t2.md" in r for r in refused)
    assert any("systems/alpha/system.json" in r for r in refused)
    assert any("systems/beta.jsonl" in r for r in refused)
    assert len([line for line in lines_with(out, "files/brief.md") if "outside" in line]) == 1
    assert "reports found: 2 (2 new" in out  # t1 and the inside link t3; t2 refused
    home_db = home / "dreval.duckdb"
    # the same links in a folder system: its system.json refused in one line, its report file noted
    assert main(["--home", str(home), "add-system", "delta", "--reports", str(alpha)]) == 2
    assert without_home_line(capsys.readouterr().err).strip() == ("dreval: error: alpha/system.json: cannot open: refused: a link or "
                                               "path leading outside the release")
    (alpha / "system.json").unlink()
    assert main(["--home", str(home), "add-system", "delta", "--reports", str(alpha)]) == 0
    assert len(lines_with(capsys.readouterr().out, "t2.md: report refused: a link or path leading outside the "
                                                   "folder: its scores will be N/A (model_failure)")) == 1
    for db in (home_db, home / "results.duckdb"):
        assert CANARY not in every_value(db), db
    for path in home.rglob("*"):
        if path.is_file():
            assert CANARY.encode() not in path.read_bytes(), path
    con = duckdb.connect(str(home_db), read_only=True)
    imported = con.execute("SELECT task, trace FROM imported_reports ORDER BY task").fetchall()
    con.close()
    assert imported == [("generic.t1", None), ("generic.t3", None)]


def test_a_folder_systems_report_that_links_out_of_its_folder_is_refused_with_a_reason(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (tmp_path / "secret.md").write_text(CANARY, encoding="utf-8")
    (folder / "t1.md").symlink_to(tmp_path / "secret.md")
    (folder / "t2.md").write_text(REPORT, encoding="utf-8")
    os.mkfifo(folder / "t3.md")
    systems = {"mine": SystemEntry("mine", "mine", "folder", str(folder))}
    with no_hang(folder / "t3.md"):
        rows = {r["task"]: r for r in read_reports([("mine", "t1"), ("mine", "t2"), ("mine", "t3")], systems,
                                                   {}).iter_rows(named=True)}
    assert rows["t1"]["status"] == "refused" and rows["t1"]["text"] is None
    assert rows["t1"]["detail"] == "report refused: a link or path leading outside the system's folder"
    assert rows["t1"]["na_reason"] == "model_failure"
    assert rows["t3"]["status"] == "missing"  # a named pipe is no report file: not waited on
    assert rows["t2"]["status"] == "ok" and "41,200" in rows["t2"]["text"]


def test_dr3_user_files_and_gold_files_that_link_out_are_not_read(tmp_path):
    root = tmp_path / "dr3"
    shutil.copytree(RELEASES / "dr3", root)
    (tmp_path / "secret.md").write_text(f"{CANARY} 1,234 heat pumps\n", encoding="utf-8")
    (tmp_path / "secret.json").write_text(json.dumps({"checklist": [{"requirement": CANARY}]}))
    (root / "datasets_en" / "1" / "leak.md").symlink_to(tmp_path / "secret.md")
    checklist = root / "checklists" / "2" / "checklist.json"  # task en-2's
    checklist.unlink()
    checklist.symlink_to(tmp_path / "secret.json")
    tasks, log = load_tasks(dr3_loader, root)
    assert CANARY not in repr(tasks)
    lines = [str(p) for p in (*log.notes, *log.skipped) if "leading outside the release" in str(p)]
    assert len(lines) == 2, lines
    assert "task en-1: attachment datasets_en/1/leak.md left out of the evidence" in lines[0]
    assert "task en-2 skipped: checklists/2/checklist.json cannot be read" in lines[1]
    assert sorted(tasks) == ["dr3.en-1", "dr3.zh-1"]  # en-2 is skipped whole, as for a malformed checklist
    assert tasks["dr3.en-1"].attachment_texts.keys() == {"datasets_en/1/coop_memo.md"}


def test_the_databases_are_their_owners_only(tmp_path, capsys):
    home = tmp_path / "home"
    code, _ = import_release(home, generic_release(tmp_path), capsys)
    assert code == 0
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    for name in ("dreval.duckdb", "results.duckdb"):
        assert stat.S_IMODE((home / name).stat().st_mode) == 0o600, name
    # a working file an older version left world-readable is made private when next opened
    os.chmod(home / "dreval.duckdb", 0o644)
    assert main(["--home", str(home), "sql", "SELECT 1"]) == 0  # reads the published copy only
    code, _ = import_release(home, generic_release(tmp_path / "again"), capsys)
    assert stat.S_IMODE((home / "dreval.duckdb").stat().st_mode) == 0o600
    assert stat.S_IMODE((home / "results.duckdb").stat().st_mode) == 0o600


# -- point 3: deep JSON, named pipes ---------------------------------------------------------------

def test_json_nested_too_deep_is_refused_per_record_and_the_rest_imports(tmp_path, capsys):
    root = generic_release(tmp_path)
    with (root / "tasks.jsonl").open("a") as handle:
        handle.write(json.dumps({"id": "deep", "query": "x"})[:-1] + ', "attributes": ' + DEEP + "}\n")
        handle.write(json.dumps({"id": "t5", "query": "After the deep one."}) + "\n")
    (root / "systems" / "alpha" / "system.json").write_text('{"display_name": ' + DEEP + "}")
    shallow_but_over = "[" * (MAX_JSON_DEPTH + 5) + "]" * (MAX_JSON_DEPTH + 5)
    (root / "systems" / "beta.jsonl").write_text(  # a JSON array of reports: good, too deep, good, hopeless
        "[" + json.dumps({"task_id": "t1", "report": REPORT}) + ","
        + '{"task_id": "t2", "report": "x", "trace": ' + shallow_but_over + "},"
        + json.dumps({"task_id": "t3", "report": REPORT}) + "," + DEEP + "]")
    home = tmp_path / "home"
    code, out = import_release(home, root, capsys)
    assert code == 0
    deep = lines_with(out, f"nested deeper than {MAX_JSON_DEPTH} levels")
    assert len(deep) == 4, out
    assert any(line.strip().startswith("tasks.jsonl:4: refused: JSON") for line in deep)
    assert any("systems/alpha/system.json" in line for line in deep)
    assert any("systems/beta.jsonl:2: refused" in line for line in deep)
    assert any("systems/beta.jsonl:4: refused" in line and "rest of file skipped" in line for line in deep)
    con = duckdb.connect(str(home / "dreval.duckdb"), read_only=True)
    tasks = [r[0] for r in con.execute("SELECT original_id FROM registered_tasks ORDER BY 1").fetchall()]
    reports = con.execute("SELECT system, task FROM imported_reports ORDER BY ALL").fetchall()
    names = dict(con.execute("SELECT system, display_name FROM registered_systems").fetchall())
    con.close()
    assert tasks == ["t1", "t2", "t3", "t5"]
    assert reports == [("alpha", "generic.t1"), ("beta", "generic.t1"), ("beta", "generic.t3")]
    assert names["alpha"] == "alpha"  # its refused system.json names nothing


def test_decode_json_has_a_documented_limit_and_never_recurses_out():
    assert decode_json("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH) is not None
    for depth in (MAX_JSON_DEPTH + 1, 100_000):
        with pytest.raises(TooDeep, match=f"nested deeper than {MAX_JSON_DEPTH} levels"):
            decode_json("[" * depth + "]" * depth)
    with pytest.raises(TooDeep):
        decode_json(('{"a": ' * 500 + "1" + "}" * 500).encode())


def test_a_named_pipe_in_a_release_is_refused_without_waiting(tmp_path, capsys):
    root = generic_release(tmp_path)
    os.mkfifo(root / "systems" / "alpha" / "t2.md")
    os.mkfifo(root / "systems" / "gamma.jsonl")
    (root / "systems" / "alpha" / "t3.md").write_text(REPORT, encoding="utf-8")
    home = tmp_path / "home"
    with no_hang(root / "systems" / "alpha" / "t2.md", root / "systems" / "gamma.jsonl", seconds=60):
        code, out = import_release(home, root, capsys)
    assert code == 0
    refused = lines_with(out, "a named pipe, not a regular file")
    assert [line.strip().split(":")[0] for line in refused] == ["systems/alpha/t2.md"]
    assert "reports found: 2 (2 new" in out  # t1 and t3


def test_every_reader_refuses_a_named_pipe(tmp_path):
    from dreval_assets.releases.csv_readers import iter_csv
    from dreval_assets.releases.json_readers import iter_json_array, iter_jsonl, iter_records, read_json

    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    log = ImportLog()
    with no_hang(fifo):
        for read in (iter_jsonl, iter_json_array, iter_records, iter_csv):
            assert list(read(fifo, tmp_path, log)) == []
        assert read_json(fifo, tmp_path, log) is None
    assert len(log.missing) == 5 and all("a named pipe, not a regular file" in p.reason for p in log.missing)


# -- point 3: images -----------------------------------------------------------------------------

def report_images_of(folder: Path, text: str) -> pl.DataFrame:
    reports = frame("reports", [{"system": "s", "task": "t", "status": "ok", "text": text, "n_chars": len(text),
                                 "content_hash": content_hash(text.encode()), "source_path": str(folder / "r.md"),
                                 "na_reason": None, "detail": ""}])
    parsed = parse_reports(reports)["parsed_reports"]
    return find_report_images(reports, parsed, {("s", "t"): ImageRoots(folder)}, RemoteImages())["report_images"]


def test_an_image_path_with_a_nul_byte_is_refused_and_the_other_figures_are_measured(tmp_path):
    (tmp_path / "good.png").write_bytes(png())
    text = "# R\n\n![Figure 1: bad](images/a%00.png)\n\n![Figure 2: good](good.png)\n\n<img src=\"file:c%00.png\">\n"
    rows = {r["figure"]: r for r in report_images_of(tmp_path, text).iter_rows(named=True)}
    assert rows[1]["status"] == "ok" and rows[1]["width"] == 240
    assert rows[0]["status"] == "invalid" and rows[0]["na_reason"] == "model_failure"
    assert rows[0]["invalid_reason"] == "refused: images/a%00.png names no file (a NUL byte in the path)"
    assert rows[2]["status"] == "invalid" and "NUL byte" in rows[2]["invalid_reason"]
    assert len(rows) == 3


def test_an_image_over_the_pixel_cap_is_refused_from_its_header_without_decoding(tmp_path, monkeypatch):
    bomb = io.BytesIO()
    Image.new("1", (13_000, 13_000), 1).save(bomb, "PNG")  # one colour: ~50 KB on disk, 169 megapixels
    assert len(bomb.getvalue()) < 1_000_000
    (tmp_path / "bomb.png").write_bytes(bomb.getvalue())
    (tmp_path / "good.png").write_bytes(png())
    decoded = []
    monkeypatch.setattr(Image.Image, "load", lambda self, _load=Image.Image.load: decoded.append(self.size)
                        or _load(self))
    started = time.monotonic()
    rows = {r["figure"]: r for r in report_images_of(
        tmp_path, "# R\n\n![Figure 1: huge](bomb.png)\n\n![Figure 2: fine](good.png)\n").iter_rows(named=True)}
    assert time.monotonic() - started < 5
    assert (13_000, 13_000) not in decoded  # refused from the header
    assert rows[0]["status"] == "invalid" and rows[0]["na_reason"] == "pipeline_failure"  # our limit
    assert "13,000 x 13,000 pixels is over the cap of 40,000,000 pixels (DREVAL_MAX_IMAGE_PIXELS)" in \
        rows[0]["invalid_reason"]
    assert rows[1]["status"] == "ok"
    # the cap is a setting
    monkeypatch.setenv("DREVAL_MAX_IMAGE_PIXELS", "10000")
    with pytest.raises(UnreadableImage, match="over the cap of 10,000 pixels"):
        measure(png())
    monkeypatch.setenv("DREVAL_MAX_IMAGE_PIXELS", "lots")
    assert main(["--home", str(tmp_path / "home"), "sql", "SELECT 1"]) == 2  # refused when settings load


def test_an_image_is_decoded_once_for_its_measures_and_the_judge(monkeypatch):
    data = png(colour=(11, 22, 33))
    calls = []
    real = images._decode
    monkeypatch.setattr(images, "_decode", lambda d: calls.append(1) or real(d))
    first = measure(data)
    assert measure(data) == first and for_judge(data) == for_judge(data)
    assert len(calls) == 1


def figure_rows(n: int) -> tuple[pl.DataFrame, dict]:
    data = png()
    rows = [{**{k: None for k in SCHEMAS["report_images"]}, "system": "s", "task": "t", "figure": i,
             "src": f"f{i}.png", "caption": f"Figure {i + 1}: bars", "section": "", "citation_indices": [],
             "context": "As the chart shows. <figure>", "kind": "chart", "status": "ok", "invalid_reason": "",
             "image_hash": content_hash(data), "width": 240, "height": 160, "sharpness": 1.0, "contrast": 0.1,
             "phash": "0" * 16} for i in range(n)]
    rows.append({**rows[0], "figure": n, "src": "", "status": "invalid", "invalid_reason": "figure has no image",
                 "na_reason": "model_failure", "image_hash": None})
    return frame("report_images", rows), {content_hash(data): ("image/png", data)}


def test_figures_over_the_cap_are_not_sent_and_say_so(monkeypatch):
    monkeypatch.setenv("DREVAL_MAX_FIGURES_PER_REPORT", "3")
    report_images, blobs = figure_rows(7)
    figures = figure_images(report_images, blobs)[("s", "t")]
    assert [f.status for f in figures] == ["ok"] * 3 + ["invalid"] * 5
    over = figures[3:7]
    assert all(f.image is None and f.invalid_bucket == "pipeline_failure" for f in over)
    assert all(f.invalid_reason == "over the cap of 3 figures per report (DREVAL_MAX_FIGURES_PER_REPORT): "
                                   "the report has 7 usable figures and its first 3 are judged" for f in over)
    assert figures[7].invalid_bucket == "model_failure"  # the report's own missing image is not ours
    judge = RecordingJudge()
    tasks = frame("tasks", [{**{k: None for k in SCHEMAS["tasks"]}, "task": "t", "benchmark": "mmdr",
                             "query": "Explain the chart.", "modality": "multimodal"}])
    reports = frame("reports", [{**{k: None for k in SCHEMAS["reports"]}, "system": "s", "task": "t", "status": "ok",
                                 "text": "# R\n\nAs the chart shows.\n"}])
    rows = mosaic(JudgmentContext([("s", "t")], reports, tasks, frame("task_rubrics", []), judge,
                                  figures={("s", "t"): figures}))
    assert len([r for r in judge.requests if r.images]) == 3
    capped = rows.filter(pl.col("reason").str.contains("over the cap of 3 figures per report"))
    assert capped.height > 0 and set(capped["na_reason"]) == {"pipeline_failure"}
    assert {int(i.split(".")[2][1:]) for i in capped["item_id"]} == {4, 5, 6, 7}


def test_the_limits_are_settings_that_make_judgments_due_when_changed(tmp_path, monkeypatch):
    from dreval_assets.config import Settings

    before = Settings.from_env(tmp_path).shaping_version("report_judgments")
    monkeypatch.setenv("DREVAL_MAX_FIGURES_PER_REPORT", "50")  # the default: nothing changes
    assert Settings.from_env(tmp_path).shaping_version("report_judgments") == before
    monkeypatch.setenv("DREVAL_MAX_FIGURES_PER_REPORT", "500")
    assert Settings.from_env(tmp_path).shaping_version("report_judgments") != before
    monkeypatch.setenv("DREVAL_MAX_FIGURES_PER_REPORT", "0")
    with pytest.raises(Exception, match="DREVAL_MAX_FIGURES_PER_REPORT"):
        Settings.from_env(tmp_path)
