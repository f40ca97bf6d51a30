"""Wiki Live Challenge live refresh, without Dagster: new Wikipedia Good Articles become `wlc` tasks.

Steps (methods/wlc.md: "Refreshing = pulling newer GAs via the MediaWiki API"):
1. Discovery: `list=categorymembers` of `Category:Good articles`, newest category additions first
   (`cmsort=timestamp&cmdir=desc`), following `continue` until an entry is not newer than `since`.
2. Text: `prop=extracts|info` (TextExtracts, plain text, `exsectionformat=wiki`) for batches of
   pageids. TextExtracts returns the whole-article extract of one page per call when several pages
   are asked for (it lowers `exlimit` to 1 and answers `continue.excontinue`), so a batch is walked
   with `excontinue`; pages reported `missing`, `invalid` or `redirect` are known after its first call.
   A batch call that fails is retried page by page, so one bad page costs only itself.
   `prop=info` adds `lastrevid` (the revision the reference was taken from) and the `redirect` flag.
3. Gold statements: one `wlc/gold_statements` judgment per article (`prompts/wlc/gold_statements.md`); an
   article without usable statements is skipped, never made a task without them.
4. Tasks: key `wlc.live-<pageid>`, the article as Markdown (`# Title`, `##`/`###` sections) as the
   reference, the gold statements as `gold_facts`.

The cursor (`WikiRefresh.newest`). A window newer than `since` is read whole (category entries are
cheap: up to 500 per call) and its articles are processed oldest first, at most `limit` per refresh;
the cursor is the newest timestamp up to which every article is settled (a task, already known, or
skipped for good). Processing newest first and storing the newest timestamp seen would lose the
older part of a window larger than `limit` for ever. An article that may succeed later (an API call
or the judge failed) and the articles beyond `limit` stay unsettled: the cursor stops one second
before the oldest of them (MediaWiki timestamps have one-second resolution), and `pending` counts
them. Entries at or after that point that were settled come back on the next refresh: pass the
registered live task keys as `known_keys` and they are skipped without any call.
The first refresh (`since=None`) takes the newest `limit` entries of the category (known ones
included) and starts the live window there; older Good Articles are not the live benchmark's.

The extract's Markdown conversion and the offline gold statements are text work: `wikilive_text`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import quote

from ..core.keys import task_key
from ..core.models import Task
from ..fetch.api import ApiError, JsonApi
from ..judges.base import Judge, JudgmentRequest
from ..judges.prompts import fence_untrusted
from .wikilive_text import MAX_GOLD_STATEMENTS, GoldStatements, clean_statements, extract_to_markdown

BENCHMARK = "wlc"
RELEASE = "live"
CATEGORY = "Category:Good articles"
GOLD_TEMPLATE = "wlc/gold_statements"
ARTICLE_CHARS = 60_000  # what an LLM judge is shown of a very long article (the heuristic reads it all)
CATEGORY_PAGE_SIZE = 500  # cmlimit: the most a client without bot rights may ask for
EXTRACT_BATCH_SIZE = 20  # pageids per extracts call (TextExtracts' exlimit maximum)
WIKI_BASE = "https://en.wikipedia.org/wiki/"
MEDIAWIKI_TIME = "%Y-%m-%dT%H:%M:%SZ"

QUERY_TEMPLATE = (
    "Write a comprehensive encyclopedia article about {title}, of the kind a Wikipedia editor would write. "
    "Begin with a lead section that summarises the topic and why it is notable, then give each main aspect "
    "its own section. Keep a neutral point of view: report facts and significant views in proportion to "
    "their weight in reliable sources, attribute opinions to the people who hold them, and avoid promotional "
    "or judgmental wording. Support every statement with an inline citation to a reliable published source "
    "and end with a references list giving the URL of each source. Do not use Wikipedia or sites that copy "
    "it as a source."
)


@dataclass
class WikiRefresh:
    tasks: list[Task] = field(default_factory=list)
    newest: str | None = None  # the cursor to store: pass it as `since` next time (see the module docstring)
    skipped: list[str] = field(default_factory=list)  # one reason per article not turned into a task
    pending: int = 0  # articles of the window left for a later refresh (beyond `limit`, or failed for now)
    api_calls: int = 0

    @property
    def complete(self) -> bool:
        """Everything newer than `since` is settled; no need to run again before new articles arrive."""
        return self.pending == 0


@dataclass
class _Member:
    pageid: int
    title: str
    timestamp: str  # as MediaWiki gave it
    when: datetime
    key: str
    state: str = "later"  # later | known | task | skipped | retry

    @property
    def label(self) -> str:
        return f"{self.title!r} (pageid {self.pageid})"


@dataclass
class _Page:
    """What the extracts calls said about one page: its text, or a reason (permanent or not)."""

    title: str | None = None
    extract: str | None = None
    revid: int | None = None
    length: int | None = None
    problem: str | None = None
    retry: bool = False  # the problem may pass (a failed call), so the cursor must not move past it


def refresh_wikilive(api: JsonApi, api_url: str, since: str | None, judge: Judge, limit: int = 50,
                     known_keys: Iterable[str] = frozenset(), *, page_size: int = CATEGORY_PAGE_SIZE,
                     batch_size: int = EXTRACT_BATCH_SIZE, max_statements: int = MAX_GOLD_STATEMENTS,
                     wiki_base: str = WIKI_BASE, labels: Mapping[str, str] | None = None) -> WikiRefresh:
    """Good Articles added to the category after `since` (ISO 8601; None for a first refresh), as tasks.

    Raises ApiError when the discovery calls fail (HTTP, not JSON, a MediaWiki error, a wrong shape):
    nothing is processed then and the cursor must stay where it was. Everything that goes wrong for
    one article afterwards is a line in `skipped`.
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    if not 1 <= batch_size <= 50:
        raise ValueError(f"batch_size must be 1..50 (MediaWiki's pageids limit), not {batch_size}")
    since_at = parse_timestamp(since) if since is not None else None
    known = set(known_keys)
    calls = [0]
    result = WikiRefresh(newest=since)

    window, problems = _discover(api, api_url, since_at, limit, max(1, min(page_size, 500)), calls)
    result.skipped.extend(problems)
    for member in window:
        if member.key in known:
            member.state = "known"
    todo = [m for m in sorted(window, key=lambda m: (m.when, m.pageid)) if m.state != "known"][:limit]

    pages = _fetch_texts(api, api_url, [m.pageid for m in todo], batch_size, calls)
    articles: list[tuple[_Member, _Page, str]] = []
    for member in todo:
        page = pages.get(member.pageid) or _Page(problem="no answer for this page from the extracts calls", retry=True)
        markdown = None if page.problem else extract_to_markdown(page.title or member.title, page.extract or "")
        if page.problem or markdown is None:
            member.state = "retry" if page.retry else "skipped"
            reason = page.problem or "extract has no text (empty, or headings only)"
            result.skipped.append(f"{member.label}: {reason}" + (" (tried again next refresh)" if page.retry else ""))
            continue
        articles.append((member, page, markdown))

    result.tasks = _with_gold_statements(articles, judge, max_statements, wiki_base, labels, result.skipped)
    made = {t.key for t in result.tasks}
    for member, _, _ in articles:
        member.state = "task" if member.key in made else member.state
    result.pending = sum(m.state in ("later", "retry") for m in window)
    result.newest = _cursor(window, since, since_at)
    result.api_calls = calls[0]
    return result


