"""`dreval import`: stream a release through its loader into the registry and `imported_reports`, and
the scores it publishes (the loader's optional `iter_published`) into `published_scores`.

Tasks and reports arrive one at a time from the loader and are written in batches, so memory stays
bounded by a batch plus one hash per known task and report. A task or report whose content hash is
unchanged is not written again, so re-importing the same files changes nothing; a changed task gets
a new hash in the registry and `dreval run` then re-materialises it and everything downstream.
"""
from __future__ import annotations

import importlib
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from itertools import islice
from pathlib import Path
from types import ModuleType
from typing import Iterable, Iterator, TypeVar

from ..benchmarks import registry
from ..releases.published import PublishedScore
from ..releases.records import CitedPage, ImportLog, ImportedReport, SystemInfo, open_release_file
from ..core.keys import InvalidKeyError, slugify, validate_key
from ..stages.frames import text_hash
from ..releases.report_text import decode_report_bytes, read_report_file
from ..store.db import Store
from ..store.imports import imported_report_hashes, record_import, write_imported_reports
from ..store.pages import RELEASE_BACKEND, PageStore
from ..fetch.extract import extract_page
from ..fetch.urls import url_key
from ..core.models import FetchResult
from ..store.published import published_fingerprints, write_published
from ..store.registry import SystemEntry, load_systems, register_system, register_tasks, task_hashes

BATCH = 500
MAX_TRACE_BYTES = 5_000_000
T = TypeVar("T")


class ImportFailed(ValueError):
    """The release cannot be imported at all (unknown benchmark, wrong folder)."""


def loader(benchmark: str) -> ModuleType:
    if benchmark == "generic":
        return importlib.import_module("..releases.generic_layout", __package__)
    module = registry.loader(benchmark)
    if module is None:
        known = [*registry.with_releases(), "generic"]
        raise ImportFailed(f"unknown benchmark {benchmark!r}; choose one of {', '.join(known)}")
    return module


@dataclass
class ImportSummary:
    import_id: str
    benchmark: str
    source: str
    tasks_unchanged: int = 0
    reports: Counter = field(default_factory=Counter)  # new / changed / unchanged
    reports_by_system: Counter = field(default_factory=Counter)
    systems_new: list[str] = field(default_factory=list)
    systems_known: list[str] = field(default_factory=list)
    systems_without_reports: list[str] = field(default_factory=list)
    new_task_keys: list[str] = field(default_factory=list)
    changed_task_keys: list[str] = field(default_factory=list)
    published: dict[str, Counter] = field(default_factory=dict)  # file -> system -> published scores
    published_only: bool = False  # the release holds published scores but no task file
    published_changed: list[str] = field(default_factory=list)  # files whose scores differ from the stored ones
    cited_pages: Counter = field(default_factory=Counter)  # the release's fetched pages: stored / unread / bot walls
    log: ImportLog = field(default_factory=ImportLog)

    @property
    def tasks(self) -> Counter:
        """Tasks new / changed / unchanged."""
        return Counter(new=len(self.new_task_keys), changed=len(self.changed_task_keys),
                       unchanged=self.tasks_unchanged)

    def counts(self) -> dict:
        return {"tasks": dict(self.tasks), "reports": dict(self.reports),
                "reports_by_system": dict(self.reports_by_system), "systems_new": self.systems_new,
                "systems_known": self.systems_known, "systems_without_reports": self.systems_without_reports,
                "published_scores": {file: dict(systems) for file, systems in self.published.items()},
                "published_only": self.published_only, "published_changed": len(self.published_changed),
                "cited_pages": dict(self.cited_pages),
                "skipped": len(self.log.skipped), "missing": len(self.log.missing), "notes": len(self.log.notes)}

    def published_lines(self, shown: int = 20) -> list[str]:
        """How many published scores each file and each system gave."""
        if not self.published:
            return []
        by_system: Counter = Counter()
        for systems in self.published.values():
            by_system.update(systems)
        total = sum(by_system.values())
        out = [f"published scores: {total} from {len(self.published)} file(s), {len(by_system)} system(s)"]
        for file, systems in list(self.published.items())[:shown]:
            names = sorted(systems)
            more = f" and {len(names) - 3} more" if len(names) > 3 else ""
            out.append(f"  {file}: {sum(systems.values())} ({', '.join(names[:3])}{more})")
        if len(self.published) > shown:
            out.append(f"  ... {len(self.published) - shown} more file(s)")
        out.append("published scores by system: " + ", ".join(f"{s} {n}" for s, n in sorted(by_system.items())[:shown])
                   + (" ..." if len(by_system) > shown else ""))
        return out

    def lines(self, shown: int = 20) -> list[str]:
        t, r = self.tasks, self.reports
        out = [f"import {self.benchmark} from {self.source}",
               f"tasks: {sum(t.values())} ({t['new']} new, {t['changed']} changed, {t['unchanged']} unchanged)",
               f"systems: {len(self.systems_new) + len(self.systems_known)} "
               f"({len(self.systems_new)} new: {', '.join(self.systems_new) or '-'})",
               f"reports found: {sum(r.values())} ({r['new']} new, {r['changed']} changed, {r['unchanged']} unchanged)"]
        out += [f"  {system}: {n}" for system, n in sorted(self.reports_by_system.items())]
        if self.cited_pages:
            p = self.cited_pages
            out.append(f"cited pages from the release: {p['stored']} stored as fetched ({p['unread']} not judged "
                       f"by the release's rule, {p['walls']} that look like bot walls or error pages)")
        if self.systems_without_reports:
            out.append(f"named without reports (not registered): {', '.join(self.systems_without_reports)}")
        if self.published_only:
            out.append("the release holds no task file: only its published scores were imported")
        out += self.published_lines(shown)
        for title, problems in (("missing files", self.log.missing), ("skipped", self.log.skipped),
                                ("notes", self.log.notes)):
            if problems:
                out.append(f"{title}: {len(problems)}")
                out += [f"  {p}" for p in problems[:shown]]
                if len(problems) > shown:
                    out.append(f"  ... {len(problems) - shown} more (table import_problems, import_id {self.import_id})")
        return out


