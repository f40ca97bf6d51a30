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
Bad parameter values get MediaWiki's error object with HTTP 200, like the real API
(`{"error": {"code": "badvalue", "info": ...}}`); unknown parameters a warning.

Test hooks: `add(...)` an article (a Good Article from `timestamp` on), `faults` for HTTP errors or
broken bodies on chosen calls, `calls` (every request's parameters) and `count(kind)`.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
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

    def fail_discovery(self, status: int = 500, body: bytes | None = None, times: int | None = None) -> None:
        self.faults.append(Fault(lambda params, _: params.get("list") == "categorymembers", status,
                                 body if body is not None else Fault.body, times=times))

    def fail_extract(self, pageid: int, status: int = 500, body: bytes | None = None,
                     content_type: str = "text/html", times: int | None = None) -> None:
        """Break the calls whose answer would carry `pageid`'s extract (or report it missing)."""
        self.faults.append(Fault(lambda params, pageids: "extracts" in params.get("prop", "") and pageid in pageids,
                                 status, body if body is not None else Fault.body, content_type, times))

    def count(self, kind: str) -> int:
        """Calls of one kind: `categorymembers` or `extracts`."""
        return sum(1 for c in self.calls if c.get("list") == kind or kind in c.get("prop", "").split("|"))

    # -------------------------------------------------------------------- serving
    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        raw = parse_qs(urlsplit(h.path).query, keep_blank_values=True)
        params = {name: values[-1] for name, values in raw.items()}
        with self._lock:
            self.calls.append(params)
            articles = dict(self.articles)
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
        if "extracts" in params.get("prop", "").split("|"):
            return _extracts(params, articles)
        return _error("emulator", "only list=categorymembers and prop=extracts are emulated"), []


# ------------------------------------------------------------------ categorymembers

CM_PARAMS = {"action", "list", "cmtitle", "cmtype", "cmnamespace", "cmsort", "cmdir", "cmprop", "cmlimit",
             "cmcontinue", "continue", "format", "formatversion"}


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
             "continue", "redirects", "format", "formatversion"}


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
