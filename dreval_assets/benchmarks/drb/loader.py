"""DeepResearch Bench release loader: the layout of the public repository (methods/formats.md).

  data/prompt_data/query.jsonl                   tasks {id, topic, language: zh|en, prompt}
  data/criteria_data/criteria.jsonl              RACE criteria per task id
  data/test_data/cleaned_data/reference.jsonl    reference reports {id, prompt, article}
  data/test_data/raw_data/<model>.jsonl          system reports {id, prompt, article}
  data/test_data/cleaned_data/<model>.jsonl      the same reports, citations removed by the benchmark's own
                                                 cleaning {id, prompt, article}: what RACE scores (kept
                                                 with each report as its cleaned text)

  results/race/<model>/, results/fact/<model>/   published scores (published.py), into published_scores

We score the reports ourselves; the published scores are kept beside ours for `dreval verify` and the
agreement figures. A folder holding only published scores imports those.
A task without criteria or reference is imported all the same (RACE is N/A for it).
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ...core.models import RaceCriteria, RaceCriterion, Task
from ...releases.records import (
    Entry,
    ImportedReport,
    ImportLog,
    SystemInfo,
    first_of,
    layout_check,
    make_key,
    text_of,
    unknown_fields,
)
from ...releases.json_readers import JsonlIndex, iter_jsonl
from ...releases.reports import embedded_reports
from . import published

BENCHMARK = "drb"
QUERIES = Path("data/prompt_data/query.jsonl")
CRITERIA = Path("data/criteria_data/criteria.jsonl")
REFERENCES = Path("data/test_data/cleaned_data/reference.jsonl")
RAW_REPORTS = Path("data/test_data/raw_data")
CLEANED_REPORTS = Path("data/test_data/cleaned_data")
TASK_FIELDS = {"id", "topic", "language", "prompt"}
REPORT_FIELDS = {"id", "prompt", "article"}
WEIGHT_SUM_TOLERANCE = 0.01  # published weights are given to two decimals
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def layout_problem(root: Path) -> str | None:
    return layout_check(root, lambda r: has_tasks(r) or has_published(r), QUERIES.as_posix(),
                        "a DeepResearch Bench release")


def has_tasks(root: Path) -> bool:
    return (Path(root) / QUERIES).is_file()


def has_published(root: Path) -> bool:
    return published.has_published(root)


def iter_published(root: Path, log: ImportLog) -> Iterator[list[published.PublishedScore]]:
    """The release's published scores, one list per record (a raw_results line, a result file)."""
    return published.iter_published(root, log)


# --- tasks ------------------------------------------------------------------------------

def iter_entries(root: Path, log: ImportLog) -> Iterator[Entry]:
    """The query.jsonl records that pass the id and prompt checks."""
    root = Path(root)
    file = QUERIES.as_posix()
    seen: dict[str, str] = {}
    for number, record in iter_jsonl(root / QUERIES, root, log):
        unknown_fields(record, TASK_FIELDS, file, number, log)
        original_id = text_of(record.get("id"))
        if not original_id:
            log.skip(file, number, "record has no id")
            continue
        if not text_of(record.get("prompt")):
            log.skip(file, number, "empty prompt")
            continue
        key = make_key(BENCHMARK, original_id, file, number, log, seen)
        if key is not None:
            yield Entry(file, number, key, original_id, record)


def iter_tasks(root: Path, log: ImportLog) -> Iterator[Task]:
    root = Path(root)
    criteria = side_index(root, CRITERIA, log)
    references = side_index(root, REFERENCES, log)
    for entry in iter_entries(root, log):
        yield build_task(entry, criteria, references, log)


def build_task(entry: Entry, criteria: JsonlIndex | None, references: JsonlIndex | None, log: ImportLog) -> Task:
    record = entry.record
    return Task(key=entry.key, benchmark=BENCHMARK, original_id=entry.original_id,
                query=text_of(record.get("prompt")), language=language(entry, log), domain=text_of(record.get("topic")),
                race_criteria=task_criteria(entry, criteria, log),
                reference_article=reference_article(entry, references, log))


def language(entry: Entry, log: ImportLog) -> str:
    given = text_of(entry.record.get("language")).lower()
    if given:
        return given
    guessed = "zh" if CJK.search(text_of(entry.record.get("prompt"))) else "en"
    log.note(entry.file, entry.number, f"no language: {guessed} guessed from the prompt")
    return guessed


def task_criteria(entry: Entry, index: JsonlIndex | None, log: ImportLog) -> RaceCriteria | None:
    """None (index) = the whole criteria file is missing, logged once."""
    if index is None:
        return None
    record = index.read(entry.original_id)
    if record is None:
        log.note(entry.file, entry.number, "no RACE criteria for this task: RACE will be N/A")
        return None
    criteria = race_criteria(record)
    if isinstance(criteria, str):
        log.skip(index.file, index.line(entry.original_id), f"criteria not used: {criteria}")
        log.note(entry.file, entry.number, "no usable RACE criteria for this task: RACE will be N/A")
        return None
    return criteria


