"""Render the leaderboard table for people: one row per system, one column per metric."""
from __future__ import annotations

import json

import polars as pl

from .benchmarks.suites import SUITES

FORMATS = ("table", "md", "csv", "json")


def wide_leaderboard(board: pl.DataFrame, suite: str | None = None) -> pl.DataFrame:
    """One row per system, one column per suite.metric (suffixed @judge only when judges differ).

    Columns follow each suite's headline order; rows rank by the first headline number of `suite`
    (or of `core` when no suite is given).
    """
    if suite:
        board = board.filter(pl.col("suite") == suite)
    if board.height == 0:
        return pl.DataFrame()
    board = board.with_columns(column=pl.col("suite") + "." + pl.col("metric"))
    judges_per_column = board.group_by("column").agg(pl.col("judge").n_unique().alias("n_judges"))
    board = board.join(judges_per_column, on="column").with_columns(
        column=pl.when(pl.col("n_judges") > 1).then(pl.col("column") + "@" + pl.col("judge")).otherwise(pl.col("column")))
    cells = board.with_columns(cell=_cell_text())
    wide = cells.pivot(on="column", index="system", values="cell", aggregate_function="first")
    summary = board.group_by("system").agg(
        pl.col("n_tasks").max().alias("tasks"),
        pl.col("judge").filter(pl.col("judge") != "none").unique().sort().str.join(",").alias("judge"))
    wide = wide.join(summary, on="system")
    rank_suite = SUITES[suite or "core"] if (suite or "core") in SUITES else None
    if rank_suite:
        headline = f"{rank_suite.name}.{rank_suite.headline[0]}"
        ranked = board.filter(pl.col("column") == headline).select("system", rank=pl.col("mean"))
        if ranked.height:
            wide = wide.join(ranked, on="system", how="left").sort("rank", descending=True, nulls_last=True).drop("rank")
    first = ["system", "judge", "tasks"]
    return wide.select(first + sorted((c for c in wide.columns if c not in first), key=_column_order))


def _column_order(column: str) -> tuple[int, int, str]:
    suite, _, metric = column.partition(".")
    metric = metric.split("@")[0]
    names = list(SUITES)
    suite_rank = names.index(suite) if suite in SUITES else len(names)
    headline = SUITES[suite].headline if suite in SUITES else ()
    return suite_rank, headline.index(metric) if metric in headline else len(headline), column


def _cell_text() -> pl.Expr:
    """Mean rounded to 2 places; coverage in brackets when some tasks were N/A."""
    coverage = pl.lit(" (") + (pl.col("coverage") * 100).round(0).cast(pl.Int32).cast(pl.String) + pl.lit("% scored)")
    return (pl.when(pl.col("mean").is_null()).then(pl.lit("N/A"))
            .otherwise(pl.col("mean").round(2).cast(pl.String)
                       + pl.when(pl.col("coverage") < 1).then(coverage).otherwise(pl.lit(""))))


def render(wide: pl.DataFrame, fmt: str) -> str:
    if wide.is_empty():
        return "(no scores yet: run `dreval run`)"
    if fmt == "csv":
        return wide.write_csv()
    if fmt == "json":
        return json.dumps(wide.to_dicts(), indent=2)
    rows = [[str(v) for v in row] for row in wide.iter_rows()]
    header = wide.columns
    if fmt == "md":
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths))  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])
