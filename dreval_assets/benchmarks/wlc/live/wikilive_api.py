"""The MediaWiki Action API as its etiquette asks of clients (mediawiki.org, API:Etiquette, API:Continue).

- Every call sends `maxlag=5`: when the replicas lag more than that, MediaWiki answers the `maxlag`
  error with HTTP 200 and a `Retry-After` header; we wait that long (bounded) and ask again, at most
  `max_lag_retries` times.
- Calls are serial and go through the live fetcher, whose per-host gap holds across calls.
- `continue` is followed for every list and prop call: the whole `continue` object goes back with the
  next call, and page entries that come back in several answers are merged (lists joined).
Errors (HTTP, not JSON, a MediaWiki error object, a continuation that repeats) raise ApiError.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Iterator, Mapping

from ....fetch.api import ApiError, JsonApi

MAXLAG_S = 5  # what Wikimedia asks of non-interactive clients
MAX_LAG_RETRIES = 3
MAX_LAG_WAIT_S = 60.0  # a Retry-After beyond this is an outage, not lag: give up instead
MAX_CONTINUATIONS = 200  # a guard against a server that never finishes


class MediaWiki:
    def __init__(self, api: JsonApi, api_url: str, *, maxlag: int = MAXLAG_S, max_lag_retries: int = MAX_LAG_RETRIES,
                 sleep: Callable[[float], None] = time.sleep):
        self.api, self.api_url, self.maxlag = api, api_url, maxlag
        self.max_lag_retries, self.sleep = max_lag_retries, sleep
        self.calls = 0
        self.lag_waits: list[float] = []  # every wait a maxlag answer asked for

    def query(self, params: Mapping[str, Any], what: str) -> dict:
        """One `action=query` call (maxlag retried); its answer as a JSON object."""
        full = {"action": "query", **params, "format": "json", "formatversion": 2, "maxlag": self.maxlag}
        for attempt in range(self.max_lag_retries + 1):
            self.calls += 1
            data, headers = self.api.get_with_headers(self.api_url, full)
            if not isinstance(data, dict):
                raise ApiError(f"{what}: the answer is {type(data).__name__}, not a JSON object")
            error = data.get("error")
            if isinstance(error, dict) and error.get("code") == "maxlag" and attempt < self.max_lag_retries:
                wait = _retry_after(headers, default=float(self.maxlag))
                if wait > MAX_LAG_WAIT_S:
                    raise ApiError(f"{what}: the wiki lags; it asked to wait {wait:.0f}s")
                self.lag_waits.append(wait)
                self.sleep(wait)
                continue
            if error is not None:
                code = error.get("code", "?") if isinstance(error, dict) else "?"
                info = error.get("info", "") if isinstance(error, dict) else str(error)
                raise ApiError(f"{what}: MediaWiki error {code}: {info}".rstrip(": "))
            return data
        raise AssertionError("unreachable")

    def query_continued(self, params: Mapping[str, Any], what: str) -> Iterator[dict]:
        """Every answer of a query, following `continue` to the end."""
        continuation: dict[str, str] = {}
        seen: set[tuple] = set()
        for _ in range(MAX_CONTINUATIONS):
            data = self.query({**params, **continuation}, what)
            yield data
            continuation = continuation_of(data, what)
            if not continuation:
                return
            marker = tuple(sorted(continuation.items()))
            if marker in seen:
                raise ApiError(f"{what}: the continuation {dict(marker)} came back twice; giving up")
            seen.add(marker)
        raise ApiError(f"{what}: still continuing after {MAX_CONTINUATIONS} calls; giving up")

    def pages(self, params: Mapping[str, Any], what: str) -> dict[int, dict]:
        """The `query.pages` of a prop query, merged over all its continuations, by pageid."""
        merged: dict[int, dict] = {}
        for data in self.query_continued(params, what):
            for page in pages_of(data, what):
                pageid = page.get("pageid")
                if isinstance(pageid, int):
                    merge_page(merged.setdefault(pageid, {}), page)
        return merged


def pages_of(data: dict, what: str) -> list[dict]:
    query = data.get("query")
    pages = query.get("pages") if isinstance(query, dict) else None
    if isinstance(pages, dict):  # formatversion=1 shape, accepted anyway
        pages = list(pages.values())
    if pages is None and isinstance(query, dict) and not query:
        pages = []
    if not isinstance(pages, list):
        raise ApiError(f"{what}: the answer has no query.pages list (keys: {', '.join(sorted(data)) or 'none'})")
    return [p for p in pages if isinstance(p, dict)]


def merge_page(into: dict, page: dict) -> None:
    """A page entry from one more answer: lists (categories, extlinks, revisions) grow, objects
    (pageviews) merge, the rest is set."""
    for key, value in page.items():
        if isinstance(value, list) and isinstance(into.get(key), list):
            into[key] = into[key] + value
        elif isinstance(value, dict) and isinstance(into.get(key), dict):
            into[key] = {**into[key], **value}
        else:
            into[key] = value


def continuation_of(data: dict, what: str) -> dict[str, str]:
    continuation = data.get("continue")
    if continuation is None:
        return {}
    if not isinstance(continuation, dict):
        raise ApiError(f"{what}: 'continue' is {type(continuation).__name__}, not an object")
    return {str(k): str(v) for k, v in continuation.items()}


def flag(page: dict, name: str) -> bool:
    """formatversion=2 booleans are `true`; formatversion=1 gives an empty string when set."""
    return name in page and page[name] is not False


def _retry_after(headers: Mapping[str, str], default: float) -> float:
    try:
        return max(0.0, float(headers.get("retry-after", "")))
    except ValueError:
        return default
