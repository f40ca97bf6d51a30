"""Wiki Live Challenge live refresh, without Dagster: Good Articles created inside a contamination
window become `wlc` tasks, selected as the first release selected them (methods/wlc.md).

1. Window: articles *created* in (after, before] that are Good Articles now. Discovery walks the GA
   category newest first and stops at the window start (`wikilive_discovery`); each entry's creation
   date is its first revision. An old article newly promoted is a candidate dropped as "created
   before the window".
2. Metadata of the in-window candidates (`wikilive_metadata`): bytes, views, external links,
   categories, wikitext -> reference URLs, sections, subsections, list-likeness (`wikilive_wikitext`),
   topic (`wikilive_topics`).
3. Selection (`wikilive_selection`): list-like ones dropped, ranked by reference URLs then structural
   depth, the top `limit` kept across topics. Every candidate is returned with its reason.
4. Text and gold of the kept ones only (the paid calls): the extract as Markdown (`wikilive_extracts`,
   `wikilive_text`), the gold statements of the whole article in chunks (`wikilive_gold`).
5. Tasks: key `wlc.live-<pageid>` (the lineage; `refresh.py` registers a changed article as a new
   version `wlc.live-<pageid>-r<revid>` that supersedes the old one).

Articles already registered (`known`) that the walk meets again cost no creation call: when their
latest revision is the one their task was taken from they are `unchanged`; when it is not, they were
edited upstream and go to step 4 outside the selection (they were selected once). Candidates that
were kept but whose text or gold failed come back as `retry` and are passed in again by the next
refresh, outside the selection and the window.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Mapping, Sequence
from urllib.parse import quote

from ....core.keys import task_key
from ....core.models import Task
from ....fetch.api import JsonApi
from ....judges.base import Judge
from .wikilive_api import MediaWiki
from .wikilive_discovery import CATEGORY_PAGE_SIZE, creation_dates, discover, format_timestamp
from .wikilive_extracts import EXTRACT_BATCH_SIZE, fetch_texts
from .wikilive_gold import CHUNK_CHARS, extract_gold
from .wikilive_metadata import page_metadata
from .wikilive_selection import Candidate, select
from .wikilive_text import extract_to_markdown
from .wikilive_topics import topic_of
from .wikilive_wikitext import is_list_like, reference_urls, structure

BENCHMARK = "wlc"
RELEASE = "live"
WIKI_BASE = "https://en.wikipedia.org/wiki/"

QUERY_TEMPLATE = (
    "Write a comprehensive encyclopedia article about {title}, of the kind a Wikipedia editor would write. "
    "Begin with a lead section that summarises the topic and why it is notable, then give each main aspect "
    "its own section. Keep a neutral point of view: report facts and significant views in proportion to "
    "their weight in reliable sources, attribute opinions to the people who hold them, and avoid promotional "
    "or judgmental wording. Support every statement with an inline citation to a reliable published source "
    "and end with a references list giving the URL of each source. Do not use Wikipedia or sites that copy "
    "it as a source."
)


@dataclass(frozen=True)
class Window:
    after: datetime  # exclusive
    before: datetime  # inclusive

    def holds(self, when: datetime) -> bool:
        return self.after < when <= self.before


@dataclass(frozen=True)
class Known:
    """An article that is already a task: its latest version's key and the revision it was taken from."""

    key: str
    revid: int | None
    created_at: datetime | None = None


@dataclass
class WikiRefresh:
    tasks: list[tuple[Task, Candidate]] = field(default_factory=list)  # made this time, with their candidate
    candidates: list[Candidate] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # unreadable category entries
    api_calls: int = 0
    lag_waits: list[float] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        c = self.candidates
        return {"candidates": len(c), "in_window": sum(x.in_window is True for x in c),
                "created_before_window": sum(x.reason.startswith("created before the window") for x in c),
                "list_like": sum(x.list_like is True and x.in_window is True for x in c),
                "ranked": sum(x.rank is not None for x in c), "kept": sum(x.kept for x in c),
                "edited": sum(x.edited for x in c), "unchanged": sum(x.outcome == "unchanged" for x in c),
                "retry": sum(x.outcome == "retry" for x in c), "failed": sum(x.outcome == "failed" for x in c),
                "gold_statements": sum(x.n_statements or 0 for x in c),
                "gold_calls": sum(x.gold_chunks or 0 for x in c), "api_calls": self.api_calls}


def refresh_wikilive(api: JsonApi, api_url: str, judge: Judge, window: Window, *, limit: int = 50,
                     known: Mapping[int, Known] | None = None, retry: Sequence[Candidate] = (),
                     page_size: int = CATEGORY_PAGE_SIZE, batch_size: int = EXTRACT_BATCH_SIZE,
                     chunk_chars: int = CHUNK_CHARS, wiki_base: str = WIKI_BASE,
                     labels: Mapping[str, str] | None = None,
                     sleep: Callable[[float], None] = time.sleep) -> WikiRefresh:
    """Raises ApiError when discovery fails (nothing can be selected; the caller keeps its window).
    Everything that goes wrong for one article afterwards is that candidate's outcome and reason."""
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    known = known or {}
    mw = MediaWiki(api, api_url, sleep=sleep)
    entries, problems = discover(mw, window.after, page_size)
    result = WikiRefresh(problems=problems)
    candidates = [Candidate(e.pageid, e.title, e.ga_at, window.after, window.before) for e in entries]
    listed = {c.pageid for c in candidates}
    candidates += [c for c in retry if c.pageid not in listed]
    result.candidates = candidates

    _place_in_window(mw, candidates, window, known)
    measured = [c for c in candidates if not c.reason]
    _measure(mw, measured, known)
    kept = select(candidates, limit)
    todo = kept + [c for c in candidates if (c.edited or c.retried) and c.kept]
    result.tasks = _make_tasks(mw, todo, judge, batch_size, chunk_chars, wiki_base, labels or {})
    result.api_calls, result.lag_waits = mw.calls, mw.lag_waits
    return result


