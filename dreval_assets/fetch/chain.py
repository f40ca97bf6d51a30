"""The fetch order of DESIGN.md: the task's sandbox, then the pages store, then (if on) the live web."""
from __future__ import annotations

import re
from typing import Sequence

from ..core.models import FetchResult, SandboxPage
from ..store.pages import PageStore
from .live import LiveFetcher
from .sandbox import SandboxFetcher
from .urls import url_key

OFFLINE_DETAIL = "not in the task's sandbox corpus, and live fetching is off (DREVAL_FETCH=sandbox)"
WEB_SCHEMES = ("http", "https")
# Our own locators, which only the task's sandbox resolves (corpus documents, attachments, the
# system's retrieval chunks): they are not web URLs, but they are not refused either.
SANDBOX_SCHEMES = ("doc", "attachment", "rag")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")


class ChainFetcher:
    def __init__(self, pages: PageStore | None = None, live: LiveFetcher | None = None,
                 refetch_failed: bool = False):
        self.sandbox = SandboxFetcher()
        self.pages = pages
        self.live = live
        self.refetch_failed = refetch_failed
        self.name = "live" if live else "sandbox"

    def fetch_many(self, urls: Sequence[str], sandbox: Sequence[SandboxPage]) -> list[FetchResult]:
        return self.fetch_groups([(urls, sandbox)])[0]

    def fetch_groups(self, groups: Sequence[tuple[Sequence[str], Sequence[SandboxPage]]]) -> list[list[FetchResult]]:
        """Several reports' URLs at once: each sandbox first, then one store lookup and one live
        fetch for everything left, so a run fetches concurrently across reports and once per URL."""
        results = [[r if r.status == "ok" else refused_scheme(url)
                    for url, r in zip(urls, self.sandbox.fetch_many(urls, sandbox))]
                   for urls, sandbox in groups]
        todo = [(g, i, url_key(url)) for g, (urls, _) in enumerate(groups) for i, url in enumerate(urls)
                if results[g][i] is None]
        stored = self.pages.get([key for _, _, key in todo]) if self.pages else {}
        for g, i, key in todo:
            hit = stored.get(key)
            if hit and (hit.status == "ok" or not (self.refetch_failed and self.live)):
                results[g][i] = hit
        missing = [(g, i, key) for g, i, key in todo if results[g][i] is None]
        if missing and self.live:
            first_url: dict[str, str] = {}
            for g, i, key in missing:
                first_url.setdefault(key, groups[g][0][i])
            fetched = dict(zip(first_url, self.live.fetch_many(list(first_url.values()))))
            if self.pages:
                self.pages.put(list(fetched.items()))
            for g, i, key in missing:
                results[g][i] = fetched[key]
        return [[(r.model_copy(update={"url": url}) if r else _offline(url)) for r, url in zip(row, urls)]
                for row, (urls, _) in zip(results, groups)]


def _offline(url: str) -> FetchResult:
    return FetchResult(url=url, status="unknown", backend="sandbox", na_reason="data_accessibility", detail=OFFLINE_DETAIL)


def refused_scheme(url: str) -> FetchResult | None:
    """The refusal of a locator no fetcher can read (`javascript:`, `file:`, `data:`, `ftp:`,
    `mailto:` ...), in sandbox and live mode alike, so the row says why rather than "not in the
    sandbox"; None for web URLs, our sandbox locators and text that is not a URL at all."""
    match = _SCHEME.match(url.strip())
    if match is None or any(c.isspace() for c in url.strip()):
        return None
    scheme = match.group(1).lower()
    if scheme in WEB_SCHEMES or scheme in SANDBOX_SCHEMES:
        return None
    return FetchResult(url=url, status="unknown", backend="sandbox", na_reason="data_accessibility",
                       detail=f"refused: unsupported URL scheme {scheme!r} (only http and https are fetched)")
