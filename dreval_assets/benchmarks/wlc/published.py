"""Wiki Live Challenge's published writing results (../shared/methods/formats.md) and what
`dreval verify` recomputes from them.

  results/<run>/<Title>_writing.json = {topic, mode: "winrate", allow_tie,
      aggregate: {<category>: {gen_wins, gt_wins, ties, total, gen_win_rate}, overall: {...}},
      details: {<category>: [{criterion_id, criterion_index, criterion_text, category, winner, ...}]}}

One file is one record (one run's article against the reference): its rows are imported together or
the file is skipped with a problem, since its aggregates are only checkable against its own details.
Every file is read: an article with a task file is linked to that task's key, one without is keyed
by its title (noted), since its scores are checkable against its own details alone.
Rows, system = the run, task = the task's (or the title's) key:
- per criterion `<category>.c<criterion_index>`: 1 generated wins, 0 the reference wins, 0.5 tie
  (`judgments.OUTCOME_SCORE`, as our pairwise rows); `published_value` is NULL (the file writes a word);
- per category the win rate x100 (`well_written`, `broad`, `neutral`; `overall` -> `writing`) and its
  counts `<category>.gen_wins|gt_wins|ties|total`.
Release category names are matched to ours by their first word (Well-written, Broad in coverage,
Neutral or Neutrality); another name is kept in lower case with a note.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import polars as pl

from ...releases.json_readers import read_json
from ...releases.published import FLOAT_NOISE, Check, PublishedScore, Rounding, cell_number
from ...releases.records import ImportLog, relative, subfolders, text_of
from .criteria import CATEGORIES
from .judgments import OUTCOME_SCORE
from .metrics import win_rates

BENCHMARK = "wlc"
PUBLISHED_TASKS = {"all": 100}  # a release's ga_100.json; each writing result is checked on its own article
RESULTS = Path("results")
SUFFIX = "_writing.json"
OVERALL = "overall"
OVERALL_METRIC = "writing"
WINNERS = {"gen": "generated", "gt": "reference", "tie": "tie"}
COUNTS = {"gen_wins": "generated", "gt_wins": "reference", "ties": "tie"}  # count -> outcome it counts; + total
RATE = "gen_win_rate"
# A title -> (the task's key, None) where a task file has the title, else (the title's own key, why no task).
Resolve = Callable[[str], tuple[str, str | None]]


class BadFile(ValueError):
    """A results file not in the published shape: skipped whole."""


def writing_files(root: Path) -> list[Path]:
    return [path for run in subfolders(Path(root) / RESULTS) for path in sorted(run.glob(f"*{SUFFIX}"))
            if path.is_file()]


def has_published(root: Path) -> bool:
    return bool(writing_files(root))


def category_metric(name: str) -> str:
    """Our metric for a release category: `well_written`, `broad`, `neutral`, `writing` (overall),
    else the name in lower case with non-letters as underscores."""
    normal = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    if normal == OVERALL:
        return OVERALL_METRIC
    return next((ours for ours in CATEGORIES if normal.split("_")[0].startswith(ours.split("_")[0])), normal)


def iter_published(root: Path, log: ImportLog, resolve: Resolve) -> Iterator[list[PublishedScore]]:
    """One list of rows per results file; `resolve` is the loader's title -> task key match."""
    root = Path(root)
    for path in writing_files(root):
        file = relative(root, path)
        data = read_json(path, root, log)
        if data is None:
            continue
        try:
            if not isinstance(data, dict):
                raise BadFile(f"expected a JSON object, found a {type(data).__name__}")
            key = _task(data, path, resolve, file, log)
            yield _rows(data, path.parent.name, key, file, log)
        except BadFile as exc:
            log.skip(file, None, f"{exc}; file not imported")


def _task(data: dict, path: Path, resolve: Resolve, file: str, log: ImportLog) -> str:
    """The task of the file: its `topic`, else its file name, linked to the task that has the title;
    an article no task file has is keyed by its title (published scores need no task of ours)."""
    titles = list(dict.fromkeys(t for t in (text_of(data.get("topic")), path.name[: -len(SUFFIX)]) if t))
    if not titles:
        raise BadFile("no topic and no title in the file name")
    resolved = [(title, *resolve(title)) for title in titles]
    for _, key, why in resolved:
        if why is None:
            return key
    title, key, why = resolved[0]
    log.note(file, None, f"no task for this article ({why}): its published scores are keyed by its title {title!r} "
                         f"({key})")
    return key


