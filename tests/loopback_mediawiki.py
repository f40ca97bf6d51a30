"""A MediaWiki API emulator on `LoopbackWeb`: exactly the calls the Wiki Live refresh makes.

Route `/w/api.php`, JSON with `formatversion=2` only:
- `action=query&list=categorymembers` on `Category:Good articles` (any other category is empty):
  `cmsort=timestamp`, `cmdir=asc|desc|newer|older`, `cmtype`, `cmnamespace`, `cmprop` (ids, title,
  timestamp), `cmlimit` (1..500 or `max`) and `cmcontinue` continuation (`<YYYYMMDDhhmmss>|<pageid>`,
  positional, so articles added at the top meanwhile do not shift it), answered as
  `{"continue": {"cmcontinue": ..., "continue": "-||"}, "query": {"categorymembers": [...]}}`.
- `action=query&prop=extracts[|info]&explaintext=1&pageids=a|b|c` (TextExtracts): as the extension
  does, with several pages and no `exintro` the limit drops to one whole-article extract per call, a
  warning says so and `continue.excontinue` is the offset of the next page; pages that do not exist
  come back as `{"pageid": n, "missing": true}` and do not take a slot. `exsectionformat` is
  `plain|wiki|raw` (`wiki` keeps the stored `== Heading ==` lines). `prop=info` adds `lastrevid`,
  `length`, `touched` and `redirect: true` for redirects.
- `prop=revisions`: with `rvlimit` (one page only, else the `multpages` error, as MediaWiki) the
  page's revisions oldest first with `rvdir=newer` (`rvprop=ids|timestamp`): the first one is the
  creation; without `rvlimit` the latest revision of each page, `rvprop=content` with `rvslots=main`
  giving the wikitext; answers over `max_result_chars` stop and continue with `rvcontinue`.
- `prop=info|categories|extlinks|pageviews` in any combination: `clshow=!hidden` and `cllimit`,
  `ellimit` (both counted over all pages of the answer, as MediaWiki does), PageViewInfo's
  `pvipdays` (at most 60) for at most `pageviews_per_call` pages; each unfinished module answers its
  own continuation (`clcontinue`, `elcontinue`, `pvipcontinue`); a continued call runs only the
  modules named in it (and `info` again), as ApiContinuationManager does.
- `maxlag`: while `lag` is set (`lagged(times, retry_after)`), a call that sends `maxlag` gets the
  `maxlag` error with HTTP 200, `Retry-After` and `X-Database-Lag` headers, like the real servers.
Bad parameter values get MediaWiki's error object with HTTP 200, like the real API
(`{"error": {"code": "badvalue", "info": ...}}`); unknown parameters a warning.

Test hooks: `add(...)` an article (a Good Article from `timestamp` on, created `created`),
`edit(...)` one (a new revision), `lagged(...)`, `faults` for HTTP errors or broken bodies on chosen
calls, `calls` (every request's parameters) and `count(kind)`.
"""
from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler
from typing import Callable
from urllib.parse import parse_qs, urlsplit

from loopback_web import LoopbackWeb, send

API_PATH = "/w/api.php"
GOOD_ARTICLES = "Category:Good articles"
SECTION_MARKER = "\x01\x02"


