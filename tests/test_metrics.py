"""Metric formulas, checked against hand-computed values."""
import pytest

from dreval_assets.core.metrics import ClaimFacts, merge_verdicts, report_metrics, unreadable_report_metrics
from dreval_assets.core.stats import bootstrap_ci


def by_name(values):
    return {(v.suite, v.metric): v for v in values}


def test_merge_prefers_the_best_source():
    assert merge_verdicts(["unsupported", "partial"]) == "partial"
    assert merge_verdicts(["contradicted", "unsupported", "unknown"]) == "contradicted"
    assert merge_verdicts(["unknown"]) == "unknown"
    with pytest.raises(ValueError):
        merge_verdicts(["true"])


def test_first_metric_set_by_hand():
    claims = [
        ClaimFacts("c1", "sentence", 1),   # supported
        ClaimFacts("c2", "sentence", 2),   # partial + unsupported -> partial
        ClaimFacts("c3", "table_row", 1),  # contradicted
        ClaimFacts("c4", "sentence", 1),   # unknown (dead link)
        ClaimFacts("c5", "figure_caption", 1),  # supported, excluded from TVIR CS
        ClaimFacts("c6", "uncited", 0),
    ]
    verdicts = {"c1": ["supported"], "c2": ["partial", "unsupported"], "c3": ["contradicted"],
                "c4": ["unknown"], "c5": ["supported"]}
    m = by_name(report_metrics(claims, verdicts, [7, 7, 9], "heuristic-v1"))
    # TVIR CS over c1..c4: (1 + 0.5 + 0 + 0) / 4
    assert m["tvir", "cs"].value == pytest.approx(37.5)
    assert m["tvir", "cs"].n_items == 4
    assert "unknown=1" in m["tvir", "cs"].detail
    # supported claims / all claims: c1 and c5 of 6
    assert m["core", "supported_ratio"].value == pytest.approx(200 / 6)
    assert m["core", "contradicted_ratio"].value == pytest.approx(100 / 6)
    assert m["core", "n_claims"].value == 6
    assert m["core", "citations_per_claim"].value == pytest.approx(6 / 6)
    assert m["core", "unresolved_citations"].value == 2
    assert m["core", "supported_ratio"].judge == "heuristic-v1"
    assert m["core", "n_claims"].judge == "none"


def test_no_claims_is_na_with_reason_but_tvir_cs_follows_the_paper():
    m = by_name(report_metrics([], {}, [], "heuristic-v1"))
    assert m["core", "supported_ratio"].value is None
    assert m["core", "supported_ratio"].na_reason == "model_failure"
    assert m["tvir", "cs"].value == 0.0 and m["tvir", "cs"].n_items == 0
    assert "no pairs => 0" in m["tvir", "cs"].policy


def test_uncited_only_report_scores_zero_support():
    claims = [ClaimFacts("c1", "uncited", 0), ClaimFacts("c2", "uncited", 0)]
    m = by_name(report_metrics(claims, {}, [], "h"))
    assert m["core", "supported_ratio"].value == 0.0
    assert m["core", "citations_per_claim"].value == 0.0


def test_unreadable_report_gives_na_for_every_metric():
    rows = unreadable_report_metrics("model_failure", "report is empty", "h")
    assert rows and all(r.value is None and r.na_reason == "model_failure" for r in rows)
    assert {(r.suite, r.metric) for r in rows} == set(by_name(report_metrics([], {}, [], "h")))


def test_bootstrap_ci_brackets_the_mean_and_is_reproducible():
    values = [10.0, 20.0, 30.0, 40.0, 50.0]
    lo, hi = bootstrap_ci(values)
    assert lo < 30 < hi and 10 <= lo and hi <= 50
    assert bootstrap_ci(values) == (lo, hi)
    assert bootstrap_ci([5.0]) is None
