"""Report-level formulas of the six benchmarks, against hand-computed values (methods notes)."""
import pytest

from dreval_assets.benchmarks.drb import metrics as drb
from dreval_assets.benchmarks.miroeval import metrics as miroeval
from dreval_assets.benchmarks.mmdr import metrics as mmdr
from dreval_assets.benchmarks.tvir import metrics as tvir
from dreval_assets.benchmarks.wlc import metrics as wlc


@pytest.mark.parametrize("count, score", [
    (0, 1.0), (1, 0.9), (2, 0.9), (3, 0.8), (4, 0.8), (5, 0.7), (6, 0.7), (7, 0.6), (8, 0.6), (9, 0.5), (10, 0.5),
    (11, 0.4), (12, 0.4), (13, 0.3), (14, 0.3), (15, 0.2), (17, 0.2), (18, 0.1), (40, 0.1)])
def test_tvir_flc_table(count, score):
    assert tvir.flc_score(count) == pytest.approx(score)


def test_tvir_csc_and_dimension_means():
    assert [tvir.csc_score(n) for n in (0, 1, 2, 8, 9, 30)] == pytest.approx([1.0, 0.9, 0.8, 0.2, 0.1, 0.1])
    assert tvir.dimension_mean([7, 8, 6, 9]) == pytest.approx(30 / 40)          # WQ, 4 dimensions
    assert tvir.dimension_mean([5, 6, 7, 8, 9]) == pytest.approx(35 / 50)       # ADB, 5 dimensions
    assert tvir.checklist_alignment([1, 0.5, 0, 1]) == pytest.approx(0.625)     # IA
    with pytest.raises(ValueError):
        tvir.flc_score(-1)


def test_tvir_ta_from_its_five_metrics():
    assert round(tvir.textual_average(47.53, 79.32, 69.37, 70.52, 84.00), 2) == 70.15


def test_mmdr_alpha_det_and_flae():
    assert mmdr.alpha_det(1, 1, 1, 1) == pytest.approx(0.0)          # complete, compliant: judge channel
    assert mmdr.alpha_det(0, 0, 0, 0) == pytest.approx(1.0)          # nothing: formula channel only
    assert mmdr.alpha_det(0.5, 1.0, 0.0, 1.0) == pytest.approx(1 - (0.175 + 0.35 + 0 + 0.1))
    value = mmdr.flae({"read": 0.6, "insh": 0.4, "stru": 0.8}, {"read": 0.8, "insh": 0.6, "stru": 0.6},
                      alpha=0.25, weights={"read": 2, "insh": 1, "stru": 1})
    fused = {"read": 0.25 * 0.6 + 0.75 * 0.8, "insh": 0.25 * 0.4 + 0.75 * 0.6, "stru": 0.25 * 0.8 + 0.75 * 0.6}
    assert value == pytest.approx(100 * (0.5 * fused["read"] + 0.25 * fused["insh"] + 0.25 * fused["stru"]))


def test_mmdr_mosaic_items():
    assert mmdr.mosaic_item("DATACHART", sem=0, acc=0.8, vqa=0.5, f=0.9) == pytest.approx(0.9 * (0.72 + 0.05))
    assert mmdr.mosaic_item("PHOTO", sem=0.6, acc=0, vqa=0.4, f=1.0) == pytest.approx(0.5)
    assert mmdr.mosaic_item("DIAGRAM", sem=0, acc=0, vqa=0.8, f=1.0, h=0.2) == pytest.approx(0.8)


def test_drb_race_is_target_over_target_plus_reference():
    weights = {"comprehensiveness": 0.3, "insight": 0.3, "instruction_following": 0.2, "readability": 0.2}
    target = {"comprehensiveness": 6, "insight": 5, "instruction_following": 8, "readability": 7}
    reference = {"comprehensiveness": 8, "insight": 7, "instruction_following": 8, "readability": 7}
    t = 0.3 * 6 + 0.3 * 5 + 0.2 * 8 + 0.2 * 7
    r = 0.3 * 8 + 0.3 * 7 + 0.2 * 8 + 0.2 * 7
    assert drb.race_score(target, reference, weights) == pytest.approx(t / (t + r))
    assert drb.race_score(reference, reference, weights) == pytest.approx(0.5)
    assert drb.weighted_criteria([8, 6, 10], [0.5, 0.25, 0.25]) == pytest.approx(8.0)