@dataclass
class Article:
    pageid: int
    title: str
    extract: str | None  # the plain-text extract as TextExtracts gives it (`== H ==` lines); None: no extract key
    timestamp: str  # when it entered the category, MediaWiki style 2025-05-01T12:00:00Z
    ns: int = 0
    revid: int = 0
    redirect: bool = False
    deleted: bool = False  # still listed by the category (a stale listing) but missing to prop queries
    created: str | None = None  # the first revision's timestamp (default: 30 days before `timestamp`)
    wikitext: str | None = None  # default: made from the extract, `refs` cited URLs spread over its paragraphs
    refs: int = 3
    categories: list[str] = field(default_factory=list)  # visible categories (Good articles is hidden)
    extlinks: list[str] | None = None  # default: the wikitext's URLs
    views: int | None = 600  # page views of the last 60 days; None: PageViewInfo has no data for it
    history: list[tuple[int, str]] = field(default_factory=list)  # (revid, timestamp) oldest first

    def __post_init__(self) -> None:
        if self.created is None:
            self.created = f"{self.when - timedelta(days=30):%Y-%m-%dT%H:%M:%SZ}"
        if self.wikitext is None:
            self.wikitext = wikitext_from_extract(self.extract or "", self.pageid, self.refs)
        if self.extlinks is None:
            self.extlinks = list(dict.fromkeys(URL_RE.findall(self.wikitext)))
        if not self.history:
            self.history = [(self.revid - 1, self.created), (self.revid, self.timestamp)]

    @property
    def when(self) -> datetime:
        return datetime.strptime(self.timestamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)


@dataclass
class Fault:
    """Answer `status` with `body` to calls `matches(params, pageids_in_this_answer)` accepts;
    `times` answers at most (None: for ever)."""

    matches: Callable[[dict[str, str], list[int]], bool]
    status: int = 500
    body: bytes = b"<html><body>Internal error</body></html>"
    content_type: str = "text/html"
    times: int | None = None


class LoopbackMediaWiki:
    def __init__(self, web: LoopbackWeb):
        self.web = web
        self.articles: dict[int, Article] = {}
        self.faults: list[Fault] = []
        self.calls: list[dict[str, str]] = []
        self.max_result_chars = 10_000_000  # MediaWiki's result size limit, lowered by tests to force rvcontinue
        self.pageviews_per_call = 50  # PageViewInfo answers for at most this many pages, then pvipcontinue
        self.lag: tuple[int, int] | None = None  # (calls left, Retry-After seconds) while the replicas lag
        self._next_pageid = 1000
        self._lock = threading.Lock()
        web.route(API_PATH, self._handle)

    @property
    def api_url(self) -> str:
        return self.web.url(API_PATH)

    # ------------------------------------------------------------------ test hooks
    def add(self, title: str, extract: str | None, timestamp: str, *, pageid: int | None = None,
            **flags) -> Article:
        with self._lock:
            if pageid is None:
                self._next_pageid += 7
                pageid = self._next_pageid
            article = Article(pageid, title, extract, timestamp, revid=pageid * 10 + 1, **flags)
            self.articles[pageid] = article
        return article

    def edit(self, pageid: int, extract: str, when: str, **changes) -> Article:
        """A new revision of an article (its text, and anything else `changes` names)."""
        with self._lock:
            old = self.articles[pageid]
            revid = max(r for r, _ in old.history) + 1
            article = Article(old.pageid, old.title, extract, old.timestamp, revid=revid, created=old.created,
                              categories=list(old.categories), views=old.views, refs=old.refs,
                              history=[*old.history, (revid, when)], **changes)
            self.articles[pageid] = article
        return article

    def lagged(self, times: int, retry_after: int = 5) -> None:
        """The next `times` calls that send `maxlag` get the maxlag error (replica lag over the limit)."""
        self.lag = (times, retry_after)

    def fail_discovery(self, status: int = 500, body: bytes | None = None, times: int | None = None) -> None:
        self.faults.append(Fault(lambda params, _: params.get("list") == "categorymembers", status,
                                 body if body is not None else Fault.body, times=times))

    def fail_extract(self, pageid: int, status: int = 500, body: bytes | None = None,
                     content_type: str = "text/html", times: int | None = None) -> None:
        """Break the calls whose answer would carry `pageid`'s extract (or report it missing)."""
        self.faults.append(Fault(lambda params, pageids: "extracts" in params.get("prop", "") and pageid in pageids,
                                 status, body if body is not None else Fault.body, content_type, times))

    def count(self, kind: str) -> int:
        """Calls of one kind: `categorymembers` or a prop (`extracts`, `revisions`, `categories`, ...)."""
        return sum(1 for c in self.calls if c.get("list") == kind or kind in c.get("prop", "").split("|"))

    # -------------------------------------------------------------------- serving
    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        raw = parse_qs(urlsplit(h.path).query, keep_blank_values=True)
        params = {name: values[-1] for name, values in raw.items()}
        with self._lock:
            self.calls.append(params)
            articles = dict(self.articles)
            lag = self.lag if "maxlag" in params and self.lag and self.lag[0] > 0 else None
            if lag:
                self.lag = (lag[0] - 1, lag[1])
        if lag:
            answer = _error("maxlag", "Waiting for db1: 7 seconds lagged.")
            answer["error"].update(host="db1", lag=7, type="db")
            send(h, 200, json.dumps(answer).encode("utf-8"), "application/json; charset=utf-8",
                 {"MediaWiki-API-Error": "maxlag", "Retry-After": str(lag[1]), "X-Database-Lag": "7"})
            return
        answer, pageids = self._answer(params, articles)
        fault = self._fault_for(params, pageids)
        if fault is not None:
            send(h, fault.status, fault.body, fault.content_type)
            return
        body = json.dumps(answer).encode("utf-8")
        headers = {"MediaWiki-API-Error": answer["error"]["code"]} if "error" in answer else None
        send(h, 200, body, "application/json; charset=utf-8", headers)

    def _fault_for(self, params: dict[str, str], pageids: list[int]) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if (fault.times is None or fault.times > 0) and fault.matches(params, pageids):
                    if fault.times is not None:
                        fault.times -= 1
                    return fault
        return None

    def _answer(self, params: dict[str, str], articles: dict[int, Article]) -> tuple[dict, list[int]]:
        if params.get("format") != "json":
            return _error("badvalue", "the emulator answers format=json only"), []
        if params.get("formatversion") != "2":
            return _error("badvalue", "the emulator answers formatversion=2 only"), []
        if params.get("action") != "query":
            return _error("badvalue", f'Unrecognized value for parameter "action": {params.get("action")}.'), []
        if params.get("list") == "categorymembers":
            return _category_members(params, articles), []
        props = params.get("prop", "").split("|")
        if "extracts" in props:
            return _extracts(params, articles)
        if "revisions" in props:
            return _revisions(params, articles, self.max_result_chars)
        if set(props) & {"info", "categories", "extlinks", "pageviews"}:
            return _page_props(params, articles, self.pageviews_per_call)
        return _error("emulator", "only categorymembers, extracts, revisions, info, categories, extlinks and "
                                  "pageviews are emulated"), []


