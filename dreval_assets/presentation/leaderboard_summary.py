"""The leaderboard's headline metrics as the Dagster UI shows them: per suite (and judge), one row per
system in rank order, each headline metric as `mean [95 % CI] (scored/tasks)`; N/A where a system has
no score, never 0. Dagster-free: `defs/metadata.py` wraps these in metadata values.
"""
from __future__ import annotations

import polars as pl

from .leaderboard_view import MARK, BoardTable, heading, no_number

SHOWN_METRICS = 4  # headline metrics per suite table; the rest are in `dreval leaderboard` and SQL


def fmt(value: float | None, digits: int = 1) -> str:
    return "N/A" if value is None else f"{value:.{digits}f}"


def ci_text(row: dict) -> str:
    if row["ci_low"] is None or row["ci_high"] is None:
        return "—"
    return f"[{fmt(row['ci_low'])}, {fmt(row['ci_high'])}]"


def headline_cell(row: dict) -> str:
    """`62.9 [55.1, 70.2] (8/8)`; `N/A (0/8)`; the coverage mark when another system covered more tasks."""
    coverage = f"({row['n_scored']}/{row['n_tasks']})"
    mark = f" {MARK}" if (row.get("coverage_note") or "") else ""
    if row.get("status") == "not_applicable":
        return no_number(row["status"])
    if row["mean"] is None:
        return f"{no_number(row.get('status'))} {coverage}{mark}"
    ci = ci_text(row)
    return f"{fmt(row['mean'])} {ci + ' ' if ci != '—' else ''}{coverage}{mark}"


def shown_columns(table: BoardTable, limit: int = SHOWN_METRICS) -> list[str]:
    """The ranked column first, then the table's other columns in headline order."""
    columns = list(dict.fromkeys(table.rows.get_column("column").to_list()))
    ordered = ([table.ranked_by] if table.ranked_by in columns else []) + [c for c in columns if c != table.ranked_by]
    return ordered[:limit]


def suite_markdown(table: BoardTable, limit: int = SHOWN_METRICS) -> str:
    """A heading saying what ranks the rows, then systems x headline metrics."""
    columns = shown_columns(table, limit)
    by_system: dict[str, dict[str, str]] = {}
    ranks: dict[str, int | None] = {}
    for row in table.rows.iter_rows(named=True):
        by_system.setdefault(row["system"], {})
        if row["column"] in columns:
            by_system[row["system"]][row["column"]] = headline_cell(row)
        if row["column"] == table.ranked_by:
            ranks[row["system"]] = row["rank"]
    header = ["rank", "system", *(c.split(".", 1)[1] for c in columns)]
    lines = [f"**{heading(table)}**", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for system, cells in by_system.items():
        rank = ranks.get(system)
        lines.append("| " + " | ".join([str(rank) if rank is not None else "—", system,
                                        *(cells.get(c, "—") for c in columns)]) + " |")
    hidden = len(set(table.rows.get_column("column").to_list())) - len(columns)
    notes = ["", "Cells: mean [95 % bootstrap CI] (scored tasks/tasks); N/A: no score (see `na_scores`); "
                 "not comparable: our judge could not judge it; not applicable: the metric does not apply."]
    if table.rows.filter((pl.col("coverage_note").fill_null("") != "")
                         & (pl.col("status").fill_null("scored") != "not_applicable")).height:
        notes.append(f"{MARK} scored on fewer tasks than another system, or compared with systems our judge could "
                     "not judge: no rank; ranks go to the systems scored on every task.")
    if hidden > 0:
        notes.append(f"{hidden} more metric(s): `dreval leaderboard --suite {table.suite}`.")
    return "\n".join(lines + notes)


def headline_records(tables: list[BoardTable]) -> list[dict]:
    """One record per suite (and judge, when a suite has several) x system for the ranked headline
    metric, for a UI table."""
    records = []
    for table in tables:
        for row in table.rows.filter(pl.col("column") == table.ranked_by).iter_rows(named=True):
            suite = table.suite if one_judge(tables, table.suite) else f"{table.suite} ({table.judge})"
            records.append({"suite": suite, "metric": row["metric"],
                            "rank": "—" if row["rank"] is None else str(row["rank"]), "system": row["system"],
                            "score": no_number(row.get("status")) if row["mean"] is None else fmt(row["mean"], 2),
                            "ci_95": ci_text(row),
                            "coverage": f"{row['n_scored']}/{row['n_tasks']}"})
    return records


def one_judge(tables: list[BoardTable], suite: str) -> bool:
    return len({t.judge for t in tables if t.suite == suite}) == 1
