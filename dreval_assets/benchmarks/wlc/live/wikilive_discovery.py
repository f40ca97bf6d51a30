"""Wiki Live discovery: the Good Articles promoted since the window opened, and when each was created.

`list=categorymembers` of `Category:Good articles`, newest additions first (`cmsort=timestamp&
cmdir=desc`), following `continue`. The walk stops at the first entry added at or before the window
start: an article is created before it is promoted, so one promoted before the window opened cannot
have been created inside it. The category timestamp is the GA date.

Creation date: the first revision's timestamp, `prop=revisions&rvprop=ids|timestamp&rvdir=newer&
rvlimit=1` for one page (MediaWiki allows `rvlimit` with a single page only), the call clients such
as pywikibot make for `oldest_revision`. Its `continue` points at the second revision and is not
followed: only the first is wanted.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Sequence

from ....fetch.api import ApiError
from .wikilive_api import MediaWiki, pages_of

CATEGORY = "Category:Good articles"
CATEGORY_PAGE_SIZE = 500  # cmlimit: the most a client without bot rights may ask for


@dataclass
class Entry:
    pageid: int
    title: str
    ga_at: datetime
    ga_stamp: str  # as MediaWiki wrote it


def discover(mw: MediaWiki, after: datetime, page_size: int = CATEGORY_PAGE_SIZE) -> tuple[list[Entry], list[str]]:
    """Entries added to the category after `after`, newest first, and a reason per unreadable entry.
    Raises ApiError when a category call fails (nothing can be selected then)."""
    params = {"list": "categorymembers", "cmtitle": CATEGORY, "cmtype": "page", "cmnamespace": 0,
              "cmsort": "timestamp", "cmdir": "desc", "cmprop": "ids|title|timestamp",
              "cmlimit": max(1, min(page_size, 500))}
    entries: list[Entry] = []
    problems: list[str] = []
    seen: set[int] = set()
    for data in mw.query_continued(params, "category members"):
        members = data.get("query", {}).get("categorymembers") if isinstance(data.get("query"), dict) else None
        if not isinstance(members, list):
            raise ApiError(f"category members: the answer has no query.categorymembers list "
                           f"(keys: {', '.join(sorted(data)) or 'none'})")
        for raw in members:
            entry = _entry(raw, problems)
            if entry is None or entry.pageid in seen:
                continue
            if entry.ga_at <= after:
                return entries, problems
            seen.add(entry.pageid)
            entries.append(entry)
    return entries, problems


def _entry(raw: Any, problems: list[str]) -> Entry | None:
    if not isinstance(raw, dict):
        problems.append(f"category entry {raw!r:.80}: not an object")
        return None
    pageid, title, stamp = raw.get("pageid"), raw.get("title"), raw.get("timestamp")
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
    return Entry(pageid, title.strip(), when, stamp)


def creation_dates(mw: MediaWiki, pageids: Sequence[int]) -> dict[int, datetime | str]:
    """pageid -> its first revision's time, or the reason it is unknown (one call per page)."""
    found: dict[int, datetime | str] = {}
    for pageid in pageids:
        params = {"prop": "revisions", "pageids": pageid, "rvprop": "ids|timestamp", "rvdir": "newer", "rvlimit": 1}
        try:
            pages = pages_of(mw.query(params, f"first revision of pageid {pageid}"), "first revision")
            page = next((p for p in pages if p.get("pageid") == pageid), {})
            revisions = page.get("revisions")
            if "missing" in page:
                found[pageid] = "page is missing (deleted or moved away since it was listed)"
            elif not isinstance(revisions, list) or not revisions or not isinstance(revisions[0], dict):
                found[pageid] = "the API answer has no revision for this page"
            else:
                found[pageid] = parse_timestamp(revisions[0].get("timestamp"))
        except (ApiError, ValueError) as exc:
            found[pageid] = f"first revision call failed: {exc}"
    return found


def parse_timestamp(value: Any) -> datetime:
    """An ISO 8601 timestamp (or date) as an aware UTC datetime (naive ones are taken as UTC)."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"not a timestamp: {value!r}")
    parsed = datetime.fromisoformat(value.strip().replace("z", "Z"))
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)


def format_timestamp(when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
