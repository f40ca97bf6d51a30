"""DR³-Eval release loader (formats.md, "DR³-Eval"). Paths relative to the release root:

  datasets_{en,zh}/query.jsonl              tasks {task|id|number, query}; language from the folder
  datasets_{en,zh}/<task>/                  user files, long_context_sampled_<size>.json = [{title, content}],
                                            useful_search.json|.jsonl = [{title}] (the supportive documents),
                                            distractor_search.json|.jsonl = [{title}] (the distractors, when marked)
  insights/[<set>/]<task>/gold_insights_from_{long_context,source}.json = {gold_insights: [{insight}]}
                                            `source`: from the user files (I_UF, Task.gold_insights);
                                            `long_context`: from the sandbox (I_SC, Task.gold_insights_sandbox)
  checklists/[<set>/]<task>/checklist.json  = {checklist: [{requirement, category}]}
  results/<size>/<model>/[<set>/]<task>/final_report.md (+ execution_log.json)

A sandbox document is supportive when useful_search lists it, a distractor when distractor_search lists it
or the document itself says so (`role` or `type`: "distractor"), else noise (the published release marks
only the supportive ones, so its distractors are counted with the noise, and the composition says so).
The corpora of the five sizes stay apart: each page names the sizes that hold it (SandboxPage.corpora),
a run `<model>-<size>` is served from its own size only, and each task records its composition per size
(attributes `sandbox_composition`, JSON) and whether it has the published shape (`sandbox_shape`: every
size 32k-512k present, each holding every supportive document), so a run on a size that lacks some
supportive documents gets CC N/A with that reason. The two gold sources stay apart: information recall
scores each separately (IR_UF, IR_SC).

The en and zh sets reuse ids, so a task's key is built from `en-<id>` / `zh-<id>`. A task folder may be
named `12`, `012`, `task_12` or `en-12`; `<set>` is `datasets_en`, `en`, `datasets_zh` or `zh`.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

from ...core.keys import task_key
from ...core.models import SandboxPage, Task
from ...releases.records import (
    ImportedReport,
    ImportLog,
    SystemInfo,
    canonical_id,
    first_of,
    id_and_query,
    layout_check,
    make_key,
    read_release_bytes,
    relative,
    subfolders,
    unknown_fields,
)
from ...releases.attachments import attachment_texts
from ...releases.json_readers import TooDeep, decode_json, iter_json_array, iter_jsonl, iter_records
from ...releases.reports import FirstReports, is_blank

BENCHMARK = "dr3"
SETS = (("en", "datasets_en"), ("zh", "datasets_zh"))
SET_FOLDERS = {"en": "en", "zh": "zh", "datasets_en": "en", "datasets_zh": "zh"}
ID_FIELDS = ("task", "id", "number")
TASK_FIELDS = {*ID_FIELDS, "query"}
DOC_FIELDS = {"title", "content", "url", "role", "type"}
DOC_ROLES = ("supportive", "distractor", "noise")
CORPUS_FILE = re.compile(r"^long_context_sampled_(\d+)k\.json$")
PUBLISHED_SIZES = ("32k", "64k", "128k", "256k", "512k")  # every task's sandbox, at each size (methods/dr3.md)
PUBLISHED_SHAPE = "published"  # attributes.sandbox_shape of a task whose corpora have the published shape
USEFUL_FILES = ("useful_search.json", "useful_search.jsonl")
DISTRACTOR_FILES = ("distractor_search.json", "distractor_search.jsonl")
USER_FILE_INSIGHTS = "gold_insights_from_source.json"  # I_UF
SANDBOX_INSIGHTS = "gold_insights_from_long_context.json"  # I_SC
INSIGHT_FILES = (SANDBOX_INSIGHTS, USER_FILE_INSIGHTS)
MEDIA_SUFFIXES = {
    ".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff",  # images
    ".mp4", ".mov", ".avi", ".mkv", ".webm",  # video
    ".mp3", ".wav", ".m4a", ".flac", ".ogg", ".aac",  # audio
}
DOCUMENT_SUFFIXES = {".pdf", ".docx", ".doc", ".xlsx", ".xls", ".csv", ".pptx", ".ppt", ".txt", ".md",
                     ".html", ".htm"}
# Files the reference pipeline derives next to the corpora (retrieval caches): not user files.
DERIVED_SUFFIXES = {".db", ".npy", ".npz", ".pkl", ".faiss", ".index"}


class UnusableGold(Exception):
    """A gold file that cannot be read, or a gold folder that cannot be told apart between sets: the task is
    skipped rather than imported without its gold (or with another task's)."""


def layout_problem(root: Path) -> str | None:
    return layout_check(root, lambda r: any((r / folder / "query.jsonl").is_file() for _, folder in SETS),
                        "datasets_en/query.jsonl or datasets_zh/query.jsonl", "a DR³-Eval release")


# --- folder names and ids --------------------------------------------------------------------

def split_folder_name(name: str) -> tuple[str | None, str]:
    """(language or None, canonical id) of a task folder name: `en-12` -> ('en', '12'), `task_012` -> (None, '12')."""
    language = None
    prefixed = re.match(r"(en|zh)[-_](.+)$", name, re.IGNORECASE)
    if prefixed:
        language, name = prefixed.group(1).lower(), prefixed.group(2)
    numbered = re.match(r"(?:task|case)[-_]?(\d+)$", name, re.IGNORECASE)
    if numbered:
        name = numbered.group(1)
    return language, canonical_id(name)


class _Release:
    """Lookups for one pass over a release, each built on first use.

    Both are bounded by the number of tasks and hold only short strings: folder indexes map a
    canonical id to sub-folder names; the id index maps a canonical id to {language: id as given}.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._folders: dict[Path, dict[str, list[tuple[str | None, str]]]] = {}
        self._ids: dict[str, dict[str, str]] | None = None

    def folder_names(self, folder: Path, ident: str, language: str) -> tuple[str | None, str | None]:
        """(sub-folder named for this language, e.g. `en-12`; plain sub-folder, e.g. `012`) of `folder`."""
        if folder not in self._folders:
            index: dict[str, list[tuple[str | None, str]]] = {}
            if folder.is_dir():
                for entry in sorted(os.scandir(folder), key=lambda e: e.name):
                    if entry.is_dir():
                        lang, canon = split_folder_name(entry.name)
                        index.setdefault(canon, []).append((lang, entry.name))
            self._folders[folder] = index
        entries = self._folders[folder].get(ident, [])
        named = next((name for lang, name in entries if lang == language), None)
        plain = next((name for lang, name in entries if lang is None), None)
        return named, plain

    def ids(self) -> dict[str, dict[str, str]]:
        if self._ids is None:
            self._ids = {}
            quiet = ImportLog()  # iter_tasks reports the problems of these files; don't repeat them
            for language, folder in SETS:
                for _, record in iter_jsonl(self.root / folder / "query.jsonl", self.root, quiet):
                    raw = first_of(record, *ID_FIELDS)
                    if isinstance(raw, (str, int)) and str(raw).strip():
                        given = str(raw).strip()
                        self._ids.setdefault(canonical_id(given), {}).setdefault(language, given)
        return self._ids

    def task_folder(self, language: str, set_folder: str, ident: str) -> Path | None:
        named, plain = self.folder_names(self.root / set_folder, ident, language)
        name = named or plain
        return self.root / set_folder / name if name else None

    def gold_folder(self, kind: str, language: str, set_folder: str, ident: str) -> Path | None:
        """`<kind>/<set>/<task>/`, else `<kind>/en-<task>/`, else `<kind>/<task>/` when the id is in one set only."""
        base = self.root / kind
        for sub in (set_folder, language):
            named, plain = self.folder_names(base / sub, ident, language)
            if named or plain:
                return base / sub / (named or plain)
        named, plain = self.folder_names(base, ident, language)
        if named:
            return base / named
        if plain and len(self.ids().get(ident, {})) > 1:
            raise UnusableGold(f"{kind}/{plain}/ could belong to en-{ident} or zh-{ident} (the id is in both sets "
                          f"and the folder does not say which); put it under {kind}/{set_folder}/")
        return base / plain if plain else None

    def resolve_report(self, folder_name: str, language_hint: str | None) -> tuple[str, str] | str:
        """(language, id as given) of a result folder, or why it cannot be resolved."""
        language, ident = split_folder_name(folder_name)
        if language and language_hint and language != language_hint:
            return f"folder {folder_name} is under the {language_hint} set but names the {language} set"
        language = language or language_hint
        known = self.ids().get(ident, {})
        if language:
            if language in known:
                return language, known[language]
            return f"no {language} task with id {ident!r}"
        if len(known) == 1:
            return next(iter(known.items()))
        if not known:
            return f"no task with id {ident!r}"
        return (f"task id {ident!r} exists in both the en and zh sets and the folder does not say which "
                f"(name it en-{ident} / zh-{ident} or put it under an en/ or zh/ folder)")


# --- tasks -----------------------------------------------------------------------------------

def iter_tasks(root: Path, log: ImportLog) -> Iterator[Task]:
    root = Path(root)
    release = _Release(root)
    seen: dict[str, str] = {}
    for language, set_folder in SETS:
        path = root / set_folder / "query.jsonl"
        if not path.is_file():
            continue
        name = relative(root, path)
        for line, record in iter_jsonl(path, root, log):
            task = _task(release, record, language, set_folder, name, line, log, seen)
            if task is not None:
                yield task


def _task(release: _Release, record: dict, language: str, set_folder: str, file: str, line: int,
          log: ImportLog, seen: dict[str, str]) -> Task | None:
    unknown_fields(record, TASK_FIELDS, file, line, log)
    given = id_and_query(record, ID_FIELDS, file, line, log)
    if given is None:
        return None
    original_id, query = given
    key = make_key(BENCHMARK, f"{language}-{original_id}" if original_id else "", file, line, log, seen)
    if key is None:
        return None
    ident, task = canonical_id(original_id), f"{language}-{original_id}"
    folder = release.task_folder(language, set_folder, ident)
    if folder is None:
        log.skip_for_missing(file, line, task, [f"{set_folder}/{original_id}/"], "task folder")
        return None
    files, dangling = _user_files(release.root, folder, file, line, log)
    if dangling:
        log.skip_for_missing(file, line, task, [f"{name} (dangling link)" for name in dangling], "user file")
        return None
    skipped_before = len(log.skipped)  # the readers log a bad corpus record as a skip
    sandbox, sizes, composition, shape = _sandbox(release.root, folder, log)
    if sandbox is None:
        corpus = f"{relative(release.root, folder)}/long_context_sampled_<size>.json"
        log.skip_for_missing(file, line, task, [corpus], "sandbox corpus file")
        return None
    if len(log.skipped) > skipped_before:
        log.skip(file, line, f"task {task} skipped: its sandbox could not be read whole")
        return None
    try:
        insights, sandbox_insights = _gold_insights(release, language, set_folder, ident, file, line, log)
        checklist = _checklist(release, language, set_folder, ident, file, line, log)
    except UnusableGold as exc:
        log.skip(file, line, f"task {task} skipped: {exc}")
        return None
    modality = "multimodal" if any(Path(f).suffix.lower() in MEDIA_SUFFIXES for f in files) else "text"
    return Task(
        key=key, benchmark=BENCHMARK, original_id=original_id, query=query, language=language,
        modality=modality, attachments=files, checklist=checklist, gold_insights=insights,
        gold_insights_sandbox=sandbox_insights,
        attributes={"set": language, "context_sizes": ",".join(sizes),
                    "sandbox_composition": json.dumps(composition), "sandbox_shape": shape},
        sandbox=sandbox, attachment_texts=attachment_texts(release.root, files, file, line, task, log),
    )


def _user_files(root: Path, folder: Path, file: str, line: int, log: ImportLog) -> tuple[list[str], list[str]]:
    """(root-relative paths of the task's user files, those of them that are dangling links)."""
    files, ignored, dangling = [], [], []
    for directory, children, names in os.walk(folder):
        children[:] = sorted(d for d in children if not d.startswith("."))
        for name in sorted(names):
            path = Path(directory) / name
            suffix = path.suffix.lower()
            if (name.startswith(".") or name in USEFUL_FILES or name in DISTRACTOR_FILES or CORPUS_FILE.match(name)
                    or suffix in DERIVED_SUFFIXES):
                continue
            if suffix not in MEDIA_SUFFIXES | DOCUMENT_SUFFIXES:
                ignored.append(relative(root, path))
            elif not path.is_file():
                dangling.append(relative(root, path))
            else:
                files.append(relative(root, path))
    if ignored:
        log.note(file, line, f"file(s) of an unknown type left out of the attachments: {', '.join(ignored[:8])}")
    return files, dangling


def _sandbox(root: Path, folder: Path, log: ImportLog
             ) -> tuple[list[SandboxPage] | None, list[str], dict[str, dict[str, int]], str]:
    """(the pages of every size's corpus, one per title, each naming the sizes that hold it; the sizes;
    the composition per size: documents per role and characters; the shape: `published` or what differs)."""
    corpora = sorted(((int(m.group(1)), p) for p in folder.iterdir() if (m := CORPUS_FILE.match(p.name))),
                     key=lambda pair: pair[0])
    if not corpora:
        return None, [], {}, "no corpus"
    supportive = _listed_titles(root, folder, USEFUL_FILES, log)
    if supportive is None:
        log.note(relative(root, folder), None, "no useful_search.json(l): no document is marked supportive")
    supportive = supportive or set()
    distractors = (_listed_titles(root, folder, DISTRACTOR_FILES, log) or set()) - supportive
    pages: dict[str, SandboxPage] = {}
    composition: dict[str, dict[str, int]] = {}
    for size, path in corpora:
        name, noted, corpus = relative(root, path), False, f"{size}k"
        counts = composition.setdefault(corpus, {**{role: 0 for role in DOC_ROLES}, "chars": 0})
        for number, doc in iter_json_array(path, root, log):
            if not noted and set(doc) - DOC_FIELDS:
                unknown_fields(doc, DOC_FIELDS, name, number, log)
                noted = True  # once per file: a corpus holds thousands of documents
            title = doc.get("title")
            if not isinstance(title, str) or not title.strip():
                log.note(name, number, "document without a title left out of the sandbox")
                continue
            title = title.strip()
            if title not in pages:
                pages[title] = _page(doc, title, supportive, distractors)
            page = pages[title]
            if corpus not in page.corpora:  # a title twice in one corpus counts once
                page.corpora.append(corpus)
                counts[page.role] += 1
                counts["chars"] += len(page.text)
    for counts in composition.values():
        counts["distractors_marked"] = int(bool(distractors) or counts["distractor"] > 0)
    absent = sorted(supportive - set(pages))
    if absent:
        log.note(relative(root, folder), None,
                 f"supportive title(s) not in any corpus: {', '.join(repr(t) for t in absent[:5])}")
    shape = _shape(composition, len(supportive))
    if shape != PUBLISHED_SHAPE:
        log.note(relative(root, folder), None, f"sandbox not at its published shape: {shape}")
    return list(pages.values()), list(composition), composition, shape


def _shape(composition: dict[str, dict[str, int]], n_supportive: int) -> str:
    """`published` when the five sizes are there and each holds every supportive document (the paper's
    construction), else what differs."""
    problems = []
    missing = [s for s in PUBLISHED_SIZES if s not in composition]
    if missing:
        problems.append(f"no {', '.join(missing)} corpus")
    extra = [s for s in composition if s not in PUBLISHED_SIZES]
    if extra:
        problems.append(f"unpublished size(s) {', '.join(extra)}")
    if not n_supportive:
        problems.append("no supportive document listed (useful_search)")
    short = [f"{s} holds {c['supportive']} of {n_supportive}" for s, c in composition.items()
             if c["supportive"] < n_supportive]
    if short:
        problems.append(f"supportive documents missing: {'; '.join(short)}")
    return "; ".join(problems) or PUBLISHED_SHAPE


def _page(doc: dict, title: str, supportive: set[str], distractors: set[str]) -> SandboxPage:
    url = doc.get("url")
    if not (isinstance(url, str) and url.startswith(("http://", "https://"))):
        url = f"doc:{title}"  # the corpus's own web address, when it gives one, lets URL citations resolve too
    content = doc.get("content")
    return SandboxPage(url=url, title=title, role=_role(doc, title, supportive, distractors),
                       text=content if isinstance(content, str) else "")


def _role(doc: dict, title: str, supportive: set[str], distractors: set[str]) -> str:
    """supportive (useful_search) first, then distractor (distractor_search or the document's own mark), else noise."""
    if title in supportive:
        return "supportive"
    marked = next((v.strip().lower() for k in ("role", "type") if isinstance(v := doc.get(k), str)), "")
    return "distractor" if title in distractors or marked == "distractor" else "noise"


def _listed_titles(root: Path, folder: Path, names: tuple[str, ...], log: ImportLog) -> set[str] | None:
    """The titles a `[{title}]` file of the task folder lists; None when there is no such file."""
    path = next((folder / name for name in names if (folder / name).is_file()), None)
    if path is None:
        return None
    titles = set()
    for _, record in iter_records(path, root, log):
        title = record.get("title")
        if isinstance(title, str) and title.strip():
            titles.add(title.strip())
    return titles


def _gold_insights(release: _Release, language: str, set_folder: str, ident: str, file: str, line: int,
                   log: ImportLog) -> tuple[list[str], list[str]]:
    """(insights from the user files, insights from the sandbox), each deduplicated within itself:
    the two sources are scored apart (IR_UF, IR_SC), so an insight in both counts in both."""
    folder = release.gold_folder("insights", language, set_folder, ident)
    found: dict[str, list[str]] = {}
    for name in (USER_FILE_INSIGHTS, SANDBOX_INSIGHTS):
        if folder is not None and (folder / name).is_file():
            found[name] = list(dict.fromkeys(_texts(release.root, folder / name, "gold_insights", "insight")))
    if not found:
        log.note(file, line, f"no gold insights for {language}-{ident} (information recall will be N/A)")
    return found.get(USER_FILE_INSIGHTS, []), found.get(SANDBOX_INSIGHTS, [])


def _checklist(release: _Release, language: str, set_folder: str, ident: str, file: str, line: int,
               log: ImportLog) -> list[str]:
    folder = release.gold_folder("checklists", language, set_folder, ident)
    if folder is None or not (folder / "checklist.json").is_file():
        log.note(file, line, f"no checklist for {language}-{ident} (instruction following will be N/A)")
        return []
    return _texts(release.root, folder / "checklist.json", "checklist", "requirement")


def _texts(root: Path, path: Path, list_field: str, text_field: str) -> list[str]:
    """The item texts of a small gold file `{list_field: [{text_field: ...}]}` (a bare list or strings also do)."""
    name = relative(root, path)
    try:
        value = decode_json(read_release_bytes(root, path).decode("utf-8-sig"))
    except OSError as exc:
        raise UnusableGold(f"{name} cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise UnusableGold(f"{name} is not UTF-8 ({exc.reason})") from None
    except TooDeep as exc:
        raise UnusableGold(f"{name} refused: JSON {exc.msg}") from None
    except json.JSONDecodeError as exc:
        raise UnusableGold(f"{name} is malformed JSON ({exc.msg} at line {exc.lineno})") from None
    items = value.get(list_field) if isinstance(value, dict) else value
    if not isinstance(items, list):
        raise UnusableGold(f"{name} has no {list_field!r} list")
    texts = []
    for item in items:
        text = item.get(text_field) if isinstance(item, dict) else item
        if isinstance(text, str) and text.strip():
            texts.append(text.strip())
    return texts


# --- reports and systems ---------------------------------------------------------------------

def iter_reports(root: Path, log: ImportLog) -> Iterator[ImportedReport]:
    root = Path(root)
    release = _Release(root)
    first = FirstReports()
    for system, language_hint, folder in _result_folders(root):
        where = relative(root, folder / "final_report.md")
        report = folder / "final_report.md"
        if not report.is_file():
            log.skip(relative(root, folder), None, "no final_report.md (the run left no report)")
            continue
        resolved = release.resolve_report(folder.name, language_hint)
        if isinstance(resolved, str):
            log.skip(where, None, resolved)
            continue
        if is_blank(report, root):
            log.skip(where, None, "empty report")
            continue
        language, original_id = resolved
        key = task_key(BENCHMARK, f"{language}-{original_id}")
        if first.is_second(system, key, f"{language}-{original_id}", where, None, log):
            continue
        trace = folder / "execution_log.json"
        yield ImportedReport(
            system=system, task=key, task_id=original_id,
            where=where, path=report, base_dir=folder, trace_path=trace if trace.is_file() else None,
        )


def iter_systems(root: Path, log: ImportLog) -> Iterator[SystemInfo]:
    seen: set[str] = set()  # bounded by the number of (model, size) runs
    for system, _, _ in _result_folders(Path(root)):
        if system not in seen:
            seen.add(system)
            yield SystemInfo(name=system)


def _result_folders(root: Path) -> Iterator[tuple[str, str | None, Path]]:
    """(system `<model>-<size>`, language named by the path or None, task folder) under results/,
    accepting an optional set folder above the sizes or between the model and the tasks."""
    results = root / "results"
    for top in subfolders(results):
        if top.name in SET_FOLDERS:
            for size in subfolders(top):
                yield from _model_folders(size, SET_FOLDERS[top.name])
        else:
            yield from _model_folders(top, None)


def _model_folders(size: Path, language: str | None) -> Iterator[tuple[str, str | None, Path]]:
    for model in subfolders(size):
        system = f"{model.name}-{size.name}"
        for child in subfolders(model):
            if child.name in SET_FOLDERS and language is None:
                for folder in subfolders(child):
                    yield system, SET_FOLDERS[child.name], folder
            else:
                yield system, language, child
