"""MMDeepResearch-Bench's published scores (../shared/methods/formats.md), read for `published_scores`.

  reference_outputs/<run>/<run>.task_scores.csv          one row per task: Overall and its parts
  reference_outputs/<run>/<run>.leaderboard.csv          the run's aggregate row (task '')
  reference_outputs/<run>/<run>.leaderboard_manifest.json formulas, per-metric contributing counts, notes
  results/<run>.jsonl                                    {qid, scores{GEN, EVI, MM, VEF, FINAL_MMDR}}

A CSV row, a JSONL line and the manifest are each one record: imported whole or skipped whole. An
empty cell (a MOSAIC sub-metric that does not apply) is a row with no value. The system is the CSV's
`Model` column (else the run folder); a results file's system is its run (file name). Task keys are
the loader's (`task_key('mmdr', id)`). A score whose numbers in a file all lie within 0-1 is read as
0-1 and stored x100 (our MMDR metrics are 0-100); the log notes which. The manifest's counts become rows
`<metric>.n_tasks` (scale count), so checks can tell an aggregate over more tasks than the release holds.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ...core.keys import InvalidKeyError, task_key
from ...releases.csv_readers import header_of, iter_csv
from ...releases.json_readers import iter_jsonl, read_json_object
from ...releases.published import PublishedScore, cell_number
from ...releases.records import ImportLog, first_of, relative, subfolders, text_of

BENCHMARK = "mmdr"
PUBLISHED_TASKS = {"all": 140}  # 100 Research + 40 Daily: a leaderboard row is over all of them
REFERENCE = Path("reference_outputs")
RESULTS = Path("results")
TASK_SCORES, LEADERBOARD, MANIFEST = ".task_scores.csv", ".leaderboard.csv", ".leaderboard_manifest.json"
# published column -> our metric (the paper's abbreviation, lower case, without its dot)
COLUMNS = {"Overall": "overall", "Stored Overall": "stored_overall", "Overall Delta": "overall_delta",
           "FLAE": "flae", "Read.": "read", "Insh.": "insh", "Stru.": "stru", "TRACE": "trace", "Vef.": "vef",
           "Con.": "con", "Cov.": "cov", "Fid.": "fid", "MOSAIC": "mosaic", "Sem.": "sem", "Acc.": "acc", "VQA": "vqa"}
DESCRIPTIVE = {"Model", "Task ID", "Split", "Complete", "Report Path"}  # not scores
RESULT_SCORES = {"GEN": "flae", "EVI": "evi", "MM": "mosaic", "VEF": "vef", "FINAL_MMDR": "overall"}
COUNT_SUFFIX = ".n_tasks"
NOT_SCALED = {"overall_delta"}  # a difference: its size says nothing of the file's scale


def has_published(root: Path) -> bool:
    root = Path(root)
    return any(True for _ in _reference_files(root)) or any(True for _ in _results_files(root))


def iter_published(root: Path, log: ImportLog) -> Iterator[list[PublishedScore]]:
    root = Path(root)
    for run, kind, path in _reference_files(root):
        if kind == MANIFEST:
            yield from _manifest(root, run, path, log)
        else:
            yield from _csv_records(root, run, path, kind == TASK_SCORES, log)
    for path in _results_files(root):
        yield from _results(root, path, log)


def run_of(file: str) -> str:
    """The run a published file belongs to: its folder under reference_outputs/, or a results file's name."""
    parts = Path(file).parts
    if len(parts) >= 3 and parts[0] == REFERENCE.as_posix():
        return parts[1]
    return Path(file).stem


def _reference_files(root: Path) -> Iterator[tuple[str, str, Path]]:
    for folder in subfolders(root / REFERENCE):
        for kind in (TASK_SCORES, LEADERBOARD, MANIFEST):
            for path in sorted(folder.glob(f"*{kind}")):
                if path.is_file():
                    yield folder.name, kind, path


def _results_files(root: Path) -> Iterator[Path]:
    folder = root / RESULTS
    if folder.is_dir():
        yield from (p for p in sorted(folder.glob("*.jsonl")) if p.is_file())


# --- CSV: task scores and the leaderboard row ---------------------------------------------

def _csv_records(root: Path, run: str, path: Path, per_task: bool, log: ImportLog) -> Iterator[list[PublishedScore]]:
    file = relative(root, path)
    header = header_of(path)
    columns = [c for c in header if c in COLUMNS]
    unknown = [c for c in header if c not in COLUMNS and c not in DESCRIPTIVE]
    if unknown:
        log.note(file, 1, f"column(s) kept out: {', '.join(unknown[:8])}")
    if per_task and "Task ID" not in header:
        log.skip(file, None, "no 'Task ID' column: task scores not imported")
        return
    if not columns:
        log.skip(file, None, f"no score column ({', '.join(COLUMNS)}) in the header")
        return
    factors = _factors(file, (cells for _, cells in iter_csv(path, root, ImportLog())), columns, log)
    factors["Overall Delta"] = factors.get("Overall", 1.0)  # a difference of Overall values: Overall's scale
    for line, cells in iter_csv(path, root, log):
        record = _csv_row(cells, columns, run, file, line, per_task, factors, log)
        if record is not None:
            yield record