def import_release(store: Store, benchmark: str, root: Path, system: str | None = None,
                   reports: Path | None = None) -> ImportSummary:
    """Register the release's tasks and its systems' reports, and store its published scores. With
    `reports`, the reports come from that folder instead (`<id>.md` files or a JSONL) for the one system
    named `system`; with only `system`, only that system's reports and scores of the release are
    imported. A folder with published scores but no task file (the loader's `has_tasks`) imports those."""
    module = loader(benchmark)
    root = Path(root)
    problem = module.layout_problem(root)
    if problem:
        raise ImportFailed(f"{root}: {problem}")
    if reports is not None and not system:
        raise ImportFailed("--reports needs --system NAME")
    started = datetime.now(timezone.utc).replace(tzinfo=None)
    summary = ImportSummary(uuid.uuid4().hex[:12], benchmark, str(root))
    has_tasks = getattr(module, "has_tasks", None)  # a loader that can tell may get published scores alone
    summary.published_only = has_tasks is not None and not has_tasks(root)
    if summary.published_only:
        summary.log.note(".", None, "no task file: tasks and the release's reports are not read; "
                                    "its published scores are")
    known = task_hashes(store)
    if not summary.published_only:
        _import_tasks(store, module.iter_tasks(root, summary.log), known, summary)
    from_release = reports is None and not summary.published_only
    infos = {info.name: info for info in module.iter_systems(root, summary.log)} if from_release else {}
    if reports is not None:
        from ..releases.generic_layout import iter_report_folder

        found = iter_report_folder(Path(reports), system, _resolver(store, benchmark, known), summary.log)
        within = Path(reports) if Path(reports).is_dir() else Path(reports).parent
    else:
        within = root
        if system is not None and system not in infos and from_release:
            summary.log.note(".", None, f"the release names no system {system!r} (it names: "
                                        f"{', '.join(sorted(infos)) or 'none'}); no reports imported")
        found = (r for r in module.iter_reports(root, summary.log) if system is None or r.system == system) \
            if from_release else ()
    _import_reports(store, found, set(known), infos, summary, within)
    if from_release and hasattr(module, "iter_cited_pages"):
        summary.cited_pages = import_cited_pages(store, module.iter_cited_pages(root, summary.log, system))
    if reports is None and hasattr(module, "iter_published"):
        before = published_fingerprints(store, benchmark)
        _import_published(store, module.iter_published(root, summary.log), system, summary)
        after = published_fingerprints(store, benchmark)
        summary.published_changed = sorted(f for f in before.keys() | after.keys() if before.get(f) != after.get(f))
        if has_tasks is None and not sum(summary.tasks.values()) and summary.published:
            summary.published_only = True  # a loader that cannot tell: no task came, scores did
    named = set(infos) if system is None else {system} & set(infos)
    summary.systems_without_reports = sorted(n for n in named if not summary.reports_by_system.get(slugify(n)))
    problems = [(kind, p.file, p.line, p.reason) for kind, problems in
                (("skipped", summary.log.skipped), ("missing", summary.log.missing), ("note", summary.log.notes))
                for p in problems]
    record_import(store, summary.import_id, benchmark, str(root), started, summary.counts(), problems)
    return summary