def race_criteria(record: dict) -> RaceCriteria | str:
    """The task's RACE criteria, or why they cannot be used (weights must be sound for T/(T+R))."""
    weights = first_of(record, "dimension_weight", "dimension_weights")
    groups = first_of(record, "criterions", "criteria")
    if not isinstance(weights, dict):
        return "no dimension_weight object"
    if not isinstance(groups, dict):
        return "no criterions object"
    if any(not _is_number(w) for w in weights.values()):
        return "a dimension weight is not a number"
    if any(w < 0 for w in weights.values()):
        return "negative dimension weight"
    total = sum(float(w) for w in weights.values())
    if abs(total - 1) > WEIGHT_SUM_TOLERANCE:
        return f"dimension weights sum to {total:.4g}, not 1"
    if set(weights) != set(groups):
        return f"dimensions with weights ({', '.join(sorted(weights))}) and with criteria " \
               f"({', '.join(sorted(groups))}) differ"
    criteria: dict[str, list[RaceCriterion]] = {}
    for dimension, items in groups.items():
        if not isinstance(items, list) or not items:
            return f"no criteria listed for {dimension!r}"
        for item in items:
            problem = _criterion_problem(item, dimension)
            if problem:
                return problem
        criteria[dimension] = [RaceCriterion(criterion=text_of(item.get("criterion")),
                                             explanation=text_of(item.get("explanation")),
                                             weight=float(item["weight"])) for item in items]
    try:
        return RaceCriteria(dimension_weights={d: float(w) for d, w in weights.items()}, criteria=criteria)
    except ValidationError as exc:
        return f"invalid criteria ({exc.errors()[0]['msg']})"


def _criterion_problem(item: Any, dimension: str) -> str | None:
    if not isinstance(item, dict) or not text_of(item.get("criterion")):
        return f"a criterion of {dimension!r} has no text"
    if not _is_number(item.get("weight")):
        return f"a criterion of {dimension!r} has no numeric weight"
    if item["weight"] < 0:
        return f"negative weight {item['weight']} for a criterion of {dimension!r}"
    return None


def reference_article(entry: Entry, index: JsonlIndex | None, log: ImportLog) -> str | None:
    if index is None:
        return None
    record = index.read(entry.original_id)
    article = first_of(record, "article") if record is not None else None
    if not isinstance(article, str) or not article.strip():
        log.note(entry.file, entry.number, "no reference article for this task: RACE will be N/A")
        return None
    return article


# --- side files indexed by id ------------------------------------------------------------

def side_index(root: Path, name: Path, log: ImportLog) -> JsonlIndex | None:
    """Criteria or reference records by id (lines and offsets only: the articles are read back when
    their task is built). None when the file is missing (logged once, not per task)."""
    if not (root / name).is_file():
        log.miss(name.as_posix(), None, "file missing: RACE will be N/A for every task")
        return None
    return JsonlIndex(root / name, root, log, lambda record: text_of(record.get("id")))


# --- systems and reports -----------------------------------------------------------------

def report_files(root: Path) -> list[Path]:
    folder = Path(root) / RAW_REPORTS
    return sorted(p for p in folder.glob("*.jsonl") if p.is_file()) if folder.is_dir() else []


def iter_systems(root: Path, log: ImportLog) -> Iterator[SystemInfo]:
    for path in report_files(root):
        yield SystemInfo(name=path.stem)


def iter_reports(root: Path, log: ImportLog) -> Iterator[ImportedReport]:
    """Each raw report, with the release's cleaned article of it when cleaned_data holds one."""
    root = Path(root)
    # Same checks as iter_tasks (its log discarded); bounded: one id and key per task.
    keys = {entry.original_id: entry.key for entry in iter_entries(root, ImportLog())}
    for path in report_files(root):
        cleaned = cleaned_index(root, path.stem, log)
        without_cleaned: list[str] = []
        for report in embedded_reports(path, root, path.stem, keys.get, log, id_fields=("id",),
                                       text_fields=("article",), known=REPORT_FIELDS):
            article = cleaned_article(cleaned, report.task_id)
            if article is None and cleaned is not None:
                without_cleaned.append(report.task_id)
            yield replace(report, cleaned_text=article)
        if without_cleaned:
            log.note(cleaned.file, None, f"no cleaned article for {len(without_cleaned)} report(s) of {path.stem} "
                                         f"(id {', '.join(without_cleaned[:8])}): RACE reads them with citations "
                                         "stripped by our parser")


def cleaned_index(root: Path, model: str, log: ImportLog) -> JsonlIndex | None:
    """cleaned_data/<model>.jsonl by id; None (noted once) when the release has no such file."""
    path = root / CLEANED_REPORTS / f"{model}.jsonl"
    if not path.is_file():
        log.note((CLEANED_REPORTS / path.name).as_posix(), None,
                 f"no cleaned articles of {model}: RACE reads its reports with citations stripped by our parser")
        return None
    return JsonlIndex(path, root, log, lambda record: text_of(record.get("id")), known=REPORT_FIELDS)


def cleaned_article(index: JsonlIndex | None, original_id: str) -> str | None:
    record = index.read(original_id) if index is not None else None
    article = record.get("article") if record is not None else None
    return article if isinstance(article, str) and article.strip() else None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
