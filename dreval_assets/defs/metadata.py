"""What the Dagster UI shows on a materialisation: per-partition figures (each partition's own rows,
the run's totals once, on the run's first partition), the judge's spend per system and template, the
leaderboard's tables and plots, and asset checks that name the rows they failed on."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

import polars as pl
from dagster import (
    AssetCheckResult,
    AssetKey,
    AssetExecutionContext,
    MetadataValue,
    TableColumn,
    TableRecord,
    TableSchema,
)

from ..core.images import data_url
from ..presentation.leaderboard_summary import SHOWN_METRICS, headline_records, one_judge, suite_markdown
from ..presentation.leaderboard_view import UNJUDGED, leaderboard_tables
from ..presentation.plots import Plot, save_plots
from ..stages.checks import CHECKS, SHOWN_FAILURES, failing_keys
from ..stages.figures import Figures, Key, Markdown, partition_figures, run_totals
from ..store.db import Store
from ..store.judge_spend import run_spend
from ..presentation.view.urls import index_path, report_url, view_base_url
from .partitions import split_system_task

RUN_TOTALS = "run_totals"


def value(v: object):
    """A figure as the UI should render it."""
    if isinstance(v, Markdown):
        return MetadataValue.md(str(v))
    if isinstance(v, bool):
        return MetadataValue.bool(v)
    if isinstance(v, int):
        return MetadataValue.int(v)
    if isinstance(v, float):
        return MetadataValue.float(v)
    return MetadataValue.text("" if v is None else str(v))


def partition_tuple(key) -> Key:
    """(system, task) of a system x task key, (task,) of a task key."""
    text = str(key)
    return split_system_task(key) if "|" in text or hasattr(key, "keys_by_dimension") else (text,)


def record_partitions(context: AssetExecutionContext, asset: str, frames: Mapping[str, pl.DataFrame],
                      store: Store | None = None, totals: Mapping[str, object] | None = None) -> None:
    """Attach to each partition's materialisation the figures of its own rows and the judge's spend
    on it (from the ledger), and to the run's first partition the run's totals and spend per system.
    Call before the output is yielded. `totals` adds run-level figures (e.g. the judge's stats)."""
    keys = list(context.partition_keys)
    tuples = [partition_tuple(k) for k in keys]
    figures = partition_figures(asset, frames, tuples)
    spend = run_spend(store, context.run.run_id, asset) if store is not None else pl.DataFrame()
    spend_by_key = _spend_by_partition(spend, tuples)
    per_key = {}
    for i, (key, tup) in enumerate(zip(keys, tuples)):
        entries = {name: value(v) for name, v in figures[tup].items()}
        if len(tup) == 2:  # a report's partition: its page in `dreval view`
            entries["view"] = MetadataValue.url(report_url(*tup))
        if spend.height:  # a judge that calls an endpoint: its ledger says what this partition cost
            entries |= {name: value(v) for name, v in spend_figures(spend_by_key[tup]).items()}
            if spend_by_key[tup]:
                entries["judge_spend"] = MetadataValue.md(spend_markdown(spend_by_key[tup], by_system=False))
        if i == 0:
            entries |= run_entries(context.run.run_id, asset, figures, spend, totals or {})
        per_key[key] = entries
    attach(context, per_key, AssetKey(asset))
    context.log.info(f"{asset} run totals: " + ", ".join(
        f"{k}={v}" for k, v in {**run_totals(figures), **(totals or {})}.items()))


def attach(context: AssetExecutionContext, per_key: Mapping[object, dict], asset_key: AssetKey | None = None) -> None:
    """Add each partition's entries to its materialisation event (of `asset_key`: one of a step's
    several assets; default the step's one asset).

    The public `add_asset_metadata(partition_key=...)` lists every partition of the run to validate the
    key on each call (26 ms per call on the demo, quadratic in the run's size); our keys come from
    `context.partition_keys`, so they are added to the step's metadata accumulator directly (dagster
    1.13), falling back to the public call if that internal ever changes (tests pin the result)."""
    asset_key = asset_key or context.asset_key
    step = getattr(context, "_step_execution_context", None)
    accumulator = getattr(step, "_metadata_accumulator", None)
    if accumulator is None or not hasattr(accumulator, "with_additional_asset_metadata"):
        for key, entries in per_key.items():
            context.add_asset_metadata(entries, asset_key=asset_key, partition_key=key)
        return
    for key, entries in per_key.items():
        accumulator = accumulator.with_additional_asset_metadata(asset_key=asset_key, partition_key=key,
                                                                 metadata=entries)
    step._metadata_accumulator = accumulator


SpendRows = list[dict]  # rows of `run_spend`: a run's ledger per system x task x template
_SUMMED = ("requests", "calls", "cache_hits", "failures", "tokens_in", "tokens_out", "cost", "unpriced")


def _spend_by_partition(spend: pl.DataFrame, tuples: list[Key]) -> dict[Key, SpendRows]:
    """Each partition's spend rows, split in one pass (a filter and a group-by per partition were ~60 ms
    of every judged step's end at 100 partitions)."""
    by: dict[Key, SpendRows] = {tup: [] for tup in tuples}
    for row in spend.iter_rows(named=True):
        rows = by.get((row["system"], row["task"]) if tuples and len(tuples[0]) == 2 else (row["task"],))
        if rows is not None:
            rows.append(row)
    return by


def _sum(rows: SpendRows, column: str) -> int | float:
    return sum(row[column] for row in rows if row[column] is not None)


def spend_figures(spend: pl.DataFrame | SpendRows) -> Figures:
    """The judge_* figures of some ledger rows (the names JudgeStats uses for a run)."""
    rows = spend.to_dicts() if isinstance(spend, pl.DataFrame) else spend
    requests, hits = int(_sum(rows, "requests")), int(_sum(rows, "cache_hits"))
    return {"judge_requests": requests, "judge_calls": int(_sum(rows, "calls")),
            "judge_cache_hits": hits, "judge_cache_hit_rate": round(hits / requests, 4) if requests else 0.0,
            "judge_failures": int(_sum(rows, "failures")),
            "judge_tokens_in": int(_sum(rows, "tokens_in")), "judge_tokens_out": int(_sum(rows, "tokens_out")),
            "judge_cost": "unpriced" if _sum(rows, "unpriced") else round(float(_sum(rows, "cost")), 6)}


def spend_markdown(spend: pl.DataFrame | SpendRows, by_system: bool = True) -> str:
    """Calls and cost per (system x) template, with the metrics each template feeds; calls of a template
    that feeds several metrics are counted once, not per metric."""
    keys = ("system", "template", "metrics") if by_system else ("template", "metrics")
    groups: dict[tuple, SpendRows] = {}
    for row in (spend.to_dicts() if isinstance(spend, pl.DataFrame) else spend):
        groups.setdefault(tuple(row[key] for key in keys), []).append(row)
    header = (["system"] if by_system else []) + ["template", "metrics fed", "requests", "calls", "cache hits",
                                                  "tokens in", "tokens out", "cost"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for key in sorted(groups, key=lambda k: tuple("" if part is None else part for part in k)):
        r = {**dict(zip(keys, key)), **{column: _sum(groups[key], column) for column in _SUMMED}}
        cost = f"{r['cost']:.6f}" + (f" + {r['unpriced']} unpriced" if r["unpriced"] else "")
        cells = ([r["system"] or "(shared by systems)"] if by_system else []) + [
            r["template"], r["metrics"] or "—", r["requests"], r["calls"], r["cache_hits"], r["tokens_in"],
            r["tokens_out"], cost]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def run_entries(run_id: str, asset: str, figures: Mapping[Key, Figures], spend: pl.DataFrame,
                totals: Mapping[str, object]) -> dict:
    """The run's totals, once, labelled as such."""
    summed = {**run_totals(figures), **totals}
    lines = [f"**Run totals** over all {len(figures)} partition(s) of {asset} in run `{run_id[:8]}` "
             "(every other figure on this page is this partition's own)", "", "| figure | run total |", "|---|---|"]
    lines += [f"| {name} | {v} |" for name, v in summed.items()]
    entries = {RUN_TOTALS: MetadataValue.md("\n".join(lines))}
    if spend.height:
        entries["run_judge_spend"] = MetadataValue.md(
            f"**Judge spend of this run's {asset}** per system and template\n\n" + spend_markdown(spend))
    return entries


def check_result(name: str, failing: pl.DataFrame | int, what: str | None = None,
                 asset: str | None = None) -> AssetCheckResult:
    """Passed when no row fails; otherwise how many, and the first failing rows by their keys."""
    info = CHECKS.get(name)
    count = failing if isinstance(failing, int) else failing.height
    what = what or (info.description if info else "")
    metadata = {"failures": MetadataValue.int(count), "what": MetadataValue.text(what)}
    if isinstance(failing, pl.DataFrame) and failing.height:
        keys = failing_keys(failing)
        metadata["first_failing_rows"] = MetadataValue.md(_rows_markdown(keys, failing.height))
        if {"system", "task"} <= set(failing.columns):
            partitions = failing.select("system", "task").unique().sort(["system", "task"])
            metadata["failing_partitions"] = MetadataValue.text(", ".join(
                f"{s}|{t}" for s, t in partitions.head(SHOWN_FAILURES).iter_rows())
                + (f" (+{partitions.height - SHOWN_FAILURES} more)" if partitions.height > SHOWN_FAILURES else ""))
    return AssetCheckResult(check_name=name, asset_key=asset or (info.asset if info else None), passed=count == 0,
                            metadata=metadata)


def _rows_markdown(rows: list[dict], total: int) -> str:
    header = list(rows[0])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join("" if r[c] is None else str(r[c]).replace("|", "\\|")[:80] for c in header) + " |"
              for r in rows]
    if total > len(rows):
        lines.append(f"\n{total - len(rows)} more failing row(s).")
    return "\n".join(lines)


NO_SCORES_YET = "no scores yet: run `dreval run`"  # the leaderboard's and its plots' page before any score


def leaderboard_metadata(board: pl.DataFrame) -> dict:
    """Rows and systems, the headline table (one record per suite x system), one Markdown table per
    suite (and judge), and the link to `dreval view`'s leaderboard (its plots are `leaderboard_plots`')."""
    tables = leaderboard_tables(board) if board.height else []
    metadata: dict = {"rows": MetadataValue.int(board.height),
                      "systems": MetadataValue.int(board.get_column("system").n_unique() if board.height else 0)}
    if not tables:
        return metadata | {"note": MetadataValue.text(NO_SCORES_YET)}
    records = headline_records(tables)
    schema = TableSchema(columns=[TableColumn(name, "string") for name in records[0]])
    metadata["headline"] = MetadataValue.table([TableRecord(r) for r in records], schema=schema)
    for table in tables:
        suffix = "" if table.judge == UNJUDGED or one_judge(tables, table.suite) else f"_{table.judge}"
        metadata[f"suite_{table.suite}{suffix}"] = MetadataValue.md(inline_suite_markdown(table))
    metadata["view"] = MetadataValue.url(f"{view_base_url()}/{index_path()}")  # every column, larger plots
    return metadata


def plots_metadata(plots: list[Plot], plots_dir: Path) -> dict:
    """The plots saved under `plots_dir` and embedded as PNG data URIs ("Show Markdown" opens each)."""
    if not plots:
        return {"note": MetadataValue.text(NO_SCORES_YET)}
    save_plots(plots, plots_dir)
    metadata = {f"plot_{plot.name}": MetadataValue.md(f"![{plot.title}]({data_url(plot.png, 'image/png')})")
                for plot in plots}
    return metadata | {"plots": MetadataValue.path(str(plots_dir))}


INLINE_MARKDOWN = 1000  # characters: Dagster shows longer Markdown only behind "Show Markdown"


def inline_suite_markdown(table) -> str:
    """The suite's table with as many headline columns as keep it inline (the ranked one at least), so
    every suite shows alike; the rest are in `dreval view` and `dreval leaderboard`."""
    for limit in range(SHOWN_METRICS, 0, -1):
        text = suite_markdown(table, limit)
        if len(text) <= INLINE_MARKDOWN:
            break
    return text