@dataclass
class FolderCheck:
    """What `add-system --reports FOLDER` found: report files for registered tasks, files for no
    task (which no run would ever read), and files that read badly. Kept like an import's problems."""

    import_id: str
    system: str
    folder: str
    files: int = 0
    matched: int = 0
    tasks_registered: int = 0
    log: ImportLog = field(default_factory=ImportLog)

    def counts(self) -> dict:
        return {"system": self.system, "report_files": self.files, "for_registered_tasks": self.matched,
                "for_no_task": len(self.log.skipped), "notes": len(self.log.notes)}

    def lines(self, shown: int = 20) -> list[str]:
        out = [f"{self.files} report file(s) found: {self.matched} for a registered task"
               + (f", {len(self.log.skipped)} for no registered task (not evaluated)" if self.log.skipped else "")]
        if not self.tasks_registered:
            out.append("no tasks are registered yet: import a benchmark (`dreval import`); "
                       "files match a task by its key or its original id")
        for title, problems in (("for no task", self.log.skipped), ("notes", self.log.notes)):
            if problems:
                out.append(f"{title}: {len(problems)}")
                out += [f"  {p}" for p in problems[:shown]]
                if len(problems) > shown:
                    out.append(f"  ... {len(problems) - shown} more")
        if self.log.skipped or self.log.notes:
            out.append(f"(kept in table import_problems, import_id {self.import_id})")
        return out


def check_report_folder(store: Store, system: str, folder: Path) -> FolderCheck:
    """Match a folder system's `<task>.md` files to the registered tasks as the reports stage will
    (task key or original id) and read each one, so a file for no task is named now, not lost."""
    started = datetime.now(timezone.utc).replace(tzinfo=None)
    check = FolderCheck(uuid.uuid4().hex[:12], system, str(folder))
    registered = store.query("SELECT task, original_id FROM registered_tasks")
    names = set(registered["task"].to_list()) | set(registered["original_id"].to_list())
    check.tasks_registered = registered.height
    for path in sorted(Path(folder).glob("*.md")):  # file names only: bounded by the number of tasks
        check.files += 1
        if path.stem not in names:
            check.log.skip(path.name, None, f"no registered task has the key or id {path.stem!r}")
            continue
        check.matched += 1
        got = read_report_file(path, root=Path(folder), what="the folder")
        if got.status != "ok":
            check.log.note(path.name, None, f"{got.detail}: its scores will be N/A ({got.na_reason})")
        elif got.detail:
            check.log.note(path.name, None, got.detail)
    problems = [(kind, p.file, p.line, p.reason) for kind, problems in
                (("skipped", check.log.skipped), ("note", check.log.notes)) for p in problems]
    record_import(store, check.import_id, "folder", str(folder), started, check.counts(), problems)
    return check


def _batches(items: Iterable[T]) -> Iterator[list[T]]:
    iterator = iter(items)
    while batch := list(islice(iterator, BATCH)):
        yield batch


def _import_tasks(store: Store, tasks: Iterable, known: dict[str, str], summary: ImportSummary) -> None:
    unsuited: set[str] = set()
    for batch in _batches(tasks):
        for name in {t.benchmark for t in batch} - set(registry.SUITES) - unsuited:
            unsuited.add(name)
            summary.log.note(".", None, f"benchmark {name!r} has no suite of its own: only core metrics apply")
        _register(store, batch, known, summary)


