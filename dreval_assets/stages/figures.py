"""What each stage's materialisation says about one partition: figures computed from that partition's
rows only (a report's verdict counts, its scores), so a partition's page never shows a whole run's
totals; the run's totals are their sums, recorded once. Dagster-free (`defs/metadata.py` attaches them).
"""
from __future__ import annotations

from typing import Callable, Iterable, Mapping

import polars as pl

from ..benchmarks.suites import SUITES
from ..core.models import VERDICTS

Key = tuple[str, ...]
Figures = dict[str, object]
HEADLINE_SCORES = 4  # per suite, the first headline metrics a partition's `scores` table lists


class Markdown(str):
    """A figure shown as Markdown (a small table), not as plain text."""


def key_columns(frame: pl.DataFrame) -> list[str]:
    return [c for c in ("system", "task") if c in frame.columns]


def row_counts(frames: Mapping[str, pl.DataFrame], keys: Iterable[Key]) -> dict[Key, Figures]:
    """`rows_<table>` per partition for every table written (0 where a partition wrote none)."""
    keys = list(keys)
    counts: dict[Key, Figures] = {k: {} for k in keys}
    for table, frame in frames.items():
        columns = key_columns(frame)
        found = {tuple(r[:-1]): r[-1] for r in frame.group_by(columns).len().iter_rows()} if frame.height else {}
        for k in keys:
            counts[k][f"rows_{table}"] = int(found.get(k, 0))
    return counts


NO_ROWS: Key = ("",)  # the figures' names when no partition of the run wrote a row


def _grouped(frame: pl.DataFrame, *aggregations: pl.Expr, **named: pl.Expr) -> dict[Key, Figures]:
    """Figures per partition key from aggregations over that partition's rows (with no row at all, the
    aggregations over nothing under NO_ROWS, so every partition still shows every figure's name)."""
    if frame.height == 0:
        return {NO_ROWS: frame.select(*aggregations, **named).row(0, named=True)}
    columns = key_columns(frame)
    out = {}
    for row in frame.group_by(columns).agg(*aggregations, **named).iter_rows(named=True):
        out[tuple(row.pop(c) for c in columns)] = row
    return out


def _reports(frames) -> dict[Key, Figures]:
    return _grouped(frames["reports"], pl.col("status").first(), pl.col("n_chars").first().fill_null(0),
                    pl.col("na_reason").first().fill_null(""), has_trace=pl.col("trace").is_not_null().any())


def _trace_steps(frames) -> dict[Key, Figures]:
    return _grouped(frames["trace_steps"], steps=pl.len(), shape=pl.col("shape").first())


def _report_images(frames) -> dict[Key, Figures]:
    ok = pl.col("status") == "ok"
    return _grouped(frames["report_images"], figures=pl.len(), valid_images=ok.sum().cast(pl.Int64),
                    invalid_images=(~ok).sum().cast(pl.Int64),
                    duplicate_figures=pl.col("duplicate_of").is_not_null().sum().cast(pl.Int64))


def _parsed_reports(frames) -> dict[Key, Figures]:
    return _grouped(frames["parsed_reports"], sentences=pl.col("n_sentences").first(),
                    references=pl.col("n_references").first(), extraction=pl.col("extraction").first(),
                    ungrounded_dropped=pl.col("n_ungrounded").first().fill_null(0))


def _fetched_references(frames) -> dict[Key, Figures]:
    return _grouped(frames["fetched_references"], unknown=(pl.col("status") != "ok").sum())


def _claim_verdicts(frames) -> dict[Key, Figures]:
    return _grouped(frames["claim_verdicts"], **{f"n_{v}": (pl.col("verdict") == v).sum() for v in VERDICTS})


def _report_judgments(frames) -> dict[Key, Figures]:
    judged = frames["report_judgments"]
    figures = _grouped(judged, na=(pl.col("credit").is_null() & pl.col("score").is_null()).sum())
    kinds = _grouped(judged.group_by("system", "task", "kind").len().sort("kind"),
                     kinds=pl.format("{} {}", "kind", "len").str.join(", "))
    return {k: {**v, **kinds.get(k, {})} for k, v in figures.items()}


