"""Wiki Live Challenge release loader: the layout of the public repository (methods/formats.md).

  data/<release>/wiki_data/ga_100.json                      tasks [{id, title, url, question}]
  data/<release>/wiki_data/ga_100.csv                       per-title metadata (category, ga_date, views, ...)
  data/<release>/wiki_data/cleaned_data/article/<Title>.md  reference article (the Good Article)
  data/<release>/wiki_data/cleaned_data/statement/<Title>_statements.json   gold statements
  data/<release>/wiki_data/raw_wiki/<Title>.json            MediaWiki form, fallback for the reference
  [data/<release>/ | data/ | ./]test_data/agencies.json     systems; outputs in test_data/<id>/
      md_data/<Title>.md (raw article) and json_data/<Title>.json (processed, with citation_urls)
  results/<run>/<Title>_writing.json                        published writing results (published.py)
  evaluation/data/wiki_writing_criteria.json                the 39 writing criteria texts (every task carries them)

Keys are `wlc.<release>-<id>`: ids restart with every release, and keeping the release in the key
means adding a release later never renames the tasks already imported. Reports name their task
by title only, so titles are matched through ga_100.json.
"""
from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core.keys import task_key
from ...core.models import Task
from ...releases.records import (
    CitedPage,
    Entry,
    ImportedReport,
    ImportLog,
    SystemInfo,
    first_of,
    layout_check,
    make_key,
    open_release_file,
    relative,
    text_of,
    unknown_fields,
)
from ...releases.json_readers import iter_json_array, read_json, read_text
from ...releases.published import PublishedScore
from . import published
from .criteria import RELEASE_CRITERIA_FILE, CriteriaShapeError, release_criteria

BENCHMARK = "wlc"
PUBLISHED_MIN_PAGE_CHARS = 100  # the published pipeline judges a page whose text is longer than this
STATEMENTS_POLICY = "wlc.statements"  # chooses the release's statements over our claims
CRITERIA_ATTRIBUTE = "writing_criteria"  # the release's criteria texts, JSON {category: [text, ...]}
GA_FILE = "ga_100.json"
GA_CSV = "ga_100.csv"
TASK_FIELDS = {"id", "title", "url", "question"}
CSV_OWN_FIELDS = {"title", "url", "category"}  # title/url match the JSON; category becomes the domain
AGENCY_FIELDS = {"name", "description", "has_citations", "enabled"}
AWKWARD_IN_FILE_NAMES = re.compile(r'[<>:"/\\|?*\x00-\x1f]')


@dataclass(frozen=True)
class Release:
    name: str
    wiki: Path  # data/<release>/wiki_data


@dataclass(frozen=True)
class WikiEntry(Entry):
    """A ga_100.json record that passed the id/title/question checks."""

    release: Release
    title: str
    question: str
    url: str


def layout_problem(root: Path) -> str | None:
    return layout_check(root, lambda r: has_tasks(r) or has_published(r), f"data/<release>/wiki_data/{GA_FILE}",
                        "a Wiki Live Challenge release")


def has_tasks(root: Path) -> bool:
    return bool(releases(root))


def has_published(root: Path) -> bool:
    return published.has_published(root)


def iter_published(root: Path, log: ImportLog) -> Iterator[list[PublishedScore]]:
    """Published writing results, one list per article, titles matched as reports' are. Published
    scores do not need our task: an article with a task file is linked to that task's key; one
    without (or a folder without ga_100.json, or a title several releases share) is keyed by its
    title (`wlc.<title>`), which no imported task has, and the log says so."""
    root = Path(root)
    if not has_published(root):
        return

    def by_title(title: str) -> str:
        return task_key(BENCHMARK, title_key(title))

    if not has_tasks(root):
        log.note(published.RESULTS.as_posix(), None, f"no data/<release>/wiki_data/{GA_FILE}: published results "
                 "are keyed by title (wlc.<title>) and match no task imported from a release")
        yield from published.iter_published(root, log, lambda title: (by_title(title), None))
        return
    index = title_index(root, None)

    def resolve(title: str) -> tuple[str, str | None]:
        found = index.get(title_key(title), False)
        if found is False:
            return by_title(title), "no task file has this title"
        return (found[0], None) if found else (by_title(title), "the title is in several releases")

    yield from published.iter_published(root, log, resolve)


