"""Offline fetching: cited URLs resolve to pages of the task's sandbox corpus, nothing else."""
from __future__ import annotations

from typing import Sequence

from ..core.models import FetchResult, SandboxPage
from .urls import normalise_title, normalise_url


class SandboxFetcher:
    name = "sandbox"

    def fetch_many(self, urls: Sequence[str], sandbox: Sequence[SandboxPage]) -> list[FetchResult]:
        by_url = {normalise_url(p.url): p for p in sandbox}
        by_title = {normalise_title(p.title): p for p in sandbox if p.title.strip()}
        return [self._resolve(url, by_url, by_title) for url in urls]

    def _resolve(self, url: str, by_url: dict, by_title: dict) -> FetchResult:
        try:
            page = by_url.get(normalise_url(url)) or by_title.get(normalise_title(url))
        except ValueError as exc:  # e.g. an invalid port in a hostile URL
            return _unknown(url, f"malformed URL: {exc}")
        if page is None:
            return _unknown(url, "not in the task's sandbox corpus (offline fetcher)")
        if not page.text.strip():
            return _unknown(url, "sandbox page is empty")
        return FetchResult(
            url=url, status="ok", backend=self.name, final_url=page.url, title=page.title,
            content_type="text/plain", text=page.text, role=page.role,
        )


def _unknown(url: str, detail: str) -> FetchResult:
    return FetchResult(url=url, status="unknown", backend="sandbox", na_reason="data_accessibility", detail=detail)
