"""Our generic layout (also the bundled demo's): a folder with tasks.jsonl and sandbox.jsonl.

The loader is `generic_layout.py` (its docstring describes the layout); `load_generic` here returns
its tasks as one list for the demo and the tests.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..core.models import Task
from .generic_layout import iter_tasks
from .records import ImportLog


@dataclass
class LoadResult:
    tasks: list[Task] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # one human-readable line per missing file or skipped record


def load_generic(folder: Path) -> LoadResult:
    """Every task of a generic folder, with what was missing or skipped (notes left out)."""
    log = ImportLog()
    tasks = list(iter_tasks(Path(folder), log))
    return LoadResult(tasks, [str(p) for p in (*log.missing, *log.skipped)])


def find_report_file(reports_dir: Path, task: str, original_id: str) -> Path | None:
    """`<task key>.md` or `<original id>.md` in the system's folder."""
    for name in (task, original_id):
        if "/" in name or name in {"", ".", ".."}:
            continue
        path = Path(reports_dir) / f"{name}.md"
        if path.is_file():
            return path
    return None
