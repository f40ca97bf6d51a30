"""The asset-check functions catch what they are meant to catch."""
from dreval_assets.stages import checks
from dreval_assets.stages.frames import frame


def verdict(label, na_reason=None, reason=""):
    return {"system": "s", "task": "t", "claim_id": "c1", "source": "u", "verdict": label, "score": None,
            "evidence": "", "reason": reason, "na_reason": na_reason, "judge": "j", "template": "x", "template_hash": "h",
            "model": None, "temperature": None, "seed": None, "cache_key": None, "batch_size": 1, "source_truncated": False,
            "origin": "cited", "search_query": None}


def score(value, scale="0-100", na_reason=None):
    return {"system": "s", "task": "t", "suite": "core", "metric": "m", "value": value, "scale": scale,
            "n_items": 1, "na_reason": na_reason, "detail": "", "policy": "", "judge": "j"}


def test_invalid_and_unexplained_verdicts_are_counted():
    good = frame("claim_verdicts", [verdict("supported"), verdict("unknown", "data_accessibility")])
    bad = frame("claim_verdicts", [verdict("true"), verdict("unknown")])
    assert checks.invalid_verdicts(good).height == 0 and checks.unknown_without_reason(good).height == 0
    assert checks.invalid_verdicts(bad).height == 1 and checks.unknown_without_reason(bad).height == 1


def test_out_of_range_scores_and_bad_na_rows_are_counted():
    good = frame("metric_scores", [score(0.0), score(100.0), score(3.0, "count"), score(None, na_reason="model_failure")])
    assert checks.scores_out_of_range(good).height == 0 and checks.na_rows_without_valid_reason(good).height == 0
    bad = frame("metric_scores", [score(101.0), score(-1.0, "count"), score(None), score(None, na_reason="oops"),
                                   score(5.0, na_reason="model_failure")])
    assert checks.scores_out_of_range(bad).height == 2
    assert checks.na_rows_without_valid_reason(bad).height == 3


def test_orphan_claims_are_counted():
    parsed = frame("parsed_reports", [])
    claims = frame("report_claims", [{"system": "s", "task": "t", "claim_id": "c1", "kind": "uncited", "text": "x",
                                      "section": "", "citation_indices": [], "urls": [], "unresolved_indices": [],
                                      "source_claim": "c1", "extraction": "sentences"}])
    assert checks.orphan_claims(parsed, claims).height == 1


def test_unexplained_report_and_fetch_failures_are_counted():
    def report(status, text, na_reason):
        return {"system": "s", "task": "t", "status": status, "text": text, "n_chars": 0, "content_hash": None,
                "source_path": None, "na_reason": na_reason, "detail": ""}

    reports = frame("reports", [report("ok", "x", None), report("empty", None, "model_failure"),
                                report("binary", None, None), report("ok", None, None)])
    assert checks.unexplained_report_status(reports).height == 2

    def fetched(status, page_hash, na_reason):
        return {"system": "s", "task": "t", "url": "u", "url_norm": "u", "status": status, "backend": "sandbox",
                "final_url": None, "title": "", "content_type": "", "page_hash": page_hash, "sandbox_role": None,
                "na_reason": na_reason, "detail": "", "http_status": None, "charset": None, "blocked": None,
                "truncated": False}

    rows = frame("fetched_references", [fetched("ok", "h", None), fetched("unknown", None, "data_accessibility"),
                                        fetched("unknown", None, None), fetched("ok", None, None)])
    assert checks.unexplained_fetch_failures(rows).height == 2
