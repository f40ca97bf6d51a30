"""MMDR, who is at fault: SEM/ACC/VQA that do not apply are `not_applicable`; a MOSAIC item the judge
answered unusably counts 0 with the judged share, while a provider failure and the judge's limit leave
MOSAIC N/A; a closed gate (FLAE or TRACE = 0) scores MOSAIC 0 without judging it; COV leaves out
claims no source of which could be judged. The rows users read: the suite's `score`."""
from __future__ import annotations

import polars as pl
import pytest

from dreval_assets.benchmarks.evidence import ClaimEvidence, ReportEvidence, SourceVerdict
from dreval_assets.benchmarks.judging import JudgmentContext
from dreval_assets.benchmarks.mmdr.mosaic import MosaicItemScores, answer_rows, mosaic
from dreval_assets.benchmarks.suites import SUITES
from dreval_assets.core.metrics import JUDGE_LIMIT, is_judge_limit
from dreval_assets.judges.base import Judgment, Provenance
from dreval_assets.judges.heuristic import HeuristicJudge
from dreval_assets.stages.frames import SCHEMAS, frame
from recording_judge import RecordingJudge
from test_mmdr_visual import (CAREFUL, CAREFUL_CONTEXT, CARELESS, JUDGED_WEIGHTS, context, evidence_from, figure,
                              png, report_row, task_row)

A = "https://a.example/1"
GATE = "gate closed (FLAE or TRACE = 0): MOSAIC 0, not judged (MMDR)"
FLAE = {"mmdr.flae.read_form": 0.6, "mmdr.flae.insh_form": 0.4, "mmdr.flae.stru_form": 0.8, "mmdr.flae.alpha": 0.25,
        "mmdr.flae.read_judge": 0.8, "mmdr.flae.insh_judge": 0.6, "mmdr.flae.stru_judge": 0.6,
        "mmdr.flae.weight_read": 1.0, "mmdr.flae.weight_insh": 1.0, "mmdr.flae.weight_stru": 1.0}
SUPPORTED = ClaimEvidence("c1", "sentence", "Shipments were 5,600 in the fourth quarter of 2024.", (A,), (),
                          (SourceVerdict(A, "supported"),))


def scored(ev: ReportEvidence) -> dict:
    ev.rubric_scores = {**JUDGED_WEIGHTS, **ev.rubric_scores}  # TRACE's weights as the judge set them
    return {v.metric: v for v in SUITES["mmdr"].score(ev)}


def item(n: int, visual_type: str, part: str, score: float | None, na_reason: str | None = None, reason: str = ""):
    return {"system": "s", "task": "t", "kind": "mosaic", "item_id": f"mmdr.mosaic.i{n:02d}.{visual_type}.{part}",
            "item": visual_type, "credit": None, "score": score, "reason": reason, "na_reason": na_reason,
            "judge": "judge-x", "template": "mmdr/mosaic_item", "template_hash": "", "cache_key": None}


def vef_rows(passed: bool) -> list[dict]:
    return [{**item(0, "x", "x", float(passed)), "kind": "vef", "item_id": "mmdr.vef.pass", "template": "mmdr/vef"}]


CHART = [item(1, "datachart", "image_ok", 1.0), item(1, "datachart", "acc", 1.0), item(1, "datachart", "vqa", 1.0),
         item(1, "datachart", "f", 1.0)]
PHOTO_OK = [item(2, "photo", "image_ok", 1.0)]


def with_open_gate(rows: list[dict], **extra) -> ReportEvidence:
    """FLAE and TRACE > 0 (a supported cited claim, VEF PASS), so MOSAIC counts."""
    ev = evidence_from(frame("report_judgments", rows + vef_rows(True)), "s", "t", figures=[{}, {}],
                       claims=[SUPPORTED], **extra)
    ev.rubric_scores.update(FLAE)
    return ev


# -- 1. sub-metrics that do not apply


def test_sem_acc_vqa_that_do_not_apply_are_not_applicable_not_failures():
    m = scored(with_open_gate(CHART))  # a chart only: SEM has no item
    assert m["acc"].value == 100.0 and m["vqa"].value == 100.0
    assert m["sem"].value is None and m["sem"].na_reason == "not_applicable" and "no PHOTO item" in m["sem"].detail
    none = scored(ReportEvidence("s", "t", "mmdr", "judge-x", claims=[SUPPORTED]))  # no visual item at all
    assert none["mosaic"].value == 0.0
    assert {none[p].na_reason for p in ("sem", "acc", "vqa")} == {"not_applicable"}


