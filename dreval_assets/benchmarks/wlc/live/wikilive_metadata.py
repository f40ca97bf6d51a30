"""The metadata of Wiki Live candidates, 50 pages a call (MediaWiki's pageids limit), two calls a batch
plus their continuations:
- `prop=info|categories|extlinks|pageviews`: length (bytes) and lastrevid (info), visible categories
  (`clshow=!hidden`), external links (`ellimit=max`), page views of the last 60 days (PageViewInfo,
  `pvipdays=60`; the sum of the days with data, None when no day has any);
- `prop=revisions&rvprop=ids|content&rvslots=main`: the latest wikitext, which the selection measures
  (reference URLs, sections, list-likeness: `wikilive_wikitext`).
A batch whose calls fail gives each of its pages the reason, marked to be tried again.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from ....fetch.api import ApiError
from .wikilive_api import MediaWiki, flag

BATCH = 50
VIEW_DAYS = 60


@dataclass
class PageMeta:
    length: int | None = None
    lastrevid: int | None = None
    views: int | None = None
    external_links: int = 0
    categories: list[str] = field(default_factory=list)
    wikitext: str | None = None
    problem: str | None = None
    retry: bool = False


def page_metadata(mw: MediaWiki, pageids: Sequence[int], batch: int = BATCH) -> dict[int, PageMeta]:
    found: dict[int, PageMeta] = {}
    for start in range(0, len(pageids), batch):
        ids = list(pageids[start:start + batch])
        joined = "|".join(map(str, ids))
        try:
            props = mw.pages({"prop": "info|categories|extlinks|pageviews", "pageids": joined, "clshow": "!hidden",
                              "cllimit": "max", "ellimit": "max", "pvipdays": VIEW_DAYS, "pvipmetric": "pageviews"},
                             f"metadata of pageids {joined}")
            texts = mw.pages({"prop": "revisions", "pageids": joined, "rvprop": "ids|content", "rvslots": "main"},
                             f"wikitext of pageids {joined}")
        except ApiError as exc:
            for pageid in ids:
                found[pageid] = PageMeta(problem=f"metadata calls failed: {exc}", retry=True)
            continue
        for pageid in ids:
            found[pageid] = _meta(props.get(pageid), texts.get(pageid))
    return found


def _meta(page: dict | None, text_page: dict | None) -> PageMeta:
    meta = PageMeta()
    if page is None:
        meta.problem, meta.retry = "no answer for this page from the metadata call", True
        return meta
    if flag(page, "missing"):
        meta.problem = "page is missing (deleted or moved away since it was listed)"
        return meta
    if flag(page, "redirect"):
        meta.problem = "page is a redirect, not an article"
        return meta
    meta.length = page["length"] if isinstance(page.get("length"), int) else None
    meta.lastrevid = page["lastrevid"] if isinstance(page.get("lastrevid"), int) else None
    meta.categories = [c["title"] for c in page.get("categories") or [] if isinstance(c, dict) and "title" in c]
    meta.external_links = sum(1 for link in page.get("extlinks") or [] if isinstance(link, dict))
    views = page.get("pageviews")
    if isinstance(views, dict):
        days = [v for v in views.values() if isinstance(v, int)]
        meta.views = sum(days) if days else None
    revisions = (text_page or {}).get("revisions")
    revision = revisions[-1] if isinstance(revisions, list) and revisions and isinstance(revisions[-1], dict) else {}
    content = revision.get("slots", {}).get("main", {}).get("content") if isinstance(revision.get("slots"), dict) \
        else revision.get("content")
    if isinstance(content, str):
        meta.wikitext = content
    else:
        meta.problem, meta.retry = "the API answer has no wikitext for this page", True
    return meta
