"""The bundled demo's images (drawn by bench/make_demo_images.py): every figure has a real, small
file except the planted missing one, and the planted defects are what core/images measures."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from dreval_assets.core import images
from dreval_assets.core.key_facts import numbers_in
from dreval_assets.releases.reports import image_file, local_images

DEMO = Path(__file__).resolve().parents[1] / "dreval_assets" / "demo"
SYSTEMS = {p.name: p for p in [*(DEMO / "systems").iterdir(), *(DEMO / "extra_systems").iterdir()] if p.is_dir()}
PLANTED_MISSING = ("loose-cannon", "100002.md", "images/100002_route_map.png")
ALL_IMAGES = sorted(p for p in DEMO.rglob("*") if p.suffix in (".png", ".jpg"))


def _figures(system: str, report: str) -> list[Path | None]:
    folder = SYSTEMS[system]
    return [image_file(src, [folder]) for _, src in local_images((folder / report).read_text())]


def _measure(path: Path) -> images.ImageMeasure:
    return images.measure(path.read_bytes())


def _shows(path: Path) -> str:
    """What the image shows, as the generator wrote it into the file (PNG Description, JPEG comment)."""
    info = Image.open(path).info
    return info.get("Description") or info["comment"].decode()


def _page(task: str, url_part: str) -> str:
    for line in (DEMO / "sandbox.jsonl").read_text().splitlines():
        page = json.loads(line)
        if page["task_id"] == task and url_part in page["url"]:
            return page["text"]
    raise KeyError(url_part)


def _task(task_id: str) -> dict:
    return next(t for t in map(json.loads, (DEMO / "tasks.jsonl").read_text().splitlines()) if t["id"] == task_id)


def test_every_figure_has_its_file_in_the_systems_folder_but_the_planted_missing_one():
    missing = []
    for system, folder in SYSTEMS.items():
        for report in sorted(folder.glob("*.md")):
            for _, src in local_images(report.read_text()):
                if image_file(src, [folder]) is None:
                    missing.append((system, report.name, src))
    assert missing == [PLANTED_MISSING]
    assert not (DEMO / "images" / "100002_route_map.png").exists()  # not found in the release root either


def test_tvir_reports_have_two_or_three_figures_and_careful_scholar_a_chart_and_a_photo():
    for system in SYSTEMS:
        for task in ("100001", "100002"):
            assert 2 <= len(_figures(system, f"{task}.md")) <= 3, (system, task)
    for task in ("100001", "100002"):
        kinds = {p.suffix for p in _figures("careful-scholar", f"{task}.md")}
        assert kinds == {".png", ".jpg"}  # charts are PNG, photos JPEG


@pytest.mark.parametrize("path", ALL_IMAGES, ids=lambda p: str(p.relative_to(DEMO)))
def test_every_demo_image_decodes_and_is_small(path):
    measured = _measure(path)
    assert path.stat().st_size < 40_000
    assert measured.mime == ("image/png" if path.suffix == ".png" else "image/jpeg")
    assert measured.width >= 400 and measured.height >= 250
    assert _shows(path)


def test_the_duplicated_figure_is_found_by_its_perceptual_hash_not_its_bytes():
    first, again = (_measure(p) for p in _figures("quiet-summarizer", "100002.md"))
    assert first.sha256 != again.sha256
    assert images.near_duplicates([first.phash, again.phash]) == [None, 0]


def test_careful_scholars_figures_are_distinct_crisp_and_of_high_quality():
    for task in ("100001.md", "100002.md", "Q7.md"):
        measured = [_measure(p) for p in _figures("careful-scholar", task)]
        assert images.near_duplicates([m.phash for m in measured]) == [None] * len(measured)
        for m in measured:
            assert m.sharpness >= images.FULL_SHARPNESS and images.image_quality(m) > 0.7


def test_the_blurred_photo_measures_low_sharpness_and_contrast():
    blurred = _measure(SYSTEMS["loose-cannon"] / "images" / "100001_battery_site.jpg")
    crisp = _measure(SYSTEMS["careful-scholar"] / "images" / "100001_kestrel_ridge.jpg")
    assert blurred.sharpness < crisp.sharpness / 5 and blurred.sharpness < 0.25 * images.FULL_SHARPNESS
    assert blurred.contrast < crisp.contrast / 3
    assert images.image_quality(crisp) - images.image_quality(blurred) > 0.3


# (system, chart, the sandbox page its caption cites)
CHARTS = [("careful-scholar", "100001_storage_growth.png", "100001", "2024-storage"),
          ("careful-scholar", "100001_curtailment.png", "100001", "2024-annual-market-report"),
          ("careful-scholar", "100002_ridership.png", "100002", "two-year-review"),
          ("careful-scholar", "100002_journey_time.png", "100002", "two-year-review"),
          ("careful-scholar", "q7_annual_shipments.png", "Q7", "2024-annual-results"),
          ("steady-analyst", "100002_ridership.png", "100002", "two-year-review")]


@pytest.mark.parametrize("system, chart, task, page", CHARTS)
def test_correct_charts_show_only_numbers_their_cited_source_states(system, chart, task, page):
    assert numbers_in(_shows(SYSTEMS[system] / "images" / chart)) <= numbers_in(_page(task, page))


def test_loose_cannons_battery_chart_contradicts_its_source():
    shown = numbers_in(_shows(SYSTEMS["loose-cannon"] / "images" / "100001_storage_growth.png"))
    source = numbers_in(_page("100001", "2024-storage"))
    assert shown - source == {"8.6"} and "6.8" in source and "6.8" not in shown
    assert "8.6 gigawatts" in (SYSTEMS["loose-cannon"] / "100001.md").read_text()  # its caption says so too


def test_q7_visual_ground_truth_describes_its_attachment_chart():
    task = _task("Q7")
    (attachment,) = task["attachments"]
    shown = _shows(DEMO / attachment)
    assert task["visual_ground_truth_version"]
    quarterly = {"1500", "1700", "1900", "2100", "2500", "2800", "3000", "3600", "3800", "4200", "4800", "5600"}
    assert quarterly <= numbers_in(shown) and quarterly <= numbers_in(task["visual_ground_truth"])
    assert {"7200", "11900", "18400"} <= numbers_in(task["visual_ground_truth"])  # the annual totals it adds up to
    assert numbers_in(_page("Q7", "2024-annual-results")) >= {"3800", "4200", "4800", "5600", "3600"}


def test_task_37s_chart_agrees_with_the_web_on_one_figure_and_not_on_another():
    task = _task("37")
    assert "attachments/37-plant-capacities.png" in task["attachments"] and task["modality"] == "multimodal"
    shown, web = _shows(DEMO / "attachments" / "37-plant-capacities.png"), _page("37", "annual-report-2023")
    assert "540,000" in shown and "540,000 cubic metres per day" in web
    assert "Punta Velas is the largest plant, with a capacity of 220 thousand" in shown
    assert "Punta Velas, has a capacity of 250,000" in web
