"""TVIR visual assessment: the formulas by hand (FQ with duplicates, CQ, the CSC table), sanitising
(invalid figures do not count; all invalid counts 0), the text form MC reads, the offline judge's
measured values and honest N/A, the loopback vision judge end to end (caption revision carried into
the later judgments, a chart contradicting its source), Chinese captions, and the cited pages."""
from __future__ import annotations

import io

import polars as pl
import pytest
from PIL import Image, ImageDraw, ImageFilter

from dreval_assets.benchmarks.cited_sources import CitedSources
from dreval_assets.benchmarks.evidence import ReportEvidence
from dreval_assets.benchmarks.judging import FigureImage, JudgmentContext
from dreval_assets.benchmarks.suites import SUITES
from dreval_assets.benchmarks.tvir.formulas import (chart_quality, csc_score, dimension_mean, figure_mean,
                                                    figure_quality, image_quality)
from dreval_assets.benchmarks.tvir.judgments import tvir_judgments
from dreval_assets.benchmarks.tvir.visual_judgments import tvir_kind
from dreval_assets.benchmarks.tvir.visual_scores import visual_parts
from dreval_assets.benchmarks.tvir.visual_text import composition_facts, corrected_report, offline_composition
from dreval_assets.core import images
from dreval_assets.judges.base import ImageInput
from dreval_assets.judges.openai_config import OpenAIJudgeConfig
from dreval_assets.judges.openai_judge import OpenAIJudge
from dreval_assets.judges.prompts import render
from dreval_assets.stages.frames import SCHEMAS, frame
from recording_judge import RecordingJudge

SOURCE_URL = "https://grid.example/storage"
SOURCE_TEXT = ("Meridian storage statistics. Installed battery power reached 6.8 GW at the end of 2024, up from "
               "0.9 GW in 2020. Most of it sits in the southern zone.")
REPORT = """# Storage in the Meridian grid

## Growth
Battery power grew fast, as the chart below shows.

<figure><img src="images/growth.png"><figcaption>Installed battery power grew from 0.9 GW in 2020 to 8.6 GW
in 2024 [1]</figcaption></figure>

## Sites
![Battery enclosures at Kestrel Ridge](images/site.jpg)

![Battery enclosures at Kestrel Ridge again](images/site_again.jpg)

![Planned sites](images/missing.png)

## Prices
![](images/prices.png)

## References
[1] Meridian storage statistics. https://grid.example/storage
"""
GROWTH_CAPTION = "Installed battery power grew from 0.9 GW in 2020 to 8.6 GW in 2024 [1]"


def chart_png(width=800, height=600, bars=(3, 5, 8, 13)) -> bytes:
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    draw.line((60, height - 60, width - 40, height - 60), fill="black", width=3)
    draw.line((60, 40, 60, height - 60), fill="black", width=3)
    for i, value in enumerate(bars):
        left = 100 + i * 150
        draw.rectangle((left, height - 60 - value * 30, left + 90, height - 61), fill=(30, 90, 200))
    return _png(image)


def photo_png(seed_blur=0, size=(640, 480)) -> bytes:
    image = Image.merge("RGB", [Image.effect_noise(size, 70 + 10 * k).filter(ImageFilter.GaussianBlur(1))
                                for k in range(3)])
    if seed_blur:
        image = image.filter(ImageFilter.GaussianBlur(seed_blur))
    return _png(image)


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def figure(index, kind, caption, src, *, section="", context="", cites=(), data=None, duplicate_of=None,
           invalid="", bucket="model_failure", system="s", task="t") -> FigureImage:
    if invalid or data is None:
        return FigureImage(system, task, index, src, caption, section, tuple(cites), context, kind, "invalid",
                           invalid or "missing file", invalid_bucket=bucket)
    m = images.measure(data)
    sent, mime = images.for_judge(data)
    return FigureImage(system, task, index, src, caption, section, tuple(cites), context, kind, "ok", "", m,
                       duplicate_of, ImageInput(src, images.content_hash(sent), mime, sent))


