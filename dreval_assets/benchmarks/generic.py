"""Our generic layout (also the bundled demo's): a folder with tasks.jsonl and sandbox.jsonl.

tasks.jsonl: {id, benchmark?, query, language?, domain?, modality?, checklist?, attachments?,
              reference_article? (inline text or a path relative to the folder), gold_facts?,
              gold_insights?, visual_ground_truth?, visual_ground_truth_version?,
              race_criteria? ({dimension_weights, criteria: {dimension: [{criterion, explanation, weight}]}}),
              attributes?}
sandbox.jsonl: {task_id, url, title?, role?, text}
"""
from __future__ import annotations

import json
import mimetypes
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from pydantic import ValidationError

from ..core.keys import InvalidKeyError, task_key
from ..core.models import SandboxPage, Task


@dataclass
class LoadResult:
    tasks: list[Task] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # one human-readable reason per skipped record


def iter_jsonl(path: Path, result: LoadResult) -> Iterator[tuple[int, dict]]:
    """Stream objects from a JSONL file; malformed lines are skipped with their line number."""
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                result.skipped.append(f"{path.name}:{number}: malformed JSON ({exc.msg})")
                continue
            if not isinstance(record, dict):
                result.skipped.append(f"{path.name}:{number}: not a JSON object")
                continue
            yield number, record


def load_generic(folder: Path, default_benchmark: str = "generic") -> LoadResult:
    folder = Path(folder)
    result = LoadResult()
    sandbox = _load_sandbox(folder / "sandbox.jsonl", result)
    seen: dict[str, str] = {}
    for number, record in iter_jsonl(folder / "tasks.jsonl", result):
        where = f"tasks.jsonl:{number}"
        original_id = str(record.get("id", "")).strip()
        if not original_id:
            result.skipped.append(f"{where}: no id")
            continue
        benchmark = str(record.get("benchmark") or default_benchmark)
        try:
            key = task_key(benchmark, original_id)
        except InvalidKeyError as exc:
            result.skipped.append(f"{where}: {exc}")
            continue
        if key in seen:
            result.skipped.append(f"{where}: duplicate task id {original_id!r} (key {key} already used)")
            continue
        try:
            task = Task(
                key=key, benchmark=benchmark, original_id=original_id,
                query=str(record.get("query", "")),
                language=record.get("language") or "en", domain=record.get("domain") or "",
                modality=record.get("modality") or "text",
                attachments=list(record.get("attachments") or []),
                checklist=list(record.get("checklist") or []),
                reference_article=_reference_text(folder, record.get("reference_article"), result, where),
                gold_facts=list(record.get("gold_facts") or []),
                gold_insights=list(record.get("gold_insights") or []),
                visual_ground_truth=record.get("visual_ground_truth"),
                visual_ground_truth_version=record.get("visual_ground_truth_version"),
                race_criteria=record.get("race_criteria"),
                attributes={str(k): str(v) for k, v in (record.get("attributes") or {}).items()},
                sandbox=sandbox.get(original_id, []),
            )
        except ValidationError as exc:
            result.skipped.append(f"{where}: invalid task ({exc.error_count()} error(s): {exc.errors()[0]['msg']})")
            continue
        if not task.query.strip():
            result.skipped.append(f"{where}: empty query")
            continue
        missing = [a for a in task.attachments if not (folder / a).is_file()]
        if missing:
            result.skipped.append(f"{where}: attachment(s) not found, kept as named: {missing}")
        task.attachment_texts = read_attachments(folder, [a for a in task.attachments if a not in missing])
        seen[key] = original_id
        result.tasks.append(task)
    return result


def read_attachments(folder: Path, names: list[str]) -> dict[str, str]:
    """Text of the attachments we can read as evidence (documents; images need a vision judge)."""
    from ..fetch.extract import extract_page

    texts = {}
    for name in names:
        media = mimetypes.guess_type(name)[0] or ""
        if media.startswith(("image/", "audio/", "video/")):
            continue
        page = extract_page((folder / name).read_bytes(), media or None, name)
        if page.status == "ok":
            texts[name] = page.text
    return texts


def _load_sandbox(path: Path, result: LoadResult) -> dict[str, list[SandboxPage]]:
    pages: dict[str, list[SandboxPage]] = {}
    if not path.is_file():
        return pages
    for number, record in iter_jsonl(path, result):
        try:
            page = SandboxPage(url=record["url"], title=record.get("title", ""),
                               role=record.get("role", "noise"), text=record["text"])
        except (KeyError, ValidationError) as exc:
            result.skipped.append(f"{path.name}:{number}: invalid sandbox page ({exc})")
            continue
        pages.setdefault(str(record.get("task_id", "")), []).append(page)
    return pages


def _reference_text(folder: Path, value, result: LoadResult, where: str) -> str | None:
    if not value:
        return None
    candidate = folder / str(value)
    if len(str(value)) < 256 and candidate.suffix in {".md", ".txt"}:
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
        result.skipped.append(f"{where}: reference article {value} not found")
        return None
    return str(value)


def find_report_file(reports_dir: Path, task: str, original_id: str) -> Path | None:
    """`<task key>.md` or `<original id>.md` in the system's folder."""
    for name in (task, original_id):
        if "/" in name or name in {"", ".", ".."}:
            continue
        path = Path(reports_dir) / f"{name}.md"
        if path.is_file():
            return path
    return None