def releases(root: Path) -> list[Release]:
    data = Path(root) / "data"
    if not data.is_dir():
        return []
    return [Release(d.name, d / "wiki_data") for d in sorted(data.iterdir())
            if (d / "wiki_data" / GA_FILE).is_file()]


def title_key(title: str) -> str:
    """How a title and a file name made from it compare: spaces and characters that file systems
    refuse become underscores, Unicode in one normal form (macOS stores names decomposed)."""
    return AWKWARD_IN_FILE_NAMES.sub("_", unicodedata.normalize("NFC", title).replace(" ", "_"))


def file_names(title: str) -> list[str]:
    """File-name stems a title may have been saved under: as is, spaces as underscores, and with
    awkward characters replaced. Stems that would leave their folder are never tried."""
    names = []
    slashless = title.replace("/", "_")
    for name in (title, title.replace(" ", "_"), slashless, slashless.replace(" ", "_"),
                 AWKWARD_IN_FILE_NAMES.sub("_", title), title_key(title)):
        if name not in names and name not in {".", ".."} and not re.search(r"[/\\\x00]", name):
            names.append(name)
    return names


def find_file(folder: Path, title: str, suffix: str) -> Path | None:
    for name in file_names(title):
        path = folder / f"{name}{suffix}"
        if path.is_file():
            return path
    return None


# --- tasks ------------------------------------------------------------------------------

def iter_entries(root: Path, log: ImportLog) -> Iterator[WikiEntry]:
    """Every usable ga_100.json record of every release, in release order."""
    root = Path(root)
    seen: dict[str, str] = {}
    for release in releases(root):
        yield from _release_entries(root, release, log, seen)


def _release_entries(root: Path, release: Release, log: ImportLog, seen: dict[str, str]) -> Iterator[WikiEntry]:
    path = release.wiki / GA_FILE
    file = relative(root, path)
    titles: dict[str, int] = {}  # title_key -> record number; one per task of this release
    for number, record in iter_json_array(path, root, log):
        unknown_fields(record, TASK_FIELDS, file, number, log)
        original_id = text_of(record.get("id"))
        title = text_of(record.get("title"))
        question = text_of(record.get("question"))
        if not original_id:
            log.skip(file, number, "record has no id")
            continue
        if not title:
            log.skip(file, number, "record has no title (reference and reports are named by title)")
            continue
        if not question:
            log.skip(file, number, "empty question")
            continue
        if title_key(title) in titles:
            log.skip(file, number, f"duplicate title {title!r} (first at record {titles[title_key(title)]}): "
                                   "its files and reports could not be told apart")
            continue
        key = make_key(BENCHMARK, f"{release.name}-{original_id}", file, number, log, seen, shown_id=original_id)
        if key is None:
            continue
        titles[title_key(title)] = number
        yield WikiEntry(file, number, key, original_id, record, release, title, question, text_of(record.get("url")))


def iter_tasks(root: Path, log: ImportLog) -> Iterator[Task]:
    root = Path(root)
    release, metadata = None, {}  # the CSV index of the release being read, built when first needed
    criteria = writing_criteria(root, log)
    for entry in iter_entries(root, log):
        article, facts = reference_material(root, entry, log)
        if article is None and not facts:
            log.skip(entry.file, entry.number, "no reference article and no gold statements: nothing to compare with")
            continue
        if entry.release != release:
            release, metadata = entry.release, read_metadata(root, entry.release, log)
        yield build_task(entry, article, facts, metadata, log, criteria)


