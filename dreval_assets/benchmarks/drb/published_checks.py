"""What `dreval verify` recomputes from DeepResearch Bench's published scores, with our aggregation
(`aggregation.aggregate`):

- race_result.txt: each dimension's and the overall score's mean = the mean over the model's
  raw_results.jsonl tasks (`mean`: a task with no value is left out, said in the note). The benchmark
  has 100 tasks and race_result.txt is over all of them: a release holding fewer whose mean differs is
  not comparable, with the counts (a run over a subset, whose means equal its tasks', matches);
- each raw_results task: its scores within 0-1, and overall_score = T/(T+R) within its four
  dimensions' scores: T = sum W_d t_d, R = sum W_d r_d makes it the mean of the t_d/(t_d+r_d) weighted by
  W_d (t_d+r_d) >= 0, so no task can score above its best dimension or below its worst;
- fact_result.txt: valid_rate = total_valid_citations / total_citations (`micro`: pooled over tasks;
  both counts are per task with citations, so their ratio holds whatever tasks the release holds).

Compared on the files' own 0-1 scale. Tolerance: half a unit of the last decimal the published number
is written with (`Rounding`) plus the mean of its inputs' half-units (counts are exact).
"""
from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from ...releases.published import FLOAT_NOISE, Check, Rounding, all_within, over_tasks_present, within
from ..aggregation import TaskValue, aggregate
from .published import BENCHMARK, FACT_RESULT, PUBLISHED_TASKS, RACE_METRICS, RACE_RESULT, RAW_RESULTS

DIMENSIONS = [ours for ours in RACE_METRICS.values() if ours != "race"]


def published_checks(rows: pl.DataFrame) -> Iterator[Check]:
    rounding = Rounding(rows.select("file", "published_metric", "published_value").iter_rows())
    yield from race_checks(rows, rounding)
    yield from task_checks(rows, rounding)
    yield from fact_checks(rows, rounding)


def _of(rows: pl.DataFrame, name: str) -> pl.DataFrame:
    return rows.filter(pl.col("file").str.ends_with("/" + name))


def race_checks(rows: pl.DataFrame, rounding: Rounding) -> Iterator[Check]:
    raw = _of(rows, RAW_RESULTS)
    for row in _of(rows, RACE_RESULT).sort("system", "line").iter_rows(named=True):
        if row["published_value"] is None:
            continue
        what = f"race_result {row['published_metric']} = mean over raw_results tasks"
        tasks = raw.filter((pl.col("system") == row["system"]) & (pl.col("metric") == row["metric"]))
        if tasks.is_empty():
            yield Check(BENCHMARK, what, row["system"], "", row["published_value"], None, 0.0,
                        f"the release holds no raw_results.jsonl scores of {row['metric']} for this model")
            continue
        values = tasks["published_value"].to_list()
        scored = tasks.filter(pl.col("published_value").is_not_null())
        left_out = len(values) - scored.height
        spread = sum(rounding.half(f, m) for f, m in scored.select("file", "published_metric").iter_rows())
        check = Check(BENCHMARK, what, row["system"], "", row["published_value"],
                      aggregate("mean", [TaskValue(v) for v in values]),
                      rounding.half(row["file"], row["published_metric"]) + spread / max(1, scored.height)
                      + FLOAT_NOISE,
                      f"{scored.height} task(s)" + (f"; {left_out} without a value left out" if left_out else ""))
        yield over_tasks_present(check, tasks["task"].n_unique(), PUBLISHED_TASKS["all"])


def task_checks(rows: pl.DataFrame, rounding: Rounding) -> Iterator[Check]:
    """Each raw_results task: its scores within 0-1, its overall within its four dimensions."""
    raw = _of(rows, RAW_RESULTS)
    for (system, task), group in raw.sort("system", "task").group_by("system", "task", maintain_order=True):
        by_metric = {r["metric"]: r for r in group.iter_rows(named=True)}
        half = {m: rounding.half(r["file"], r["published_metric"]) for m, r in by_metric.items()}
        values = {r["published_metric"]: r["published_value"] for r in by_metric.values()}
        in_range = all_within(BENCHMARK, "task RACE scores within 0-1", system, task, values, 0.0, 1.0,
                              max(half.values()) + FLOAT_NOISE)
        if in_range is not None:
            yield in_range
        overall = by_metric.get("race")
        parts = [by_metric[d]["published_value"] for d in DIMENSIONS
                 if d in by_metric and by_metric[d]["published_value"] is not None]
        if overall is None or overall["published_value"] is None:
            continue
        what = "task overall_score = T/(T+R) lies within its four dimensions' scores (a weighted mean of them)"
        if len(parts) < len(DIMENSIONS):
            yield Check(BENCHMARK, what, system, task, overall["published_value"], None, 0.0,
                        f"{len(parts)} of the four dimension scores are published")
            continue
        yield within(BENCHMARK, what, system, task, overall["published_value"], min(parts), max(parts),
                     half["race"] + max(half[d] for d in DIMENSIONS) + FLOAT_NOISE)


def fact_checks(rows: pl.DataFrame, rounding: Rounding) -> Iterator[Check]:
    fact = _of(rows, FACT_RESULT)
    for (system,), group in fact.group_by("system", maintain_order=True):
        by_metric = {r["metric"]: r for r in group.iter_rows(named=True)}
        rate = by_metric.get("fact_accuracy")
        if rate is None or rate["published_value"] is None:
            continue
        what = f"fact_result {rate['published_metric']} = total_valid_citations / total_citations (pooled)"
        # both are per task with citations in the file: their ratio is the pooled rate
        total, valid = (by_metric.get(m, {}).get("value") for m in ("total_citations", "effective_citations"))
        if total is None or valid is None:
            yield Check(BENCHMARK, what, system, "", rate["published_value"], None, 0.0,
                        "total_citations or total_valid_citations is not published")
            continue
        if total <= 0:
            yield Check(BENCHMARK, what, system, "", rate["published_value"], None, 0.0, "no citations counted")
            continue
        pooled = aggregate("micro", [TaskValue(valid / total, n_items=int(total))])
        published = rate["published_value"]
        percent = published > 1  # a rate written as a percentage
        yield Check(BENCHMARK, what, system, "", published, pooled * (100 if percent else 1),
                    rounding.half(rate["file"], rate["published_metric"]) + FLOAT_NOISE)