# ------------------------------------------------------------------ categorymembers

CM_PARAMS = {"action", "list", "cmtitle", "cmtype", "cmnamespace", "cmsort", "cmdir", "cmprop", "cmlimit",
             "cmcontinue", "continue", "format", "formatversion", "maxlag"}


def _category_members(params: dict[str, str], articles: dict[int, Article]) -> dict:
    title = params.get("cmtitle", "")
    if not title.startswith("Category:"):
        return _error("invalidcategory", "The category name you entered is not valid.")
    for name, allowed in (("cmsort", {"sortkey", "timestamp"}), ("cmdir", {"asc", "desc", "newer", "older"})):
        if name in params and params[name] not in allowed:
            return _error("badvalue", f'Unrecognized value for parameter "{name}": {params[name]}.')
    types = set(params.get("cmtype", "page|subcat|file").split("|"))
    props = set(params.get("cmprop", "ids|title").split("|"))
    if not types <= {"page", "subcat", "file"} or not props <= {"ids", "title", "sortkey", "sortkeyprefix", "type",
                                                              "timestamp"}:
        return _error("badvalue", "Unrecognized value for cmtype or cmprop.")
    if params.get("cmsort", "sortkey") != "timestamp":
        return _error("emulator", "the emulator sorts by timestamp only")
    warnings = []
    limit_text = params.get("cmlimit", "10")
    try:
        limit = 500 if limit_text == "max" else int(limit_text)
    except ValueError:
        return _error("badinteger", f'Invalid value "{limit_text}" for integer parameter "cmlimit".')
    if not 1 <= limit <= 500:
        warnings.append(f"cmlimit must be between 1 and 500; {limit} was clamped")
        limit = min(500, max(1, limit))
    namespaces = {int(n) for n in params["cmnamespace"].split("|")} if params.get("cmnamespace") else None
    newest_first = params.get("cmdir", "asc") in ("desc", "older")

    members = [a for a in articles.values() if title == GOOD_ARTICLES and "page" in types
               and (namespaces is None or a.ns in namespaces)]
    members.sort(key=lambda a: (a.when, a.pageid), reverse=newest_first)
    if "cmcontinue" in params:
        try:
            stamp, pageid = params["cmcontinue"].split("|")
            position = (datetime.strptime(stamp, "%Y%m%d%H%M%S").replace(tzinfo=timezone.utc), int(pageid))
        except ValueError:
            return _error("badcontinue", "Invalid continue param. You should pass the original value returned "
                                         "by the previous query.")
        members = [a for a in members if ((a.when, a.pageid) <= position if newest_first
                                          else (a.when, a.pageid) >= position)]
    page, rest = members[:limit], members[limit:]
    entries = []
    for a in page:
        entry = {}
        if "ids" in props:
            entry["pageid"] = a.pageid
        entry["ns"] = a.ns
        if "title" in props:
            entry["title"] = a.title
        if "timestamp" in props:
            entry["timestamp"] = a.timestamp
        entries.append(entry)
    answer: dict = {"batchcomplete": True} if not rest else {
        "continue": {"cmcontinue": f"{rest[0].when:%Y%m%d%H%M%S}|{rest[0].pageid}", "continue": "-||"}}
    unknown = sorted(set(params) - CM_PARAMS)
    if unknown:
        warnings.append(f"Unrecognized parameters: {', '.join(unknown)}.")
    if warnings:
        answer["warnings"] = {"categorymembers": {"warnings": "\n".join(warnings)}}
    answer["query"] = {"categorymembers": entries}
    return answer