def writing_criteria(root: Path, log: ImportLog) -> str | None:
    """The release's criteria texts as the JSON a task carries; None (logged) when the release has
    none usable, and the writing judge then shows our paraphrases."""
    path = root / RELEASE_CRITERIA_FILE
    if not path.is_file():
        log.miss(RELEASE_CRITERIA_FILE, None, "no writing criteria file: the judge is shown our paraphrases")
        return None
    try:
        texts = release_criteria(read_json(path, root, log))
    except CriteriaShapeError as exc:
        log.skip(RELEASE_CRITERIA_FILE, None, f"{exc}: the judge is shown our paraphrases")
        return None
    return json.dumps(texts, ensure_ascii=False, sort_keys=True)


def build_task(entry: WikiEntry, article: str | None, facts: list[str],
               metadata: dict[str, dict[str, str]], log: ImportLog, criteria: str | None = None) -> Task:
    row = metadata.get(title_key(entry.title))
    if row is None and metadata:
        log.note(entry.file, entry.number, f"no row for {entry.title!r} in {GA_CSV}: no category or metadata")
    row = row or {}
    attributes = {"release": entry.release.name, "title": entry.title}
    url = entry.url or row.get("url", "")
    if url:
        attributes["url"] = url
    attributes.update((name, value) for name, value in row.items() if name not in CSV_OWN_FIELDS)
    if criteria:
        attributes[CRITERIA_ATTRIBUTE] = criteria
    return Task(key=entry.key, benchmark=BENCHMARK, original_id=entry.original_id, query=entry.question,
                language="en", domain=row.get("category", ""), reference_article=article, gold_facts=facts,
                attributes=attributes)


def reference_material(root: Path, entry: WikiEntry, log: ImportLog) -> tuple[str | None, list[str]]:
    """The reference article (cleaned Markdown, else the raw MediaWiki extract) and the gold
    statements; what is missing is logged. The writing metrics need the article and fact coverage
    needs the statements, so a task is kept when it has at least one of them."""
    cleaned = entry.release.wiki / "cleaned_data"
    article = reference_article(root, entry, log)
    if article is None:
        log.miss(relative(root, cleaned / "article" / f"{entry.title}.md"), None,
                 f"reference article missing (no raw_wiki/{entry.title}.json either): writing metrics will be N/A")
    facts = gold_facts(root, cleaned / "statement", entry.title, log)
    if facts is None:
        log.miss(relative(root, cleaned / "statement" / f"{entry.title}_statements.json"), None,
                 "gold statements missing: fact coverage will be N/A")
    return article, facts or []


def reference_article(root: Path, entry: WikiEntry, log: ImportLog) -> str | None:
    path = find_file(entry.release.wiki / "cleaned_data" / "article", entry.title, ".md")
    if path is not None:
        text = read_text(path, root, log)
        if text and text.strip():
            return text
        if text is not None:
            log.note(relative(root, path), None, "reference article is empty")
    raw = find_file(entry.release.wiki / "raw_wiki", entry.title, ".json")
    if raw is None:
        return None
    page = mediawiki_page(read_json(raw, root, log))
    extract = page.get("extract") if page else None
    if not isinstance(extract, str) or not extract.strip():
        log.note(relative(root, raw), None, "raw_wiki page has no extract")
        return None
    log.note(relative(root, raw), None, "reference article taken from raw_wiki (cleaned article missing)")
    return extract


def gold_facts(root: Path, folder: Path, title: str, log: ImportLog) -> list[str] | None:
    """`[{statement}]` (plain strings and `fact`/`text` keys accepted); None when the file is absent or unreadable."""
    path = find_file(folder, title, "_statements.json")
    if path is None:
        return None
    data = read_json(path, root, log)
    if not isinstance(data, list):
        if data is not None:
            log.skip(relative(root, path), None, "expected a JSON array of statements")
        return None
    facts, unusable = [], 0
    for item in data:
        text = first_of(item, "statement", "fact", "text") if isinstance(item, dict) else item
        if isinstance(text, str) and text.strip():
            facts.append(text.strip())
        else:
            unusable += 1
    if unusable:
        log.note(relative(root, path), None, f"{unusable} statement(s) without text left out")
    return facts


