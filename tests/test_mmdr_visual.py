"""MMDR VEF and MOSAIC: the paper's item formula, routing and VEF rule on hand-computed cases; the rows
users read (report_judgments and metric_scores) offline and through the loopback vision judge; unusable
images as failed items and images we could not get as N/A."""
from __future__ import annotations

import hashlib
import io
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
from PIL import Image, ImageDraw

from dreval_assets.benchmarks.evidence import ClaimEvidence, ReportEvidence, SourceVerdict
from dreval_assets.benchmarks.judging import FigureImage, JudgmentContext
from dreval_assets.benchmarks.mmdr import metrics as mmdr
from dreval_assets.benchmarks.mmdr.mosaic import (flat_graphic, item_claim, measured_type, mosaic, route,
                                                  visual_type_of)
from dreval_assets.benchmarks.mmdr.vef import offline_vef, vef
from dreval_assets.benchmarks.mmdr.vef_offline import measure_vef
from dreval_assets.benchmarks.mmdr.visual_metrics import vef_passes
from dreval_assets.benchmarks.suites import SUITES
from dreval_assets.core.figure_text import figure_kind
from dreval_assets.core.images import content_hash, for_judge
from dreval_assets.judges.base import ImageInput
from dreval_assets.judges.heuristic import HeuristicJudge
from dreval_assets.judges.openai_config import OpenAIJudgeConfig
from dreval_assets.judges.openai_judge import OpenAIJudge
from dreval_assets.judges.prompts import render
from dreval_assets.judges.readable import NotRead
from dreval_assets.stages.frames import SCHEMAS, frame
from loopback_llm import message_text
from recording_judge import RecordingJudge

GT = ("Bar chart of quarterly shipments of autonomous mobile robots by Lumenfield Robotics. "
      "The fourth quarter of 2023 shows 3,600 units. In 2024 shipments were 3,800 units in the first quarter, "
      "4,200 in the second, 4,800 in the third and 5,600 in the fourth quarter.")
CAREFUL = ("# Lumenfield shipments\n\nAs the attached chart shows, Lumenfield Robotics shipped 3,800 robots in the "
           "first quarter of 2024, 4,200 in the second, 4,800 in the third and 5,600 in the fourth quarter [1]. "
           "Fourth-quarter shipments reached a record 5,600 units, against 3,600 in the fourth quarter of 2023 [1].\n\n"
           "References:\n[1] https://www.lumenfield.example/results - Results\n")
CARELESS = ("# Lumenfield shipments\n\nAs the attached chart shows, Lumenfield Robotics grew quickly in 2024 [1]. "
            "Fourth-quarter shipments reached a record 6,500 units, against 3,600 in the fourth quarter of 2023 [1]."
            "\n\n"
            "References:\n[1] https://www.lumenfield.example/results - Results\n")
URL = "https://www.lumenfield.example/results"


def report_row(system, task, text, status="ok"):
    return {**{k: None for k in SCHEMAS["reports"]}, "system": system, "task": task, "status": status, "text": text}


def task_row(task, gt=GT, version="v1", **extra):
    return {**{k: None for k in SCHEMAS["tasks"]}, "task": task, "benchmark": "mmdr", "query": "Explain the chart.",
            "modality": "multimodal", "visual_ground_truth": gt, "visual_ground_truth_version": version if gt else None,
            **extra}


def task_image(name: str, bars=(2, 4, 6, 8)) -> ImageInput:
    sent, mime = for_judge(png(bars))
    return ImageInput(name, hashlib.sha256(sent).hexdigest(), mime, sent)


def context(keys, reports, tasks, judge, figures=None):
    return JudgmentContext(keys, frame("reports", reports), frame("tasks", tasks), frame("task_rubrics", []), judge,
                           figures=figures or {})


def png(bars=(3, 5, 7), color=(200, 90, 30)) -> bytes:
    image = Image.new("RGB", (320, 200), "white")
    draw = ImageDraw.Draw(image)
    for i, height in enumerate(bars):
        draw.rectangle((30 + 60 * i, 190 - 20 * height, 70 + 60 * i, 190), fill=color)
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def figure(system, task, n, caption, context_text, kind="chart", data=None, reason="", bucket=None):
    image = None
    if data is not None:
        sent, mime = for_judge(data)
        image = ImageInput(f"images/f{n}.png", content_hash(data), mime, sent)
    return FigureImage(system, task, n, f"images/f{n}.png", caption, "", (1,), context_text, kind,
                       "ok" if data is not None else "invalid", reason, image=image, invalid_bucket=bucket)


