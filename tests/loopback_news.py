"""News (NewsAPI-shaped) and search (SearXNG-shaped) emulators on a `LoopbackWeb`, with invented content.

    with LoopbackWeb() as web:
        endpoints = NewsAndSearch(web)          # routes /news and /search
        endpoints.fail_news("tram lines")       # that subtopic answers HTTP 500
        endpoints.search_rule("how does tram lines", results(2))   # fewer than 3 results

Every request's query parameters are kept in `news_requests` / `search_requests`.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

from loopback_web import LoopbackWeb, send

# Invented news: places, organisations and figures that do not exist.
ARTICLES: dict[str, list[dict[str, str]]] = {
    "rail fares": [
        {"title": "Rail fares rise again across the region - Valley Courier",
         "url": "https://www.valleycourier.example/rail-fares-rise",
         "publishedAt": "2025-03-04T08:00:00Z",
         "description": "Season tickets cost more from this spring, the operators said."},
        {"title": "Off-peak tickets to be simplified",
         "url": "https://www.valleycourier.example/off-peak",
         "publishedAt": "2025-03-01T10:00:00Z",
         "description": "Fewer fare types are planned."},
    ],
    "tram lines": [
        {"title": "Lowmarsh Council Approves 41 Million Tram Extension to Saltcote",
         "url": "https://news.lowmarsh.example/tram-extension",
         "publishedAt": "2025-02-27T17:30:00Z",
         "description": "Lowmarsh Council voted on Tuesday to fund the 41 million extension of the Estuary tram "
                        "line to Saltcote, with works due to start next year."},
    ],
    "hospital waiting times": [
        {"title": "Waiting lists at Estuary General fall to 12,400 after weekend clinics",
         "url": "https://health.coastgazette.example/waiting-lists",
         "publishedAt": "2025-03-02T06:15:00Z",
         "description": "The hospital trust credits extra weekend clinics for the fall from 15,900 in the autumn."},
    ],
}


def results(count: int, domains: tuple[str, ...] = ("news.example.org", "transit.example.net", "archive.example.com"),
            about: str = "the question") -> list[dict[str, str]]:
    """`count` search results spread over `domains` in turn."""
    return [{"url": f"https://{domains[i % len(domains)]}/item-{i}", "title": f"Result {i} on {about}",
             "content": f"A short snippet {i} about {about}."} for i in range(count)]


class NewsAndSearch:
    def __init__(self, web: LoopbackWeb, news_path: str = "/news", search_path: str = "/search"):
        self.web = web
        self.articles = {key: list(value) for key, value in ARTICLES.items()}
        self.failing_news: set[str] = set()
        self.failing_search: list[str] = []  # substrings of queries answered with HTTP 500
        self.rules: list[tuple[str, list[dict[str, str]]]] = []  # (substring of the query, results); first match
        self.news_requests: list[dict[str, str]] = []
        self.search_requests: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self.news_url, self.search_url = web.url(news_path), web.url(search_path)
        web.route(news_path, self._news).route(search_path, self._search)

    def fail_news(self, subtopic: str) -> "NewsAndSearch":
        self.failing_news.add(subtopic)
        return self

    def fail_search(self, substring: str) -> "NewsAndSearch":
        self.failing_search.append(substring)
        return self

    def search_rule(self, substring: str, found: list[dict[str, str]]) -> "NewsAndSearch":
        self.rules.append((substring, found))
        return self

    def _news(self, h: BaseHTTPRequestHandler) -> None:
        params = _params(h)
        with self._lock:
            self.news_requests.append(params)
        subtopic = params.get("q", "")
        if subtopic in self.failing_news:
            send(h, 500, b'{"status": "error", "message": "internal"}', "application/json")
            return
        size = int(params.get("pageSize") or 20)
        articles = sorted(self.articles.get(subtopic, []), key=lambda a: a["publishedAt"], reverse=True)
        _json(h, {"status": "ok", "totalResults": len(articles), "articles": articles[:size]})

    def _search(self, h: BaseHTTPRequestHandler) -> None:
        params = _params(h)
        with self._lock:
            self.search_requests.append(params)
        query = params.get("q", "")
        if params.get("format") != "json":
            send(h, 403, b"format not allowed", "text/plain")
            return
        if any(s in query for s in self.failing_search):
            send(h, 500, b"upstream engines failed", "text/plain")
            return
        found = next((r for s, r in self.rules if s in query), None)
        _json(h, {"query": query, "results": results(4, about=query[:40]) if found is None else found})


def _params(h: BaseHTTPRequestHandler) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(h.path).query).items()}


def _json(h: BaseHTTPRequestHandler, data: object) -> None:
    send(h, 200, json.dumps(data).encode("utf-8"), "application/json")