def read_metadata(root: Path, release: Release, log: ImportLog) -> dict[str, dict[str, str]]:
    """ga_100.csv rows by title_key, read row by row. Bounded: one row of short labels per task."""
    path = release.wiki / GA_CSV
    file = relative(root, path)
    if not path.is_file():
        log.miss(file, None, "metadata file missing: tasks have no category, GA date or page views")
        return {}
    rows: dict[str, dict[str, str]] = {}
    try:
        handle = io.TextIOWrapper(open_release_file(root, path), encoding="utf-8-sig", newline="")
    except OSError as exc:
        log.miss(file, None, f"cannot open: {exc.strerror}")
        return {}
    with handle:
        reader = csv.DictReader(handle)
        try:
            for row in reader:
                title = text_of(row.get("title"))
                if not title:
                    log.note(file, reader.line_num, "row has no title: not matched to a task")
                    continue
                if title_key(title) in rows:
                    log.note(file, reader.line_num, f"duplicate row for {title!r}: the first one is kept")
                    continue
                rows[title_key(title)] = {str(name).strip(): text_of(value) for name, value in row.items()
                                          if name is not None and text_of(value)}
        except UnicodeDecodeError as exc:
            log.skip(file, reader.line_num + 1, f"not UTF-8 ({exc.reason}); the rest of the file is unreadable")
        except csv.Error as exc:
            log.skip(file, reader.line_num, f"malformed CSV ({exc}); the rest of the file is unreadable")
    return rows


# --- systems and reports -----------------------------------------------------------------

@dataclass(frozen=True)
class OutputsFolder:
    folder: Path  # a test_data folder
    release: str | None  # the release whose titles it answers; None = a root-level folder (all releases)


def find_test_data(root: Path) -> list[OutputsFolder]:
    root = Path(root)
    found = [OutputsFolder(release.wiki.parent / "test_data", release.name) for release in releases(root)]
    found += [OutputsFolder(root / "data" / "test_data", None), OutputsFolder(root / "test_data", None)]
    return [t for t in found if t.folder.is_dir()]


def read_agencies(root: Path, folder: Path, log: ImportLog) -> dict[str, dict]:
    """agencies.json as {id: info}; a list of {id, ...} is accepted too."""
    path = folder / "agencies.json"
    if not path.is_file():
        log.miss(relative(root, path), None, "no agencies.json: systems are the output folders found")
        return {}
    data = read_json(path, root, log)
    agencies = data.get("agencies") if isinstance(data, dict) else None
    if isinstance(agencies, list):
        agencies = {text_of(a.get("id")): a for a in agencies if isinstance(a, dict) and text_of(a.get("id"))}
    if not isinstance(agencies, dict):
        if data is not None:
            log.skip(relative(root, path), None, "expected {agencies: {id: {...}}}")
        return {}
    result = {}
    for number, (agency_id, info) in enumerate(agencies.items(), start=1):
        if not isinstance(info, dict):
            log.skip(relative(root, path), number, f"agency {agency_id!r} is not an object")
            continue
        unknown_fields(info, AGENCY_FIELDS | {"id"}, relative(root, path), number, log)
        result[str(agency_id)] = info
    return result


def system_folders(folder: Path) -> list[str]:
    """System folders under test_data: those holding md_data/ or json_data/."""
    return sorted(d.name for d in folder.iterdir()
                  if d.is_dir() and ((d / "md_data").is_dir() or (d / "json_data").is_dir()))


def iter_systems(root: Path, log: ImportLog) -> Iterator[SystemInfo]:
    """Agencies as listed (disabled ones too), then output folders no agencies.json lists."""
    root = Path(root)
    seen: set[str] = set()  # bounded by the number of systems
    for test_data in find_test_data(root):
        agencies = read_agencies(root, test_data.folder, log)
        for agency_id, info in agencies.items():
            if agency_id not in seen:
                seen.add(agency_id)
                yield SystemInfo(name=agency_id, description=text_of(info.get("description")),
                                 has_citations=_flag(info.get("has_citations")),
                                 display_name=text_of(info.get("name")), enabled=_flag(info.get("enabled")))
        for name in system_folders(test_data.folder):
            if name not in seen:
                seen.add(name)
                yield SystemInfo(name=name)


