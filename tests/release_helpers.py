"""What the release-loader tests share: running a loader over a miniature release and reading its log."""
from __future__ import annotations

from pathlib import Path
from types import ModuleType

from dreval_assets.releases.records import ImportLog, Problem

RELEASES = Path(__file__).parent / "fixtures" / "releases"


def problems(entries: list[Problem], prefix: str = "") -> list[str]:
    """`file:line: reason` of each problem whose file starts with `prefix`, in log order."""
    return [str(p) for p in entries if p.file.startswith(prefix)]


def load_tasks(loader: ModuleType, root: Path) -> tuple[dict, ImportLog]:
    """(task key -> task, log) of the loader's `iter_tasks`."""
    log = ImportLog()
    return {task.key: task for task in loader.iter_tasks(root, log)}, log


def load_reports(loader: ModuleType, root: Path) -> tuple[list, ImportLog]:
    log = ImportLog()
    return list(loader.iter_reports(root, log)), log


def load_release(loader: ModuleType, root: Path) -> tuple[dict, list, ImportLog]:
    """Tasks by key, then reports, with one log for both (as an import reads them)."""
    log = ImportLog()
    tasks = {task.key: task for task in loader.iter_tasks(root, log)}
    return tasks, list(loader.iter_reports(root, log)), log


def layout_problems(loader: ModuleType, root: Path, empty: Path) -> tuple[str | None, str | None, str | None]:
    """What `layout_problem` says of the release, of an empty folder and of a path that is no folder."""
    return loader.layout_problem(root), loader.layout_problem(empty), loader.layout_problem(empty / "absent")
