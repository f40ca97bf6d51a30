"""DeepResearch Bench's published scores (../shared/methods/formats.md), read for `published_scores`.

  results/race/<model>/raw_results.jsonl   per task {id, comprehensiveness, insight, instruction_following,
                                           readability, overall_score}, 0-1
  results/race/<model>/race_result.txt     the model's means: `Comprehensiveness: 0.4110` ... `Overall Score: 0.4218`
  results/fact/<model>/fact_result.txt     `total_citations: n`, `total_valid_citations: n`, `valid_rate: r`

A JSONL line and a .txt file are each one record: imported whole or skipped whole. RACE scores are
0-1 in the files and 0-100 in our suite (x100); overall_score is our `race`. valid_rate is our
`fact_accuracy` (x100, a pooled rate). The reference code's stat.py divides both counts by the tasks
that have citations: total_valid_citations is then our `effective_citations` (its default mean over
those tasks) and total_citations (decided citations per such task) stays `total_citations`. The
system is the <model> folder; task keys are the loader's (`task_key('drb', id)`).
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from ...core.keys import InvalidKeyError, task_key
from ...releases.json_readers import iter_jsonl, read_text
from ...releases.published import PublishedScore, cell_number
from ...releases.records import ImportLog, relative, subfolders, text_of

BENCHMARK = "drb"
PUBLISHED_TASKS = {"all": 100}  # the benchmark's release: race_result.txt and fact_result.txt are over these
RACE = Path("results/race")
FACT = Path("results/fact")
RAW_RESULTS, RACE_RESULT, FACT_RESULT = "raw_results.jsonl", "race_result.txt", "fact_result.txt"
# published name (raw_results field, or race_result label in lower case with '_' for spaces) -> ours
RACE_METRICS = {"comprehensiveness": "comprehensiveness", "insight": "insight",
                "instruction_following": "instruction_following", "readability": "readability",
                "overall_score": "race"}
RAW_FIELDS = {"id", "prompt", *RACE_METRICS}
# fact_result label -> (our metric, scale of the value, factor from the file's number)
FACT_METRICS = {"total_citations": ("total_citations", "count", 1.0),
                "total_valid_citations": ("effective_citations", "count", 1.0),
                "valid_rate": ("fact_accuracy", "0-100", 100.0)}
LABELLED = re.compile(r"^\s*([A-Za-z][A-Za-z _-]*?)\s*[:=]\s*(\S+)\s*$")


def has_published(root: Path) -> bool:
    root = Path(root)
    return any(_model_files(root, RACE, name) for name in (RAW_RESULTS, RACE_RESULT)) or \
        bool(_model_files(root, FACT, FACT_RESULT))


def iter_published(root: Path, log: ImportLog) -> Iterator[list[PublishedScore]]:
    root = Path(root)
    for model, path in _model_files(root, RACE, RAW_RESULTS):
        yield from _raw_results(root, model, path, log)
    for model, path in _model_files(root, RACE, RACE_RESULT):
        yield from _labelled_file(root, model, path, _race_row, log)
    for model, path in _model_files(root, FACT, FACT_RESULT):
        yield from _labelled_file(root, model, path, _fact_row, log)


def _model_files(root: Path, folder: Path, name: str) -> list[tuple[str, Path]]:
    return [(model.name, model / name) for model in subfolders(root / folder) if (model / name).is_file()]


def label_name(label: str) -> str:
    """'Instruction Following' -> 'instruction_following', as raw_results spells its fields."""
    return re.sub(r"[\s-]+", "_", label.strip().lower())


# --- raw_results.jsonl ---------------------------------------------------------------------

def _raw_results(root: Path, model: str, path: Path, log: ImportLog) -> Iterator[list[PublishedScore]]:
    file = relative(root, path)
    for line, record in iter_jsonl(path, root, log):
        original_id = text_of(record.get("id"))
        if not original_id:
            log.skip(file, line, "record has no id")
            continue
        try:
            task = task_key(BENCHMARK, original_id)
        except InvalidKeyError as exc:
            log.skip(file, line, str(exc))
            continue
        unknown = sorted(set(record) - RAW_FIELDS)
        if unknown:
            log.note(file, None, f"unknown field(s) kept out: {', '.join(unknown[:8])}")
        try:
            rows = [_race_score(model, task, name, cell_number(record[name]), file, line)
                    for name in RACE_METRICS if name in record]
        except ValueError as exc:
            bad = next(n for n in RACE_METRICS if n in record and not _is_number_or_null(record[n]))
            log.skip(file, line, f"{bad}: {exc}")
            continue
        if not rows:
            log.skip(file, line, f"no score among {', '.join(RACE_METRICS)}")
            continue
        yield rows


def _is_number_or_null(value: object) -> bool:
    try:
        cell_number(value)
    except ValueError:
        return False
    return True


def _race_score(model: str, task: str, name: str, number: float | None, file: str, line: int | None,
                published_name: str | None = None) -> PublishedScore:
    value = None if number is None else 100 * number
    return PublishedScore(model, task, RACE_METRICS[name], value, "0-100", published_name or name, number, file, line)


# --- race_result.txt and fact_result.txt -------------------------------------------------------

def _labelled_file(root: Path, model: str, path: Path, row, log: ImportLog) -> Iterator[list[PublishedScore]]:
    """One record per file: every `Label: number` line read, or the file skipped with the first bad line."""
    file = relative(root, path)
    text = read_text(path, root, log, detect=False)
    if text is None:
        return
    rows, unknown = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = LABELLED.match(line)
        if match is None:
            log.skip(file, number, f"not a 'Label: number' line: {line.strip()[:60]!r}; file not imported")
            return
        label, cell = match.group(1).strip(), match.group(2)
        try:
            value = cell_number(cell)
        except ValueError as exc:
            log.skip(file, number, f"{label}: {exc}; file not imported")
            return
        score = row(model, label, value, file, number)
        if score is None:
            unknown.append(label)
        else:
            rows.append(score)
    if unknown:
        log.note(file, None, f"label(s) kept out: {', '.join(unknown[:8])}")
    if not rows:
        log.skip(file, None, "no known score line")
        return
    yield rows


def _race_row(model: str, label: str, number: float | None, file: str, line: int) -> PublishedScore | None:
    name = label_name(label)
    return _race_score(model, "", name, number, file, line, label) if name in RACE_METRICS else None


def _fact_row(model: str, label: str, number: float | None, file: str, line: int) -> PublishedScore | None:
    known = FACT_METRICS.get(label_name(label))
    if known is None:
        return None
    metric, scale, factor = known
    if metric == "fact_accuracy" and number is not None and number > 1:
        factor = 1.0  # a rate written as a percentage
    value = None if number is None else number * factor
    return PublishedScore(model, "", metric, value, scale, label, number, file, line)