def title_index(root: Path, release: str | None) -> dict[str, tuple[str, str] | None]:
    """title_key -> (task key, original id) of the tasks iter_tasks yields (same checks, its log
    discarded); None marks a title that several releases share. Bounded: one entry per task."""
    index: dict[str, tuple[str, str] | None] = {}
    scratch = ImportLog()
    for entry in iter_entries(root, scratch):
        if release is not None and entry.release.name != release:
            continue
        article, facts = reference_material(root, entry, scratch)
        if article is None and not facts:
            continue
        name = title_key(entry.title)
        index[name] = None if name in index else (entry.key, entry.original_id)
    return index


def iter_reports(root: Path, log: ImportLog) -> Iterator[ImportedReport]:
    root = Path(root)
    indexes: dict[str | None, dict[str, tuple[str, str] | None]] = {}
    seen: dict[tuple[str, str], str] = {}  # (system, task key) -> where; bounded by systems x tasks
    for test_data in find_test_data(root):
        agencies = read_agencies(root, test_data.folder, ImportLog())  # its problems are iter_systems' to log
        if test_data.release not in indexes:
            indexes[test_data.release] = title_index(root, test_data.release)
        yield from _folder_reports(root, test_data, agencies, indexes[test_data.release], seen, log)


def _folder_reports(root: Path, test_data: OutputsFolder, agencies: dict[str, dict],
                    index: dict[str, tuple[str, str] | None], seen: dict[tuple[str, str], str],
                    log: ImportLog) -> Iterator[ImportedReport]:
    folders = system_folders(test_data.folder)
    agencies_file = relative(root, test_data.folder / "agencies.json")
    for agency_id, info in agencies.items():
        if _flag(info.get("enabled")) is False:
            log.note(agencies_file, None, f"agency {agency_id!r} is disabled: its reports are not imported")
        elif agency_id not in folders:
            log.miss(relative(root, test_data.folder / agency_id), None, f"no outputs for agency {agency_id!r}")
    systems = [a for a in agencies if _flag(agencies[a].get("enabled")) is not False and a in folders]
    for name in folders:
        if name not in agencies:
            if agencies:
                log.note(relative(root, test_data.folder / name), None,
                         "system folder not listed in agencies.json; imported")
            systems.append(name)
    for system in systems:
        yield from _system_reports(root, test_data, system, index, seen, log)


def _system_reports(root: Path, test_data: OutputsFolder, system: str, index: dict[str, tuple[str, str] | None],
                    seen: dict[tuple[str, str], str], log: ImportLog) -> Iterator[ImportedReport]:
    for name, (md, js) in sorted(_report_files(test_data.folder / system).items()):
        where = relative(root, md or js)
        task = index.get(name)
        if task is None:
            reason = ("title is in several releases: put test_data under data/<release>/ to say which"
                      if name in index else "no imported task has this title")
            log.skip(where, None, reason)
            continue
        key, original_id = task
        if (system, key) in seen:
            log.skip(where, None, f"duplicate report of {system!r} for this task (first at {seen[(system, key)]})")
            continue
        report = build_report(root, system, key, original_id, md, js, log)
        if report is not None:
            seen[(system, key)] = report.where
            yield report


def _report_files(folder: Path) -> dict[str, tuple[Path | None, Path | None]]:
    """title_key -> (md_data file, json_data file) of one system. Bounded: file names, not contents."""
    files: dict[str, tuple[Path | None, Path | None]] = {}
    for sub, suffix, slot in (("md_data", ".md", 0), ("json_data", ".json", 1)):
        if not (folder / sub).is_dir():
            continue
        for path in (folder / sub).iterdir():
            if path.is_file() and path.name.endswith(suffix):
                pair = list(files.get(title_key(path.name[: -len(suffix)]), (None, None)))
                pair[slot] = path
                files[title_key(path.name[: -len(suffix)])] = (pair[0], pair[1])
    return files


