"""Small real .xlsx / .pptx / .docx files built with the parsers' own libraries, for the attachment tests."""
from __future__ import annotations

import datetime as dt
import io


def xlsx_bytes() -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    plants = book.active
    plants.title = "Plants"
    plants.append(["Plant", "Capacity (m3/day)", "Unit cost (USD/m3)", "Opened"])
    plants.append(["Punta Velas", 220000, 0.84, dt.date(2019, 5, 1)])
    plants.append([])  # an empty row is skipped
    plants.append(["Campo Seco", 180000.0, 0.91, None, None])  # trailing empty cells are dropped
    book.create_sheet("Notes").append(["Source", "Operator annual report 2023"])
    book.properties.title = "Sarrano plants"
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def pptx_bytes() -> bytes:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[1])  # title and content
    first.shapes.title.text = "Water supply 2023"
    body = first.placeholders[1].text_frame
    body.text = "Four plants supply 540,000 cubic metres per day"
    sub = body.add_paragraph()
    sub.text = "Punta Velas is the largest"
    sub.level = 1
    first.notes_slide.notes_text_frame.text = "Say that the 2019 figure was 410,000."
    second = deck.slides.add_slide(deck.slide_layouts[5])  # title only
    second.shapes.title.text = "Costs"
    table = second.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1)).table
    for (r, c), text in {(0, 0): "Plant", (0, 1): "USD/m3", (1, 0): "Punta Velas", (1, 1): "0.84"}.items():
        table.cell(r, c).text = text
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def docx_bytes() -> bytes:
    from docx import Document

    document = Document()
    document.add_heading("Ministry brief", level=0)
    document.add_heading("Capacity", level=1)
    document.add_paragraph("The four plants supply 540,000 cubic metres per day.")
    document.add_paragraph("Punta Velas: 220,000", style="List Bullet")
    table = document.add_table(rows=2, cols=3)
    table.cell(0, 0).merge(table.cell(0, 1)).text = "Plant and year"
    table.cell(0, 2).text = "Output"
    for c, text in enumerate(["Campo Seco", "2023", "180,000"]):
        table.cell(1, c).text = text
    document.add_paragraph("Costs fell to 0.84 dollars per cubic metre.")
    document.core_properties.title = "Ministry brief on desalination"
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def password_protected_bytes() -> bytes:
    """What an Office file encrypted with a password starts with: an OLE compound file (not a zip) whose
    directory names the EncryptionInfo and EncryptedPackage streams. Not real encryption: the
    container's signature is what the reader recognises."""
    header = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504
    directory = "EncryptionInfo".encode("utf-16-le").ljust(128, b"\x00") + \
        "EncryptedPackage".encode("utf-16-le").ljust(128, b"\x00")
    return header + directory + b"\x00" * 256
