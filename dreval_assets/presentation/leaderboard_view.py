"""The leaderboard as people read it: one table per suite and judge, one row per system, one column
per metric, coverage beside every mean and a mark where a system was scored on fewer tasks than
another one (md, csv and json say the same).

A suite's table is ranked by its first headline metric, whatever systems it holds, in the `rank` the
leaderboard stage gave the systems scored on all its tasks (so ranks follow the means shown); systems
with partial coverage follow, unranked and marked, and the shared-task comparison is a column of its own. Judges never share a table: a home holding
rows of two judges prints two tables, each headed by its judge.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import polars as pl

from ..benchmarks.suites import SUITES

FORMATS = ("table", "md", "csv", "json")
UNJUDGED = "none"  # the judge of metrics computed without one; they belong in every judge's table
MARK = "†"
EMPTY = "(no scores yet: run `dreval run`)"
DETAIL_FIELDS = ("mean", "ci_low", "ci_high", "n_scored", "n_tasks", "coverage", "shared_mean", "n_shared",
                 "rank", "coverage_note", "aggregation", "validity", "adjusted_mean", "status")
# What a cell without a number says, by the row's status: a metric that does not apply to the system,
# a system our judge could not judge, or no score (a failure: `na_scores` says why).
NO_NUMBER = {"not_applicable": "not applicable", "not_comparable": "not comparable"}


def no_number(status: str | None) -> str:
    return NO_NUMBER.get(status or "", "N/A")


@dataclass(frozen=True)
class BoardTable:
    suite: str
    title: str
    judge: str                 # the judge of the table's judged metrics (`none` when it has none)
    ranked_by: str | None      # the suite's first headline column: its rank orders the rows
    n_shared: int | None       # how many tasks every system scored on that column (its shared column)
    rows: pl.DataFrame         # leaderboard rows shown, one per system x metric, in display order
    breakdown: str = ""        # `<attribute>=<value>`: the table holds only the tasks of that value


def leaderboard_tables(board: pl.DataFrame, suite: str | None = None, by: str | None = None) -> list[BoardTable]:
    """The tables to print: per suite (registry order), per judge. Breakdown rows (`<metric>.<value>`)
    appear as columns where the suite's headline names them; with `by`, one table per value of that
    attribute instead, its rows under their own metric names."""
    board = _with_new_columns(board)
    if suite:
        board = board.filter(pl.col("suite") == suite)
    names = list(SUITES)
    present = sorted(board.get_column("suite").unique().to_list(),
                     key=lambda s: (names.index(s) if s in SUITES else len(names), s))
    tables = []
    for name in present:
        rows = board.filter(pl.col("suite") == name)
        headline = set(SUITES[name].headline) if name in SUITES else set()
        if by:
            groups = [(g, _unsplit(rows.filter(pl.col("breakdown") == g)))
                      for g in sorted(set(rows.get_column("breakdown").to_list()))
                      if g.partition("=")[0] == by]
        else:
            groups = [("", rows.filter((pl.col("breakdown") == "") | pl.col("metric").is_in(list(headline))))]
        for group, group_rows in groups:
            group_rows = group_rows.with_columns(column=pl.col("suite") + "." + pl.col("metric"))
            for judge, judge_rows in _split_by_judge(group_rows):
                tables.append(_table(name, judge, judge_rows, group))
    return tables


def _unsplit(rows: pl.DataFrame) -> pl.DataFrame:
    """A breakdown's rows under their metric's own name (`avg.en` -> `avg`), for a table of that value."""
    names = [metric.removesuffix("." + group.partition("=")[2])
             for metric, group in rows.select("metric", "breakdown").iter_rows()]
    return rows.with_columns(metric=pl.Series(names, dtype=pl.String))


def _with_new_columns(board: pl.DataFrame) -> pl.DataFrame:
    """A board written before ranks existed (until the next `dreval run`) still prints, unranked."""
    missing = {"shared_mean": pl.Float64, "n_shared": pl.Int64, "rank": pl.Int64, "coverage_note": pl.String,
               "aggregation": pl.String, "validity": pl.Float64, "adjusted_mean": pl.Float64, "status": pl.String}
    board = board.with_columns(pl.lit(None, dtype).alias(c) for c, dtype in missing.items() if c not in board.columns)
    if "breakdown" not in board.columns:
        board = board.with_columns(breakdown=pl.lit(""))
    return board.with_columns(pl.col("breakdown").fill_null(""))


def _split_by_judge(rows: pl.DataFrame) -> list[tuple[str, pl.DataFrame]]:
    """One part per judge: its systems' judged rows plus their unjudged ones. A system with no judged
    row in this suite appears in every part (its numbers do not depend on a judge)."""
    judges = sorted(set(rows.get_column("judge").to_list()) - {UNJUDGED})
    if not judges:
        return [(UNJUDGED, rows)]
    judged_systems = {j: set(rows.filter(pl.col("judge") == j).get_column("system").to_list()) for j in judges}
    unjudged_only = set(rows.get_column("system").to_list()) - set().union(*judged_systems.values())
    return [(j, rows.filter((pl.col("judge") == j)
                            | ((pl.col("judge") == UNJUDGED) & pl.col("system").is_in(judged_systems[j] | unjudged_only))))
            for j in judges]


def _table(suite: str, judge: str, rows: pl.DataFrame, breakdown: str = "") -> BoardTable:
    spec = SUITES.get(suite)
    headline = spec.headline if spec else ()
    columns = set(rows.get_column("column").to_list())
    # fixed by the suite, never by which systems happen to have ranks on which column
    ranked_by = next((f"{suite}.{m}" for m in headline if f"{suite}.{m}" in columns), None)
    by_column = rows.filter(pl.col("column") == ranked_by)
    order = (by_column.select("system", "rank", "mean")
             .sort(["rank", "mean", "system"], nulls_last=True, descending=[False, _direction(suite, ranked_by) > 0, False])
             .get_column("system").to_list() if ranked_by else [])
    systems = order + sorted(set(rows.get_column("system").to_list()) - set(order))
    shared = by_column.get_column("n_shared").drop_nulls()
    metric_order = {c: _column_order(c) for c in columns}
    rows = (rows.with_columns(_system_order=pl.col("system").replace_strict(systems, list(range(len(systems)))),
                              _metric_order=pl.col("column").replace_strict(metric_order, return_dtype=pl.Int64))
            .sort(["_system_order", "_metric_order", "column"]).drop("_system_order", "_metric_order"))
    return BoardTable(suite=suite, title=spec.title if spec else suite, judge=judge, ranked_by=ranked_by,
                      n_shared=int(shared.max()) if shared.len() else None, rows=rows, breakdown=breakdown)


def _direction(suite: str, column: str | None) -> int:
    spec = SUITES[suite].spec(column.partition(".")[2]) if suite in SUITES and column else None
    return spec.better if spec else 1


def _column_order(column: str) -> int:
    suite, _, metric = column.partition(".")
    headline = SUITES[suite].headline if suite in SUITES else ()
    return headline.index(metric) if metric in headline else len(headline)


def wide_leaderboard(table: BoardTable) -> pl.DataFrame:
    """One row per system: rank, tasks, then each metric as `mean (scored/tasks)`, marked when the
    system was scored on fewer tasks than another one; the ranked column's shared-task mean is added
    when some system's mean covers other tasks than the shared ones."""
    rows = table.rows
    cells = rows.with_columns(cell=_cell_text())
    columns = list(dict.fromkeys(rows.get_column("column").to_list()))
    wide = cells.pivot(on="column", index="system", values="cell", aggregate_function="first")
    summary = rows.group_by("system", maintain_order=True).agg(
        tasks=pl.col("n_tasks").max(),
        rank=pl.col("rank").filter(pl.col("column") == table.ranked_by).first())
    wide = summary.join(wide, on="system", how="left", maintain_order="left")
    ranked = rows.filter(pl.col("column") == table.ranked_by)
    if table.n_shared and ranked.filter(pl.col("n_shared") < pl.col("n_scored")).height:
        shared = ranked.select("system", pl.col("shared_mean").round(2).cast(pl.String).fill_null("—")
                               .alias(f"{table.ranked_by} on {table.n_shared} shared"))
        wide = wide.join(shared, on="system", how="left", maintain_order="left")
        columns.insert(columns.index(table.ranked_by) + 1, shared.columns[1])
    return wide.select("system", pl.col("rank").cast(pl.String).fill_null("—"), pl.col("tasks").cast(pl.String),
                       *(pl.col(c).fill_null("—") for c in columns))


