"""What `dreval verify` checks of MiroEval's published synthesis cells (report/{text,multimodal}.json).

A cell's total_weighted_score = sum W_d x dimension_d over coverage, insight, instruction_following,
clarity and the task-specific dimensions, whose weighted mean the release publishes as query_spec: so
total = w1 coverage + w2 insight + w3 instruction_following + w4 clarity + w5 query_spec, the five
weights >= 0 summing to 1 and shared by every system of the task (the rubric and its weights are
generated once per task). With the weights unpublished, they solve from the cells themselves: four
unknowns (w5 = 1 - the others), one equation per system.

- A task with at least `MIN_CELLS` complete cells (all six numbers; a cell with a null dimension had
  its weights renormalised and is left out): each cell's total is predicted from the weights solved
  from the task's other cells and compared with the published one. A cell that breaks the shared
  weights is set aside before the others are judged (one changed cell would otherwise pull the fit of
  every other), so the check names the changed cell.
- A task with fewer: each total must lie between the smallest and the largest of its five parts (a
  weighted mean), and the file says once how many tasks could not be solved.

Allowance: a cell's numbers are off by at most r = half a unit of the total's rounding + the largest
half unit of its parts (the weights sum to 1); a prediction a = x_i (X_P)^+ from the pool P is then off by
at most sum_j |a_j| r_j, on top of the cell's own r_i. Compared on our 0-100 scale (x10).
"""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import polars as pl

from ...releases.published import FLOAT_NOISE, Check, Rounding, within
from .process import SCALE

BENCHMARK = "miroeval"
PARTS = ("coverage", "insight", "instruction_following", "clarity", "query_spec")  # as the release names them
TOTAL = "total_weighted_score"
FREE = len(PARTS) - 1  # the weights sum to 1
MIN_CELLS = FREE + 2  # one spare equation tells a changed cell, the second tells which one
WHAT = ("task synthesis total_weighted_score = the task's shared weights x (coverage, insight, "
        "instruction_following, clarity, query_spec)")
BOUND = "task synthesis total_weighted_score lies within its five parts (a weighted mean of them)"

Cell = dict[str, dict]  # published name -> row


def synthesis_checks(rows: pl.DataFrame) -> Iterator[Check]:
    report = rows.filter(pl.col("published_metric").is_in([*PARTS, TOTAL]) & (pl.col("task") != ""))
    if report.is_empty():
        return
    rounding = Rounding(report.select("file", "published_metric", "published_value").iter_rows())
    cells: dict[tuple[str, str], dict[str, Cell]] = {}
    for row in report.iter_rows(named=True):
        cells.setdefault((row["file"], row["task"]), {}).setdefault(row["system"], {})[row["published_metric"]] = row
    unsolved: dict[str, int] = {}
    for (file, task), by_system in sorted(cells.items()):
        complete = {s: c for s, c in sorted(by_system.items())
                    if all(c.get(n) is not None and c[n]["published_value"] is not None for n in (*PARTS, TOTAL))}
        if len(complete) >= MIN_CELLS:
            yield from _shared_weights(task, complete, rounding)
            continue
        unsolved[file] = unsolved.get(file, 0) + 1
        for system, cell in complete.items():
            parts = [cell[n]["published_value"] for n in PARTS]
            yield within(BENCHMARK, BOUND, system, task, SCALE * cell[TOTAL]["published_value"], SCALE * min(parts),
                         SCALE * max(parts), SCALE * _allowance(cell, rounding))
    for file, n in unsolved.items():
        yield Check(BENCHMARK, f"{WHAT}, in {file}", "", "", float(n), None, 0.0,
                    f"{n} task(s) with fewer than {MIN_CELLS} systems' complete cells: their shared weights "
                    f"cannot be solved (each total is checked within its parts only)")


def _allowance(cell: Cell, rounding: Rounding) -> float:
    """How far a cell's numbers may be from exact, on the published 0-10 scale."""
    return (rounding.half(cell[TOTAL]["file"], TOTAL) + max(rounding.half(cell[n]["file"], n) for n in PARTS)
            + FLOAT_NOISE)


def _equation(cell: Cell) -> tuple[np.ndarray, float]:
    """total - query_spec = sum over the four fixed dimensions of w_d (x_d - query_spec)."""
    spec = cell["query_spec"]["published_value"]
    return (np.array([cell[n]["published_value"] - spec for n in PARTS[:FREE]]),
            cell[TOTAL]["published_value"] - spec)


def _predict(i: str, pool: list[str], eqs: dict, allowance: dict) -> tuple[float, float, np.ndarray] | None:
    """Cell i's total (published scale) from the weights the pool solves, its allowance, the weights;
    None when the pool's cells are too alike to solve them."""
    x = np.array([eqs[j][0] for j in pool])
    if np.linalg.matrix_rank(x) < FREE:
        return None
    inverse = np.linalg.pinv(x)
    weights = inverse @ np.array([eqs[j][1] for j in pool])
    spread = eqs[i][0] @ inverse  # how each pool cell's error reaches the prediction
    spec = eqs[i][2]
    return (float(eqs[i][0] @ weights) + spec, allowance[i] + float(np.abs(spread) @ [allowance[j] for j in pool]),
            weights)


def _shared_weights(task: str, complete: dict[str, Cell], rounding: Rounding) -> Iterator[Check]:
    eqs = {s: (*_equation(c), c["query_spec"]["published_value"]) for s, c in complete.items()}
    allowance = {s: _allowance(c, rounding) for s, c in complete.items()}
    pool, set_aside = list(complete), []

    def off_by(i: str, others: list[str]) -> float:
        found = _predict(i, others, eqs, allowance)
        if found is None:
            return 0.0
        predicted, allowed, _ = found
        return abs(complete[i][TOTAL]["published_value"] - predicted) / allowed

    while len(pool) > MIN_CELLS:  # set the worst cell aside while the rest still over-determine the weights
        ratios = {i: off_by(i, [j for j in pool if j != i]) for i in pool}
        worst = max(ratios, key=ratios.get)
        if ratios[worst] <= 1:
            break
        pool.remove(worst)
        set_aside.append(worst)
    for system in complete:
        others = [j for j in pool if j != system]
        found = _predict(system, others, eqs, allowance) if len(others) >= FREE else None
        published = SCALE * complete[system][TOTAL]["published_value"]
        if found is None:
            yield Check(BENCHMARK, WHAT, system, task, published, None, 0.0,
                        "the other cells are too alike to solve the task's weights")
            continue
        predicted, allowed, weights = found
        shown = ", ".join(f"{n} {w:.3g}" for n, w in zip(PARTS, [*weights, 1 - weights.sum()]))
        note = f"weights solved from {len(others)} other system(s): {shown}"
        if system in set_aside:
            note = f"this cell breaks the weights the task's other cells share; {note}"
        yield Check(BENCHMARK, WHAT, system, task, published, SCALE * predicted, SCALE * allowed, note)