def _rows(data: dict, run: str, key: str, file: str, log: ImportLog) -> list[PublishedScore]:
    if data.get("mode") != "winrate":
        raise BadFile(f"mode is {data.get('mode')!r}, not 'winrate'")
    aggregate, details = data.get("aggregate"), data.get("details")
    if not isinstance(aggregate, dict) or not isinstance(details, dict):
        raise BadFile("aggregate and details must be objects")

    def row(metric: str, value: float | None, scale: str, name: str, written: float | None) -> PublishedScore:
        return PublishedScore(system=run, task=key, metric=metric, value=value, scale=scale,
                              published_metric=name, published_value=written, file=file, line=None)

    rows, named = [], {}
    for category, criteria in details.items():
        metric = _metric(category, named, file, log)
        if not isinstance(criteria, list):
            raise BadFile(f"details.{category} is not a list")
        seen: set[int] = set()
        for position, criterion in enumerate(criteria):
            where = f"details.{category}[{position}]"
            index = criterion.get("criterion_index") if isinstance(criterion, dict) else None
            if isinstance(index, bool) or not isinstance(index, int) or index in seen:
                raise BadFile(f"{where}: criterion_index {index!r} is missing, not a whole number or repeated")
            winner = WINNERS.get(text_of(criterion.get("winner")).lower())
            if winner is None:
                raise BadFile(f"{where}: winner {criterion.get('winner')!r} is not gen, gt or tie")
            seen.add(index)
            rows.append(row(f"{metric}.c{index}", OUTCOME_SCORE[winner], "0-1", f"{where}.winner", None))
    for category, numbers in aggregate.items():
        metric = _metric(category, named, file, log)
        if not isinstance(numbers, dict):
            raise BadFile(f"aggregate.{category} is not an object")
        for name in (*COUNTS, "total"):
            count = _number(numbers.get(name), f"aggregate.{category}.{name}", whole=True)
            rows.append(row(f"{metric}.{name}", count, "count", f"aggregate.{category}.{name}", count))
        rate = _number(numbers.get(RATE), f"aggregate.{category}.{RATE}", high=1)
        rows.append(row(metric, None if rate is None else 100 * rate, "0-100", f"aggregate.{category}.{RATE}", rate))
    return rows


def _metric(category: str, named: dict[str, str], file: str, log: ImportLog) -> str:
    """Our metric for the category; two release names that map to one metric make the file unusable."""
    metric = category_metric(str(category))
    if named.setdefault(metric, category) != category:
        raise BadFile(f"categories {named[metric]!r} and {category!r} are both {metric}")
    if metric not in CATEGORIES and metric != OVERALL_METRIC:
        log.note(file, None, f"category {category!r} is none of ours (well_written, broad, neutral): kept as {metric}")
    return metric


def _number(value: object, name: str, whole: bool = False, high: float = float("inf")) -> float | None:
    try:
        number = cell_number(value)
    except ValueError as exc:
        raise BadFile(f"{name}: {exc}") from None
    if number is not None and not 0 <= number <= high:
        raise BadFile(f"{name} = {value!r} is outside 0-{high:g}")
    if number is not None and whole and not number.is_integer():
        raise BadFile(f"{name} = {value!r} is not a whole count")
    return number


# --- dreval verify ------------------------------------------------------------------------

CRITERION = re.compile(r"^(?P<category>.+)\.c-?\d+$")
SCORE_OUTCOME = {score: outcome for outcome, score in OUTCOME_SCORE.items()}
COUNT_WORDS = {"gen_wins": "won", "gt_wins": "lost", "ties": "tied", "total": "judged"}


def published_checks(rows: pl.DataFrame) -> Iterator[Check]:
    """Per article: each category's and the overall win rate, and their win/loss/tie/total counts,
    recomputed from the per-criterion winners with the suite's own `win_rates`."""
    if rows.is_empty():
        return
    # the release writes every rate alike: the most decimals any shows is their rounding (0-1 -> 0-100)
    rates = rows.filter(pl.col("published_metric").str.ends_with(".gen_win_rate"))["published_value"]
    tolerance = Rounding(("", RATE, v) for v in rates).half("", RATE) * 100 + FLOAT_NOISE
    for (file,), article in rows.sort("file").group_by("file", maintain_order=True):
        yield from _article_checks(article, tolerance)


def _article_checks(article: pl.DataFrame, tolerance: float) -> Iterator[Check]:
    outcomes: dict[str, list[str]] = {}
    aggregates = []
    for row in article.iter_rows(named=True):
        found = CRITERION.match(row["metric"])
        if found and row["value"] is not None:
            outcomes.setdefault(found["category"], []).append(SCORE_OUTCOME.get(row["value"], "tie"))
        elif row["value"] is not None and not found:
            aggregates.append(row)
    rates = win_rates(outcomes) if outcomes else {}
    every = [o for results in outcomes.values() for o in results]
    for row in aggregates:
        category, _, count = row["metric"].partition(".")
        overall = category == OVERALL_METRIC
        judged = every if overall else outcomes.get(category)
        note = "" if judged else "no per-criterion winners published for this category"
        if count:
            counted = None if not judged else float(len(judged) if count == "total" else judged.count(COUNTS[count]))
            yield Check(BENCHMARK, f"{row['metric']} = criteria {COUNT_WORDS[count]} in details", row["system"],
                        row["task"], row["value"], counted, 0.0, note)
        else:
            rate = None if not judged else 100 * rates["overall" if overall else category]
            what = ("writing = generated wins / all criteria (micro)" if overall
                    else f"{category} = generated wins / its criteria")
            yield Check(BENCHMARK, what, row["system"], row["task"], row["value"], rate, tolerance, note)