def _cell_text() -> pl.Expr:
    """`71.25 (5/8)`: the mean over scored tasks and how many were scored; N/A when none was, "not
    comparable" when some (all: no number) were beyond our judge, "not applicable" (no coverage) when
    the metric does not apply to the system; the mark when another system was scored on tasks this one
    was not."""
    coverage = pl.format(" ({}/{})", pl.col("n_scored"), pl.col("n_tasks"))
    status = pl.col("status").fill_null("scored")
    missing = pl.lit("N/A")
    for name, text in NO_NUMBER.items():
        missing = pl.when(status == name).then(pl.lit(text)).otherwise(missing)
    mean = pl.when(pl.col("mean").is_null()).then(missing).otherwise(pl.col("mean").round(2).cast(pl.String))
    comparable = pl.when((status == "not_comparable") & pl.col("mean").is_not_null()).then(
        pl.lit(" not comparable")).otherwise(pl.lit(""))
    mark = pl.when((pl.col("coverage_note").fill_null("") != "") & (status != "not_comparable")).then(
        pl.lit(" " + MARK)).otherwise(pl.lit(""))
    return pl.when(status == "not_applicable").then(mean).otherwise(mean + coverage + comparable + mark)


def heading(table: BoardTable) -> str:
    judge = "no judged metric" if table.judge == UNJUDGED else f"judge {table.judge}"
    on_column = table.rows.filter(pl.col("column") == table.ranked_by)
    ranked = on_column.filter(pl.col("rank").is_not_null())
    unranked = on_column.filter(pl.col("rank").is_null() & pl.col("mean").is_not_null()
                                & (pl.col("coverage_note").fill_null("") != "")).height
    if table.ranked_by is None:
        basis = "not ranked"
    elif table.n_shared is None:
        basis = f"by {table.ranked_by} (these rows hold no rank: rebuild them with `dreval run`)"
    elif ranked.height == 0:
        basis = f"not ranked by {table.ranked_by}: {_why_unranked(table)}"
    else:
        basis = (f"ranked by {table.ranked_by} among the {ranked.height} system(s) scored on all its tasks"
                 + (f"; {unranked} with partial coverage listed unranked" if unranked else ""))
    tasks = f"; tasks with {table.breakdown.replace('=', ' = ', 1)}" if table.breakdown else ""
    return f"{table.title} (suite {table.suite}{tasks}; {judge}; {basis})"


