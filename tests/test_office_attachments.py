"""Spreadsheets, slides and Word files (issue 28, MiroEval "Attachments the paper names"): the text a judge
sees (fetch/office_text.py through fetch/extract.py), limits said in the text, unreadable files N/A with
their reason, and a MiroEval task with such attachments getting its key facts from them."""
from __future__ import annotations

import io
import json
import zipfile

import pytest

from dreval_assets.benchmarks.miroeval.judgments import task_key_facts
from dreval_assets.fetch import office_text as office
from dreval_assets.fetch.extract import extract_page
from dreval_assets.judges.heuristic import HeuristicJudge
from dreval_assets.releases import generic_layout
from dreval_assets.releases.attachments import read_attachments
from dreval_assets.releases.records import ImportLog
from dreval_assets.stages.task_rubrics import generate_rubrics
from dreval_assets.stages.tasks import attachments_by_task, task_frames

from office_files import docx_bytes, password_protected_bytes, pptx_bytes, xlsx_bytes

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def test_a_spreadsheet_is_its_sheets_as_rows_of_named_cells():
    page = extract_page(xlsx_bytes(), XLSX, "plants.xlsx")
    assert page.status == "ok" and page.title == "Sarrano plants" and "from 2 sheet(s) by openpyxl" in page.detail
    assert page.text == (
        "## Sheet: Plants\n\n"
        "| Plant | Capacity (m3/day) | Unit cost (USD/m3) | Opened |\n\n"
        "Plant: Punta Velas | Capacity (m3/day): 220000 | Unit cost (USD/m3): 0.84 | Opened: 2019-05-01\n\n"
        "Plant: Campo Seco | Capacity (m3/day): 180000 | Unit cost (USD/m3): 0.91\n\n"  # empty row, trailing cells gone
        "## Sheet: Notes\n\n"
        "Source | Operator annual report 2023")  # one row: no header, cells as they are


def test_slides_in_order_with_titles_tables_and_notes():
    page = extract_page(pptx_bytes(), PPTX, "deck.pptx")
    assert page.status == "ok" and page.title == "Water supply 2023"
    assert page.text == (
        "## Slide 1: Water supply 2023\n\n"
        "Four plants supply 540,000 cubic metres per day\n\n"
        "  - Punta Velas is the largest\n\n"
        "Notes: Say that the 2019 figure was 410,000.\n\n"
        "## Slide 2: Costs\n\n"
        "| Plant | USD/m3 |\n\n"
        "Plant: Punta Velas | USD/m3: 0.84")


def test_a_word_document_is_its_paragraphs_and_tables_in_order():
    page = extract_page(docx_bytes(), DOCX, "brief.docx")
    assert page.status == "ok" and page.title == "Ministry brief on desalination"
    assert "from 5 paragraph(s) and 1 table(s) by python-docx" in page.detail
    assert page.text == (
        "# Ministry brief\n\n"
        "## Capacity\n\n"
        "The four plants supply 540,000 cubic metres per day.\n\n"
        "- Punta Velas: 220,000\n\n"
        "| Plant and year | Output |\n\n"  # the merged header cell said once ...
        "Plant and year: Campo Seco | Plant and year: 2023 | Output: 180,000\n\n"  # ... and names both its columns
        "Costs fell to 0.84 dollars per cubic metre.")


def test_office_bytes_without_a_useful_header_are_sniffed():
    for body, first in ((xlsx_bytes(), "## Sheet: Plants"), (pptx_bytes(), "## Slide 1"),
                        (docx_bytes(), "# Ministry brief")):
        for header in (None, "application/octet-stream", "application/zip"):
            page = extract_page(body, header, "https://x.example/download?id=7")
            assert page.status == "ok" and page.text.startswith(first), (first, header)


def test_unreadable_office_files_say_why():
    cases = {
        (password_protected_bytes(), DOCX): "unreadable: the Word document is protected with a password",
        (password_protected_bytes()[:512], XLSX): "unreadable: a legacy binary Office file, not a .xlsx spreadsheet",
        (b"PK\x03\x04 this zip was cut", XLSX): "unreadable: not a valid .xlsx spreadsheet (not a zip archive",
        (_zip({"word/document.xml": b"<w:document/>"}), PPTX): "unreadable: not a .pptx presentation (no "
                                                                "ppt/presentation.xml in the archive)",
        (_zip({"word/document.xml": b"<not-xml"}), DOCX): "unreadable: the Word document could not be parsed (",
    }
    for (body, media), reason in cases.items():
        page = extract_page(body, media, "f")
        assert (page.status, page.blocked) == ("unknown", "unreadable") and page.detail.startswith(reason), page.detail
    cut = extract_page(xlsx_bytes()[:300], XLSX, "f", truncated=True)
    assert cut.detail == "unreadable: the spreadsheet was cut at the byte cap and cannot be parsed"


