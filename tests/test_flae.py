"""MMDR FLAE: the formula channel, the fusion with the judge channel, and the stage."""
import pytest

from dreval_assets.benchmarks.mmdr import metrics as mmdr
from dreval_assets.benchmarks.evidence import ReportEvidence
from dreval_assets.benchmarks.suites import SUITES
from dreval_assets.core.flae_features import flae_observables, formula_channel
from dreval_assets.judges.heuristic import HeuristicJudge
from dreval_assets.stages.frames import frame
from dreval_assets.benchmarks.mmdr.judgments import judge_flae
from task_frames import tasks_table

GOOD = ("# Grid batteries\n\n## Growth\n" + "Storage grew to 6.8 gigawatts in 2024 because auctions paid for "
        "availability [1]. However, the southern zone holds most of it, which is a risk [1].\n" * 6
        + "\n## Outlook\nThe operator expects 3.1 gigawatts more in 2025 [2].\n\n## Prices\nPrices fell.\n\n"
        "## Risks\nCurtailment rose.\n\n## References\n[1] Report https://grid.example/a\n[2] Plan https://grid.example/b\n")
POOR = "batteries. batteries are good. very good. ok."


def test_formula_channel_and_alpha_prefer_a_structured_cited_report():
    good, poor = flae_observables(GOOD, False), flae_observables(POOR, False)
    assert good["heading_coverage"] == 1.0 and good["reference_validity"] == 1.0 and poor["reference_validity"] == 0.0
    f_good, f_poor = formula_channel(good), formula_channel(poor)
    assert f_good["stru"] > f_poor["stru"] and f_good["insh"] > f_poor["insh"]
    alpha_good = mmdr.alpha_det(good["length_completeness"], good["heading_coverage"], good["citation_compliance"],
                                good["reference_validity"])
    alpha_poor = mmdr.alpha_det(poor["length_completeness"], poor["heading_coverage"], poor["citation_compliance"],
                                poor["reference_validity"])
    assert alpha_poor > alpha_good  # a poor report leans on the formula channel


def test_suite_fuses_the_channels_by_hand():
    parts = {"mmdr.flae.read_form": 0.6, "mmdr.flae.insh_form": 0.4, "mmdr.flae.stru_form": 0.8, "mmdr.flae.alpha": 0.25,
             "mmdr.flae.read_judge": 0.8, "mmdr.flae.insh_judge": 0.6, "mmdr.flae.stru_judge": 0.6,
             "mmdr.flae.weight_read": 2.0, "mmdr.flae.weight_insh": 1.0, "mmdr.flae.weight_stru": 1.0}
    m = {v.metric: v for v in SUITES["mmdr"].score(ReportEvidence("s", "t", "mmdr", "j", rubric_scores=parts))}
    assert m["read"].value == pytest.approx(100 * (0.25 * 0.6 + 0.75 * 0.8))
    assert m["flae"].value == pytest.approx(mmdr.flae({"read": 0.6, "insh": 0.4, "stru": 0.8},
                                                      {"read": 0.8, "insh": 0.6, "stru": 0.6}, 0.25,
                                                      {"read": 2, "insh": 1, "stru": 1}))
    failed = dict(parts, **{"mmdr.flae.read_judge": None})
    m2 = {v.metric: v for v in SUITES["mmdr"].score(ReportEvidence("s", "t", "mmdr", "j", rubric_scores=failed))}
    assert m2["flae"].value is None and m2["flae"].na_reason == "provider_failure"


def test_stage_writes_formula_alpha_judge_and_weights_in_one_call():
    tasks = tasks_table(benchmark="mmdr", modality="multimodal")
    reports = frame("reports", [{"system": "s", "task": "t", "status": "ok", "text": GOOD, "n_chars": 1,
                                 "content_hash": "x", "source_path": None, "na_reason": None, "detail": ""}])
    judge = HeuristicJudge()
    rows = judge_flae([("s", "t")], reports, tasks, judge)
    assert judge.stats.requests == 1
    assert set(rows["item_id"]) == {f"mmdr.flae.{n}" for n in (
        "read_form", "insh_form", "stru_form", "alpha", "read_judge", "insh_judge", "stru_judge",
        "weight_read", "weight_insh", "weight_stru")}
