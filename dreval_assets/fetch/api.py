"""JSON APIs (MediaWiki, news and search endpoints) over the live fetcher: the same URL safety,
per-host politeness, byte cap and retries as cited pages. Errors are raised with the reason."""
from __future__ import annotations

import json
from typing import Any, Mapping, Sequence
from urllib.parse import urlencode

from .live import LiveFetcher


class ApiError(RuntimeError):
    pass


class JsonApi:
    def __init__(self, fetcher: LiveFetcher):
        self.fetcher = fetcher

    def get_many(self, urls: Sequence[str]) -> list[Any]:
        """Parsed JSON of each URL, in order; the first failure raises ApiError naming its URL."""
        answers = []
        for body in self.fetcher.fetch_bodies(list(urls)):
            if not body.ok:
                raise ApiError(f"{body.url}: {body.detail}")
            try:
                answers.append(json.loads(body.data.decode("utf-8-sig")))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise ApiError(f"{body.url}: not JSON ({exc})") from exc
        return answers

    def get(self, base_url: str, params: Mapping[str, Any] | None = None) -> Any:
        return self.get_many([with_params(base_url, params)])[0]


def with_params(base_url: str, params: Mapping[str, Any] | None) -> str:
    if not params:
        return base_url
    return base_url + ("&" if "?" in base_url else "?") + urlencode(params)