JUDGED_WEIGHTS = {"mmdr.trace.weight_con": 1.0, "mmdr.trace.weight_cov": 1.0, "mmdr.trace.weight_fid": 1.0}


def evidence_from(rows: pl.DataFrame, system: str, task: str, figures=(), version="v1", claims=()) -> ReportEvidence:
    """The mmdr suite's evidence from report_judgments rows, as stages/scores.py hands them over."""
    mine = rows.filter((pl.col("system") == system) & (pl.col("task") == task))
    return ReportEvidence(system, task, "mmdr", "judge-x", claims=list(claims), figures=list(figures),
                          inputs={"mmdr.visual_gt_version": version},
                          rubric_scores={**JUDGED_WEIGHTS, **dict(zip(mine["item_id"], mine["score"]))},
                          judgment_failures={r["item_id"]: (r["na_reason"], r["reason"] or "")
                                             for r in mine.iter_rows(named=True) if r["na_reason"]})


def scored(ev: ReportEvidence) -> dict:
    return {v.metric: v for v in SUITES["mmdr"].score(ev)}


# -- formulas and rules by hand


def test_mosaic_item_scores_by_type_by_hand():
    assert mmdr.mosaic_item("DATACHART", sem=0.9, acc=0.8, vqa=0.5, f=0.9) == pytest.approx(0.9 * (0.72 + 0.05))
    assert mmdr.mosaic_item("OCRCHART", sem=0.0, acc=0.5, vqa=1.0, f=1.0) == pytest.approx(0.45 + 0.1)
    assert mmdr.mosaic_item("PHOTO", sem=0.6, acc=0.0, vqa=0.4, f=0.5) == pytest.approx(0.25)
    assert mmdr.mosaic_item("DIAGRAM", sem=0.0, acc=0.0, vqa=0.8, f=1.0, h=0.2) == pytest.approx(0.8)
    with pytest.raises(ValueError):
        mmdr.mosaic_item("MAP", 1, 1, 1, 1)


def test_rule_cues_route_only_an_item_without_a_usable_image():
    assert route("chart", "Figure 1: quarterly shipments") == "DATACHART"
    assert route("chart", "Table 2: shipments by quarter, bar chart") == "OCRCHART"  # table words win
    assert route("photo", "Figure 3: a scanned invoice") == "OCRCHART"
    assert route("photo", "Figure 4: a comfortable, stable warehouse floor") == "PHOTO"  # no whole-word cue
    assert route("table", "Figure 5: market shares") == "OCRCHART"
    assert route("diagram", "Figure 6: the picking workflow") == "DIAGRAM"
    assert route("photo", "图 7：各季度出货量表格") == "OCRCHART"
    missing = figure("s", "t", 0, "Figure 1: the Harbour Line bus", "", "chart", reason="missing")
    assert measured_type(missing) == ("DATACHART", "rule cues (no usable image: kind chart)")


def photo_like() -> bytes:
    out = io.BytesIO()
    Image.merge("RGB", [Image.effect_noise((240, 160), 60 + 10 * k) for k in range(3)]).save(out, "JPEG")
    return out.getvalue()


def test_the_image_routes_an_item_not_its_captions_words():
    assert flat_graphic(png()) and not flat_graphic(photo_like()) and not flat_graphic(b"not an image")
    text = "As shown, shipments were 3,800 and 4,200 in 2024 [1].\n<figure>\n"
    # "Line" made the parser call this photo a chart; its image says photo
    bus = figure("s", "t", 0, "Figure 1: a Harbour Line bus at Northgate", text, "chart", photo_like())
    assert visual_type_of(bus) == "PHOTO" and "a photo" in measured_type(bus)[1]
    assert visual_type_of(figure("s", "t", 0, "Figure 1: Lumenfield in 2024", text, "photo", png())) == "DATACHART"
    assert visual_type_of(figure("s", "t", 0, "Table 1: Lumenfield in 2024", text, "table", png())) == "OCRCHART"
    assert visual_type_of(figure("s", "t", 0, "Figure 1: the flow", text, "diagram", png())) == "DIAGRAM"
    assert visual_type_of(figure("s", "t", 0, "Table 1: the line-up", text, "table", photo_like())) == "PHOTO"