def _place_in_window(mw: MediaWiki, candidates: list[Candidate], window: Window, known: Mapping[int, Known]) -> None:
    """Creation dates (one call per new article) and the window test, each candidate against the window
    it was found in (one retried from an earlier refresh keeps that refresh's); known articles and
    retried kept ones are not tested again (they were selected once)."""
    for c in candidates:
        if c.pageid in known and known[c.pageid].created_at is not None:
            c.created_at = known[c.pageid].created_at
    asked = [c.pageid for c in candidates if c.created_at is None]
    dates = creation_dates(mw, asked)
    for c in candidates:
        found = dates.get(c.pageid, c.created_at)
        if isinstance(found, str):
            c.drop(f"creation date unknown: {found}", "retry", "data_accessibility")
            continue
        c.created_at = found
        own = Window(c.window_after, c.window_before) if c.window_after and c.window_before else window
        c.in_window = own.holds(found)
        if c.pageid in known or c.retried:
            continue
        if found <= own.after:
            c.drop(f"created before the window: created {format_timestamp(found)}, the window starts after "
                   f"{format_timestamp(own.after)} (an older article promoted recently)")
        elif found > own.before:
            c.drop(f"created after the window: created {format_timestamp(found)}, the window ends "
                   f"{format_timestamp(own.before)}")


def _measure(mw: MediaWiki, candidates: list[Candidate], known: Mapping[int, Known]) -> None:
    metadata = page_metadata(mw, [c.pageid for c in candidates])
    for c in candidates:
        meta = metadata[c.pageid]
        if meta.problem:
            c.drop(meta.problem, "retry" if meta.retry else "dropped", "data_accessibility")
            continue
        c.bytes, c.views, c.external_links, c.revid = meta.length, meta.views, meta.external_links, meta.lastrevid
        c.reference_urls = reference_urls(meta.wikitext or "")
        c.sections, c.subsections = structure(meta.wikitext or "")
        c.topic, c.category = topic_of(meta.categories)
        c.list_like = is_list_like(c.title, meta.wikitext or "")
        if c.pageid in known:
            before = known[c.pageid]
            c.task_key = before.key
            if before.revid is not None and before.revid == c.revid:
                c.drop(f"already a task ({before.key}) at this revision ({c.revid})", "unchanged")
                continue
            c.edited, c.kept = True, True
            c.reason = (f"already a task ({before.key}, revision {before.revid}); edited upstream since: "
                        f"revision {c.revid}")
        elif c.retried:
            c.kept, c.reason = True, "kept by an earlier refresh; its text or gold failed then: tried again"
        elif c.list_like:
            c.drop("list-like: the title starts with 'List of', or list items and tables hold more text than prose")


def _make_tasks(mw: MediaWiki, todo: list[Candidate], judge: Judge, batch_size: int, chunk_chars: int,
                wiki_base: str, labels: Mapping[str, str]) -> list[tuple[Task, Candidate]]:
    texts = fetch_texts(mw, [c.pageid for c in todo], batch_size)
    articles: list[tuple[Candidate, str, str]] = []
    for c in todo:
        text = texts.get(c.pageid)
        markdown = None if text is None or text.problem else extract_to_markdown(text.title or c.title,
                                                                                   text.extract or "")
        if text is None or text.problem or markdown is None:
            problem = (text.problem if text else None) or "extract has no text (empty, or headings only)"
            retry = text is None or text.retry
            c.drop(problem + (" (tried again next refresh)" if retry else ""), "retry" if retry else "failed",
                   "data_accessibility")
            continue
        c.title, c.revid = text.title or c.title, text.revid or c.revid
        articles.append((c, c.title, markdown))
    golds = extract_gold([(title, md, {**labels, "task": _key(c.pageid)}) for c, title, md in articles], judge,
                         chunk_chars)
    tasks = []
    for (c, title, markdown), gold in zip(articles, golds, strict=True):
        c.gold_chunks = gold.chunks
        if gold.statements is None:
            c.drop(gold.reason, "retry" if gold.retry else "failed", gold.na_reason)
            continue
        c.n_statements = len(gold.statements)
        c.outcome = "task"
        tasks.append((build_task(c, markdown, gold.statements, wiki_base), c))
    return tasks


def _key(pageid: int) -> str:
    return task_key(BENCHMARK, f"{RELEASE}-{pageid}")


def build_task(c: Candidate, reference_article: str, statements: list[str], wiki_base: str = WIKI_BASE) -> Task:
    attributes = {"release": RELEASE, "title": c.title, "url": article_url(c.title, wiki_base),
                  "pageid": str(c.pageid)}
    if c.ga_at is not None:
        attributes["ga_timestamp"] = format_timestamp(c.ga_at)
    if c.created_at is not None:
        attributes["created_at"] = format_timestamp(c.created_at)
    if c.revid is not None:
        attributes["revid"] = str(c.revid)  # the revision the reference was taken from
    if c.topic:
        attributes["topic"] = c.topic
    return Task(key=_key(c.pageid), benchmark=BENCHMARK, original_id=c.title,
                query=QUERY_TEMPLATE.format(title=c.title),
                language="en", reference_article=reference_article, gold_facts=statements, attributes=attributes)


def article_url(title: str, wiki_base: str = WIKI_BASE) -> str:
    """The article's address as MediaWiki writes it: spaces as underscores, the rest percent-encoded
    except the characters MediaWiki leaves readable."""
    return wiki_base + quote(title.strip().replace(" ", "_"), safe=";@$!*(),/~:")