def report_figures(system="s", task="t"):
    photo = photo_png()
    return [
        figure(0, "chart", GROWTH_CAPTION, "images/growth.png", section="Growth", cites=(1,), data=chart_png(),
               context=f"Battery power grew fast, as the chart below shows. <figure> {GROWTH_CAPTION}",
               system=system, task=task),
        figure(1, "photo", "Battery enclosures at Kestrel Ridge", "images/site.jpg", section="Sites", data=photo,
               context="## Sites <figure> The enclosures stand on the old coal site.", system=system, task=task),
        figure(2, "photo", "Battery enclosures at Kestrel Ridge again", "images/site_again.jpg", section="Sites",
               data=photo, duplicate_of=1, context="<figure> A second view of the enclosures.", system=system,
               task=task),
        figure(3, "chart", "Planned sites", "images/missing.png", section="Sites", invalid="missing file: "
               "images/missing.png", system=system, task=task),
        figure(4, "chart", "", "images/prices.png", section="Prices", data=chart_png(bars=(9, 4, 2)), context="",
               system=system, task=task),
    ]


def row(table, **values):
    return {**{k: None for k in SCHEMAS[table]}, **values}


def context(judge, figures, *, report=REPORT, system="s", task="t", query="How did storage grow?", runs="1"):
    parsed = frame("parsed_reports", [row("parsed_reports", system=system, task=task,
                                          references='[{"index": 1, "url": "%s", "title": "stats"}]' % SOURCE_URL)])
    fetched = frame("fetched_references", [row("fetched_references", system=system, task=task, url=SOURCE_URL,
                                               status="ok", page_hash="h1", title="Meridian storage statistics")])
    asked = []

    def load(hashes):
        asked.append(list(hashes))
        return {"h1": SOURCE_TEXT}

    ctx = JudgmentContext([(system, task)], frame("reports", [row("reports", system=system, task=task, status="ok",
                                                                  text=report)]),
                          frame("tasks", [row("tasks", task=task, benchmark="tvir", query=query)]),
                          frame("task_rubrics", []), judge, policies={"tvir.judge_runs": runs},
                          figures={(system, task): figures}, cited_sources=CitedSources(parsed, fetched, load))
    return ctx, asked


VISUAL_TEMPLATES = {"tvir/chart_checks", "tvir/caption_quality", "tvir/composition", "tvir/figure_integration",
                    "tvir/chart_source"}


def visual_assessment(ctx) -> pl.DataFrame:
    """TVIR's report judgments, the visual rows only (the textual ones are tested in test_tvir_protocol)."""
    rows = tvir_judgments(ctx)
    return rows.filter(pl.col("item_id").str.starts_with("tvir_visual."))


def visual_requests(judge) -> list:
    return [r for r in judge.requests if r.template in VISUAL_TEMPLATES]


def evidence(rows: pl.DataFrame, n_figures=5, judge="heuristic-v1") -> ReportEvidence:
    return ReportEvidence("s", "t", "tvir", judge, figures=[{"caption": ""}] * n_figures,
                          rubric_scores=dict(zip(rows["item_id"], rows["score"])),
                          judgment_failures={r["item_id"]: (r["na_reason"], r["reason"] or "")
                                             for r in rows.iter_rows(named=True) if r["na_reason"]})


def metrics(rows, **kw) -> dict:
    return {v.metric: v for v in visual_parts(evidence(rows, **kw))}


def by_item(rows: pl.DataFrame) -> dict:
    return {r["item_id"].removeprefix("tvir_visual."): r for r in rows.iter_rows(named=True)}


# --- formulas by hand ----------------------------------------------------------------------------

def test_figure_quality_with_duplicates_by_hand():
    # IQ = mean Q x (1 - min(0.5, 0.8 x duplicate ratio))
    assert image_quality([0.8, 0.6, 0.7, 0.9], 1) == pytest.approx(0.75 * 0.8)  # p_dup 0.2
    assert image_quality([0.8, 0.6, 0.7, 0.9], 3) == pytest.approx(0.75 * 0.5)  # 0.6 capped at 0.5
    assert image_quality([0.5], 0) == 0.5
    assert chart_quality([[True] * 10, [True] * 7 + [False] * 3]) == pytest.approx(0.85)
    assert figure_quality(2, 0.6, 1, 0.85) == pytest.approx((1.2 + 0.85) / 3)  # count-weighted
    assert figure_quality(2, 0.6, 0, None) == 0.6 and figure_quality(0, None, 3, 0.4) == pytest.approx(0.4)
    for bad in (lambda: image_quality([], 0), lambda: image_quality([0.5], 2), lambda: figure_quality(0, None, 0, None),
                lambda: figure_quality(1, None, 0, None), lambda: chart_quality([[]])):
        with pytest.raises(ValueError):
            bad()