# --------------------------------------------------------------------------------------- discovery

def _discover(api: JsonApi, api_url: str, since_at: datetime | None, limit: int, page_size: int,
              calls: list[int]) -> tuple[list[_Member], list[str]]:
    """The entries newer than `since_at`, newest first (with `since_at=None`: the newest `limit`)."""
    params = {"action": "query", "list": "categorymembers", "cmtitle": CATEGORY, "cmtype": "page",
              "cmnamespace": 0, "cmsort": "timestamp", "cmdir": "desc", "cmprop": "ids|title|timestamp",
              "cmlimit": page_size, "format": "json", "formatversion": 2}
    members: list[_Member] = []
    problems: list[str] = []
    seen_pageids: set[int] = set()
    continuation: dict[str, str] = {}
    seen_continuations: set[tuple] = set()
    while True:
        data = _query(api, api_url, {**params, **continuation}, "category members", calls)
        entries = data.get("query", {}).get("categorymembers") if isinstance(data.get("query"), dict) else None
        if not isinstance(entries, list):
            raise ApiError(f"category members: the answer has no query.categorymembers list "
                           f"(keys: {', '.join(sorted(data)) or 'none'})")
        for entry in entries:
            member = _member(entry, problems)
            if member is None or member.pageid in seen_pageids:
                continue
            if since_at is not None and member.when <= since_at:
                return members, problems
            seen_pageids.add(member.pageid)
            members.append(member)
            if since_at is None and len(members) >= limit:
                return members, problems
        continuation = _continuation(data, "category members")
        if not continuation:
            return members, problems
        marker = tuple(sorted(continuation.items()))
        if marker in seen_continuations:
            raise ApiError(f"category members: the continuation {dict(marker)} came back twice; giving up")
        seen_continuations.add(marker)


