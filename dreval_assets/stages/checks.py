"""Invariants each stage's output must hold; the asset checks call these on the frames written.

Each function returns the rows that break its invariant (empty when it holds), so a failing check
can name them; `CHECKS` describes every check as the UI shows it, and `failing_keys` names rows.
"""
from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ..core.models import NA_REASONS, VERDICTS


@dataclass(frozen=True)
class CheckInfo:
    asset: str
    description: str


CHECKS: dict[str, CheckInfo] = {
    "status_explained": CheckInfo(
        "reports", "Every report that is not `ok` carries an N/A reason bucket, and every `ok` report has text."),
    "no_orphan_claims": CheckInfo(
        "parsed_reports", "Every extracted claim belongs to a report that has a parsed_reports row."),
    "failures_explained": CheckInfo(
        "fetched_references", "Every cited URL that could not be read carries a reason; every readable one points "
                              "at its stored page text."),
    "verdict_labels_valid": CheckInfo(
        "claim_verdicts", "Verdicts are one of supported, partial, unsupported, contradicted, unknown; an unknown "
                          "verdict says why (an N/A reason or the judge's reason)."),
    "credits_valid": CheckInfo(
        "report_judgments", "Checklist credits are 0, 0.5 or 1 (their mean over repeated judge runs between 0 and "
                            "1); rubric scores 1-10; pairwise outcomes 0, 0.5 or 1; "
                            "contradiction counts not negative; a row with neither credit nor score has an N/A "
                            "reason."),
    "scores_within_range": CheckInfo(
        "metric_scores", "0-100 metrics lie in [0, 100]; counts and ratios are not negative."),
    "na_has_reason": CheckInfo(
        "metric_scores", "An N/A score carries one of the four reason buckets (provider_failure, data_accessibility, "
                         "pipeline_failure, model_failure), and a score with a value carries none."),
}

# Columns that identify a row, in the order a reader looks for them; the first failing rows are
# named by those present in the frame.
KEY_COLUMNS = ("system", "task", "claim_id", "source", "url", "kind", "item_id", "suite", "metric", "status",
               "verdict", "value", "credit", "score", "na_reason")
SHOWN_FAILURES = 10


def failing_keys(rows: pl.DataFrame, limit: int = SHOWN_FAILURES) -> list[dict]:
    """The first failing rows, by their identifying columns (sorted, so a re-run names the same rows)."""
    columns = [c for c in KEY_COLUMNS if c in rows.columns]
    order = [c for c in ("system", "task", "claim_id", "url", "item_id", "metric") if c in columns]
    picked = rows.select(columns)
    return (picked.sort(order) if order else picked).head(limit).to_dicts()


def orphan_claims(parsed: pl.DataFrame, claims: pl.DataFrame) -> pl.DataFrame:
    """Claims whose report has no parsed_reports row."""
    return claims.join(parsed.select("system", "task"), on=["system", "task"], how="anti")


def invalid_verdicts(verdicts: pl.DataFrame) -> pl.DataFrame:
    return verdicts.filter(~pl.col("verdict").is_in(list(VERDICTS)))


def unknown_without_reason(verdicts: pl.DataFrame) -> pl.DataFrame:
    return verdicts.filter((pl.col("verdict") == "unknown") & pl.col("na_reason").is_null()
                           & (pl.col("reason").fill_null("") == ""))


def scores_out_of_range(scores: pl.DataFrame) -> pl.DataFrame:
    pct = (pl.col("scale") == "0-100") & ((pl.col("value") < 0) | (pl.col("value") > 100))
    neg = pl.col("scale").is_in(["count", "ratio"]) & (pl.col("value") < 0)
    return scores.filter(pct | neg)


def na_rows_without_valid_reason(scores: pl.DataFrame) -> pl.DataFrame:
    """N/A must carry one of the four reason buckets, and a value must not carry one."""
    bad_na = pl.col("value").is_null() & (pl.col("na_reason").is_null() | ~pl.col("na_reason").is_in(list(NA_REASONS)))
    both = pl.col("value").is_not_null() & pl.col("na_reason").is_not_null()
    return scores.filter(bad_na | both)


def invalid_credits(judgments: pl.DataFrame) -> pl.DataFrame:
    kind, credit, score = pl.col("kind"), pl.col("credit"), pl.col("score")
    # 0, 0.5 or 1 from one judge run; a mean over a benchmark's repeated runs (TVIR) lies between
    bad_credit = (kind == "checklist") & credit.is_not_null() & ~credit.is_between(0, 1)
    bad_score = (kind == "rubric") & score.is_not_null() & ~score.is_between(1, 10)
    negative = (kind == "contradictions") & (score < 0)
    pairwise = (kind == "pairwise") & score.is_not_null() & ~score.is_in([0.0, 0.5, 1.0])
    unexplained = credit.is_null() & score.is_null() & pl.col("na_reason").is_null()
    return judgments.filter(bad_credit | bad_score | negative | pairwise | unexplained)  # a null test is not a failure


def unexplained_report_status(reports: pl.DataFrame) -> pl.DataFrame:
    """A report that is not `ok` must say why; an `ok` one must have text."""
    unexplained = (pl.col("status") != "ok") & pl.col("na_reason").is_null()
    textless = (pl.col("status") == "ok") & pl.col("text").is_null()
    return reports.filter(unexplained | textless)


def unexplained_fetch_failures(fetched: pl.DataFrame) -> pl.DataFrame:
    """A URL that could not be read must carry a reason; a readable one must point at its text."""
    unexplained = (pl.col("status") != "ok") & pl.col("na_reason").is_null()
    textless = (pl.col("status") == "ok") & pl.col("page_hash").is_null()
    return fetched.filter(unexplained | textless)
