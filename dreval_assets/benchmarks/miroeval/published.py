"""MiroEval's published per-task scores (../shared/methods/formats.md) and what `dreval verify`
recomputes from them.

  data/detail_results/report/{text,multimodal}.json       0-10 synthesis dimensions and total
  data/detail_results/factuality/{text,multimodal}.json   RIGHT / WRONG / CONFLICT / UNKNOWN counts
  data/detail_results/process/{text,multimodal}.json      1-10 process dimensions (+ _overall_from_per_task)

Each file is `{task_id: {model: cell}}`. A cell is one record: its rows are imported together or
the cell is skipped with a problem. A `null` cell gives rows with no value (how nulls enter a mean is
the aggregation policy's business, not the reader's). Scores on 0-10 and 1-10 become 0-100 (x10),
as our suite shows them; counts stay counts. `_overall_from_per_task` is read where the release puts
it, inside a cell (that task's process score), and also as a top-level key `{model: score}` (a
model's overall), should a file carry it there.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import polars as pl

from ...core.stats import mean
from ...releases.json_readers import read_json_object
from ...releases.published import FLOAT_NOISE, Check, PublishedScore, Rounding, cell_number, over_tasks_present
from ...releases.records import ImportLog, relative
from .process import GROUPS, SCALE, metric_name, process_score
from .published_synthesis import synthesis_checks
from .right_ratio import FORMULA, factuality_ratio

BENCHMARK = "miroeval"
PUBLISHED_TASKS = {"text": 70, "multimodal": 30}  # a model's overall in a split's file is over all its tasks
DETAILS = Path("data/detail_results")
KINDS = ("report", "factuality", "process")
SPLITS = ("text", "multimodal")
OVERALL = "_overall_from_per_task"
# report field -> our metric (query_spec is the task-specific dimensions' weighted mean: our specificity)
REPORT_METRICS = {"coverage": "coverage", "insight": "insight", "instruction_following": "instruction_following",
                  "clarity": "clarity", "query_spec": "specificity", "total_weighted_score": "synthesis"}
COUNTS = ("right", "wrong", "conflict", "unknown")


class BadCell(ValueError):
    """A cell that is not in the published shape: skipped whole."""


def published_files(root: Path) -> list[Path]:
    paths = (Path(root) / DETAILS / kind / f"{split}.json" for kind in KINDS for split in SPLITS)
    return [path for path in paths if path.is_file()]


def has_published(root: Path) -> bool:
    return bool(published_files(root))


def iter_published(root: Path, log: ImportLog, key_of: Callable[[str], str | None]) -> Iterator[list[PublishedScore]]:
    """One list of rows per cell (and per model of a top-level overall). `key_of` is the loader's own
    task key function. Each file is read whole: one small object of numbers per task and model."""
    root = Path(root)
    for path in published_files(root):
        file, kind = relative(root, path), path.parent.name
        data = read_json_object(path, root, log, "{task_id: {model: scores}}")
        if data is None:
            continue
        for number, (task_id, models) in enumerate(data.items(), start=1):
            if kind == "process" and task_id == OVERALL:
                yield from _model_overalls(models, file, number, log)
                continue
            key = key_of(str(task_id))
            if key is None:
                log.skip(file, number, f"task id {task_id!r} gives no valid task key: its scores are not imported")
                continue
            if not isinstance(models, dict):
                log.skip(file, number, f"task {task_id}: expected {{model: scores}}, found a {type(models).__name__}")
                continue
            for model, cell in models.items():
                try:
                    yield _cell_rows(kind, cell, str(model), key, file, number, log, task_id)
                except BadCell as exc:
                    log.skip(file, number, f"task {task_id}, model {model}: {exc}; cell not imported")


def _model_overalls(models: object, file: str, number: int, log: ImportLog) -> Iterator[list[PublishedScore]]:
    if not isinstance(models, dict):
        log.skip(file, number, f"{OVERALL}: expected {{model: score}}; not imported")
        return
    for model, value in models.items():
        try:
            score = _number(value, OVERALL, 1, 10)
        except BadCell as exc:
            log.skip(file, number, f"{OVERALL}, model {model}: {exc}; not imported")
            continue
        yield [Cell(str(model), "", file, number, log, OVERALL).row("process", score, SCALE, "0-100", OVERALL)]


def _cell_rows(kind: str, cell: object, model: str, key: str, file: str, number: int, log: ImportLog,
               task_id: str) -> list[PublishedScore]:
    if cell is not None and not isinstance(cell, dict):
        raise BadCell(f"expected an object of scores or null, found a {type(cell).__name__}")
    cell_rows = Cell(model, key, file, number, log, f"task {task_id}, model {model}")
    return {"report": cell_rows.report, "factuality": cell_rows.factuality, "process": cell_rows.process}[kind](cell)


class Cell:
    """The rows of one cell. A null cell (or null group) has every field, each without a value; a
    field missing from a cell that has others gives no row (noted), unknown fields are noted."""

    def __init__(self, model: str, key: str, file: str, number: int, log: ImportLog, where: str):
        self.model, self.key, self.file, self.number, self.log, self.where = model, key, file, number, log, where

    def fields(self, scores: dict | None, names, within: str = "",
               also: tuple[str, ...] = ()) -> Iterator[tuple[str, object]]:
        """(name, value) of each expected field the scores give; all of them, valueless, for null.
        `also`: fields read elsewhere, neither unknown nor required."""
        if scores is None:
            yield from ((name, None) for name in names)
            return
        extra = sorted(map(str, set(scores) - set(names) - set(also)))
        if extra:
            place = within.rstrip(".") or "the cell"
            self.log.note(self.file, self.number, f"{self.where}: unknown field(s) in {place} not read: "
                                                  f"{', '.join(extra[:8])}")
        for name in names:
            if name in scores:
                yield name, scores[name]
            else:
                self.log.note(self.file, self.number, f"{self.where}: no {within}{name}; no row for it")

    def row(self, metric: str, published: float | None, factor: float, scale: str, name: str) -> PublishedScore:
        return PublishedScore(system=self.model, task=self.key, metric=metric,
                              value=None if published is None else published * factor, scale=scale,
                              published_metric=name, published_value=published, file=self.file, line=self.number)

    def report(self, cell: dict | None) -> list[PublishedScore]:
        return [self.row(REPORT_METRICS[name], _number(value, name, 0, 10), SCALE, "0-100", name)
                for name, value in self.fields(cell, REPORT_METRICS)]

    def factuality(self, cell: dict | None) -> list[PublishedScore]:
        counts = {name: _count(value, name) for name, value in self.fields(cell, COUNTS)}
        rows = [self.row(name, value, 1, "count", name) for name, value in counts.items()]
        complete = len(counts) == len(COUNTS) and None not in counts.values()
        ratio = factuality_ratio(*(counts[name] for name in COUNTS)) if complete else None
        return rows + [self.row("factuality", ratio, 100, "0-100", FORMULA)]

    def process(self, cell: dict | None) -> list[PublishedScore]:
        rows = []
        for group, scores in self.fields(cell, GROUPS, also=(OVERALL,)):
            if scores is not None and not isinstance(scores, dict):
                raise BadCell(f"{group} is a {type(scores).__name__}, not an object")
            rows += [self.row(metric_name(dimension), _number(value, dimension, 1, 10), SCALE, "0-100",
                              f"{group}.{dimension}")
                     for dimension, value in self.fields(scores, GROUPS[group], within=f"{group}.")]
        if cell and OVERALL in cell:
            rows.append(self.row("process", _number(cell[OVERALL], OVERALL, 1, 10), SCALE, "0-100", OVERALL))
        return rows


def _number(value: object, name: str, low: float, high: float) -> float | None:
    try:
        number = cell_number(value)
    except ValueError as exc:
        raise BadCell(f"{name}: {exc}") from None
    if number is not None and not low <= number <= high:
        raise BadCell(f"{name} = {value} is outside {low:g}-{high:g}")
    return number


def _count(value: object, name: str) -> float | None:
    number = _number(value, name, 0, float("inf"))
    if number is not None and not number.is_integer():
        raise BadCell(f"{name} = {value} is not a whole count")
    return number


# --- dreval verify ------------------------------------------------------------------------

PROCESS_FORMULA = "process = mean(intrinsic mean, alignment mean) x10"


def published_checks(rows: pl.DataFrame) -> Iterator[Check]:
    """Process overall from its dimensions (per task, and per model where a file gives a model's
    overall; a split's file holding fewer than its published tasks whose mean differs is not
    comparable); synthesis totals from the weights each task's systems share (`published_synthesis`).
    Factuality cells publish counts only (no ratio to hold them to): the reader's whole-count and range
    rules are all there is to check."""
    if rows.is_empty():
        return
    yield from _process_checks(rows)
    yield from synthesis_checks(rows)


def _dimension_scores(rows: pl.DataFrame) -> dict[tuple[str, str, str], float | None]:
    """(file, system, task) -> process score recomputed from the published 1-10 dimensions."""
    wanted = {metric_name(d): (group, d) for group, dims in GROUPS.items() for d in dims}
    cells: dict[tuple[str, str, str], dict[str, dict[str, float | None]]] = {}
    for row in rows.filter(pl.col("metric").is_in(list(wanted)) & (pl.col("task") != "")).iter_rows(named=True):
        group, dimension = wanted[row["metric"]]
        cell = cells.setdefault((row["file"], row["system"], row["task"]), {g: {} for g in GROUPS})
        cell[group][dimension] = row["published_value"]
    return {where: process_score(cell["intrinsic"], cell["alignment"]) for where, cell in cells.items()}


def _process_checks(rows: pl.DataFrame) -> Iterator[Check]:
    overall = rows.filter((pl.col("metric") == "process") & (pl.col("published_metric") == OVERALL)
                          & pl.col("value").is_not_null())
    if overall.is_empty():
        return
    recomputed = _dimension_scores(rows)
    # the release writes every overall alike: the most decimals any shows is their rounding
    tolerance = Rounding(("", OVERALL, v) for v in overall["published_value"]).half("", OVERALL) * SCALE + FLOAT_NOISE
    for row in overall.sort("file", "system", "task").iter_rows(named=True):
        if row["task"]:
            score = recomputed.get((row["file"], row["system"], row["task"]))
            note = "" if score is not None else "no scored intrinsic or alignment dimension in this cell"
            yield Check(BENCHMARK, f"task {PROCESS_FORMULA}", row["system"], row["task"], row["value"], score,
                        tolerance, note)
            continue
        tasks = [score for (file, system, _), score in recomputed.items()
                 if file == row["file"] and system == row["system"]]
        scored = [s for s in tasks if s is not None]
        score = mean(scored)
        note = (f"mean over the {len(scored)} task(s) of {row['file']} with scored dimensions" if score is not None
                else f"{row['file']} holds no scored process cell for this model")
        check = Check(BENCHMARK, f"model {OVERALL} = mean over tasks of {PROCESS_FORMULA}", row["system"], "",
                      row["value"], score, tolerance, note)
        yield over_tasks_present(check, len(tasks), PUBLISHED_TASKS.get(Path(row["file"]).stem))

