"""MMDeepResearch-Bench release loader: the layout of the public MMDR repository (methods/formats.md).

  data/quiz.jsonl                      tasks, one object a line; images under data/images/ (or data/)
  data/quiz_vef.jsonl                  textualised visual ground truth, matched to tasks by id
  reports_runs/<run>/reports/Q<n>.md   one Markdown report per task and run (the run is the system)

  reference_outputs/<run>/, results/<run>.jsonl   published scores (published.py), into published_scores

We score the reports ourselves; the published scores are kept beside ours for `dreval verify` and the
agreement figures. A folder holding only published scores imports those.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

from ...core.keys import InvalidKeyError, task_key
from ...core.models import Task
from ...releases.records import (
    ImportedReport,
    ImportLog,
    SystemInfo,
    as_list,
    first_of,
    is_inside,
    layout_check,
    make_key,
    relative,
    text_of,
    unknown_fields,
)
from ...releases.attachments import attachment_texts
from ...releases.json_readers import JsonlIndex, iter_jsonl
from ...releases.attachment_images import attachment_images
from ...releases.reports import REMOTE, check_images, read_report
from . import published

BENCHMARK = "mmdr"
QUIZ = Path("data/quiz.jsonl")
VISUAL_GT = Path("data/quiz_vef.jsonl")
IMAGE_DIRS = (Path("data/images"), Path("data"))  # where a relative image path may resolve, in order
RUNS = Path("reports_runs")
TASK_FIELDS = {"qid", "id", "caption", "title", "body", "text", "image_url", "images", "set", "difficulty",
               "language", "tags"}
GT_FIELDS = {"qid", "id", "body", "text", "answer", "gt"}
LABELS = ("set", "difficulty")  # kept as given in Task.attributes (tags too, joined)


def layout_problem(root: Path) -> str | None:
    return layout_check(root, lambda r: has_tasks(r) or has_published(r),
                        QUIZ.as_posix(), "an MMDeepResearch-Bench release")


def has_tasks(root: Path) -> bool:
    return (Path(root) / QUIZ).is_file()


def has_published(root: Path) -> bool:
    return published.has_published(root)


def iter_published(root: Path, log: ImportLog) -> Iterator[list[published.PublishedScore]]:
    """The release's published scores, one list per record (a CSV row, a JSONL line, the manifest)."""
    return published.iter_published(root, log)


# --- tasks ------------------------------------------------------------------------------

def iter_tasks(root: Path, log: ImportLog) -> Iterator[Task]:
    root = Path(root)
    ground_truth = VisualGroundTruth(root, log)
    seen: dict[str, str] = {}
    name = QUIZ.as_posix()
    for number, record in iter_jsonl(root / QUIZ, root, log):
        original_id = text_of(first_of(record, "qid", "id"))
        ground_truth.claim(original_id)
        task = _task(root, record, original_id, name, number, log, seen)
        if task is None:
            continue
        gt = ground_truth.text(original_id)
        if gt is None:
            log.note(name, number, f"task {original_id}: no visual ground truth in {VISUAL_GT.as_posix()}")
        else:
            task.visual_ground_truth, task.visual_ground_truth_version = gt, gt_version(gt)
        yield task
    ground_truth.note_unclaimed()


def _task(root: Path, record: dict, original_id: str, file: str, number: int, log: ImportLog,
          seen: dict[str, str]) -> Task | None:
    query = _query(record)
    if not query:
        log.skip(file, number, f"task {original_id or '?'}: empty query (no caption/title or body/text)")
        return None
    images = _images(root, record, original_id, file, number, log)
    if images is None:
        return None
    key = make_key(BENCHMARK, original_id, file, number, log, seen)
    if key is None:
        return None
    unknown_fields(record, TASK_FIELDS, file, number, log)
    if not images:
        log.note(file, number, f"task {original_id}: no image")
    local = [image for image in images if not image.lower().startswith(REMOTE)]
    return Task(
        key=key, benchmark=BENCHMARK, original_id=original_id, query=query,
        language=str(record.get("language") or "en"),
        modality="multimodal",  # every MMDR task is an image-text bundle
        attachments=images, attributes=_attributes(record),
        attachment_texts=attachment_texts(root, local, file, number, original_id, log),
        # the task's images, judge-ready: VEF's judge sees them beside the visual ground truth (paper A.1.2)
        attachment_images=attachment_images(root, local, file, number, original_id, log),
    )


def _query(record: dict) -> str:
    """The caption (title) and the body, the two parts of the task the systems were given."""
    parts = [first_of(record, "caption", "title"), first_of(record, "body", "text")]
    return "\n\n".join(p.strip() for p in parts if isinstance(p, str) and p.strip())