def _why_unranked(table: BoardTable) -> str:
    on_column = table.rows.filter(pl.col("column") == table.ranked_by)
    status = on_column.get_column("status").fill_null("scored").to_list()
    if "not_comparable" in status:
        return "our judge could not judge it for every system (not comparable)"
    if all(s == "not_applicable" for s in status):
        return "it does not apply to these systems"
    if on_column.get_column("mean").drop_nulls().len() == 0:
        return "no system has a number on it"
    if _direction(table.suite, table.ranked_by) == 0:
        return "it describes reports rather than grading them"
    return "no system was scored on every task another was scored on"


def footnotes(table: BoardTable) -> list[str]:
    """How the columns that are not a plain mean over scored tasks were aggregated; what the marks
    mean, the ranked column's notes in full, the others counted."""
    rules = (table.rows.filter(~pl.col("aggregation").fill_null("mean:").str.starts_with("mean:"))
             .select("column", "aggregation").unique(maintain_order=True))
    lines = [f"{column}: {rule}" for column, rule in rules.iter_rows()]
    status = pl.col("status").fill_null("scored")
    apart = table.rows.filter(status.is_in(list(NO_NUMBER)) & (pl.col("column") == table.ranked_by))
    lines += [f"{r['system']} {r['column']}: {r['coverage_note']}" for r in apart.iter_rows(named=True)]
    marked = table.rows.filter((pl.col("coverage_note").fill_null("") != "") & (status != "not_applicable"))
    if marked.height == 0:
        return lines
    lines += [f"{MARK} has a coverage note: scored on fewer tasks than another system (that mean is over other "
             "tasks than theirs, coverage in brackets), or compared with systems our judge could not judge "
             "on the same tasks; either way it has no rank. Ranks go to the systems scored on every task, and "
             "the `on N shared` column compares every system on the tasks all of them scored."]
    on_rank = marked.filter((pl.col("column") == table.ranked_by) & (status != "not_comparable"))
    lines += [f"  {r['system']} {r['column']}: {r['coverage_note']}" for r in on_rank.iter_rows(named=True)]
    others = marked.filter(pl.col("column") != table.ranked_by).height
    if others:
        lines.append(f"  {others} more marked cell(s): dreval sql \"SELECT system, suite, metric, coverage_note "
                     f"FROM leaderboard WHERE coverage_note <> ''\"")
    return lines