def _member(entry: Any, problems: list[str]) -> _Member | None:
    if not isinstance(entry, dict):
        problems.append(f"category entry {entry!r:.80}: not an object")
        return None
    pageid, title, stamp = entry.get("pageid"), entry.get("title"), entry.get("timestamp")
    if not isinstance(pageid, int) or isinstance(pageid, bool) or pageid <= 0:
        problems.append(f"category entry {title!r}: no valid pageid ({pageid!r})")
        return None
    if not isinstance(title, str) or not title.strip():
        problems.append(f"category entry pageid {pageid}: no title")
        return None
    try:
        when = parse_timestamp(stamp)
    except (TypeError, ValueError):
        problems.append(f"{title!r} (pageid {pageid}): category timestamp {stamp!r} is not ISO 8601; "
                        "cannot place it in time")
        return None
    return _Member(pageid, title.strip(), stamp, when, task_key(BENCHMARK, f"{RELEASE}-{pageid}"))


# ------------------------------------------------------------------------------------------- texts

def _fetch_texts(api: JsonApi, api_url: str, pageids: Sequence[int], batch_size: int,
                 calls: list[int]) -> dict[int, _Page]:
    pages: dict[int, _Page] = {}
    for start in range(0, len(pageids), batch_size):
        batch = list(pageids[start:start + batch_size])
        found, error = _extract_batch(api, api_url, batch, calls)
        pages.update(found)
        if error is None:
            continue
        if len(batch) == 1:
            pages[batch[0]] = _Page(problem=f"extracts call failed: {error}", retry=True)
            continue
        for pageid in batch:  # one page at a time, so a page that breaks the call costs only itself
            if pageid not in found:
                single, single_error = _extract_batch(api, api_url, [pageid], calls)
                pages.update(single)
                if single_error is not None:
                    pages[pageid] = _Page(problem=f"extracts call failed: {single_error}", retry=True)
    return pages


def _extract_batch(api: JsonApi, api_url: str, batch: list[int],
                   calls: list[int]) -> tuple[dict[int, _Page], ApiError | None]:
    """The pages of one batch, walked with `excontinue`. When a call fails, the pages settled before it
    and the error come back (the caller asks for the others again)."""
    params = {"action": "query", "prop": "extracts|info", "explaintext": 1, "exsectionformat": "wiki",
              "pageids": "|".join(map(str, batch)), "format": "json", "formatversion": 2}
    wanted = set(batch)
    found: dict[int, _Page] = {}
    continuation: dict[str, str] = {}
    seen_continuations: set[tuple] = set()

    def settled(pageid: int) -> bool:
        return pageid in found and (found[pageid].extract is not None or found[pageid].problem is not None)

    for _ in range(len(batch) + 2):  # one extract per call, plus the odd empty round
        try:
            data = _query(api, api_url, {**params, **continuation}, f"extracts of pageids {params['pageids']}", calls)
            pages = _pages(data)
            continuation = _continuation(data, "extracts")
        except ApiError as exc:
            return {p: page for p, page in found.items() if settled(p)}, exc
        for page in pages:
            if page.get("pageid") in wanted:
                _read_page(page, found.setdefault(page["pageid"], _Page()))
        marker = tuple(sorted(continuation.items()))
        if not continuation or marker in seen_continuations or all(settled(p) for p in batch):
            break
        seen_continuations.add(marker)
    for pageid in batch:
        page = found.setdefault(pageid, _Page())
        if page.problem is None and page.extract is None:
            page.problem = "the API answer has no extract for this page"
    return found, None


def _pages(data: dict) -> list[dict]:
    query = data.get("query")
    pages = query.get("pages") if isinstance(query, dict) else None
    if isinstance(pages, dict):  # formatversion=1 shape, accepted anyway
        pages = list(pages.values())
    if not isinstance(pages, list):
        raise ApiError(f"extracts: the answer has no query.pages list (keys: {', '.join(sorted(data)) or 'none'})")
    return [p for p in pages if isinstance(p, dict)]


def _read_page(page: dict, into: _Page) -> None:
    if isinstance(page.get("title"), str):
        into.title = page["title"]
    if isinstance(page.get("lastrevid"), int):
        into.revid = page["lastrevid"]
    if isinstance(page.get("length"), int):
        into.length = page["length"]
    if _flag(page, "missing"):
        into.problem = "page is missing (deleted or moved away since it was listed)"
    elif _flag(page, "invalid"):
        into.problem = f"invalid page: {page.get('invalidreason') or 'no reason given'}"
    elif _flag(page, "redirect"):
        into.problem = "page is a redirect, not an article"
    elif "extract" in page:
        extract = page["extract"]
        if isinstance(extract, str):
            into.extract = extract
            if not extract.strip():
                into.problem = "extract is empty"
        else:
            into.problem = f"extract is not text ({type(extract).__name__})"


def _flag(page: dict, name: str) -> bool:
    """formatversion=2 booleans are `true`; formatversion=1 gives an empty string when set."""
    return name in page and page[name] is not False


# ------------------------------------------------------------------------------- API plumbing