def test_the_demos_bus_photo_captioned_with_a_line_name_is_routed_photo():
    """The demo's careful-scholar report on the Harbour Line: its station photo's caption names the line."""
    demo = Path(__file__).resolve().parents[1] / "dreval_assets" / "demo" / "systems" / "careful-scholar"
    caption = "One of the Harbour Line's 34 battery-electric articulated buses at a station [1]"
    photo = figure("s", "t", 0, caption, "", figure_kind("images/100002_station.jpg", caption),
                   (demo / "images" / "100002_station.jpg").read_bytes())
    chart = figure("s", "t", 1, "Average weekday passengers", "", "photo",
                   (demo / "images" / "100002_ridership.png").read_bytes())
    assert photo.kind == "chart"  # the caption's words mislead the parser ...
    assert visual_type_of(photo) == "PHOTO" and visual_type_of(chart) == "DATACHART"  # ... not the image


def test_item_claim_takes_the_sentences_about_the_figure_not_its_caption():
    ctx = ("Demand rose across Europe. As the chart shows, shipments rose from 7,200 in 2022 to 18,400 in 2024 [1].\n"
           "Figure 1: Shipments of 7,200 in 2022 and 18,400 in 2024 [1]\n<figure>\nMargins improved. "
           "The 18,400 units came mostly from one model [1].")
    claim = item_claim(ctx, "Figure 1: Shipments of 7,200 in 2022 and 18,400 in 2024 [1]")
    assert claim == ("As the chart shows, shipments rose from 7,200 in 2022 to 18,400 in 2024 [1]. "
                     "The 18,400 units came mostly from one model [1].")
    assert item_claim("Costs fell. Staff left.\n<figure>\nSales grew. Prices held.", "A photo") == \
        "Staff left. Sales grew."  # nothing refers to it: the sentence on each side


def test_vef_rule_is_strict():
    assert vef_passes(6, "PASS") and vef_passes(10, "pass")
    assert not vef_passes(5, "PASS")  # score < 6 is FAIL even when the verdict says PASS
    assert not vef_passes(9, "FAIL")
    assert not vef_passes(9, "PASS", wrong_identity=True) and not vef_passes(9, "PASS", false_presence=True)


def test_offline_vef_measures_stated_and_contradicted_values():
    careful = measure_vef(GT, CAREFUL)
    assert careful.contradicted == () and (careful.stated, careful.elements) == (8, 8)  # 7 values and the name
    careless = measure_vef(GT, CARELESS)
    assert careless.contradicted == ("ground truth 5600 vs report 6500 (fourth, quarter)",)
    assert offline_vef(GT, CAREFUL).model_dump(include={"score", "verdict"}) == {"score": 10, "verdict": "PASS"}
    failed = offline_vef(GT, CARELESS)
    assert (failed.score, failed.verdict, failed.failure_type) == (4, "FAIL", "DTE")
    # Another period is not a contradiction: 5,600 for 2024 does not contradict 3,600 for 2023.
    assert measure_vef(GT, "In the fourth quarter of 2024 shipments were 5,600 units, a record.").contradicted == ()
    silent = offline_vef(GT, "The company is doing well and its outlook is good, according to analysts.")
    assert (silent.verdict, silent.failure_type) == ("FAIL", "STO")
    with pytest.raises(NotRead, match="Chinese"):
        offline_vef(GT, "该公司在二零二四年的出货量创下纪录，第四季度表现最好，分析师认为前景良好。")


# -- VEF rows and metric


