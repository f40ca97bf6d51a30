"""Offline fetching: cited URLs resolve to pages of the task's sandbox corpus, nothing else.

A cited attachment (`attachment:<name>`) resolves to its text; an image attachment to the key facts a
vision judge read from it (an `attachment` page the pipeline adds to the corpus), and to nothing when
no judge could read it."""
from __future__ import annotations

import mimetypes
from pathlib import PurePosixPath
from typing import Sequence

from ..core.models import FetchResult, SandboxPage
from .urls import normalise_title, normalise_url


class SandboxFetcher:
    name = "sandbox"

    def fetch_many(self, urls: Sequence[str], sandbox: Sequence[SandboxPage]) -> list[FetchResult]:
        by_url = {normalise_url(p.url): p for p in sandbox}
        by_title = {normalise_title(p.title): p for p in sandbox if p.title.strip()}
        # a report cites a user file by its name; the task stores it by its path in the release
        by_file = {PurePosixPath(p.url.removeprefix("attachment:")).name.casefold(): p
                   for p in sandbox if p.url.startswith("attachment:")}
        return [self._resolve(url, by_url, by_title, by_file) for url in urls]

    def _resolve(self, url: str, by_url: dict, by_title: dict, by_file: dict) -> FetchResult:
        if url.startswith("rag:"):
            return _unknown(url, "a retrieval chunk of the system's own run: its text is in the system's trace, "
                                 "not in the task's sandbox")
        try:
            page = by_url.get(normalise_url(url)) or by_title.get(normalise_title(url))
        except ValueError as exc:  # e.g. an invalid port in a hostile URL
            return _unknown(url, f"malformed URL: {exc}")
        if page is None and url.startswith("attachment:"):
            page = by_file.get(PurePosixPath(url.removeprefix("attachment:")).name.casefold())
            if page is None and _names_image(url):
                return _unknown(url, "an image attachment with no key facts: it is evidence only through the "
                                     "facts a vision judge reads from it, and none did (the offline judge cannot "
                                     "see images)")
            if page is None:
                return _unknown(url, "no readable attachment of that name")
        if page is None:
            return _unknown(url, "not in the task's sandbox corpus (offline fetcher)")
        if not page.text.strip():
            return _unknown(url, "sandbox page is empty")
        return FetchResult(
            url=url, status="ok", backend=self.name, final_url=page.url, title=page.title,
            content_type="text/plain", text=page.text, role=page.role,
        )


def _names_image(url: str) -> bool:
    return (mimetypes.guess_type(url.removeprefix("attachment:"))[0] or "").startswith("image/")


def _unknown(url: str, detail: str) -> FetchResult:
    return FetchResult(url=url, status="unknown", backend="sandbox", na_reason="data_accessibility", detail=detail)