def _query(api: JsonApi, api_url: str, params: Mapping[str, Any], what: str, calls: list[int]) -> dict:
    calls[0] += 1
    data = api.get(api_url, params)
    if not isinstance(data, dict):
        raise ApiError(f"{what}: the answer is {type(data).__name__}, not a JSON object")
    error = data.get("error")
    if error is not None:
        code = error.get("code", "?") if isinstance(error, dict) else "?"
        info = error.get("info", "") if isinstance(error, dict) else str(error)
        raise ApiError(f"{what}: MediaWiki error {code}: {info}".rstrip(": "))
    return data


def _continuation(data: dict, what: str) -> dict[str, str]:
    continuation = data.get("continue")
    if continuation is None:
        return {}
    if not isinstance(continuation, dict):
        raise ApiError(f"{what}: 'continue' is {type(continuation).__name__}, not an object")
    return {str(k): str(v) for k, v in continuation.items()}


# ------------------------------------------------------------------------------ gold statements

def _with_gold_statements(articles: list[tuple[_Member, _Page, str]], judge: Judge, max_statements: int,
                          wiki_base: str, labels: Mapping[str, str] | None, skipped: list[str]) -> list[Task]:
    if not articles:
        return []
    cut_for_judge = getattr(judge, "source_token_budget", None) is not None
    requests = []
    for member, page, markdown in articles:
        shown = markdown
        if cut_for_judge and len(markdown) > ARTICLE_CHARS:
            shown = markdown[:ARTICLE_CHARS] + f"\n[... cut: {ARTICLE_CHARS} of {len(markdown)} characters]"
        requests.append(JudgmentRequest(GOLD_TEMPLATE, {
            "title": page.title or member.title, "max_statements": max_statements,
            "article": fence_untrusted(shown)}, GoldStatements, {**(labels or {}), "task": member.key}))
    tasks = []
    for (member, page, markdown), judgment in zip(articles, judge.judge_many(requests), strict=True):
        if not isinstance(judgment.answer, GoldStatements):
            retry = judgment.na_reason == "provider_failure"
            member.state = "retry" if retry else "skipped"
            skipped.append(f"{member.label}: no gold statements: judge {judge.judge_id} gave no answer "
                           f"({judgment.na_reason or 'pipeline_failure'}: {judgment.error or 'no detail'})"
                           + (" (tried again next refresh)" if retry else ""))
            continue
        statements = clean_statements(judgment.answer.statements, max_statements)
        if not statements:
            member.state = "skipped"
            skipped.append(f"{member.label}: no gold statements: the judge found none in the article")
            continue
        tasks.append(build_task(member.pageid, page.title or member.title, member.timestamp, markdown,
                                statements, page.revid, page.length, wiki_base))
    return tasks


def build_task(pageid: int, title: str, ga_timestamp: str, reference_article: str, statements: list[str],
               revid: int | None = None, length: int | None = None, wiki_base: str = WIKI_BASE) -> Task:
    attributes = {"release": RELEASE, "title": title, "url": article_url(title, wiki_base),
                  "ga_timestamp": ga_timestamp, "pageid": str(pageid)}
    if revid is not None:
        attributes["revid"] = str(revid)  # the revision the reference was taken from
    if length is not None:
        attributes["bytes"] = str(length)
    return Task(key=task_key(BENCHMARK, f"{RELEASE}-{pageid}"), benchmark=BENCHMARK, original_id=title,
                query=QUERY_TEMPLATE.format(title=title), language="en", reference_article=reference_article,
                gold_facts=statements, attributes=attributes)


def article_url(title: str, wiki_base: str = WIKI_BASE) -> str:
    """The article's address as MediaWiki writes it: spaces as underscores, the rest percent-encoded
    except the characters MediaWiki leaves readable."""
    return wiki_base + quote(title.strip().replace(" ", "_"), safe=";@$!*(),/~:")


# ------------------------------------------------------------------------------------- the cursor

def _cursor(window: list[_Member], since: str | None, since_at: datetime | None) -> str | None:
    if not window:
        return since
    unsettled = [m.when for m in window if m.state in ("later", "retry")]
    if not unsettled:
        return max(window, key=lambda m: m.when).timestamp
    before = min(unsettled) - timedelta(seconds=1)
    if since_at is not None and before <= since_at:
        return since
    return format_timestamp(before)


def parse_timestamp(value: Any) -> datetime:
    """An ISO 8601 timestamp as an aware UTC datetime (naive ones are taken as UTC)."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"not a timestamp: {value!r}")
    parsed = datetime.fromisoformat(value.strip().replace("z", "Z"))
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)


def format_timestamp(when: datetime) -> str:
    when = when.astimezone(timezone.utc)
    return when.strftime(MEDIAWIKI_TIME) if not when.microsecond else when.isoformat().replace("+00:00", "Z")