def test_vef_rows_and_metric_offline():
    keys = [("careful", "t1"), ("careless", "t1"), ("careful", "t2")]
    reports = [report_row("careful", "t1", CAREFUL), report_row("careless", "t1", CARELESS),
               report_row("careful", "t2", CAREFUL)]
    judge = HeuristicJudge()
    rows = vef(context(keys, reports, [task_row("t1"), task_row("t2", gt=None)], judge))
    assert judge.stats.requests == 2  # no call for the task without a visual ground truth
    got = {(r["system"], r["task"], r["item_id"]): r for r in rows.iter_rows(named=True)}
    assert got[("careful", "t1", "mmdr.vef.pass")]["score"] == 1.0
    assert got[("careful", "t1", "mmdr.vef.score")]["score"] == 10.0
    fail = got[("careless", "t1", "mmdr.vef.pass")]
    assert fail["score"] == 0.0 and fail["item"] == "FAIL" and "visual GT v1" in fail["reason"]
    assert got[("careless", "t1", "mmdr.vef.failure.dte")]["score"] == 1.0
    assert got[("careful", "t2", "mmdr.vef.pass")]["na_reason"] == "data_accessibility"
    supported = [ClaimEvidence("c1", "sentence", "x", (URL,), (), (SourceVerdict(URL, "supported"),))]
    m = scored(evidence_from(rows, "careful", "t1", claims=supported))
    assert m["vef"].value == 100.0 and m["vef"].detail.startswith("PASS: judge score 10/10, verdict PASS")
    assert m["trace"].value == pytest.approx(100.0)  # 0.6 EVI + 0.4 VEF, both 100
    m = scored(evidence_from(rows, "careless", "t1", claims=supported))
    assert m["vef"].value == 0.0 and "failure type DTE" in m["vef"].detail and "visual GT v1" in m["vef"].detail
    assert m["trace"].value == pytest.approx(60.0)
    m = scored(evidence_from(rows, "careful", "t2", claims=supported))
    assert m["vef"].value is None and m["vef"].na_reason == "data_accessibility"
    assert m["trace"].na_reason == "data_accessibility" and m["trace"].detail.startswith("needs vef")


def test_vef_shows_the_judge_the_tasks_images_ground_truth_and_segment():
    """Paper A.1.2: the images, the textual ground truth and the Daily/Research segment in every request."""
    judge = RecordingJudge()
    chart, photo = task_image("data/images/q105_a.png"), task_image("data/images/q105_b.png", (1, 9))
    tasks = [task_row("mmdr.q105", attachments=["data/images/q105_a.png", "data/images/q105_b.png"],
                      attributes='{"set": "daily"}', original_id="Q105"),
             task_row("mmdr.q7", attachments=["images/q7.png"], original_id="Q7"),
             task_row("mmdr.q8", attachments=["https://img.example/q8.png"], original_id="Q8"),
             task_row("mmdr.x", original_id="custom")]
    keys = [("s", t["task"]) for t in tasks]
    ctx = replace(context(keys, [report_row("s", t, CAREFUL) for _, t in keys], tasks, judge),
                  task_images={"mmdr.q105": [chart, photo], "mmdr.q7": [task_image("images/q7.png")]})
    rows = vef(ctx)
    asked = {r.labels["task"]: r for r in judge.requests}
    assert set(asked) == {"mmdr.q105", "mmdr.q7", "mmdr.x"}  # q8's only image was never loaded: no blind call
    daily = asked["mmdr.q105"]
    assert daily.images == (chart, photo)
    prompt = render(daily.template, dict(daily.variables))
    assert "segment: Daily" in prompt and "image 1: data/images/q105_a.png" in prompt and GT in prompt
    assert "You see the task's images after this" in prompt
    assert "segment: Research" in render("mmdr/vef", dict(asked["mmdr.q7"].variables))  # Q0-Q99 by the release's ids
    assert "segment: not given" in render("mmdr/vef", dict(asked["mmdr.x"].variables))
    assert asked["mmdr.x"].images == ()  # it lists no image: the ground truth alone, and the rows say so
    got = {(r["task"], r["item_id"]): r for r in rows.iter_rows(named=True)}
    missing = got[("mmdr.q8", "mmdr.vef.pass")]
    assert missing["score"] is None and missing["na_reason"] == "data_accessibility"
    assert "https://img.example/q8.png" in missing["reason"] and "decided from the images" in missing["reason"]
    assert "2 task image(s) shown" in got[("mmdr.q105", "mmdr.vef.pass")]["reason"]
    assert "judged on the ground truth alone" in got[("mmdr.x", "mmdr.vef.pass")]["reason"]
    # the offline judge cannot see them: its measured answer says so on the row
    assert "the task's images unseen" in got[("mmdr.q105", "mmdr.vef.score")]["reason"]


