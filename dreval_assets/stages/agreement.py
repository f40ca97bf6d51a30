"""agreement: per benchmark x metric x judge, how our scores agree with the scores the benchmark
publishes for the same systems and tasks (the `agreement_pairs` view's rows in, `agreement` rows out).

Item level: Pearson r and Kendall tau-b over every system x task both scored. System level, as the
papers validate their judges: PAR over same-task system pairs, OPC / OSC between per-system means. A
metric published only as a system-level aggregate (DRB's `total_valid_citations`) is compared on
those: our leaderboard number per system (task ''), the note saying so.
"""
from __future__ import annotations

from datetime import datetime, timezone

import polars as pl

from ..core.agreement import Stat, kendall_tau_b, pairwise_agreement, pearson, spearman
from ..core.stats import mean
from .frames import frame

# Rescaling a published 0-1 value x100 leaves float noise (80.00000000000001): rounded away before
# ties are judged, so noise is never a preference.
TIE_DIGITS = 9
GROUP = ["benchmark", "metric", "judge"]
ITEM = ["system", "task"]
SYSTEM_LEVEL = ("system level: each system's published aggregate beside our leaderboard number (over the tasks we "
                "scored)")
NO_PUBLISHED = "no published scores imported (dreval import <benchmark> <release with score files>)"
NO_OVERLAP = ("published scores imported, but no system has both our score and a published score "
              "for the same task and metric")


def build_agreement(pairs: pl.DataFrame) -> pl.DataFrame:
    """`pairs`: the agreement_pairs view's rows (our value beside the published one per item)."""
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    rows = [_agreement_row(key, group, now)
            for key, group in pairs.group_by(GROUP, maintain_order=True)]
    return frame("agreement", rows).sort(GROUP)


def empty_note(n_published: int, n_rows: int) -> str:
    """What an empty agreement table means, for the asset's metadata; '' when it has rows."""
    if n_rows:
        return ""
    return NO_OVERLAP if n_published else NO_PUBLISHED


def _agreement_row(key: tuple, group: pl.DataFrame, now: datetime) -> dict:
    benchmark, metric, judge = key
    per_task = group.filter(pl.col("task") != "")
    level_note = []
    if per_task.height and per_task.height < group.height:
        level_note = ["published system-level aggregates left out: per-task pairs compared"]
        group = per_task
    elif not per_task.height:
        level_note = [SYSTEM_LEVEL]
    items, notes = _items(group)
    notes = level_note + notes
    ours = [round(o, TIE_DIGITS) for o, _ in items.values()]
    theirs = [round(p, TIE_DIGITS) for _, p in items.values()]
    by_task: dict[str, dict[str, tuple[float, float]]] = {}
    by_system: dict[str, list[tuple[float, float]]] = {}
    for (system, task), pair in zip(items, zip(ours, theirs)):
        by_task.setdefault(task, {})[system] = pair
        by_system.setdefault(system, []).append(pair)
    # each system's two means over the tasks both evaluators scored it on (rounded again: equal means
    # summed in another order must still tie for OSC)
    our_means = [round(mean([o for o, _ in scored]), TIE_DIGITS) for scored in by_system.values()]
    their_means = [round(mean([p for _, p in scored]), TIE_DIGITS) for scored in by_system.values()]
    par = pairwise_agreement(by_task)
    stats = {"pearson_r": pearson(ours, theirs), "kendall_tau": kendall_tau_b(ours, theirs), "par": par.rate,
             "opc": pearson(our_means, their_means, unit="system"),
             "osc": spearman(our_means, their_means, unit="system")}
    return {
        "benchmark": benchmark, "metric": metric, "judge": judge, "scale": group.get_column("scale")[0],
        "n_pairs": len(items), "n_systems": len(by_system), "n_tasks": len([t for t in by_task if t]),
        **{name: stat.value for name, stat in stats.items()}, "par_pairs": par.compared,
        "mean_diff": mean([o - p for o, p in items.values()]),
        "note": "; ".join(_why_null(stats) + notes), "computed_at": now,
    }


def _items(group: pl.DataFrame) -> tuple[dict[tuple[str, str], tuple[float, float]], list[str]]:
    """(system, task) -> (ours, published); an item published twice (two files) takes the mean of
    its published values, and the note says how many items that was."""
    items: dict[tuple[str, str], tuple[float, list[float]]] = {}
    scales_differ = 0
    for system, task, ours, published, scale, published_scale in group.select(
            *ITEM, "ours", "published", "scale", "published_scale").iter_rows():
        items.setdefault((system, task), (ours, []))[1].append(published)
        scales_differ += published_scale is not None and published_scale != scale
    notes = []
    repeated = sum(len(set(values)) > 1 for _, values in items.values())
    if repeated:
        notes.append(f"{repeated} item(s) published with different values in several rows: their mean is used")
    if scales_differ:
        notes.append(f"{scales_differ} published value(s) declared on another scale than ours")
    return {key: (ours, mean(values)) for key, (ours, values) in items.items()}, notes


def _why_null(stats: dict[str, Stat]) -> list[str]:
    """One note per reason, naming every statistic it left NULL ('pearson_r, kendall_tau: ...')."""
    by_reason: dict[str, list[str]] = {}
    for name, stat in stats.items():
        if stat.value is None:
            by_reason.setdefault(stat.note, []).append(name)
    return [f"{', '.join(names)}: {reason}" for reason, names in by_reason.items()]


def agreement_markdown(agreement: pl.DataFrame) -> str:
    """The rows as a Markdown table, for the asset's page in the UI."""
    header = "| benchmark | metric | judge | pairs | r | tau | PAR | OPC | OSC |\n|---|---|---|---:|---:|---:|---:|---:|---:|"
    lines = [header]
    for row in agreement.iter_rows(named=True):
        figures = " | ".join(_figure(row[name]) for name in ("pearson_r", "kendall_tau", "par", "opc", "osc"))
        lines.append(f"| {row['benchmark']} | {row['metric']} | {row['judge']} | {row['n_pairs']} | {figures} |")
    return "\n".join(lines)


def _figure(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def invalid_figures(agreement: pl.DataFrame) -> int:
    """Rows whose figures are out of range (correlations outside [-1, 1], PAR outside [0, 1]) or NULL
    without a note saying why."""
    correlation = ("pearson_r", "kendall_tau", "opc", "osc")
    out_of_range = pl.any_horizontal(*(pl.col(c).abs() > 1 for c in correlation),
                                     (pl.col("par") < 0) | (pl.col("par") > 1))
    unexplained = pl.any_horizontal(*(pl.col(c).is_null() for c in (*correlation, "par"))) & (pl.col("note") == "")
    return agreement.filter(out_of_range.fill_null(False) | unexplained).height