# -- 2. MOSAIC items: whose fault


def test_an_item_the_judge_answered_unusably_counts_zero_and_carries_the_judged_share():
    left_out = item(2, "photo", "sem", None, "pipeline_failure", "the judge gave no sem for a PHOTO item: ")
    m = scored(with_open_gate(CHART + PHOTO_OK + [left_out, item(2, "photo", "vqa", 1.0), item(2, "photo", "f", 1.0)]))
    assert m["mosaic"].value == pytest.approx(50.0)  # the chart 1.0, the photo 0
    assert m["mosaic"].judged_share == pytest.approx(0.5) and m["mosaic"].unjudged_reason == "pipeline_failure"
    assert "1 the judge answered unusably (scored 0" in m["mosaic"].detail
    assert m["sem"].value == 0.0 and m["sem"].judged_share == 0.0
    assert m["overall"].value is not None and m["overall"].judged_share == pytest.approx(0.5)
    # an answer that failed validation: every part N/A pipeline_failure, the item 0
    invalid = [item(2, "photo", p, None, "pipeline_failure", "answer failed validation: sem > 1") for p in
               ("sem", "vqa", "f")]
    m = scored(with_open_gate(CHART + PHOTO_OK + invalid))
    assert m["mosaic"].value == pytest.approx(50.0) and m["mosaic"].judged_share == pytest.approx(0.5)


def test_a_part_the_judge_left_out_is_the_judges_failure_not_the_reports():
    fig = figure("s", "t1", 1, "Figure 2: the robot", "The photo shows the robot. <figure>", "photo", png())
    answer = Judgment(answer=MosaicItemScores(visual_type="PHOTO", vqa=0.5, f=1.0, reason="ok"),
                      provenance=Provenance("judge-x", "mmdr/mosaic_item", ""))
    ctx = context([("s", "t1")], [], [], HeuristicJudge())
    # measured a chart, seen a photo by the judge: the rows follow the judge, and the sem it left out is its own
    rows = {r["item_id"].rsplit(".", 1)[1]: r
            for r in answer_rows(fig, ("DATACHART", "measured: background share 0.80"), answer, ctx)}
    assert rows["sem"]["item_id"].startswith("mmdr.mosaic.i02.photo.")
    assert rows["sem"]["score"] is None and rows["sem"]["na_reason"] == "pipeline_failure"
    assert "routed PHOTO by the judge from the image" in rows["image_ok"]["reason"]


LEFT_OUT_CHART = [item(1, "datachart", "image_ok", 1.0), item(1, "datachart", "vqa", 1.0),
                  item(1, "datachart", "f", 1.0),
                  item(1, "datachart", "acc", None, "pipeline_failure", "the judge gave no acc for a DATACHART item: ")]


def test_an_item_failed_at_the_provider_stays_na_never_zero():
    failed = [item(2, "photo", p, None, "provider_failure", "HTTP 503 after 6 attempts") for p in ("sem", "vqa", "f")]
    m = scored(with_open_gate(LEFT_OUT_CHART + PHOTO_OK + failed))
    assert m["mosaic"].value is None and m["mosaic"].na_reason == "provider_failure"
    # only the provider's item is not judged; the chart the judge answered unusably is a 0, not a gap
    assert "1 of 2 visual items not judged (HTTP 503" in m["mosaic"].detail
    assert "i01 DATACHART judge's answer unusable, 0" in m["mosaic"].detail
    assert m["overall"].value is None and m["overall"].na_reason == "provider_failure"


def test_the_judges_limit_leaves_mosaic_na_with_the_marker():
    judge = HeuristicJudge()
    figures = {("s", "t1"): [figure("s", "t1", 1, "Figure 2: shipments [1]", CAREFUL_CONTEXT, "chart", png())]}
    rows = mosaic(context(list(figures), [report_row("s", "t1", CAREFUL)], [task_row("t1")], judge, figures))
    parts = rows.filter(pl.col("na_reason").is_not_null())
    assert set(parts["na_reason"]) == {"pipeline_failure"} and all(r.startswith(JUDGE_LIMIT) for r in parts["reason"])
    # beside an item a real judge answered unusably (i01), the blind judge's item (i02) names MOSAIC's reason
    other = frame("report_judgments", [{**r, "task": "t1"} for r in LEFT_OUT_CHART + vef_rows(True)])
    ev = evidence_from(other.vstack(rows), "s", "t1", figures=[{}, {}], claims=[SUPPORTED])
    ev.rubric_scores.update(FLAE)
    m = scored(ev)
    assert m["mosaic"].value is None and m["mosaic"].na_reason == "pipeline_failure"
    assert m["mosaic"].detail.startswith(f"1 of 2 visual items not judged ({JUDGE_LIMIT}")
    assert is_judge_limit(m["overall"].detail) and m["overall"].value is None