def test_vef_score_below_six_fails_even_when_the_judge_says_pass():
    rows = frame("report_judgments", [
        {"system": "s", "task": "t", "kind": "vef", "item_id": f"mmdr.vef.{k}", "item": k, "score": v, "credit": None,
         "reason": "", "na_reason": None, "judge": "judge-x", "template": "mmdr/vef", "template_hash": "",
         "cache_key": None}
        for k, v in (("pass", 0.0), ("score", 5.0), ("verdict", 1.0), ("wrong_identity", 0.0),
                     ("false_presence", 0.0))])
    m = scored(evidence_from(rows, "s", "t"))
    assert m["vef"].value == 0.0 and m["vef"].detail.startswith("FAIL: judge score 5/10, verdict PASS")


def test_vef_through_the_loopback_judge_shows_the_tasks_images(llm, calls):
    judge = OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k", timeout_s=5),
                        calls)
    keys = [("careful", "t1"), ("careless", "t1")]
    chart = task_image("images/q7.png")
    ctx = context(keys, [report_row("careful", "t1", CAREFUL), report_row("careless", "t1", CARELESS)],
                  [task_row("t1", attachments=["images/q7.png"])], judge)
    rows = vef(replace(ctx, task_images={"t1": [chart]}))
    # every VEF request carries the task's image (paper A.1.2), its hash in the cache key
    assert llm.n_calls == 2 and llm.n_image_parts == 2
    assert {r["sha256"] for q in llm.requests for r in q["_images"]} == {hashlib.sha256(chart.data).hexdigest()}
    passed = rows.filter(pl.col("item_id") == "mmdr.vef.pass").sort("system")
    assert passed["system"].to_list() == ["careful", "careless"] and passed["score"].to_list() == [1.0, 0.0]
    assert passed["cache_key"].null_count() == 0
    assert passed["judge"].to_list() == [judge.judge_id] * 2
    assert all("1 task image(s) shown" in r for r in passed["reason"])


# -- MOSAIC


CAREFUL_CAPTION = "Figure 1: Lumenfield shipped 3,800, 4,200, 4,800 and 5,600 robots in the four quarters of 2024 [1]"
CAREFUL_CONTEXT = ("As the chart shows, shipments were 3,800 in the first quarter, 4,200 in the second, 4,800 in the "
                   "third and 5,600 in the fourth [1].\n<figure>\nGrowth came from the Atlas-3 robot.")
CARELESS_CAPTION = "Figure 1: Lumenfield shipments, 2024"
CARELESS_CONTEXT = ("As the chart shows, shipments reached a record 6,500 in the fourth quarter [1].\n<figure>\n"
                    "Growth came from the Atlas-3 robot.")
PHOTO_CAPTION = "Figure 2: The Atlas-3 picking robot in the Tarrow plant [2]"
PHOTO_CONTEXT = "Lumenfield builds the Atlas-3 picking robot in its Tarrow plant, shown in the photo.\n<figure>\n"


def mosaic_figures(system, careful: bool, photo_data=None, photo_reason="", photo_bucket=None):
    caption, text = (CAREFUL_CAPTION, CAREFUL_CONTEXT) if careful else (CARELESS_CAPTION, CARELESS_CONTEXT)
    return [figure(system, "t1", 0, caption, text, "chart", png()),
            figure(system, "t1", 1, PHOTO_CAPTION, PHOTO_CONTEXT, "photo", photo_data, photo_reason, photo_bucket)]