# ------------------------------------------------------------------------ extracts

EX_PARAMS = {"action", "prop", "explaintext", "exsectionformat", "exintro", "exlimit", "excontinue", "pageids",
             "continue", "redirects", "format", "formatversion", "maxlag"}


def _extracts(params: dict[str, str], articles: dict[int, Article]) -> tuple[dict, list[int]]:
    props = params.get("prop", "").split("|")
    if not set(props) <= {"extracts", "info"}:
        return _error("emulator", "only prop=extracts and prop=info are emulated"), []
    if "explaintext" not in params:
        return _error("emulator", "the emulator serves plain-text extracts only (explaintext)"), []
    section_format = params.get("exsectionformat", "wiki")
    if section_format not in ("plain", "wiki", "raw"):
        return _error("badvalue", f'Unrecognized value for parameter "exsectionformat": {section_format}.'), []
    try:
        requested = [int(p) for p in params.get("pageids", "").split("|") if p]
    except ValueError:
        return _error("badinteger", "Invalid value for integer parameter \"pageids\"."), []
    if len(requested) > 50:
        return _error("toomanyvalues", 'Too many values supplied for parameter "pageids". The limit is 50.'), []
    if not requested:
        return {"batchcomplete": True}, []
    ordered = sorted(dict.fromkeys(requested))
    good = [p for p in ordered if p in articles and not articles[p].deleted]
    warnings = []
    limit = int(params.get("exlimit", "20"))
    if limit > 1 and "exintro" not in params and len(good) > 1:
        limit = 1
        warnings.append("exlimit was too large for a whole article extracts request, lowered to 1.")
    offset = int(params.get("excontinue", "0"))
    if not 0 <= offset <= len(good):
        return _error("badcontinue", "Invalid continue param. You should pass the original value returned by "
                                     "the previous query."), []
    served = good[offset:offset + limit]
    pages = []
    for pageid in ordered:
        if pageid not in good:
            pages.append({"pageid": pageid, "missing": True})
            continue
        article = articles[pageid]
        page = {"pageid": pageid, "ns": article.ns, "title": article.title}
        if "info" in props:
            page.update(contentmodel="wikitext", pagelanguage="en", touched=article.timestamp,
                        lastrevid=article.revid, length=len((article.extract or "").encode("utf-8")))
            if article.redirect:
                page["redirect"] = True
        if pageid in served and article.extract is not None:
            page["extract"] = _sections(article.extract, section_format)
        pages.append(page)
    answer: dict = {}
    if offset + limit < len(good):
        answer["continue"] = {"excontinue": offset + limit, "continue": "||"}
    else:
        answer["batchcomplete"] = True
    unknown = sorted(set(params) - EX_PARAMS)
    if unknown:
        warnings.append(f"Unrecognized parameters: {', '.join(unknown)}.")
    if warnings:
        answer["warnings"] = {"extracts": {"warnings": "\n".join(warnings)}}
    answer["query"] = {"pages": pages}
    missing_in_answer = [p for p in ordered if p not in good]
    return answer, served + missing_in_answer


