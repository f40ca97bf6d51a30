"""Dagster-free evaluation logic: models, parsing, matching, metric formulas, statistics."""