def _attributes(record: dict) -> dict[str, str]:
    attributes = {name: str(record[name]) for name in LABELS if record.get(name) not in (None, "")}
    tags = [str(tag).strip() for tag in as_list(record.get("tags")) if str(tag).strip()]
    if tags:
        attributes["tags"] = ", ".join(tags)
    return attributes


def _images(root: Path, record: dict, original_id: str, file: str, number: int, log: ImportLog) -> list[str] | None:
    """URLs as given and root-relative paths of local images, or None (logged) when one is unusable
    or missing: a task is imported with all its images or not at all."""
    images, missing = [], []
    for value in as_list(first_of(record, "image_url", "images")):
        if not isinstance(value, str) or not value.strip():
            log.skip(file, number, f"task {original_id}: image entry {value!r} is not a path or URL")
            return None
        value = value.strip()
        if value.lower().startswith(REMOTE):
            images.append(value)
            continue
        path = _find_image(root, value)
        if path is None:
            missing.append(value)
        else:
            images.append(relative(root, path))
    if missing:
        looked = " and ".join(d.as_posix() + "/" for d in IMAGE_DIRS)
        log.skip_for_missing(file, number, original_id, [f"{m} (looked in {looked})" for m in missing], "image")
        return None
    return images


def _find_image(root: Path, value: str) -> Path | None:
    for folder in IMAGE_DIRS:
        path = root / folder / value
        if path.is_file() and is_inside(root, path):
            return path
    return None


def gt_version(text: str) -> str:
    """Which visual GT a VEF row used: the first 12 hex digits of its sha256."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


class VisualGroundTruth:
    """quiz_vef.jsonl indexed by id (a `JsonlIndex`: lines and byte offsets, never the texts) and
    read on demand. The reference code pairs GT and tasks by line number, which breaks when either
    file is reordered; we match by id."""

    def __init__(self, root: Path, log: ImportLog):
        self.name = VISUAL_GT.as_posix()
        self.log = log
        self.index: JsonlIndex | None = None
        if (root / VISUAL_GT).is_file():
            self.index = JsonlIndex(root / VISUAL_GT, root, log, lambda r: text_of(first_of(r, "qid", "id")),
                                    label="visual ground truth id", problem=_gt_problem, known=GT_FIELDS)
        else:
            log.note(self.name, None, "file not in the release; tasks have no visual ground truth")

    def claim(self, original_id: str) -> None:
        if self.index is not None:
            self.index.claim(original_id)

    def text(self, original_id: str) -> str | None:
        record = self.index.read(original_id) if self.index is not None else None
        return _gt_text(record) if record is not None else None

    def note_unclaimed(self) -> None:
        for original_id, number in self.index.unclaimed() if self.index is not None else ():
            self.log.note(self.name, number, f"visual ground truth {original_id}: no task in "
                                             f"{QUIZ.as_posix()} has this id; not used")


def _gt_problem(original_id: str, record: dict) -> str | None:
    if _gt_text(record) is None:
        return f"visual ground truth {original_id}: empty (no body/text/answer/gt)"
    return None


def _gt_text(record: dict) -> str | None:
    value = first_of(record, "body", "text", "answer", "gt")
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text.strip() or None


# --- reports and systems -----------------------------------------------------------------

def iter_reports(root: Path, log: ImportLog) -> Iterator[ImportedReport]:
    root = Path(root)
    for run, folder in _runs(root, log):
        for path in sorted(folder.glob("*.md")):
            report = _report(root, run, folder, path, log)
            if report is not None:
                yield report


def iter_systems(root: Path, log: ImportLog) -> Iterator[SystemInfo]:
    """One system per run folder that holds reports."""
    for run, _ in _runs(Path(root), ImportLog()):  # folder notes come from iter_reports
        yield SystemInfo(name=run)


def _runs(root: Path, log: ImportLog) -> Iterator[tuple[str, Path]]:
    runs = root / RUNS
    if not runs.is_dir():
        return
    for run in sorted(runs.iterdir()):
        if not run.is_dir():
            continue
        folder = run / "reports"
        if folder.is_dir():
            yield run.name, folder
        else:
            log.note(relative(root, run), None, "run has no reports/ folder; not read")


def _report(root: Path, run: str, folder: Path, path: Path, log: ImportLog) -> ImportedReport | None:
    name = relative(root, path)
    original_id = path.stem
    try:
        key = task_key(BENCHMARK, original_id)
    except InvalidKeyError as exc:
        log.skip(name, None, str(exc))
        return None
    text = read_report(path, name, log, root=root)
    if text is None:
        return None
    base_dir = check_images(text, [folder], name, log)
    return ImportedReport(system=run, task=key, task_id=original_id, where=name, path=path, base_dir=base_dir)
