"""Pick the fetcher named by configuration."""
from __future__ import annotations

from ..config import ConfigError
from .base import Fetcher
from .sandbox import SandboxFetcher


def make_fetcher(kind: str) -> Fetcher:
    if kind == "sandbox":
        return SandboxFetcher()
    if kind == "live":
        raise ConfigError("DREVAL_FETCH=live: the live web fetcher is not built yet; use sandbox")
    raise ConfigError(f"unknown fetcher {kind!r}")