# ----------------------------------------------------------------------- revisions

RV_PARAMS = {"action", "prop", "pageids", "rvprop", "rvslots", "rvlimit", "rvdir", "rvcontinue", "continue",
             "format", "formatversion", "maxlag"}


def _revisions(params: dict[str, str], articles: dict[int, Article], max_chars: int) -> tuple[dict, list[int]]:
    if params.get("prop") != "revisions":
        return _error("emulator", "the emulator answers prop=revisions alone"), []
    requested = sorted(dict.fromkeys(int(p) for p in params.get("pageids", "").split("|") if p))
    props = set(params.get("rvprop", "ids|timestamp|flags|comment|user").split("|"))
    answer: dict = {}
    unknown = sorted(set(params) - RV_PARAMS)
    if unknown:
        answer["warnings"] = {"main": {"warnings": f"Unrecognized parameters: {', '.join(unknown)}."}}
    if "rvlimit" in params:  # enumeration mode: one page's history
        if len(requested) != 1:
            return _error("multpages", "rvlimit may only be used with a single page."), requested
        article = articles.get(requested[0])
        if article is None or article.deleted:
            return {**answer, "query": {"pages": [{"pageid": requested[0], "missing": True}]}}, requested
        history = article.history if params.get("rvdir") == "newer" else article.history[::-1]
        start = 0
        if "rvcontinue" in params:
            start = next((i for i, (r, _) in enumerate(history) if str(r) == params["rvcontinue"].split("|")[-1]), 0)
        limit = 500 if params["rvlimit"] == "max" else int(params["rvlimit"])
        shown = history[start:start + limit]
        if start + limit < len(history):
            nxt = history[start + limit]
            answer["continue"] = {"rvcontinue": f"{nxt[1].replace('-', '').replace(':', '')[:15]}|{nxt[0]}",
                                  "continue": "||"}
        revisions = [{k: v for k, v in (("revid", r), ("parentid", 0), ("timestamp", t))
                      if k in ("revid", "parentid") and "ids" in props or k == "timestamp" and "timestamp" in props}
                     for r, t in shown]
        page = {"pageid": article.pageid, "ns": article.ns, "title": article.title, "revisions": revisions}
        return {**answer, "query": {"pages": [page]}}, requested
    if "content" in props and params.get("rvslots") != "main":
        answer.setdefault("warnings", {})["revisions"] = {"warnings": "Because rvslots was not specified, a "
                                                          "legacy format has been used for the output."}
    start = int(params["rvcontinue"].split("|")[0]) if "rvcontinue" in params else 0
    pages, used = [], 0
    for pageid in requested:
        article = articles.get(pageid)
        if article is None or article.deleted:
            pages.append({"pageid": pageid, "missing": True})
            continue
        page = {"pageid": pageid, "ns": article.ns, "title": article.title}
        if pageid >= start and "continue" not in answer:
            content = article.wikitext or ""
            if used and used + len(content) > max_chars:
                answer["continue"] = {"rvcontinue": f"{pageid}|{article.revid}", "continue": "||"}
            else:
                used += len(content)
                revision = {"revid": article.revid, "parentid": article.history[-2][0] if len(article.history) > 1
                            else 0, "timestamp": article.history[-1][1]}
                if "content" in props:
                    revision["slots"] = {"main": {"contentmodel": "wikitext", "contentformat": "text/x-wiki",
                                                  "content": content}}
                page["revisions"] = [revision]
        pages.append(page)
    if "continue" not in answer:
        answer["batchcomplete"] = True
    answer["query"] = {"pages": pages}
    return answer, requested


