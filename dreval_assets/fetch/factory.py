"""Pick the fetcher named by configuration."""
from __future__ import annotations

from ..config import ConfigError
from ..store.db import Store
from ..store.pages import PageStore
from .base import Fetcher
from .chain import ChainFetcher


def make_fetcher(kind: str, store: Store | None = None, refetch_failed: bool = False) -> Fetcher:
    pages = PageStore(store) if store else None
    if kind == "sandbox":
        return ChainFetcher(pages=pages)
    if kind == "live":
        from .live import LiveFetcher, LiveFetchConfig

        return ChainFetcher(pages=pages, live=LiveFetcher(LiveFetchConfig.from_env()), refetch_failed=refetch_failed)
    raise ConfigError(f"unknown fetcher {kind!r}")