def build_report(root: Path, system: str, key: str, original_id: str, md: Path | None, js: Path | None,
                 log: ImportLog) -> ImportedReport | None:
    """The md article as a file; as text with a references block when the json's `citation_urls`
    resolve indices the article's own list does not (the parser needs a list to resolve `[n]`);
    the json extract when no md is usable."""
    page, urls, statements = None, [], None
    if js is not None:
        data = read_json(js, root, log)
        page = mediawiki_page(data)
        if data is not None and page is None:
            log.skip(relative(root, js), None, "no query.pages entry")
        urls = citation_urls(page) if page else []
        statements = release_statements(page, relative(root, js), log) if page else None
    text = read_text(md, root, log) if md is not None else None
    if text and text.strip():
        where = relative(root, md)
        listed, missing = unresolved_by_article(text, urls)
        if missing:
            log.note(where, None, "article has no reference list: added from json_data citation_urls" if not listed
                     else f"json_data citation_urls resolve {len(missing)} index(es) the article's reference list "
                          f"leaves without a URL: {_shown([n for n, _ in missing])}")
            return ImportedReport(system=system, task=key, task_id=original_id, where=where,
                                  text=text.rstrip() + references_block(missing), base_dir=md.parent,
                                  release_statements=statements)
        return ImportedReport(system=system, task=key, task_id=original_id, where=where, path=md, base_dir=md.parent,
                              release_statements=statements)
    extract = page.get("extract") if page else None
    if isinstance(extract, str) and extract.strip():
        where = relative(root, js)
        if md is not None:
            log.note(relative(root, md), None, "md article empty or unreadable: used the json_data extract")
        return ImportedReport(system=system, task=key, task_id=original_id, where=where,
                              text=extract.rstrip() + references_block(urls), release_statements=statements)
    if text is not None:
        log.skip(relative(root, md), None, "empty report")
    elif js is not None:  # (an unreadable md was logged when read)
        log.skip(relative(root, js), None, "empty report")
    return None


def release_statements(page: dict, where: str, log: ImportLog) -> str | None:
    """The release's own statements of the report (`statements[{fact, ref_idx, url}]`, `ref_idx` and
    `url` each a string or a list), as JSON {"policy": STATEMENTS_POLICY, "statements": [{text, urls,
    indices}]}: what policy `wlc.statements = release` judges. A URL missing from `url` is taken from
    `citation_urls` by its index; entries without a fact are left out and noted. None: the page has
    no `statements` list."""
    found = page.get("statements")
    if not isinstance(found, list):
        return None
    by_index = dict(citation_urls(page))
    kept, empty = [], 0
    for entry in found:
        fact = text_of(entry.get("fact")) if isinstance(entry, dict) else ""
        if not fact:
            empty += 1
            continue
        indices = [text_of(i) for i in _as_list(entry.get("ref_idx"))]
        indices = [i for i in indices if i]
        urls = [text_of(u) for u in _as_list(entry.get("url"))]
        urls = [u for u in urls if u] or [by_index[i] for i in indices if i in by_index]
        kept.append({"text": " ".join(fact.split()), "urls": list(dict.fromkeys(urls)), "indices": indices})
    if empty:
        log.note(where, None, f"{empty} statements entr{'y' if empty == 1 else 'ies'} without a fact: left out")
    return json.dumps({"policy": STATEMENTS_POLICY, "statements": kept}, ensure_ascii=False)


def _as_list(value: Any) -> list:
    return value if isinstance(value, list) else [] if value is None else [value]