# --------------------------------------------------------- info, categories, extlinks, pageviews

PP_PARAMS = {"action", "prop", "pageids", "clshow", "cllimit", "clcontinue", "ellimit", "elcontinue", "pvipdays",
             "pvipmetric", "pvipcontinue", "continue", "format", "formatversion", "maxlag"}
CONTINUE_OF = {"categories": "clcontinue", "extlinks": "elcontinue", "pageviews": "pvipcontinue"}
VIEWS_END = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _page_props(params: dict[str, str], articles: dict[int, Article], views_per_call: int) -> tuple[dict, list[int]]:
    props = params.get("prop", "").split("|")
    if not set(props) <= {"info", "categories", "extlinks", "pageviews"}:
        return _error("emulator", "prop=info|categories|extlinks|pageviews only, in any combination"), []
    requested = sorted(dict.fromkeys(int(p) for p in params.get("pageids", "").split("|") if p))
    if len(requested) > 50:
        return _error("toomanyvalues", 'Too many values supplied for parameter "pageids". The limit is 50.'), []
    continuing = any(name in params for name in CONTINUE_OF.values())
    running = [p for p in props if p == "info" or not continuing or CONTINUE_OF[p] in params]
    present = [p for p in requested if p in articles and not articles[p].deleted]
    pages = {p: ({"pageid": p, "ns": articles[p].ns, "title": articles[p].title} if p in present
                 else {"pageid": p, "missing": True}) for p in requested}
    answer: dict = {}
    if "info" in running:
        for p in present:
            a = articles[p]
            pages[p].update(contentmodel="wikitext", lastrevid=a.revid, length=len((a.wikitext or "").encode()))
            if a.redirect:
                pages[p]["redirect"] = True
    for prop, items_of, shape, limit_name in (
            ("categories", lambda a: a.categories, lambda t: {"ns": 14, "title": f"Category:{t}"}, "cllimit"),
            ("extlinks", lambda a: a.extlinks or [], lambda u: {"url": u}, "ellimit")):
        if prop not in running:
            continue
        if prop == "categories" and params.get("clshow") not in (None, "!hidden"):
            return _error("emulator", "clshow=!hidden only"), []
        limit = 500 if params.get(limit_name, "10") == "max" else int(params.get(limit_name, "10"))
        flat = [(p, i, item) for p in present for i, item in enumerate(items_of(articles[p]))]
        if CONTINUE_OF[prop] in params:
            cp, ci = (int(x) for x in params[CONTINUE_OF[prop]].split("|"))
            flat = [f for f in flat if (f[0], f[1]) >= (cp, ci)]
        for p, _, item in flat[:limit]:
            pages[p].setdefault(prop, []).append(shape(item))
        if len(flat) > limit:
            answer.setdefault("continue", {"continue": "||"})[CONTINUE_OF[prop]] = f"{flat[limit][0]}|{flat[limit][1]}"
    if "pageviews" in running:
        days = min(60, int(params.get("pvipdays", "60")))
        start = int(params.get("pvipcontinue", "0"))
        for p in present[start:start + views_per_call]:
            pages[p]["pageviews"] = _daily_views(articles[p].views, days)
        if start + views_per_call < len(present):
            answer.setdefault("continue", {"continue": "||"})["pvipcontinue"] = str(start + views_per_call)
    if "continue" not in answer:
        answer["batchcomplete"] = True
    unknown = sorted(set(params) - PP_PARAMS)
    if unknown:
        answer["warnings"] = {"main": {"warnings": f"Unrecognized parameters: {', '.join(unknown)}."}}
    answer["query"] = {"pages": [pages[p] for p in requested]}
    return answer, requested


