"""report_images: a report's figures with their images found (report folder, images/, charts/, task
attachments, file:// inside those folders, data: URLs, remote through the safe fetcher), checked,
measured, stored once by hash, and handed to report judgments as FigureImage."""
import io
import random
import sys
from pathlib import Path

import polars as pl
import pytest
from PIL import Image, ImageDraw, ImageFilter

sys.path.insert(0, str(Path(__file__).parent))

from loopback_web import page  # noqa: E402

from dreval_assets.core.figure_text import context_around, figure_kind, figure_span, pseudo_visuals  # noqa: E402
from dreval_assets.core.images import content_hash, for_judge  # noqa: E402
from dreval_assets.fetch.images import RemoteImages  # noqa: E402
from dreval_assets.fetch.live import LiveFetchConfig, LiveFetcher  # noqa: E402
from dreval_assets.fetch.safety import AllowList  # noqa: E402
from dreval_assets.stages.frames import frame  # noqa: E402
from dreval_assets.stages.parse import parse_reports  # noqa: E402
from dreval_assets.stages.report_images import (  # noqa: E402
    ImageRoots, changed_local_images, figure_images, find_report_images, image_roots, judgment_figures,
    locate_local)
from dreval_assets.store.db import Store  # noqa: E402
from dreval_assets.store.images import RemoteImageStore, image_blobs  # noqa: E402


def chart_png(values=(3, 5, 8, 6), size=(320, 200), blur=0.0) -> bytes:
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    draw.line([(30, 10), (30, 180), (310, 180)], fill="black", width=2)
    for i, v in enumerate(values):
        draw.rectangle([50 + i * 60, 180 - v * 18, 90 + i * 60, 180], fill=(30, 90, 200))
    if blur:
        image = image.filter(ImageFilter.GaussianBlur(blur))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def photo_png(seed=7, size=(240, 160)) -> bytes:
    rng, small = random.Random(seed), (240, 160)
    image = Image.new("RGB", small)
    image.putdata([(rng.randrange(256), (x * 3) % 256, (y * 5) % 256)
                   for y in range(small[1]) for x in range(small[0])])
    image = image.resize(size) if size != small else image
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


CHART, PHOTO = chart_png(), photo_png()

REPORT = """# Harbour storage

## Growth

Installed storage grew from 0.9 GW in 2020 to 6.8 GW in 2024 [1].

<figure><img src="images/growth.png"><figcaption>Figure 1: Bar chart of storage by year [1]</figcaption></figure>

The new pier at Saltcote opened in the autumn.

![Photo of the Saltcote pier at dusk](pier.png)

![Figure 3: the growth chart again](images/growth_copy.png)

![Figure 4: ferry timetable](images/missing.png)

![Figure 5: Capacity trend](charts/broken.png)

![Figure 6: escape](../../secret.png)

![Figure 7: System architecture diagram](file://{report_dir}/images/arch.png)

Figure 8: Storage by year

```
2020 | ##
2022 | ######
2024 | ##############
```

```mermaid
graph TD; A-->B
```

![Figure 9: an attached chart](lumen.png)

## References
[1] Grid note https://grid.example/note
"""