# -- 3. the gate


def test_a_closed_gate_scores_mosaic_zero_without_its_judgments():
    uncited = ClaimEvidence("c1", "uncited", "Shipments grew in 2024.")
    ev = evidence_from(frame("report_judgments", CHART + vef_rows(False)), "s", "t", figures=[{}], claims=[uncited])
    ev.rubric_scores.update(FLAE)
    m = scored(ev)
    assert m["trace"].value == 0.0  # no cited claim (EVI 0) and VEF FAIL
    assert m["mosaic"].value == 0.0 and m["mosaic"].detail.startswith(GATE)
    assert {m[p].na_reason for p in ("sem", "acc", "vqa")} == {"not_applicable"}
    assert m["overall"].value == pytest.approx(0.2 * m["flae"].value)
    # FLAE = 0 closes it too, whatever TRACE is
    zero = dict(FLAE, **{k: 0.0 for k in FLAE if k.endswith(("_form", "_judge"))})
    ev = evidence_from(frame("report_judgments", CHART + vef_rows(True)), "s", "t", figures=[{}], claims=[SUPPORTED])
    ev.rubric_scores.update(zero)
    m = scored(ev)
    assert m["flae"].value == 0.0 and m["mosaic"].value == 0.0 and m["mosaic"].detail.startswith(GATE)


def test_the_judgments_stage_spends_no_vision_call_behind_a_closed_gate():
    from dreval_assets.stages.judgments import judge_reports
    keys = [("careless", "t1"), ("careful", "t1")]
    reports = frame("reports", [report_row("careless", "t1", CARELESS), report_row("careful", "t1", CAREFUL)])
    blank = dict.fromkeys(SCHEMAS["report_claims"])
    claims = frame("report_claims", [
        {**blank, "system": "careless", "task": "t1", "claim_id": "c1", "kind": "uncited", "text": "Shipments grew.",
         "urls": [], "unresolved_indices": [], "citation_indices": []},
        {**blank, "system": "careful", "task": "t1", "claim_id": "c1", "kind": "sentence",
         "text": "Shipments were 5,600.", "urls": [A], "unresolved_indices": [], "citation_indices": [1]}])
    figures = {key: [figure(*key, 0, "Figure 1: shipments [1]", CAREFUL_CONTEXT, "chart", png())] for key in keys}
    judge = RecordingJudge()
    rows = judge_reports(JudgmentContext(keys, reports, frame("tasks", [task_row("t1")]), frame("task_rubrics", []),
                                         judge, claims=claims, figures=figures))
    asked = [r.labels["system"] for r in judge.requests if r.template == "mmdr/mosaic_item"]
    assert asked == ["careful"]  # careless: no cited claim and VEF FAIL, so TRACE = 0: not judged
    gate = rows.filter((pl.col("system") == "careless") & pl.col("item_id").str.starts_with("mmdr.mosaic."))
    assert gate["item_id"].to_list() == ["mmdr.mosaic.gate"] and gate["reason"].item().startswith(GATE)


# -- 4. partial coverage of the cited sources


def test_cov_leaves_out_claims_no_source_of_which_was_judged_and_carries_the_judged_share():
    unreadable = [ClaimEvidence(f"u{i}", "sentence", f"Claim {i} about 2024.", (f"https://x.example/{i}",), (),
                                (SourceVerdict(f"https://x.example/{i}", "unknown", "cited", "data_accessibility",
                                               "bot wall"),)) for i in range(20)]
    no_url = ClaimEvidence("n1", "sentence", "Prices held in 2024.", (), (7,),
                           (SourceVerdict("[7]", "unknown", "cited", "model_failure", "no URL"),))
    m = scored(ReportEvidence("s", "t", "mmdr", "judge-x", claims=[SUPPORTED, *unreadable, no_url]))
    assert m["cov"].value == pytest.approx(50.0)  # the supported claim of 2: the [7] with no URL is the report's
    assert m["cov"].n_items == 2 and "20 with no judged source left out of COV" in m["cov"].detail
    for metric in ("con", "cov", "fid", "evi"):
        assert m[metric].judged_share == pytest.approx(1 / 21), metric
        assert m[metric].unjudged_reason == "data_accessibility", metric
    assert m["con"].value == 100.0