def test_miroeval_weights_capped_and_renormalised():
    weights = miroeval.cap_dynamic_weights(
        {"coverage": 0.2, "insight": 0.2, "clarity": 0.1, "policy_pragmatism": 0.5}, dynamic={"policy_pragmatism"})
    assert weights["policy_pragmatism"] == pytest.approx(0.20)
    assert sum(weights.values()) == pytest.approx(1.0)
    # the 0.30 excess goes to the others in proportion 2 : 2 : 1
    assert weights["coverage"] == pytest.approx(0.2 + 0.3 * 0.4) and weights["clarity"] == pytest.approx(0.1 + 0.3 * 0.2)


def test_miroeval_total_renormalises_over_dimensions_that_scored():
    weights = {"coverage": 0.4, "insight": 0.4, "grounding": 0.2}
    assert miroeval.synthesis_total({"coverage": 8, "insight": 6, "grounding": None}, weights) == pytest.approx(70.0)
    assert miroeval.synthesis_total({"coverage": None}, weights) is None


def test_wlc_both_orders_and_micro_win_rates():
    assert wlc.combine_orders("generated", "generated") == "generated"
    assert wlc.combine_orders("generated", "reference") == "tie"
    rates = wlc.win_rates({"well_written": ["generated", "tie", "reference", "generated"],
                           "neutral": ["generated"], "broad": ["reference", "reference", "tie"]})
    assert rates["well_written"] == pytest.approx(0.5) and rates["neutral"] == 1.0 and rates["broad"] == 0.0
    assert rates["overall"] == pytest.approx(3 / 8)  # micro: 3 wins over 8 criteria, not the mean of rates


def test_offline_miroeval_rubric_caps_its_task_dimension():
    from dreval_assets.benchmarks.miroeval.rubric import offline_rubric

    rubric = offline_rubric("Desalination in Sarrano: capacity, desalination cost and desalination energy.", True)
    ids = [d.dimension_id for d in rubric.dimensions]
    assert ids[:4] == ["coverage", "insight", "instruction_following", "clarity"]  # the paper's universal four
    assert "specificity" not in ids  # specificity is the task-specific part, not a fifth universal dimension
    assert "task_expertise" in ids and "grounding" in ids
    assert rubric.weights["task_expertise"] <= 0.20 + 1e-9 and sum(rubric.weights.values()) == pytest.approx(1.0)


def test_miroeval_synthesis_metrics_by_hand():
    from dreval_assets.benchmarks.evidence import ReportEvidence
    from dreval_assets.benchmarks.suites import SUITES
    from dreval_assets.core.models import AdaptiveRubric, RubricCriterion, RubricDimension

    def dim(d, weights):
        return RubricDimension(dimension_id=d, name=d, criteria=[RubricCriterion(criterion_id=f"c{i}", text="x", weight=w)
                                                                for i, w in enumerate(weights, start=1)])

    rubric = AdaptiveRubric(dimensions=[dim("coverage", [3, 1]), dim("insight", [1]), dim("clarity", [1])],
                            weights={"coverage": 0.5, "insight": 0.3, "clarity": 0.2})
    scores = {"miroeval.coverage.c1": 8.0, "miroeval.coverage.c2": 4.0, "miroeval.insight.c1": 6.0,
              "miroeval.clarity.c1": None}
    ev = ReportEvidence("s", "t", "miroeval", "j", inputs={"miroeval.rubric": rubric}, rubric_scores=scores)
    m = {v.metric: v for v in SUITES["miroeval"].score(ev)}
    assert m["coverage"].value == pytest.approx(70.0)        # (3*8 + 1*4) / 4 = 7 -> 70
    assert m["clarity"].value is None and m["clarity"].na_reason == "provider_failure"
    assert m["synthesis"].value == pytest.approx(10 * (0.5 * 7 + 0.3 * 6) / 0.8)  # clarity left out, renormalised
    assert m["specificity"].na_reason == "pipeline_failure"  # the rubric has no task-specific dimension
    assert "no task-specific dimension" in m["specificity"].detail