def _register(store: Store, batch, known: dict[str, str], summary: ImportSummary) -> None:
    new, changed = register_tasks(store, batch, source=f"import:{summary.benchmark}:{summary.source}", known=known)
    summary.tasks_unchanged += len(batch) - len(new) - len(changed)
    summary.new_task_keys += new
    summary.changed_task_keys += changed


def _resolver(store: Store, benchmark: str, known: dict[str, str]):
    """File stem or task id -> the benchmark's task key: the key itself, or a unique original id. A
    generic release's tasks belong to whichever benchmark each names (`tvir.100001` is a TVIR task):
    its ids are looked up among every registered task."""
    by_original: dict[str, list[str]] = {}
    rows = (store.query("SELECT task, original_id FROM registered_tasks") if benchmark == "generic" else
            store.query("SELECT task, original_id FROM registered_tasks WHERE benchmark = ?", [benchmark]))
    for key, original in rows.iter_rows():
        by_original.setdefault(original, []).append(key)

    def resolve(name: str) -> str | None:
        if name in known:
            return name
        keys = by_original.get(name, [])
        return keys[0] if len(keys) == 1 else None
    return resolve


def _import_reports(store: Store, found: Iterable[ImportedReport], task_keys: set[str],
                    infos: dict[str, SystemInfo], summary: ImportSummary, within: Path) -> None:
    """Each report's row, read (for one-file reports, with their traces) only inside `within`: the
    release, or the folder `--reports` names."""
    existing = imported_report_hashes(store)
    registered = load_systems(store)
    systems: dict[str, str] = {}  # release name -> partition key
    pending: list[dict] = []
    for report in found:
        if report.task not in task_keys:
            summary.log.skip(report.where, None, f"task {report.task_id!r} was not imported, so neither is its report")
            continue
        key = systems.get(report.system) or _register_system(store, report.system, infos.get(report.system),
                                                             registered, summary)
        if key is None:
            summary.log.skip(report.where, None, f"system name {report.system!r} gives no usable partition key")
            continue
        systems[report.system] = key
        row = _report_row(report, key, summary, within)
        if row is None:
            continue
        before = existing.get((key, report.task))
        if before == row["content_hash"]:
            summary.reports["unchanged"] += 1
        else:
            summary.reports["changed" if before else "new"] += 1
            existing[(key, report.task)] = row["content_hash"]
            pending.append(row)
        summary.reports_by_system[key] += 1
        if len(pending) >= BATCH:
            write_imported_reports(store, pending)
            pending = []
    write_imported_reports(store, pending)


def import_cited_pages(store: Store, pages: Iterable[CitedPage]) -> Counter:
    """The release's fetched pages into the pages store, as what their URLs read (the fetcher looks
    there before the web, so the release's texts are judged, offline). The first text of a URL wins.
    A page the benchmark's own pipeline would not judge is stored unreadable, saying why; `blocked`
    records what our detector sees (bot wall, error page, ...) without changing the status."""
    counts: Counter = Counter()
    seen: set[str] = set()
    pending: list[tuple[str, FetchResult]] = []
    page_store = PageStore(store)
    for page in pages:
        key = url_key(page.url)
        if key in seen:
            continue
        seen.add(key)
        looks = extract_page(page.text.encode("utf-8"), "text/plain", page.url).blocked
        blocked = looks if looks not in (None, "empty") else None
        common = dict(url=page.url, backend=RELEASE_BACKEND, title=page.title, content_type="text/plain",
                      n_bytes=len(page.text.encode("utf-8")), blocked=blocked)
        pending.append((key, FetchResult(status="unknown", na_reason="data_accessibility",
                                         detail=f"{page.unread_because} ({page.where})", **common)
                        if page.unread_because else
                        FetchResult(status="ok", text=page.text, detail=f"text from the release ({page.where})",
                                    **common)))
        counts.update(stored=1, unread=bool(page.unread_because), walls=bool(blocked))
        if len(pending) >= BATCH:
            page_store.put(pending)
            pending = []
    page_store.put(pending)
    return counts