def test_mosaic_offline_cannot_see_and_says_so_while_unusable_images_score_zero():
    judge = RecordingJudge()
    figures = {("s", "t1"): mosaic_figures("s", True, None, "image file not found: images/f1.png"),
               ("broken", "t1"): [figure("broken", "t1", 0, "Figure 1: shipments [1]", "x <figure>", "chart", None,
                                         "pseudo-visual: ASCII art in a code block, not an image")]}
    keys = list(figures)
    rows = mosaic(context(keys, [report_row(s, t, CAREFUL) for s, t in keys], [task_row("t1")], judge, figures))
    assert [r.template for r in judge.requests] == ["mmdr/mosaic_item"]  # only the usable image is sent
    assert len(judge.requests[0].images) == 1
    chart = rows.filter(pl.col("item_id").str.starts_with("mmdr.mosaic.i01.datachart.")
                        & (pl.col("system") == "s")).sort("item_id")
    assert chart["item_id"].to_list() == ["mmdr.mosaic.i01.datachart.acc", "mmdr.mosaic.i01.datachart.f",
                                          "mmdr.mosaic.i01.datachart.image_ok", "mmdr.mosaic.i01.datachart.vqa"]
    judged = chart.filter(pl.col("na_reason").is_not_null())
    assert judged.height == 3 and set(judged["na_reason"]) == {"pipeline_failure"}  # the judge's limit, not the report's
    assert all(r.startswith("judge limit: ") and "cannot see images" in r for r in judged["reason"])
    missing = rows.filter(pl.col("item_id") == "mmdr.mosaic.i02.photo.image_missing")
    assert missing["score"].to_list() == [0.0] and "image file not found" in missing["reason"].item()
    m = scored(evidence_from(rows, "s", "t1", figures=[{}, {}]))
    assert m["mosaic"].value is None and m["mosaic"].na_reason == "pipeline_failure"
    assert "1 of 2 visual items not judged (judge limit: " in m["mosaic"].detail
    assert "cannot see images" in m["mosaic"].detail
    assert m["sem"].value == 0.0  # SEM applies to the photo only, and its image is missing: a failed item
    assert m["acc"].na_reason == "pipeline_failure" and "judge limit: " in m["acc"].detail
    # every image unusable: the failed items still score 0, as the paper counts them
    m = scored(evidence_from(rows, "broken", "t1", figures=[{}]))
    assert m["mosaic"].value == 0.0 and "failed (pseudo visual image)" in m["mosaic"].detail
    assert m["acc"].value == 0.0 and m["sem"].na_reason == "not_applicable" and "no PHOTO item" in m["sem"].detail


def test_an_image_we_could_not_get_is_not_a_zero():
    judge = HeuristicJudge()
    figures = {("s", "t1"): [figure("s", "t1", 0, "Figure 1: shipments [1]", "As the chart shows. <figure>", "chart",
                                    None, "remote image not fetched: live fetching is off", "data_accessibility")]}
    rows = mosaic(context(list(figures), [report_row("s", "t1", CAREFUL)], [task_row("t1")], judge, figures))
    assert judge.stats.requests == 0 and set(rows["na_reason"]) == {"data_accessibility"}
    m = scored(evidence_from(rows, "s", "t1", figures=[{}]))
    assert m["mosaic"].value is None and m["mosaic"].na_reason == "data_accessibility"


