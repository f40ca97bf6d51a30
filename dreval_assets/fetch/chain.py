"""The fetch order of DESIGN.md: the task's sandbox, then the pages store, then (if on) the live web."""
from __future__ import annotations

from typing import Sequence

from ..core.models import FetchResult, SandboxPage
from ..store.pages import PageStore
from .live import LiveFetcher
from .sandbox import SandboxFetcher
from .urls import normalise_url

OFFLINE_DETAIL = "not in the task's sandbox corpus, and live fetching is off (DREVAL_FETCH=sandbox)"


class ChainFetcher:
    def __init__(self, pages: PageStore | None = None, live: LiveFetcher | None = None,
                 refetch_failed: bool = False):
        self.sandbox = SandboxFetcher()
        self.pages = pages
        self.live = live
        self.refetch_failed = refetch_failed
        self.name = "live" if live else "sandbox"

    def fetch_many(self, urls: Sequence[str], sandbox: Sequence[SandboxPage]) -> list[FetchResult]:
        results: list[FetchResult | None] = [
            r if r.status == "ok" else None for r in self.sandbox.fetch_many(urls, sandbox)]
        todo = {i: _key(url) for i, url in enumerate(urls) if results[i] is None}
        stored = self.pages.get(list(todo.values())) if self.pages else {}
        for i, key in todo.items():
            hit = stored.get(key)
            if hit and (hit.status == "ok" or not (self.refetch_failed and self.live)):
                results[i] = hit.model_copy(update={"url": urls[i]})
        missing = [i for i in todo if results[i] is None]
        if missing and self.live:
            distinct = list(dict.fromkeys(todo[i] for i in missing))
            first_url = {todo[i]: urls[i] for i in reversed(missing)}
            fetched = dict(zip(distinct, self.live.fetch_many([first_url[k] for k in distinct])))
            if self.pages:
                self.pages.put(list(fetched.items()))
            for i in missing:
                results[i] = fetched[todo[i]].model_copy(update={"url": urls[i]})
        return [r or _offline(urls[i]) for i, r in enumerate(results)]


def _key(url: str) -> str:
    try:
        return normalise_url(url)
    except ValueError:
        return url


def _offline(url: str) -> FetchResult:
    return FetchResult(url=url, status="unknown", backend="sandbox", na_reason="data_accessibility", detail=OFFLINE_DETAIL)