def _import_published(store: Store, records: Iterable[list[PublishedScore]], system: str | None,
                      summary: ImportSummary) -> None:
    """Each record's scores into `published_scores`, whole or not at all, in batches; the first batch
    holding a file replaces that file's earlier rows. With `system`, only that system's scores."""
    pending: list[dict] = []
    written: set[str] = set()

    def flush() -> None:
        files = sorted({row["file"] for row in pending} - written)
        write_published(store, summary.benchmark, pending, files)
        written.update(files)
        pending.clear()

    for record in records:
        rows = _published_rows(record, summary)
        if rows and system is not None:
            rows = [r for r in rows if r["system"] == slugify(system) or r["release_name"] == system]
        for row in rows or ():
            summary.published.setdefault(row["file"], Counter())[row["system"]] += 1
            pending.append(row)
        if len(pending) >= BATCH:
            flush()
    flush()


def _published_rows(record: list[PublishedScore], summary: ImportSummary) -> list[dict] | None:
    """The table rows of one record, or None (logged) when a system name gives no usable key."""
    rows = []
    for score in record:
        try:
            key = validate_key(slugify(score.system))
        except InvalidKeyError:
            summary.log.skip(score.file, score.line, f"system name {score.system!r} gives no usable key")
            return None
        rows.append({"system": key, "release_name": score.system, "task": score.task, "metric": score.metric,
                     "value": score.value, "scale": score.scale, "published_metric": score.published_metric,
                     "published_value": score.published_value, "file": score.file, "line": score.line,
                     "import_id": summary.import_id})
    return rows


def _register_system(store: Store, name: str, info: SystemInfo | None, registered: dict[str, SystemEntry],
                     summary: ImportSummary) -> str | None:
    try:
        key = validate_key(slugify(name))
    except InvalidKeyError:
        return None
    known = registered.get(key)
    if known is not None and known.kind != "imported":
        raise ImportFailed(f"system {key!r} is already registered as a {known.kind} system; "
                           f"import its reports under another name with --system")
    description = (info.description if info else "") or f"imported from {summary.benchmark} {summary.source}"
    display = (info.display_name if info else "") or name
    entry = SystemEntry(key, display, "imported", None, description,
                        has_citations=info.has_citations if info else None)
    register_system(store, entry)
    (summary.systems_known if known else summary.systems_new).append(key)
    registered[key] = entry
    return key


def _report_row(report: ImportedReport, system: str, summary: ImportSummary, within: Path) -> dict | None:
    """The imported_reports row, or None (logged) when the report is unreadable or refused (a link
    leading outside `within`, not a regular file); a report decoded from another encoding than UTF-8
    is kept, with a note."""
    if report.text is not None:
        got = decode_report_bytes(report.text.encode("utf-8"))
    else:
        got = read_report_file(report.path, root=within)
    if got.status != "ok":
        summary.log.skip(report.where, None, got.detail)
        return None
    if got.detail:
        summary.log.note(report.where, None, got.detail)
    text = got.text
    return {"system": system, "task": report.task, "original_id": report.task_id, "text": text,
            "content_hash": report_hash(text, report.cleaned_text, report.release_statements),
            "trace": _trace(report, summary, within),
            "source": report.where, "base_dir": str(report.base_dir) if report.base_dir else None,
            "import_id": summary.import_id, "cleaned_text": report.cleaned_text,
            "release_statements": report.release_statements}


def report_hash(text: str, cleaned_text: str | None, release_statements: str | None = None) -> str:
    """The report's hash; a cleaned rewrite and the release's statements are part of it, so a changed
    one makes the report due again (a report without them keeps the hash it always had)."""
    hashed = text if cleaned_text is None else f"{text}\x00cleaned\x00{cleaned_text}"
    return text_hash(hashed if release_statements is None else f"{hashed}\x00statements\x00{release_statements}")


def _trace(report: ImportedReport, summary: ImportSummary, within: Path) -> str | None:
    if report.trace is not None or report.trace_path is None:
        return report.trace
    try:
        with open_release_file(within, report.trace_path) as handle:
            data = handle.read(MAX_TRACE_BYTES + 1)
    except OSError as exc:
        summary.log.note(report.where, None, f"trace {report.trace_path.name} unreadable: {exc.strerror}")
        return None
    if len(data) > MAX_TRACE_BYTES:
        summary.log.note(report.where, None, f"trace cut at {MAX_TRACE_BYTES} bytes")
    return data[:MAX_TRACE_BYTES].decode("utf-8", "replace")