def test_csc_table_and_per_figure_means():
    assert [csc_score(n) for n in (0, 1, 2, 5, 8, 9, 40)] == pytest.approx([1, 0.9, 0.8, 0.5, 0.2, 0.1, 0.1])
    assert figure_mean([csc_score(0), csc_score(3), 0.0]) == pytest.approx(1.7 / 3)
    assert dimension_mean([7, 8, 6]) == pytest.approx(0.7)


def test_csc_from_rows_unsourced_unreadable_and_nothing_judged():
    def rows(*items):
        return frame("report_judgments", [row("report_judgments", system="s", task="t", kind="x", item="x", judge="j",
                                              template="", template_hash="", item_id=f"tvir_visual.{i}", score=s,
                                              na_reason=na, reason=why) for i, s, na, why in items])
    flags = [(f"figure.f0{n}", 1.0, None, "") for n in range(1, 5)]
    got = metrics(rows(*flags, ("csc.f01.contradictions", 0.0, None, ""), ("csc.f02.contradictions", 3.0, None, ""),
                       ("csc.f03.unsourced", 0.0, None, "no source"),
                       ("csc.f04.unreadable", None, "data_accessibility", "404")), n_figures=4)["csc"]
    assert got.value == pytest.approx(100 * (1 + 0.7 + 0 + 0) / 4) and got.n_items == 4
    assert "f03" in got.detail and "unreadable (0): f04" in got.detail
    only_unreadable = metrics(rows(*flags[:1], ("csc.f01.unreadable", None, "data_accessibility", "404")),
                              n_figures=1)["csc"]
    assert only_unreadable.value is None and only_unreadable.na_reason == "data_accessibility"
    judge_failed = metrics(rows(*flags[:2], ("csc.f01.unreadable", None, "data_accessibility", "404"),
                                ("csc.f02.contradictions", None, "model_failure", "cannot see")), n_figures=2)["csc"]
    assert judge_failed.value is None and judge_failed.na_reason == "model_failure"  # the chart's own reason
    no_chart = metrics(rows(*flags[:2]), n_figures=2)["csc"]
    assert no_chart.value == 0.0 and "no chart" in no_chart.detail


# --- sanitising and the text form ------------------------------------------------------------------

def test_corrected_report_blanks_invalid_figures_and_shows_revised_captions():
    figures = report_figures()
    text = corrected_report(REPORT, figures, {1: "Revised site caption"})
    assert "[Figure 1 (chart): " + GROWTH_CAPTION + "]" in text
    assert "[Figure 2 (photo): Revised site caption]" in text
    assert "[Figure 3 (photo, repeats Figure 2): Battery enclosures at Kestrel Ridge again]" in text
    assert "[Figure 4 (chart): no caption]" in text
    assert "missing.png" not in text and "Planned sites" not in text  # the invalid figure is gone
    assert "<img" not in text and "![" not in text


def test_offline_composition_scale_by_hand():
    facts = composition_facts(REPORT, report_figures())
    assert facts == {"valid_figures": 4, "invalid_figures": 1, "sections": 5, "sections_with_figures": 3,
                     "captioned": 3, "repeats": 1, "kinds": ["chart", "photo"], "web_images": 0,
                     "words": facts["words"]}
    scores = offline_composition(facts)
    # layout: 4/5 = 0.8 figures per section (quantity 1), spread 3/4, captioned 3/4, one of four repeats an
    # earlier image: 1 + 9 x 0.875 x 0.75 = 6.9 -> 7 (8.9 -> 9 without the repeat)
    # variety: two kinds 0.5 x 0.7, no web image: 1 + 9 x 0.35 = 4.15 -> 4
    assert scores["layout"][0] == 7 and scores["variety"][0] == 4
    assert offline_composition({**facts, "repeats": 0})["layout"][0] == 9
    assert offline_composition({**facts, "valid_figures": 0})["layout"][0] == 1


