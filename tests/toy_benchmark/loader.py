"""The toy release layout: `tasks.jsonl` ({"id", "query"} per line) and `reports/<system>/<id>.md`."""
from pathlib import Path

from dreval_assets.core.models import Task
from dreval_assets.releases.json_readers import iter_jsonl
from dreval_assets.releases.records import ImportedReport, ImportLog, SystemInfo, layout_check, make_key

TASKS = "tasks.jsonl"


def layout_problem(root: Path) -> str | None:
    return layout_check(Path(root), lambda r: (r / TASKS).is_file(), TASKS, "a toy release")


def iter_tasks(root: Path, log: ImportLog):
    seen: dict[str, str] = {}
    for number, record in iter_jsonl(Path(root) / TASKS, Path(root), log):
        key = make_key("toy", str(record.get("id") or ""), TASKS, number, log, seen)
        if key:
            yield Task(key=key, benchmark="toy", original_id=str(record["id"]), query=record["query"])


def iter_systems(root: Path, log: ImportLog):
    for folder in sorted((Path(root) / "reports").iterdir()):
        if folder.is_dir():
            yield SystemInfo(name=folder.name)


def iter_reports(root: Path, log: ImportLog):
    for folder in sorted((Path(root) / "reports").iterdir()):
        for path in sorted(folder.glob("*.md")):
            yield ImportedReport(system=folder.name, task=f"toy.{path.stem}", task_id=path.stem,
                                 where=f"reports/{folder.name}/{path.name}", path=path, base_dir=folder)