def unresolved_by_article(text: str, urls: list[tuple[str, str]]) -> tuple[bool, list[tuple[str, str]]]:
    """(does the article have a reference list, the numbered `citation_urls` entries for indices
    that list gives no URL). The article's own URL wins where both give one."""
    if not urls:
        return False, []
    from ...core.report_parser import parse_report  # the parser downstream decides what a list is

    parsed = parse_report(text)
    resolved = {reference.index for reference in parsed.references if reference.url}
    return parsed.has_reference_list, [(n, url) for n, url in urls if n.isdigit() and int(n) not in resolved]


def _shown(indices: list[str], limit: int = 10) -> str:
    more = f" and {len(indices) - limit} more" if len(indices) > limit else ""
    return ", ".join(indices[:limit]) + more


def citation_urls(page: dict) -> list[tuple[str, str]]:
    """(index, url) from `citation_urls` {n: url} (a list counts from 1), in index order."""
    value = page.get("citation_urls")
    if isinstance(value, list):
        pairs = [(str(n), url) for n, url in enumerate(value, start=1)]
    elif isinstance(value, dict):
        pairs = [(str(n).strip(), url) for n, url in value.items()]
    else:
        return []
    pairs = [(n, url.strip()) for n, url in pairs if isinstance(url, str) and url.strip()]
    return sorted(pairs, key=lambda pair: (0, int(pair[0]), "") if pair[0].isdigit() else (1, 0, pair[0]))


def references_block(urls: list[tuple[str, str]]) -> str:
    if not urls:
        return "\n"
    return "\n\nReferences\n" + "".join(f"[{n}] {url}\n" for n, url in urls)


# --- the release's fetched pages -----------------------------------------------------------

def iter_cited_pages(root: Path, log: ImportLog, system: str | None = None) -> Iterator[CitedPage]:
    """Every `citation_contents` page of every system's json_data (or only `system`'s): the text the
    published pipeline fetched for a cited URL. An entry without a URL takes it from `citation_urls`;
    one without text is left out (the URL is then fetched as any other)."""
    root = Path(root)
    for test_data in find_test_data(root):
        for name in system_folders(test_data.folder):
            if system is not None and name != system:
                continue
            folder = test_data.folder / name / "json_data"
            for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
                page = mediawiki_page(read_json(path, root, ImportLog()))  # its problems are iter_reports' to log
                if page is not None:
                    yield from _page_contents(page, relative(root, path), log)


def _page_contents(page: dict, where: str, log: ImportLog) -> Iterator[CitedPage]:
    contents = page.get("citation_contents")
    if not isinstance(contents, dict):
        return
    urls = dict(citation_urls(page))
    empty = 0
    for index, entry in contents.items():
        entry = entry if isinstance(entry, dict) else {}
        url = text_of(entry.get("url")) or urls.get(str(index).strip(), "")
        text = entry.get("content") if isinstance(entry.get("content"), str) else ""
        if not url or not text.strip():
            empty += 1
            continue
        short = "" if len(text.strip()) > PUBLISHED_MIN_PAGE_CHARS else (
            f"the release's text has {len(text.strip())} characters: the published pipeline judges only texts "
            f"over {PUBLISHED_MIN_PAGE_CHARS}")
        yield CitedPage(url=url, title=text_of(entry.get("title")), text=text.strip(), where=where,
                        unread_because=short)
    if empty:
        log.note(where, None, f"{empty} citation_contents entr{'y' if empty == 1 else 'ies'} without URL or text: "
                              "those URLs are fetched as any other")


# --- small readers -------------------------------------------------------------------------

def mediawiki_page(data: Any) -> dict | None:
    """The page object of a MediaWiki API answer: `query.pages.<pageid>` (or a list, formatversion 2);
    a bare page object is accepted too."""
    if not isinstance(data, dict):
        return None
    pages = data.get("query", {}).get("pages") if isinstance(data.get("query"), dict) else None
    if isinstance(pages, dict):
        pages = list(pages.values())
    if isinstance(pages, list):
        return next((p for p in pages if isinstance(p, dict)), None)
    return data if "extract" in data or "citation_urls" in data else None


def _flag(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    text = text_of(value).lower()
    return True if text in {"true", "1", "yes"} else False if text in {"false", "0", "no"} else None