def test_all_invalid_figures_count_zero_and_so_does_a_report_without_figures():
    judge = RecordingJudge()
    invalid = [figure(0, "chart", "A", "a.png", invalid="unreadable: not an image"),
               figure(1, "diagram", "B", "b.txt", invalid="pseudo-visual: ASCII art")]
    ctx, _ = context(judge, invalid)
    rows = visual_assessment(ctx)
    assert visual_requests(judge) == []  # nothing is judged
    assert rows["score"].to_list() == [0.0, 0.0] and "pseudo-visual" in rows["reason"][1]
    got = metrics(rows, n_figures=2)
    assert all(v.value == 0.0 and "no valid figure" in v.detail for v in got.values())
    text_only = metrics(frame("report_judgments", []), n_figures=0)
    assert all(v.value == 0.0 and v.na_reason is None and "no figure in the report" in v.detail  # App. B
               for v in text_only.values())
    ours = [*invalid, figure(2, "photo", "C", "https://img.example/c.jpg", invalid="HTTP 503",
                                 bucket="data_accessibility")]
    ctx, _ = context(RecordingJudge(), ours)
    rows = visual_assessment(ctx)
    assert rows["na_reason"].to_list() == [None, None, "data_accessibility"]
    got = metrics(rows, n_figures=3)  # not all invalid by the report's fault: N/A, never a 0
    assert all(v.value is None and v.na_reason == "data_accessibility" and "HTTP 503" in v.detail for v in got.values())
    not_assessed = metrics(frame("report_judgments", []), n_figures=3)
    assert all(v.value is None and v.na_reason == "pipeline_failure" for v in not_assessed.values())


# --- the offline judge: measured, or N/A model_failure -----------------------------------------------

def test_offline_judge_measures_images_and_says_it_cannot_see_the_rest():
    judge = RecordingJudge()
    figures = report_figures()
    ctx, asked = context(judge, figures)
    rows = visual_assessment(ctx)
    items = by_item(rows)
    assert [items[f"figure.f0{n}"]["score"] for n in range(1, 6)] == [1, 1, 1, 0, 1]
    assert "missing file" in items["figure.f04"]["reason"]
    q2, q3 = (images.image_quality(figures[i].measure) for i in (1, 2))
    assert items["fq.image.f02"]["score"] == pytest.approx(q2, abs=1e-4) and items["fq.duplicates"]["score"] == 1
    assert "repeats f02" in items["fq.image.f03"]["reason"]
    # 2 charts x checks + 3 captions; then composition + 3 integrations + 1 chart-source (the invalid figure never)
    assert sorted(r.template for r in visual_requests(judge)) == sorted(
        ["tvir/chart_checks"] * 2 + ["tvir/caption_quality"] * 3 + ["tvir/composition"]
        + ["tvir/figure_integration"] * 3 + ["tvir/chart_source"])
    assert all(r.images[0].name != "images/missing.png" for r in judge.requests if r.images)
    assert asked == [["h1"]]  # the cited page is read only for the chart that cites it
    assert items["fcq.f05.missing"]["score"] == 0 and items["fci.f05.missing"]["score"] == 0
    assert items["csc.f05.unsourced"]["score"] == 0
    unseen = rows.filter(pl.col("na_reason").is_not_null())
    assert set(unseen["na_reason"]) == {"pipeline_failure"}  # the judge's limit is ours, not the system's
    assert all(r.startswith("judge limit: the offline judge cannot see images") for r in unseen["reason"])
    got = metrics(rows)
    assert got["mc"].value == pytest.approx(55.0)  # (7 + 4) / 20, measured
    for m in ("fq", "fcq", "fci", "csc"):
        assert got[m].value is None and got[m].na_reason == "pipeline_failure" and "judge limit: " in got[m].detail
    only_images = [f for f in figures if f.kind == "photo"]
    ctx, _ = context(RecordingJudge(), only_images)
    fq = metrics(visual_assessment(ctx), n_figures=2)["fq"]
    assert fq.value == pytest.approx(100 * (q2 + q3) / 2 * (1 - 0.4), abs=0.01)  # p_dup = 0.8 x 1/2
    assert "duplicates=1" in fq.detail


# --- the loopback vision judge -------------------------------------------------------------------

