"""The fetcher protocol: cited URLs of one task in, one FetchResult per URL out."""
from __future__ import annotations

from typing import Protocol, Sequence

from ..core.models import FetchResult, SandboxPage


class Fetcher(Protocol):
    name: str

    def fetch_many(self, urls: Sequence[str], sandbox: Sequence[SandboxPage]) -> list[FetchResult]:
        """One result per URL, in order. Never raises for one bad URL: returns `unknown` instead."""
        ...

    def fetch_groups(self, groups: Sequence[tuple[Sequence[str], Sequence[SandboxPage]]]) -> list[list[FetchResult]]:
        """`fetch_many` for several (urls, sandbox) groups at once, sharing one fetch per URL."""
        ...