def _csv_row(cells: dict[str, str], columns: list[str], run: str, file: str, line: int, per_task: bool,
             factors: dict[str, float], log: ImportLog) -> list[PublishedScore] | None:
    system = cells.get("Model", "").strip() or run
    task = ""
    if per_task:
        task = _task_key(cells.get("Task ID", ""), file, line, log)
        if task is None:
            return None
    try:
        numbers = {c: cell_number(cells[c]) for c in columns}
    except ValueError as exc:
        bad = next(c for c in columns if _not_number(cells[c]))
        log.skip(file, line, f"column {bad!r}: {exc}")
        return None
    return [_score(system, task, COLUMNS[c], c, n, factors.get(c, 1.0), file, line) for c, n in numbers.items()]


def _not_number(cell: Any) -> bool:
    try:
        cell_number(cell)
    except ValueError:
        return True
    return False


def _task_key(raw: Any, file: str, line: int, log: ImportLog) -> str | None:
    original_id = text_of(raw)
    if not original_id:
        log.skip(file, line, "no task id")
        return None
    try:
        return task_key(BENCHMARK, original_id)
    except InvalidKeyError as exc:
        log.skip(file, line, str(exc))
        return None


def _score(system: str, task: str, metric: str, name: str, number: float | None, factor: float, file: str,
           line: int | None) -> PublishedScore:
    value = None if number is None else number * factor
    return PublishedScore(system, task, metric, value, "0-100", name, number, file, line)


def _factors(file: str, records: Iterable[dict[str, Any]], names: list[str], log: ImportLog) -> dict[str, float]:
    """Per score name, x100 when every number the file gives it lies within 0-1 (a 0-1 score), else 1
    (already 0-100). Decided per name: a release may write its parts 0-1 and its total 0-100."""
    largest: dict[str, float] = {}
    for record in records:
        for name in names:
            try:
                number = cell_number(record.get(name))
            except ValueError:
                continue
            if number is not None:
                largest[name] = max(abs(number), largest.get(name, 0.0))
    small = [name for name in names if 0 < largest.get(name, 0.0) <= 1 and COLUMNS.get(name) not in NOT_SCALED]
    if small:
        log.note(file, None, f"read as 0-1 (no value above 1) and stored x100 on our 0-100 scale: {', '.join(small)}")
    return {name: 100.0 if name in small else 1.0 for name in names}


# --- manifest -------------------------------------------------------------------------------

def _manifest(root: Path, run: str, path: Path, log: ImportLog) -> Iterator[list[PublishedScore]]:
    """Its per-metric contributing counts, one row each (the formulas and notes are text)."""
    file = relative(root, path)
    data = read_json_object(path, root, log)
    if data is None:
        return
    system = text_of(first_of(data, "model", "Model")) or run
    counts: dict[str, tuple[str, float]] = {}
    for keys, number in _numbers(data, ()):
        metric = _metric_in(keys)
        if metric is None or not _is_count_path(keys):
            continue
        if metric in counts and counts[metric][1] != number:
            log.skip(file, None, f"two different counts for {metric}: {counts[metric][0]} and {'.'.join(keys)}")
            return
        counts[metric] = (".".join(keys), number)
    if not counts:
        log.note(file, None, "no per-metric contributing counts found; nothing imported from it")
        return
    yield [PublishedScore(system, "", metric + COUNT_SUFFIX, number, "count", where, number, file, None)
           for metric, (where, number) in sorted(counts.items())]


def _numbers(value: Any, keys: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], float]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _numbers(inner, (*keys, str(key)))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield keys, float(value)


def _metric_in(keys: tuple[str, ...]) -> str | None:
    """The one metric a key path names (published column name or ours), or None."""
    ours = set(COLUMNS.values())
    found = {COLUMNS[k] if k in COLUMNS else k.lower() for k in keys if k in COLUMNS or k.lower() in ours}
    return found.pop() if len(found) == 1 else None


def _is_count_path(keys: tuple[str, ...]) -> bool:
    return any("count" in k.lower() or k.lower() in ("n", "n_tasks", "tasks", "contributing") for k in keys)


# --- results/<run>.jsonl -------------------------------------------------------------------

def _results(root: Path, path: Path, log: ImportLog) -> Iterator[list[PublishedScore]]:
    file, run = relative(root, path), path.stem
    factors = _factors(file, (record["scores"] for _, record in iter_jsonl(path, root, ImportLog())
                              if isinstance(record.get("scores"), dict)), list(RESULT_SCORES), log)
    for line, record in iter_jsonl(path, root, log):
        rows = _result_record(record, run, file, line, factors, log)
        if rows is not None:
            yield rows


def _result_record(record: dict, run: str, file: str, line: int, factors: dict[str, float],
                   log: ImportLog) -> list[PublishedScore] | None:
    task = _task_key(first_of(record, "qid", "id"), file, line, log)
    if task is None:
        return None
    scores = record.get("scores")
    if not isinstance(scores, dict):
        log.skip(file, line, "no scores object")
        return None
    unknown = sorted(set(scores) - set(RESULT_SCORES))
    if unknown:
        log.note(file, None, f"score(s) kept out: {', '.join(unknown[:8])}")
    rows = []
    for name, metric in RESULT_SCORES.items():
        if name not in scores:
            continue
        try:
            number = cell_number(scores[name])
        except ValueError as exc:
            log.skip(file, line, f"scores.{name}: {exc}")
            return None
        rows.append(_score(run, task, metric, f"scores.{name}", number, factors[name], file, line))
    if not rows:
        log.skip(file, line, f"no score among {', '.join(RESULT_SCORES)}")
        return None
    return rows