def test_limits_are_said_in_the_text(monkeypatch):
    from openpyxl import Workbook

    book = Workbook()
    book.active.title = "Daily"
    book.active.append(["Day", "Output"])
    for day in range(1, 8):
        book.active.append([f"d{day}", day * 1000])
    book.active.cell(row=2, column=office.SHEET_MAX_COLUMNS + 2, value="far right")
    data = io.BytesIO()
    book.save(data)
    monkeypatch.setattr(office, "SHEET_MAX_ROWS", 3)
    text = office.office_text(data.getvalue(), "xlsx").text
    assert "Day: d3 | Output: 3000" in text and "d4" not in text and "far right" not in text
    assert text.endswith("[... not shown: rows 5-8 of sheet Daily (row limit of 3)]\n\n"  # row 1 is the header
                         f"[... not shown: columns after {office.SHEET_MAX_COLUMNS} of sheet Daily "
                         f"(column limit of {office.SHEET_MAX_COLUMNS})]")  # row 2 was shown without its far cell
    monkeypatch.setattr(office, "SHEET_MAX_ROWS", 100)
    text = office.office_text(data.getvalue(), "xlsx").text
    assert "Day: d7 | Output: 7000" in text and "rows" not in text
    monkeypatch.setattr(office, "MAX_CHARS", 120)
    text = office.office_text(docx_bytes(), "docx").text
    assert text.endswith("[... not shown: the rest of the file (text limit of 120 characters)]")
    assert "Costs fell" not in text and "# Ministry brief" in text
    monkeypatch.setattr(office, "MAX_UNPACKED_BYTES", 1000)
    with pytest.raises(office.OfficeUnreadable, match="unpacks to .* bytes, over the limit of 1,000"):
        office.office_text(pptx_bytes(), "pptx")


def test_attachments_read_as_evidence_and_unreadable_ones_noted(tmp_path):
    _files(tmp_path)
    texts, unreadable = read_attachments(tmp_path, ["files/plants.xlsx", "files/deck.pptx", "files/brief.docx",
                                                    "files/locked.xlsx", "files/broken.docx"])
    assert list(texts) == ["files/plants.xlsx", "files/deck.pptx", "files/brief.docx"]
    assert "Plant: Punta Velas | Capacity (m3/day): 220000" in texts["files/plants.xlsx"]
    assert unreadable == {"files/locked.xlsx": "unreadable: the spreadsheet is protected with a password",
                          "files/broken.docx": "unreadable: not a valid .docx Word document (not a zip archive: "
                                               "File is not a zip file)"}


def test_a_miroeval_task_gets_key_facts_and_grounding_evidence_from_office_attachments(tmp_path):
    _files(tmp_path)
    names = ["files/plants.xlsx", "files/deck.pptx", "files/brief.docx", "files/locked.xlsx"]
    (tmp_path / "tasks.jsonl").write_text(json.dumps({"id": "t1", "benchmark": "miroeval", "attachments": names,
                                                      "query": "Compare the plants' capacity and cost."}) + "\n")
    log = ImportLog()
    (task,) = list(generic_layout.iter_tasks(tmp_path, log))
    assert list(task.attachment_texts) == names[:3]
    assert [str(n) for n in log.notes] == [
        "tasks.jsonl:1: task t1: attachment files/locked.xlsx left out of the evidence "
        "(unreadable: the spreadsheet is protected with a password)"]
    frames = task_frames([task])
    sandbox = frames["task_sandbox"].filter(frames["task_sandbox"]["role"] == "attachment")
    assert sandbox["url"].to_list() == [f"attachment:{n}" for n in names[:3]]  # evidence for factuality
    texts = {r["text_hash"]: r["text"] for r in frames["page_texts"].iter_rows(named=True)}
    rubrics = generate_rubrics(frames["tasks"], attachments_by_task(frames["task_sandbox"], texts), HeuristicJudge())
    facts = task_key_facts(rubrics)[task.key]  # what Grounding is scored against
    assert "Plant: Punta Velas | Capacity (m3/day): 220000 | Unit cost (USD/m3): 0.84 | Opened: 2019-05-01" in facts
    assert "Notes: Say that the 2019 figure was 410,000." in facts  # speaker notes are evidence too
    assert "Plant and year: Campo Seco | Plant and year: 2023 | Output: 180,000" in facts
    assert not any(f.startswith("|") for f in facts)  # a header row is no fact


def _zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def _files(root):
    folder = root / "files"
    folder.mkdir()
    (folder / "plants.xlsx").write_bytes(xlsx_bytes())
    (folder / "deck.pptx").write_bytes(pptx_bytes())
    (folder / "brief.docx").write_bytes(docx_bytes())
    (folder / "locked.xlsx").write_bytes(password_protected_bytes())
    (folder / "broken.docx").write_bytes(b"not a zip at all")


def test_the_miroeval_release_loader_reads_office_files_named_in_files(tmp_path):
    from dreval_assets.benchmarks.miroeval import loader as miro

    queries = tmp_path / "data" / "input_queries"
    (queries / "multimodal-attachments" / "7").mkdir(parents=True)
    (queries / "multimodal-attachments" / "7" / "plants.xlsx").write_bytes(xlsx_bytes())
    (queries / "multimodal-attachments" / "7" / "brief.docx").write_bytes(docx_bytes())
    files = [{"filename": n, "type": t, "dir": f"multimodal-attachments/7/{n}", "size": "9 KB"}
             for n, t in (("plants.xlsx", "doc"), ("brief.docx", "word"))]
    (queries / "mirobench_multimodal.json").write_text(json.dumps([{
        "id": 7, "chat_id": "c7", "rewritten_query": "Which plant is cheapest?", "files": files,
        "annotation": {"category": "multi_doc", "language": "en"}}]))
    (task,) = list(miro.iter_tasks(tmp_path, ImportLog()))
    assert task.modality == "multimodal"
    folder = "data/input_queries/multimodal-attachments/7"
    assert "Unit cost (USD/m3): 0.91" in task.attachment_texts[f"{folder}/plants.xlsx"]
    assert "Costs fell to 0.84" in task.attachment_texts[f"{folder}/brief.docx"]
