"""Never an invented number: when no judgment a claim-level metric rests on could be made (a provider
error, an unreadable page), the metric row is N/A with the failure's reason and the coverage, not 0;
when some could, the paper's rule stands and the row says how many were judged."""
import pytest

from dreval_assets.benchmarks.evidence import ClaimEvidence, ReportEvidence, SourceVerdict
from dreval_assets.benchmarks.suites import SUITES

A, B = "https://a.example/1", "https://b.example/2"
CLAIM_METRICS = {
    "core": ("supported_ratio", "contradicted_ratio"),
    "tvir": ("cs", "aec"),
    "mmdr": ("con", "cov", "fid", "trace"),
    "dr3": ("fa",),
    "wlc": ("ref_acc", "ref_conf"),
    "drb": ("fact_accuracy", "effective_citations"),
    "miroeval": ("factuality", "right", "wrong", "conflict", "unknown"),
}


def failed(url, reason, note="HTTP 500 after 6 attempts"):
    return SourceVerdict(url, "unknown", "cited", reason, note)


def evidence(claims, **extra):
    return ReportEvidence("s", "t", "generic", "judge-x", claims=list(claims), **extra)


def rows(suite, ev):
    return {v.metric: v for v in SUITES[suite].score(ev)}


def claims_with(*verdict_sets):
    return [ClaimEvidence(f"c{i}", "sentence", f"The ferry carried {1000 + i} passengers in 2023.",
                          tuple(v.source for v in verdicts), (), tuple(verdicts))
            for i, verdicts in enumerate(verdict_sets)]


@pytest.mark.parametrize("suite", sorted(CLAIM_METRICS))
def test_every_judgment_failed_at_the_provider_gives_na_provider_failure(suite):
    ev = evidence(claims_with([failed(A, "provider_failure")], [failed(A, "provider_failure"), failed(B, "provider_failure")],
                              [failed(B, "provider_failure")]))
    got = rows(suite, ev)
    for metric in CLAIM_METRICS[suite]:
        row = got[metric]
        assert row.value is None and row.na_reason == "provider_failure", (suite, metric, row)
        assert "sources judged 0 of 4" in row.detail and "HTTP 500" in row.detail


@pytest.mark.parametrize("suite", sorted(CLAIM_METRICS))
def test_every_page_unreadable_gives_na_data_accessibility_with_the_coverage(suite):
    ev = evidence(claims_with(*[[failed(A, "data_accessibility", "bot wall: Cloudflare challenge")]] * 93))
    for metric in CLAIM_METRICS[suite]:
        row = rows(suite, ev)[metric]
        assert (row.value, row.na_reason) == (None, "data_accessibility"), (suite, metric, row)
        assert "sources judged 0 of 93 (not judged: 93 data_accessibility)" in row.detail
        assert "Cloudflare" in row.detail


def test_a_provider_failure_outranks_unreadable_pages_in_the_reason():
    ev = evidence(claims_with([failed(A, "data_accessibility")], [failed(B, "provider_failure")]))
    assert rows("core", ev)["supported_ratio"].na_reason == "provider_failure"  # the one a retry can fix


def test_partly_judged_keeps_the_papers_rule_and_says_the_coverage():
    ev = evidence(claims_with([SourceVerdict(A, "supported")], [failed(B, "data_accessibility")],
                              [SourceVerdict(A, "contradicted")]))
    cs = rows("tvir", ev)["cs"]
    assert cs.value == pytest.approx(100 / 2)  # the unread page is not judged: left out, never a 0
    assert (cs.judged_share, cs.unjudged_reason) == (pytest.approx(2 / 3), "data_accessibility")
    assert "sources judged 2 of 3 (not judged: 1 data_accessibility)" in cs.detail
    assert "no source judged => N/A" in cs.policy
    core = rows("core", ev)["supported_ratio"]
    assert core.value == pytest.approx(100 / 2) and "sources judged 2 of 3" in core.detail


def test_tvir_keeps_its_own_rule_for_a_report_without_pairs():
    ev = evidence([ClaimEvidence("c0", "uncited", "An uncited sentence about 2023.")])
    cs = rows("tvir", ev)["cs"]
    assert cs.value == 0.0 and cs.detail == "no fact-citation pairs" and "no pairs => 0 (paper)" in cs.policy


def test_a_citation_with_no_url_is_the_reports_fault_not_a_failed_judgment():
    ev = evidence([ClaimEvidence("c0", "sentence", "Ridership rose 12% in 2023.", (), (7,),
                                 (SourceVerdict("[7]", "unknown", "cited", "model_failure", "no URL"),))])
    assert rows("tvir", ev)["cs"].value == 0.0  # an unresolvable citation scores 0, as in TVIR
    assert rows("core", ev)["supported_ratio"].value == 0.0


def test_miroeval_counts_searched_and_attachment_evidence_as_judged():
    ev = evidence(claims_with([failed(A, "data_accessibility"), SourceVerdict("sandbox://p1", "supported", "sandbox")]))
    got = rows("miroeval", ev)
    assert got["factuality"].value == 100.0 and got["right"].value == 1.0
    assert "sources judged 1 of 2" in got["factuality"].detail


def test_a_system_released_without_citations_has_no_citation_metrics_only():
    wiki = "https://en.wikipedia.org/wiki/Ferry"  # a stray URL line would otherwise be 100 % leakage
    ev = evidence(claims_with([SourceVerdict(wiki, "supported")]), system_cites=False)
    wlc = rows("wlc", ev)
    for metric in ("ref_acc", "ref_conf", "leakage"):
        # the release's design choice: the metric does not apply (not the system's failure, not a 0)
        assert wlc[metric].value is None and wlc[metric].na_reason == "not_applicable"
        assert "has_citations: false" in wlc[metric].detail
    core = rows("core", ev)
    assert core["n_claims"].value == 1.0  # not a citation metric: it stands
    assert core["supported_ratio"].value is None
    assert rows("wlc", evidence(claims_with([SourceVerdict(wiki, "supported")]),
                                inputs={"wlc.article_url": wiki}))["leakage"].value == 100.0


def test_an_extraction_that_kept_no_statement_makes_claim_metrics_na_not_zero():
    """A fully cited report whose LLM extraction kept no grounded statement: TVIR CS/AEC and MMDR
    CON/COV/FID/EVI were 0 (no pair, no claim); they are N/A, the extractor's failure."""
    from dreval_assets.benchmarks.evidence import ReportEvidence
    from dreval_assets.benchmarks.suites import SUITES
    from dreval_assets.stages.scores import extraction_empty

    why = extraction_empty({"extraction": "llm", "n_statements": 0, "n_ungrounded": 12})
    assert "12 ungrounded dropped" in why
    assert extraction_empty({"extraction": "llm", "n_statements": 3, "n_ungrounded": 12}) == ""
    assert extraction_empty({"extraction": "sentences", "n_statements": 0, "n_ungrounded": 0}) == ""
    for suite, metrics in (("tvir", ("cs", "aec")), ("mmdr", ("con", "cov", "fid", "evi"))):
        ev = ReportEvidence("s", "t", suite, "j", extraction_empty=why, references=[
            {"index": 1, "url": "https://a.example/1", "title": "A"}])
        rows = {v.metric: v for v in SUITES[suite].score(ev)}
        for metric in metrics:
            assert rows[metric].value is None and rows[metric].na_reason == "pipeline_failure", (suite, metric)
            assert "kept no grounded statement" in rows[metric].detail