def render(tables: list[BoardTable], fmt: str) -> str:
    if not tables:
        return EMPTY
    if fmt == "csv":
        return _csv(tables)
    if fmt == "json":
        return json.dumps([_json_table(t) for t in tables], indent=2, default=str)
    blocks = []
    for table in tables:
        wide = wide_leaderboard(table)
        if fmt == "md":
            blocks.append(_markdown_block(table, wide))
        else:
            blocks.append("\n".join([heading(table), _plain(wide), *footnotes(table)]))
    return "\n\n".join(blocks)


def _markdown_block(table: BoardTable, wide: pl.DataFrame) -> str:
    """GitHub-flavoured Markdown: the heading a heading, the table set apart by blank lines (a line
    right after a table is one more row of it), the notes a list (indented notes nested)."""
    notes = [f"  - {line.strip()}" if line.startswith("  ") else f"- {line}" for line in footnotes(table)]
    return "\n\n".join(part for part in (f"### {heading(table)}", _markdown(wide), "\n".join(notes)) if part)


def _csv(tables: list[BoardTable]) -> str:
    """Long rows (one per system x metric x judge), typed, in the tables' order: every number has its
    coverage, rank and note in its own row, and no column is empty for another judge's systems."""
    fields = ["system", "suite", "metric", "column", "judge", "scale", "breakdown", *DETAIL_FIELDS]
    rows = pl.concat([t.rows.select(fields) for t in tables], how="vertical_relaxed").unique(maintain_order=True)
    return rows.write_csv()


def _json_table(table: BoardTable) -> dict:
    systems = []
    for system, rows in table.rows.group_by("system", maintain_order=True):
        metrics = {r["column"]: {f: r[f] for f in DETAIL_FIELDS} for r in rows.iter_rows(named=True)}
        ranked = metrics.get(table.ranked_by, {})
        systems.append({"system": system[0], "rank": ranked.get("rank"), "tasks": rows.get_column("n_tasks").max(),
                        "metrics": metrics})
    return {"suite": table.suite, "title": table.title, "breakdown": table.breakdown, "judge": table.judge,
            "ranked_by": table.ranked_by,
            "n_shared": table.n_shared, "systems": systems}


def _markdown(wide: pl.DataFrame) -> str:
    header = [_md_cell(h) for h in wide.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return "\n".join(lines + ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in wide.iter_rows()])


def _md_cell(text: str | None) -> str:
    """A cell's text as one GFM cell: a pipe would split it, a line break end the row."""
    return " ".join(str(text or "").split()).replace("\\", "\\\\").replace("|", "\\|")


def _plain(wide: pl.DataFrame) -> str:
    rows = [list(row) for row in wide.iter_rows()]
    header = wide.columns
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])