def test_mosaic_through_the_loopback_vision_judge(llm, calls):
    judge = OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k", timeout_s=5),
                        calls)
    photo = photo_like()  # routed PHOTO by its image (the stand-in looks at it)
    figures = {("careful", "t1"): mosaic_figures("careful", True, photo),
               ("careless", "t1"): mosaic_figures("careless", False, photo)}
    keys = list(figures)
    rows = mosaic(context(keys, [report_row(s, t, CAREFUL) for s, t in keys], [task_row("t1")], judge, figures))
    # One vision call per item with its image attached; the two reports' photo items are the same image,
    # caption and text, so the second is a cache hit.
    assert judge.stats.requests == 4 and llm.n_calls == 3 and llm.n_image_parts == 3
    received = [r for q in llm.requests for r in q["_images"]]
    assert sum(r["n_bytes"] for r in received) == sum(len(f.image.data) for f in figures[("careful", "t1")]) + len(
        figures[("careless", "t1")][0].image.data)  # the bytes for_judge made, as sent
    assert {r["sha256"] for r in received} == {hashlib.sha256(f.image.data).hexdigest()
                                               for fs in figures.values() for f in fs}
    careful = scored(evidence_from(rows, "careful", "t1", figures=[{}, {}]))
    careless = scored(evidence_from(rows, "careless", "t1", figures=[{}, {}]))
    # Careful chart: the caption states all 4 of the claim's values: ACC 1; SEM = caption words in the
    # claim; f = 1 (cited caption, a claim). Careless chart: the claim's 6,500 is not in the caption: ACC 0.
    assert careful["acc"].value == pytest.approx(100.0) and careless["acc"].value == pytest.approx(0.0)
    chart = {r["item_id"].rsplit(".", 1)[1]: r["score"]
             for r in rows.filter((pl.col("system") == "careful")
                                  & pl.col("item_id").str.starts_with("mmdr.mosaic.i01.")).iter_rows(named=True)}
    photo_parts = {r["item_id"].rsplit(".", 1)[1]: r["score"]
                   for r in rows.filter((pl.col("system") == "careful")
                                        & pl.col("item_id").str.starts_with("mmdr.mosaic.i02.")).iter_rows(named=True)}
    assert set(chart) == {"image_ok", "acc", "vqa", "f"} and set(photo_parts) == {"image_ok", "sem", "vqa", "f"}
    expected = 100 * (mmdr.mosaic_item("DATACHART", 0, chart["acc"], chart["vqa"], chart["f"])
                      + mmdr.mosaic_item("PHOTO", photo_parts["sem"], 0, photo_parts["vqa"], photo_parts["f"])) / 2
    assert careful["mosaic"].value == pytest.approx(expected)
    assert careful["mosaic"].value > careless["mosaic"].value
    assert careful["vqa"].n_items == 2 and careful["sem"].n_items == 1
    # the judge routed each item from its image: the prompt offers all four types, decided by nothing before
    prompt = next(message_text(m["content"]) for m in llm.requests[0]["messages"])
    assert all(f"- {t}:" in prompt for t in ("PHOTO", "DATACHART", "OCRCHART", "DIAGRAM"))
    assert "not by the words" in prompt and "routed as" not in prompt
    ok = rows.filter(pl.col("item_id").str.ends_with(".image_ok") & (pl.col("system") == "careful"))
    assert ok["item_id"].to_list() == ["mmdr.mosaic.i01.datachart.image_ok", "mmdr.mosaic.i02.photo.image_ok"]
    assert all("by the judge from the image" in r for r in ok["reason"])


def test_the_stages_offline_from_judgments_to_metric_scores():
    """Registered judgments (report_judgments stage) and the scores stage: the rows users read."""
    from dreval_assets.stages.judgments import judge_reports
    from dreval_assets.stages.parse import parse_reports
    from dreval_assets.stages.scores import score_reports
    with_figure = CAREFUL.replace("References:", "Figure 1: Shipments by quarter [1]\n\n![Figure 1](images/f0.png)\n\n"
                                                 "References:")
    keys = [("careful", "t1"), ("careless", "t1")]
    reports = frame("reports", [report_row("careful", "t1", with_figure), report_row("careless", "t1", CARELESS)])
    tasks = frame("tasks", [task_row("t1", version="gt-7")])
    parsed = parse_reports(reports)
    figures = {("careful", "t1"): [figure("careful", "t1", 0, "Figure 1: Shipments by quarter", CAREFUL_CONTEXT,
                                          "chart", None, "missing file: images/f0.png", "model_failure")]}
    judge = HeuristicJudge()
    judgments = judge_reports(JudgmentContext(keys, reports, tasks, frame("task_rubrics", []), judge, figures=figures))
    scores = score_reports(keys, reports, parsed["parsed_reports"], parsed["report_claims"],
                           frame("claim_verdicts", []), tasks, frame("task_sandbox", []), judge, judgments=judgments,
                           rubrics=frame("task_rubrics", []))
    got = {(r["system"], r["metric"]): r for r in scores.filter(pl.col("suite") == "mmdr").iter_rows(named=True)}
    assert got[("careful", "vef")]["value"] == 100.0 and "visual GT gt-7" in got[("careful", "vef")]["detail"]
    assert got[("careless", "vef")]["value"] == 0.0 and "failure type DTE" in got[("careless", "vef")]["detail"]
    assert got[("careful", "mosaic")]["value"] == 0.0  # its only figure's image is missing: a failed item
    assert "failed (missing image)" in got[("careful", "mosaic")]["detail"]
    assert got[("careless", "mosaic")]["value"] == 0.0 and got[("careless", "mosaic")]["detail"] == \
        "no visual item in the report"