def test_loopback_vision_judge_end_to_end(llm, calls):
    judge = OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k", timeout_s=5),
                        calls)
    figures = report_figures()
    ctx, _ = context(judge, figures)
    rows = visual_assessment(ctx)
    # 10 visual calls (every one but the composition shows its figure), then WQ, ADB and FLC
    assert llm.n_calls == 13 and llm.n_image_parts == 9
    items = by_item(rows)
    revised = items["revised.f02"]
    assert revised["item"].startswith("Battery enclosures at Kestrel Ridge (") and revised["score"] == 5
    assert "revised.f01" not in items  # its caption scored above 6
    got = metrics(rows, judge=judge.judge_id)
    q2, q3 = (images.image_quality(figures[i].measure) for i in (1, 2))
    iq = (q2 + q3) / 2 * 0.6
    assert got["fq"].value == pytest.approx(100 * (2 * iq + 2 * 1.0) / 4, abs=0.01)  # charts pass all ten checks
    assert got["fcq"].value == pytest.approx(100 * (0.8 + 0.7 + 0.7 + 0) / 4)  # no caption on f05: 0
    assert got["mc"].value == pytest.approx(75.0)  # 4 figures in place, one a repeat (10 - 3), two kinds (8)
    assert got["csc"].value == pytest.approx(100 * (0.9 + 0) / 2)  # 8.6 GW against 6.8 GW; f05 cites nothing
    assert "8.6" in items["csc.f01.contradictions"]["reason"]
    assert [items[f"fci.f01.{d}"]["score"] for d in ("relevance", "coherence", "value")] == [10, 8, 7]
    assert got["fci"].n_items == 4 and "no context (0): f05" in got["fci"].detail
    # the revised caption replaced the original in the later judgments
    prompts = [m["content"] for r in llm.requests for m in r["messages"]]
    text = "\n".join(p if isinstance(p, str) else "\n".join(x.get("text", "") for x in p) for p in prompts)
    assert "[Figure 2 (photo): " + revised["item"] + "]" in text
    assert text.count(revised["item"]) >= 2  # composition and integration
    assert {r["cache_key"] is not None for r in rows.filter(pl.col("template") != "").iter_rows(named=True)} == {True}
    ev = evidence(rows, judge=judge.judge_id)
    va = next(v for v in SUITES["tvir"].score(ev) if v.metric == "va")
    assert va.value == pytest.approx(sum(got[m].value for m in ("fq", "mc", "fcq", "fci", "csc")) / 5)


def test_chinese_captions_are_revised_in_chinese(llm, calls):
    judge = RecordingJudge()
    zh = [figure(0, "photo", "储能电站", "images/zh.png", section="概况", data=photo_png(),
                 context="下图为储能电站。<figure>")]
    ctx, _ = context(judge, zh, report="# 储能\n\n下图为储能电站。\n\n![储能电站](images/zh.png)\n")
    visual_assessment(ctx)
    asked = next(r for r in judge.requests if r.template == "tvir/caption_quality")
    assert asked.variables["language"] == "Chinese" and "in Chinese" in render(asked.template, dict(asked.variables))
    loop = OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k", timeout_s=5),
                       calls)
    ctx, _ = context(loop, zh, report="# 储能\n\n下图为储能电站。\n\n![储能电站](images/zh.png)\n")
    items = by_item(visual_assessment(ctx))
    assert items["revised.f01"]["item"] == "储能电站（图中数值与单位见所引来源）"


# --- the cited pages -----------------------------------------------------------------------------

def test_cited_sources_by_index():
    parsed = frame("parsed_reports", [row("parsed_reports", system="s", task="t", references=(
        '[{"index": 1, "url": "https://a.example"}, {"index": 2, "url": null}, '
        '{"index": 3, "url": "https://b.example"}]'))])
    fetched = frame("fetched_references", [
        row("fetched_references", system="s", task="t", url="https://a.example", status="ok", page_hash="ha"),
        row("fetched_references", system="s", task="t", url="https://b.example", status="unknown",
            na_reason="data_accessibility", detail="HTTP 404")])
    loaded = []
    sources = CitedSources(parsed, fetched, lambda hashes: loaded.append(list(hashes)) or {"ha": "page A"})
    got = sources.of("s", "t", [3, 1, 2, 1, 9])
    assert [(s.index, s.text, s.na_reason) for s in got] == [
        (3, None, "data_accessibility"), (1, "page A", None), (2, None, "model_failure"), (9, None, "model_failure")]
    assert got[0].detail == "HTTP 404" and loaded == [["ha"]]
    assert sources.of("s", "t", [2]) and loaded == [["ha"]]  # nothing readable asked: no store read


def test_the_image_decides_between_photo_and_chart():
    assert images.background_share(chart_png()) > 0.6 and images.background_share(photo_png()) < 0.1
    assert images.background_share(b"not an image") == 0.0
    drawn = figure(0, "photo", "Installed battery power grew to 6.8 GW", "images/g.png", data=chart_png())
    scene = figure(1, "chart", "A bus of the Harbour Line at a station", "images/s.png", data=photo_png())
    table = figure(2, "table", "Table 1: costs", "images/t.png", data=chart_png())
    assert [tvir_kind(f).kind for f in (drawn, scene, table)] == ["chart", "photo", "table"]
    ctx, _ = context(RecordingJudge(), [drawn, scene])
    items = by_item(visual_assessment(ctx))
    assert "fq.chart.f01.no_overlap" in items and "fq.image.f02" in items  # judged as a chart, measured as an image