@pytest.fixture
def report_home(tmp_path):
    folder = tmp_path / "systems" / "careful"
    (folder / "images").mkdir(parents=True)
    (folder / "charts").mkdir()
    (folder / "images" / "growth.png").write_bytes(CHART)
    (folder / "images" / "growth_copy.png").write_bytes(CHART)
    (folder / "pier.png").write_bytes(PHOTO)
    (folder / "charts" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n this is not a png")
    (folder / "images" / "arch.png").write_bytes(chart_png((1, 2, 1, 2)))
    (tmp_path / "secret.png").write_bytes(PHOTO)
    attachments = tmp_path / "release" / "images"
    attachments.mkdir(parents=True)
    (attachments / "lumen.png").write_bytes(chart_png((9, 7, 5, 3)))
    (folder / "r1.md").write_text(REPORT.replace("{report_dir}", str(folder)))
    return tmp_path, folder, attachments


def reports_frame(folder: Path, text: str | None = None, system="careful", task="tvir.t1"):
    text = text if text is not None else (folder / "r1.md").read_text()
    return frame("reports", [{"system": system, "task": task, "status": "ok", "text": text, "n_chars": len(text),
                              "content_hash": content_hash(text.encode()), "source_path": str(folder / "r1.md"),
                              "na_reason": None, "detail": ""}])


def run_stage(folder, attachments=None, remote=None, text=None):
    reports = reports_frame(folder, text)
    parsed = parse_reports(reports)
    roots = {("careful", "tvir.t1"): ImageRoots(folder, (attachments,) if attachments else (),
                                                 {"lumen.png": attachments / "lumen.png"} if attachments else {})}
    return find_report_images(reports, parsed["parsed_reports"], roots, remote or RemoteImages(),
                              parsed["report_claims"])


def by_figure(frames):
    return {r["figure"]: r for r in frames["report_images"].iter_rows(named=True)}


def test_each_figure_is_found_checked_and_measured_with_its_reason(report_home):
    _, folder, attachments = report_home
    frames = run_stage(folder, attachments)
    rows = by_figure(frames)
    good = rows[0]
    assert good["status"] == "ok" and good["location"] == "report folder: images/growth.png"
    assert (good["width"], good["height"]) == (320, 200) and good["sharpness"] > 0 and len(good["phash"]) == 16
    assert good["image_hash"] == content_hash(CHART) and good["kind"] == "chart" and good["citation_indices"] == [1]
    assert rows[1]["status"] == "ok" and rows[1]["kind"] == "photo" and rows[1]["location"] == "report folder: pier.png"
    assert rows[2]["status"] == "ok" and rows[2]["duplicate_of"] == 0  # the same chart under another name
    assert rows[0]["duplicate_of"] is None and rows[1]["duplicate_of"] is None
    assert rows[3]["status"] == "invalid" and rows[3]["invalid_reason"].startswith("missing file: images/missing.png")
    assert rows[3]["na_reason"] == "model_failure"
    assert rows[4]["invalid_reason"].startswith("unreadable image: not a readable image")
    assert rows[4]["kind"] == "chart" and rows[4]["image_hash"] is not None  # charts/ folder and caption cue
    assert rows[5]["invalid_reason"] == "refused: ../../secret.png is outside the report's folders"
    assert rows[6]["status"] == "ok" and rows[6]["kind"] == "diagram"  # file:// inside the report's folder
    assert rows[7]["status"] == "ok" and rows[7]["location"] == "attachments: lumen.png"  # by name


def test_pseudo_visuals_follow_the_parsers_figures_as_invalid(report_home):
    _, folder, attachments = report_home
    rows = by_figure(run_stage(folder, attachments))
    ascii_art, mermaid = rows[8], rows[9]
    assert ascii_art["status"] == mermaid["status"] == "invalid"
    assert ascii_art["invalid_reason"] == "pseudo-visual: ASCII art in a code block, not an image"
    assert ascii_art["caption"] == "Figure 8: Storage by year" and ascii_art["kind"] == "diagram"
    assert mermaid["invalid_reason"].startswith("pseudo-visual: Mermaid source") and mermaid["kind"] == "diagram"
    assert "<figure>" in ascii_art["context"] and "2024 | ####" not in ascii_art["context"]


def test_a_figure_without_an_image_is_invalid():
    text = "## A\n\nSome text.\n\n<figure><figcaption>Figure 1: Sales table by region</figcaption></figure>\n"
    rows = by_figure(run_stage(Path("/nonexistent-folder"), text=text))
    assert rows[0]["status"] == "invalid" and rows[0]["invalid_reason"] == "figure has no image (no src)"
    assert rows[0]["kind"] == "table"


def test_context_places_the_figure_in_the_text(report_home):
    _, folder, attachments = report_home
    rows = by_figure(run_stage(folder, attachments))
    context = rows[0]["context"]
    assert "6.8 GW in 2024 [1].\n\n<figure>\n\nThe new pier" in context
    assert "figcaption" not in context and len(context) <= 2 * 600 + len("<figure>")
    assert "<figure>" in rows[2]["context"] and "Figure 3" not in rows[2]["context"]


def test_images_are_stored_once_by_hash(report_home):
    _, folder, attachments = report_home
    blobs = run_stage(folder, attachments)["image_blobs"]
    hashes = blobs.get_column("image_hash").to_list()
    assert len(hashes) == len(set(hashes)) == 4  # growth (twice in the report, once stored), pier, arch, lumen
    assert content_hash(CHART) in hashes and content_hash(b"\x89PNG\r\n\x1a\n this is not a png") not in hashes


def test_figure_images_carry_the_bytes_a_judge_is_sent(report_home):
    _, folder, attachments = report_home
    frames = run_stage(folder, attachments)
    blobs = {r["image_hash"]: (r["mime"], r["data"]) for r in frames["image_blobs"].iter_rows(named=True)}
    figures = figure_images(frames["report_images"], blobs)[("careful", "tvir.t1")]
    assert [f.figure for f in figures] == list(range(10))
    first = figures[0]
    assert first.image.sha256 == content_hash(CHART) and first.image.name == "images/growth.png"
    assert (first.image.data, first.image.mime) == for_judge(CHART) and first.measure.width == 320
    assert figures[3].image is None and figures[3].status == "invalid" and figures[3].measure is None
    assert figures[2].duplicate_of == 0


def test_a_large_image_is_downscaled_for_the_judge(tmp_path):
    (tmp_path / "big.png").write_bytes(photo_png(size=(1600, 900)))
    frames = run_stage(tmp_path, text="## A\n\n![Figure 1: the site](big.png)\n")
    blobs = {r["image_hash"]: (r["mime"], r["data"]) for r in frames["image_blobs"].iter_rows(named=True)}
    [figure] = figure_images(frames["report_images"], blobs)[("careful", "tvir.t1")]
    assert figure.measure.width == 1600 and len(figure.image.data) < len(blobs[figure.image.sha256][1])
    assert Image.open(io.BytesIO(figure.image.data)).size == (1024, 576)


def test_local_paths_never_leave_the_allowed_folders(tmp_path):
    inside = tmp_path / "report"
    inside.mkdir()
    (tmp_path / "outside.png").write_bytes(PHOTO)
    roots = ImageRoots(inside)
    for src in ("../outside.png", f"file://{tmp_path}/outside.png", str(tmp_path / "outside.png")):
        found = locate_local(src, roots)
        assert found.data is None and found.reason.startswith("refused:"), src
    assert locate_local("x.png", ImageRoots()).reason == "missing file: x.png (the report has no folder to look in)"


# -- remote images --------------------------------------------------------------------------------

def remote_images(web, store=None, **overrides):
    config = dict(politeness_s=0.0, connect_timeout_s=2, read_timeout_s=1, total_timeout_s=3, backoff_base_s=0.01)
    config.update(overrides)
    live = LiveFetcher(LiveFetchConfig(**config), allow=AllowList(frozenset({web.address})))
    return RemoteImages(RemoteImageStore(store) if store else None, live)


def test_remote_images_come_through_the_safe_fetcher_once_per_url(web, tmp_path):
    store = Store(tmp_path / "db.duckdb")
    store.ensure_schema()
    web.route("/chart.png", page(CHART, "image/png")).route("/page.png", page("<html>hi</html>"))
    text = (f"## A\n\n![Figure 1: chart]({web.url('/chart.png')})\n\n![Figure 2: not an image]({web.url('/page.png')})"
            f"\n\n![Figure 3: gone]({web.url('/gone.png')})\n\n![Figure 4: the chart again]({web.url('/chart.png')})\n")
    rows = by_figure(run_stage(tmp_path, text=text, remote=remote_images(web, store)))
    assert rows[0]["status"] == "ok" and rows[0]["image_hash"] == content_hash(CHART)
    assert rows[0]["location"] == f"live: {web.url('/chart.png')}"
    assert (rows[1]["invalid_reason"], rows[1]["na_reason"]) == ("not an image content type: text/html", "model_failure")
    assert (rows[2]["invalid_reason"], rows[2]["na_reason"]) == ("remote image unavailable: HTTP 404",
                                                                 "data_accessibility")
    assert rows[3]["duplicate_of"] == 0 and web.hits["/chart.png"] == 1
    # another system, another run: the stored outcome, no second request, offline too
    again = by_figure(run_stage(tmp_path, text=text, remote=RemoteImages(RemoteImageStore(store))))
    assert again[0]["status"] == "ok" and again[0]["location"].startswith("cache: ") and web.total_hits == 3
    assert again[1]["invalid_reason"] == "not an image content type: text/html"
    assert image_blobs(store, [content_hash(CHART)])[content_hash(CHART)] == ("image/png", CHART)


def test_a_remote_image_over_the_cap_is_refused(web, tmp_path):
    web.route("/big.png", page(photo_png(size=(400, 400)), "image/png"))
    rows = by_figure(run_stage(tmp_path, text=f"![Figure 1: big]({web.url('/big.png')})\n",
                               remote=remote_images(web, max_bytes=2_000)))
    assert rows[0]["status"] == "invalid" and rows[0]["invalid_reason"].startswith("image over the cap")


def test_remote_images_offline_are_not_fetched(tmp_path):
    rows = by_figure(run_stage(tmp_path, text="![Figure 1: chart](https://charts.example/a.png)\n"))
    assert rows[0]["invalid_reason"] == "remote image not fetched: live fetching is off (DREVAL_FETCH=sandbox)"
    assert rows[0]["na_reason"] == "data_accessibility"


def test_a_private_address_is_refused_for_images(tmp_path):
    remote = RemoteImages(live=LiveFetcher(LiveFetchConfig(total_timeout_s=2)))
    rows = by_figure(run_stage(tmp_path, text="![Figure 1: chart](http://127.0.0.1:9/a.png)\n", remote=remote))
    assert rows[0]["status"] == "invalid" and "refused" in rows[0]["invalid_reason"]


# -- rule cues, spans, pseudo-visuals ------------------------------------------------------------

@pytest.mark.parametrize("src, caption, kind", [
    ("charts/a.png", "Harbour view", "chart"), ("a.png", "Figure 2: Line graph of ridership", "chart"),
    ("a.png", "图1：2020-2024年装机容量柱状图", "chart"), ("a.png", "Table 3: results by region", "table"),
    ("a.png", "图2：系统架构", "diagram"), ("a.png", "Flowchart of the review process", "diagram"),
    ("a.png", "The Saltcote pier at dusk", "photo")])
def test_kind_by_rule_cues(src, caption, kind):
    assert figure_kind(src, caption) == kind


def test_code_that_is_not_a_drawing_is_not_a_pseudo_visual():
    text = ("```python\nfor x in range(3):\n    print(x)\n    y = x + 1\n```\n\n"
            "```\n+---+---+\n| a | b |\n+---+---+\n```\n")
    assert [p.what for p in pseudo_visuals(text)] == ["ASCII art"]


def test_spans_find_repeated_images_in_order():
    text = "A.\n\n![one](a.png)\n\nB.\n\n![two](a.png)\n\nC."
    first = figure_span(text, "a.png", "one")
    second = figure_span(text, "a.png", "two", first[1])
    assert context_around(text, first, 5) == "A.\n\n<figure>\n\nB." and second[0] > first[1]


# -- the planner ---------------------------------------------------------------------------------

def test_a_changed_appeared_or_removed_image_file_is_noticed(report_home):
    release, folder, attachments = report_home
    frames = run_stage(folder, attachments)
    stored = (frames["report_images"].filter(pl.col("src") != "")
              .with_columns(source_path=pl.lit(str(folder / "r1.md")), attachments=pl.lit(["images/lumen.png"]),
                            source=pl.lit(f"import:tvir:{release / 'release'}")))
    assert changed_local_images(stored) == set()
    (folder / "images" / "missing.png").write_bytes(PHOTO)
    assert changed_local_images(stored) == {("careful", "tvir.t1")}
    (folder / "images" / "missing.png").unlink()
    (attachments / "lumen.png").write_bytes(PHOTO)
    assert changed_local_images(stored) == {("careful", "tvir.t1")}


# -- end to end: a one-task home with two folder systems, offline ----------------------------------

DEMO = Path(__file__).resolve().parents[1] / "dreval_assets" / "demo"
E2E_REPORT = """# Battery storage in the Meridian Interconnection

## Growth

Installed grid-scale battery power grew from 0.9 GW at the end of 2020 to 6.8 GW at the end of 2024 [1].

![Figure 1: Bar chart of installed battery power by year](images/growth.png)

![Figure 2: The Kestrel Flats battery site](images/site.png)

![Figure 3: The growth chart again](images/growth_again.png)

![Figure 4: Evening peak prices](charts/prices.png)

Figure 5: Storage by year

```
2020 | #
2024 | #######
2026 | ##########
```

## References
[1] Meridian grid note https://grid.example/meridian
"""


def test_report_images_in_a_home_stored_once_rerun_without_duplicates_and_a_changed_image_due(tmp_path):
    import json

    from dreval_assets.cli import main
    from dreval_assets.operations.planner import Selection, plan

    release, home = tmp_path / "release", tmp_path / "home"
    release.mkdir()
    (release / "tasks.jsonl").write_text(next(line for line in (DEMO / "tasks.jsonl").read_text().splitlines()
                                              if json.loads(line)["id"] == "100001") + "\n")
    assert main(["--home", str(home), "import", "generic", str(release)]) == 0
    for system, site in (("alpha", PHOTO), ("beta", photo_png(seed=99))):
        folder = tmp_path / system
        (folder / "images").mkdir(parents=True)
        (folder / "images" / "growth.png").write_bytes(CHART)
        (folder / "images" / "growth_again.png").write_bytes(CHART)
        (folder / "images" / "site.png").write_bytes(site)
        (folder / "100001.md").write_text(E2E_REPORT)
        assert main(["--home", str(home), "add-system", system, "--reports", str(folder)]) == 0
    assert main(["--home", str(home), "run"]) == 0
    store = Store(home / "dreval.duckdb")

    def rows():
        return store.query("SELECT system, figure, status, kind, duplicate_of, invalid_reason FROM report_images "
                           "ORDER BY system, figure").rows()

    first = rows()
    alpha = [r for r in first if r[0] == "alpha"]
    assert [(f, status, kind, dup) for _, f, status, kind, dup, _ in alpha] == [
        (0, "ok", "chart", None), (1, "ok", "photo", None), (2, "ok", "chart", 0), (3, "invalid", "chart", None),
        (4, "invalid", "diagram", None)]
    assert alpha[3][5].startswith("missing file: charts/prices.png") and alpha[4][5].startswith("pseudo-visual")
    # the chart both systems show is stored once; each photo once
    assert store.query("SELECT count(*), count(DISTINCT image_hash) FROM image_blobs").row(0) == (3, 3)
    # what the report-judgment stage is given
    figures = judgment_figures(store, store.query("SELECT * FROM report_images"))[("alpha", "tvir.100001")]
    assert figures[0].image.sha256 == content_hash(CHART) and figures[0].image.data == for_judge(CHART)[0]
    assert figures[3].image is None and figures[3].invalid_bucket == "model_failure"
    assert plan(store, Selection()).per_system == {}
    # writing the partitions again (what a forced re-run does) replaces rows, and adds no blob
    keys = [("alpha", "tvir.100001"), ("beta", "tvir.100001")]
    reports = store.query("SELECT * FROM reports ORDER BY system")
    parsed = store.query("SELECT * FROM parsed_reports ORDER BY system")
    tasks = store.query("SELECT * FROM tasks")
    frames = find_report_images(reports, parsed, image_roots(store, reports, tasks), RemoteImages())
    store.replace_partitions("report_images", keys, frames, "again")
    assert rows() == first and store.query("SELECT count(*) FROM image_blobs").item() == 3
    (tmp_path / "beta" / "images" / "site.png").write_bytes(photo_png(seed=5))
    assert plan(store, Selection()).per_system == {"beta": ["tvir.100001"]}


def test_a_paragraph_citing_an_image_url_makes_a_cited_item_mmdr_judges_and_tvir_leaves_out(web, tmp_path):
    """Reference [2] is a chart's URL, cited in a paragraph: a `cited` row with the paragraph as its
    context (MMDR MOSAIC judges it as a visual item); TVIR's figures do not include it; a listed image
    no paragraph cites is not an item."""
    from dreval_assets.benchmarks.judging import JudgmentContext
    from dreval_assets.benchmarks.mmdr.mosaic import judge_visual
    from dreval_assets.benchmarks.tvir.visual_judgments import report_plans
    from dreval_assets.stages.report_images import figure_images
    from recording_judge import RecordingJudge
    from task_frames import tasks_table

    web.route("/q7/chart.png", page(CHART, "image/png")).route("/unused.png", page(CHART, "image/png"))
    text = ("## Shipments\n\nLumenfield shipped 5,600 robots in the fourth quarter of 2024, as the quarterly "
            "chart shows [2]. Prices fell [1].\n\n## References\n[1] Prices https://www.lumen.example/prices\n"
            f"[2] Quarterly shipments chart {web.url('/q7/chart.png')}\n[3] Unused {web.url('/unused.png')}\n")
    frames = run_stage(tmp_path, text=text, remote=remote_images(web))
    rows = frames["report_images"]
    cited = rows.filter(pl.col("origin") == "cited")
    assert cited.height == 1 and cited["src"].item() == web.url("/q7/chart.png") and cited["status"].item() == "ok"
    assert "5,600 robots" in cited["context"].item() and cited["citation_indices"].item().to_list() == [2]
    assert "/unused.png" not in web.hits
    blobs = {content_hash(CHART): ("image/png", CHART)}
    figures = figure_images(rows, blobs)
    key = ("careful", "tvir.t1")
    tasks = tasks_table(key="tvir.t1", benchmark="mmdr", modality="multimodal", query="Shipments?")
    reports = reports_frame(tmp_path, text)
    judge = RecordingJudge()
    ctx = JudgmentContext([key], reports, tasks, frame("task_rubrics", []), judge, figures=figures)
    judged = judge_visual(ctx)
    assert judged.filter(pl.col("kind") == "mosaic").height > 0  # the cited chart is an item
    tvir_ctx = JudgmentContext([key], reports, tasks_table(key="tvir.t1", benchmark="tvir"),
                               frame("task_rubrics", []), judge, figures=figures)
    [plan] = report_plans(tvir_ctx)
    assert plan.figures == []  # the report has no figure of its own
