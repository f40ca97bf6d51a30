"""Invariants each stage's output must hold; the asset checks call these on the frames written."""
from __future__ import annotations

import polars as pl

from ..core.models import NA_REASONS, VERDICTS


def orphan_claims(parsed: pl.DataFrame, claims: pl.DataFrame) -> int:
    """Claims whose report has no parsed_reports row."""
    return claims.join(parsed.select("system", "task"), on=["system", "task"], how="anti").height


def invalid_verdicts(verdicts: pl.DataFrame) -> int:
    return verdicts.filter(~pl.col("verdict").is_in(list(VERDICTS))).height


def unknown_without_reason(verdicts: pl.DataFrame) -> int:
    return verdicts.filter((pl.col("verdict") == "unknown") & pl.col("na_reason").is_null()
                           & (pl.col("reason").fill_null("") == "")).height


def scores_out_of_range(scores: pl.DataFrame) -> int:
    pct = scores.filter((pl.col("scale") == "0-100") & ((pl.col("value") < 0) | (pl.col("value") > 100)))
    neg = scores.filter(pl.col("scale").is_in(["count", "ratio"]) & (pl.col("value") < 0))
    return pct.height + neg.height


def na_rows_without_valid_reason(scores: pl.DataFrame) -> int:
    """N/A must carry one of the four reason buckets, and a value must not carry one."""
    bad_na = scores.filter(pl.col("value").is_null()
                           & (pl.col("na_reason").is_null() | ~pl.col("na_reason").is_in(list(NA_REASONS))))
    both = scores.filter(pl.col("value").is_not_null() & pl.col("na_reason").is_not_null())
    return bad_na.height + both.height


def invalid_credits(judgments: pl.DataFrame) -> int:
    checklist = judgments.filter(pl.col("kind") == "checklist")
    bad_credit = checklist.filter(pl.col("credit").is_not_null() & ~pl.col("credit").is_in([0.0, 0.5, 1.0]))
    rubric = judgments.filter(pl.col("kind") == "rubric")
    bad_score = rubric.filter(pl.col("score").is_not_null() & ~pl.col("score").is_between(1, 10))
    negative = judgments.filter((pl.col("kind") == "contradictions") & (pl.col("score") < 0))
    pairwise = judgments.filter((pl.col("kind") == "pairwise") & pl.col("score").is_not_null()
                                & ~pl.col("score").is_in([0.0, 0.5, 1.0]))
    unexplained = judgments.filter(pl.col("credit").is_null() & pl.col("score").is_null() & pl.col("na_reason").is_null())
    return bad_credit.height + bad_score.height + negative.height + pairwise.height + unexplained.height


def unexplained_report_status(reports: pl.DataFrame) -> int:
    """A report that is not `ok` must say why; an `ok` one must have text."""
    unexplained = reports.filter((pl.col("status") != "ok") & pl.col("na_reason").is_null())
    textless = reports.filter((pl.col("status") == "ok") & pl.col("text").is_null())
    return unexplained.height + textless.height


def unexplained_fetch_failures(fetched: pl.DataFrame) -> int:
    """A URL that could not be read must carry a reason; a readable one must point at its text."""
    unexplained = fetched.filter((pl.col("status") != "ok") & pl.col("na_reason").is_null())
    textless = fetched.filter((pl.col("status") == "ok") & pl.col("page_hash").is_null())
    return unexplained.height + textless.height