def _daily_views(total: int | None, days: int) -> dict[str, int | None]:
    """PageViewInfo's per-day figures (null for a day without data); all null when there is none."""
    dates = [f"{VIEWS_END - timedelta(days=d):%Y-%m-%d}" for d in range(days, 0, -1)]
    if total is None:
        return dict.fromkeys(dates)
    each, rest = divmod(total, days)
    values: dict[str, int | None] = {d: each for d in dates}
    values[dates[-1]] = each + rest
    values[dates[0]] = None if each == 0 and days > 1 else values[dates[0]]  # a day without data
    return values


def _sections(extract: str, section_format: str) -> str:
    if section_format == "wiki":
        return extract
    lines = []
    for line in extract.split("\n"):
        stripped = line.strip()
        bars = len(stripped) - len(stripped.lstrip("="))
        if 2 <= bars <= 6 and stripped.endswith("=" * bars):
            heading = stripped[bars:-bars].strip()
            line = heading if section_format == "plain" else f"{SECTION_MARKER}{bars}{SECTION_MARKER[::-1]}{heading}"
        lines.append(line)
    return "\n".join(lines)


def _error(code: str, info: str) -> dict:
    return {"error": {"code": code, "info": info, "docref": "See /w/api.php for API usage."},
            "servedby": "loopback"}


# -------------------------------------------------------------------- invented articles

def article_text(lead: list[str], sections: list[tuple[int, str, list[str]]]) -> str:
    """A TextExtracts-style plain extract: lead paragraphs one per line, then `\\n\\n\\n== H ==` blocks."""
    text = "\n".join(lead)
    for level, heading, paragraphs in sections:
        bars = "=" * level
        text += f"\n\n\n{bars} {heading} {bars}\n" + "\n".join(paragraphs)
    return text


SALTCOTE_PIER_RAILWAY = article_text(
    ["The Saltcote Pier Railway is a 610 mm narrow-gauge railway that runs along Saltcote Pier in the county of "
     "Westmarch. It opened on 12 July 1898 and is the oldest pier railway still working in Westmarch.",
     "The line is 1.2 kilometres long and carried 184,000 passengers in 2023."],
    [(2, "History", []),
     (3, "Construction", [
         "The Saltcote Pier Company commissioned the engineer Harriet Brannock to design the railway in 1896. "
         "Construction began in March 1897 and cost £4,350.",
         "The first train was hauled by a battery locomotive built by Ellery & Dunn of Portwick."]),
     (3, "Twentieth century", [
         "A storm on 3 January 1953 destroyed 140 metres of the pier and closed the line for two years. "
         "It reopened on 30 April 1955 with new steel piles.",
         "Westmarch County Council bought the pier and its railway in 1978 for £62,000."]),
     (2, "Rolling stock", [
         "The railway operates three electric trains named Gull, Tern and Plover.",
         "Each train has four carriages and seats 72 passengers. "
         "The carriages were rebuilt by Harrow Engineering in 2011."]),
     (2, "Reception", [
         "The railway won the Westmarch Heritage Award in 2016.",
         "It is popular with visitors."]),
     (2, "See also", ["List of pier railways in Westmarch"]),
     (2, "References", []),
     (2, "External links", [])])

