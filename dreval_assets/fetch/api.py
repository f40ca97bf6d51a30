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

    def get_each(self, urls: Sequence[str]) -> list[Any]:
        """Parsed JSON of each URL, in order, or an `ApiError` (not raised) for a URL that failed:
        one bad endpoint answer costs only itself. The errors do not name their URL (it may carry
        a key)."""
        answers: list[Any] = []
        for body in self.fetcher.fetch_bodies(list(urls)) if urls else []:
            if not body.ok:
                answers.append(ApiError(body.detail))
                continue
            try:
                answers.append(json.loads(body.data.decode("utf-8-sig")))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                answers.append(ApiError(f"not JSON ({exc})"))
        return answers

    def get_many(self, urls: Sequence[str]) -> list[Any]:
        """Parsed JSON of each URL, in order; the first failure raises ApiError naming its URL."""
        answers = self.get_each(urls)
        for url, answer in zip(urls, answers):
            if isinstance(answer, ApiError):
                raise ApiError(f"{url}: {answer}")
        return answers

    def get(self, base_url: str, params: Mapping[str, Any] | None = None) -> Any:
        return self.get_many([with_params(base_url, params)])[0]

    def get_with_headers(self, base_url: str,
                         params: Mapping[str, Any] | None = None) -> tuple[Any, Mapping[str, str]]:
        """Parsed JSON and the answer's headers (an API may say how long to wait in Retry-After even
        with HTTP 200, as MediaWiki does for `maxlag`); a failure raises ApiError naming the URL."""
        url = with_params(base_url, params)
        [body] = self.fetcher.fetch_bodies([url])
        if not body.ok:
            raise ApiError(f"{url}: {body.detail}")
        try:
            return json.loads(body.data.decode("utf-8-sig")), {k.lower(): v for k, v in body.headers.items()}
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ApiError(f"{url}: not JSON ({exc})") from exc


def with_params(base_url: str, params: Mapping[str, Any] | None) -> str:
    if not params:
        return base_url
    return base_url + ("&" if "?" in base_url else "?") + urlencode(params)
