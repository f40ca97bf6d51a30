"""Our generic layout (also the bundled demo's): a folder with tasks.jsonl and sandbox.jsonl.

The loader is `load_generic.py` (its docstring describes the layout); `load_generic` here returns
its tasks as one list for the demo and the tests, and `read_attachments` extracts the evidence text
of attachments for every loader.
"""
from __future__ import annotations

import mimetypes
from dataclasses import dataclass, field
from pathlib import Path

from ..core.models import Task
from .load_generic import iter_tasks
from .release import ImportLog


@dataclass
class LoadResult:
    tasks: list[Task] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # one human-readable line per missing file or skipped record


def load_generic(folder: Path) -> LoadResult:
    """Every task of a generic folder, with what was missing or skipped (notes left out)."""
    log = ImportLog()
    tasks = list(iter_tasks(Path(folder), log))
    return LoadResult(tasks, [str(p) for p in (*log.missing, *log.skipped)])


def read_attachments(folder: Path, names: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """(name -> text of the attachments we can read as evidence, name -> why one could not be read).
    Images, audio and video are in neither: they are not text evidence (a vision judge sees them)."""
    from ..fetch.extract import extract_page

    texts, unreadable = {}, {}
    for name in names:
        media = mimetypes.guess_type(name)[0] or ""
        if media.startswith(("image/", "audio/", "video/")):
            continue
        try:
            body = (Path(folder) / name).read_bytes()
        except OSError as exc:
            unreadable[name] = f"cannot read: {exc.strerror}"
            continue
        page = extract_page(body, media or None, name)
        if page.status == "ok":
            texts[name] = page.text
        else:
            unreadable[name] = page.detail
    return texts, unreadable


def find_report_file(reports_dir: Path, task: str, original_id: str) -> Path | None:
    """`<task key>.md` or `<original id>.md` in the system's folder."""
    for name in (task, original_id):
        if "/" in name or name in {"", ".", ".."}:
            continue
        path = Path(reports_dir) / f"{name}.md"
        if path.is_file():
            return path
    return None