MARTA_ILVES = article_text(
    ["Marta Ilves (born 4 February 1961) is an Estlandic botanist who described more than 40 species of "
     "lichen. She was director of the Tarvola Botanical Garden from 1998 to 2014."],
    [(2, "Early life and education", [
        "Ilves was born in Kuressoo and studied biology at the University of Tarvola, graduating in 1984. "
        "She completed her doctorate on coastal lichens in 1990 under Professor Aino Rebane."]),
     (2, "Career", [
         "In 1992 Ilves joined the Tarvola Botanical Garden as a curator of its lichen herbarium, which holds "
         "about 65,000 specimens.",
         "She led the 2003 survey of the Sõrve peninsula, which recorded 212 lichen species."]),
     (2, "Honours", ["Ilves received the Order of the White Star in 2009."]),
     (2, "References", [])])

HARROWGATE_FERRY = article_text(
    ["The Harrowgate ferry disaster was the sinking of the ferry Curlew in the Harrow estuary on 9 November 1931, "
     "in which 27 people died."],
    [(2, "Sinking", [
        "The Curlew left Harrowgate at 17:40 carrying 61 passengers and a crew of 4. "
        "It capsized in a squall 800 metres from the Saltcote landing."]),
     (2, "Inquiry", [
         "A Board of Trade inquiry chaired by Judge Alfred Penhale found in 1932 that the ferry had been "
         "overloaded by 19 passengers."])])


def filler_article(title: str, number: int) -> str:
    """A small invented article for listing and continuation tests."""
    return article_text(
        [f"{title} is a village in the district of Lowmarsh in Westmarch. "
         f"At the 2021 census it had a population of {1200 + 37 * number}."],
        [(2, "History", [f"{title} is first recorded in a charter of {1100 + number} granted by the Abbey of "
                         "Saint Cuthmar."])])


# ---------------------------------------------------------------------- wikitext and long articles

URL_RE = re.compile(r"https?://[^\s|\]}<>]+")


def wikitext_from_extract(extract: str, pageid: int, refs: int) -> str:
    """Wikitext for an extract: its headings, each paragraph as written, `refs` cited URLs spread over
    the paragraphs (cite web templates with an archive copy, which is not another source), the
    references and an external link."""
    lines = extract.split("\n")
    paragraphs = [i for i, line in enumerate(lines) if line.strip() and not line.strip().startswith("=")]
    for n in range(refs):
        if not paragraphs:
            break
        url = f"https://source{n}.example.org/{pageid}/page-{n}"
        lines[paragraphs[n % len(paragraphs)]] += (
            f"<ref>{{{{cite web |url={url} |title=Source {n} |archive-url=https://web.archive.org/web/2024/{url}}}}}"
            "</ref>")
    return ("{{Short description|An article}}\n{{Infobox thing\n| name = x\n| size = 3\n}}\n" + "\n".join(lines)
            + "\n\n== References ==\n{{Reflist}}\n\n== External links ==\n"
            f"* [https://official{pageid}.example.org Official website]\n")


def long_article(title: str, sections: int = 10, per_section: int = 10) -> str:
    """A published-size invented article: `sections` sections of `per_section` distinct checkable facts."""
    places = ["Harrowgate", "Saltcote", "Lowmarsh", "Kuressoo", "Tarvola", "Portwick", "Westmarch", "Brannock"]
    bodies = ["mill", "quarry", "ferry company", "council", "railway", "school", "harbour board", "abbey"]
    lead = [f"{title} is a market town in Westmarch with a population of 14,{200 + sections} in 2021."]
    parts = []
    for s in range(sections):
        sentences = [f"In {1700 + 10 * s + k} the {bodies[(s + k) % len(bodies)]} of {places[k % len(places)]} "
                     f"recorded {100 + 37 * (s * per_section + k)} tonnes of {['wool', 'salt', 'coal', 'grain'][k % 4]}"
                     f" at the site of {places[(s + 2 * k) % len(places)]} Cross." for k in range(per_section)]
        paragraphs = [" ".join(sentences[i:i + 4]) for i in range(0, len(sentences), 4)]
        parts.append((2, f"Period {s + 1}", paragraphs))
    return article_text(lead, parts)