def _metric_scores(frames) -> dict[Key, Figures]:
    scores = frames["metric_scores"]
    figures = _grouped(scores, na=pl.col("value").is_null().sum(),
                       suites=pl.col("suite").unique().sort().str.join(", "))
    # each partition's table from its headline rows, split in one pass (a filter per partition and
    # suite was ~0.08 s at the end of every 100-partition run)
    columns, by_key = key_columns(scores), {}
    for row in scores.filter(_headline_of(scores)).iter_rows(named=True):
        by_key.setdefault(tuple(row[c] for c in columns), []).append(row)
    for key in figures if scores.height else []:
        figures[key]["scores"] = scores_markdown(by_key.get(key, []))
    return figures


def _headline_of(scores: pl.DataFrame) -> pl.Expr:
    """The rows of each suite's first `HEADLINE_SCORES` headline metrics."""
    picked = [(suite, metric) for suite in scores.get_column("suite").unique().to_list() if suite in SUITES
              for metric in SUITES[suite].headline[:HEADLINE_SCORES]]
    return (pl.col("suite") + "\x1f" + pl.col("metric")).is_in([f"{s}\x1f{m}" for s, m in picked])


def scores_markdown(rows: list[dict]) -> Markdown:
    """This partition's headline scores per suite (its rows of them): value, or N/A with its reason bucket."""
    lines = ["| suite | metric | value | N/A reason |", "|---|---|---|---|"]
    order = {(suite, metric): (suite not in SUITES, suite, i) for suite in {r["suite"] for r in rows}
             for i, metric in enumerate(SUITES[suite].headline[:HEADLINE_SCORES] if suite in SUITES else ())}
    for r in sorted(rows, key=lambda r: order[(r["suite"], r["metric"])]):
        value = "N/A" if r["value"] is None else f"{r['value']:.2f}"
        lines.append(f"| {r['suite']} | {r['metric']} | {value} | {r['na_reason'] or ''} |")
    return Markdown("\n".join(lines))


def _task_rubrics(frames) -> dict[Key, Figures]:
    return _grouped(frames["task_rubrics"], kinds=pl.col("kind").unique().sort().str.join(", "),
                    na=pl.col("na_reason").is_not_null().sum())


FIGURES: dict[str, Callable[[Mapping[str, pl.DataFrame]], dict[Key, Figures]]] = {
    "reports": _reports, "trace_steps": _trace_steps, "parsed_reports": _parsed_reports,
    "report_images": _report_images,
    "fetched_references": _fetched_references, "claim_verdicts": _claim_verdicts,
    "report_judgments": _report_judgments, "metric_scores": _metric_scores, "task_rubrics": _task_rubrics,
}


def partition_figures(asset: str, frames: Mapping[str, pl.DataFrame], keys: Iterable[Key]) -> dict[Key, Figures]:
    """Every partition's figures: its rows per table (`rows_<table>`, which also replace the IO manager's
    run-wide counts on the partition's page), then the asset's own figures (counts are 0 and
    texts empty for a partition that wrote no row)."""
    keys = list(keys)
    figures = row_counts(frames, keys)
    own = FIGURES[asset](frames) if asset in FIGURES else {}
    blank = _blank(own.pop(NO_ROWS, None) or next(iter(own.values()), {}))
    for k in keys:
        figures[k].update(own.get(k, blank))
    return figures


def _blank(example: Figures) -> Figures:
    return {name: (0 if isinstance(v, (int, float)) and not isinstance(v, bool) else
                   False if isinstance(v, bool) else "") for name, v in example.items()}


def run_totals(figures: Mapping[Key, Figures]) -> Figures:
    """The sums of the partitions' counts (texts and flags are per partition only)."""
    totals: Figures = {"partitions": len(figures)}
    for per_partition in figures.values():
        for name, value in per_partition.items():
            if isinstance(value, int) and not isinstance(value, bool):
                totals[name] = totals.get(name, 0) + value
    return totals
