"""Caches of the texts a run reads (a report's parse, a unit's words, a page's sentences): they pay within
a run, and the command empties them once no later run of it judges (`clear_run_caches`), so what they
hold is free for the closing runs, which read the whole home (the leaderboard, the published copy)."""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

_CACHES: list[Any] = []


def run_cache(maxsize: int) -> Callable[[Callable], Any]:
    """`functools.lru_cache(maxsize)`, emptied by `clear_run_caches`."""
    def decorate(function: Callable) -> Any:
        cached = lru_cache(maxsize=maxsize)(function)
        _CACHES.append(cached)
        return cached
    return decorate


def clear_run_caches() -> None:
    for cached in _CACHES:
        cached.cache_clear()
