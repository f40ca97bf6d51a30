"""News (NewsAPI-shaped) and search (SearXNG-shaped) emulators on a `LoopbackWeb`, with invented content.

    with LoopbackWeb() as web:
        endpoints = NewsAndSearch(web)          # routes /news and /search
        endpoints.fail_news("tram lines")       # that subtopic answers HTTP 500
        endpoints.search_rule("how does tram lines", results(2))   # fewer than 3 results

Every request's query parameters are kept in `news_requests` / `search_requests`.

At the paper's scale (`NewsAndSearch(web).paper_scale(DEFAULT_TOPICS)`): five invented headlines for
every subtopic (`paper_scale_articles`), about half of them plain (no names or figures, so a closed-book
answer covers them) and half naming an invented place, organisation and figure; and a share of queries
(`thin_share`, by a hash of the query) answered with too few search results.
"""
from __future__ import annotations

import hashlib
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


PLACES = ("Lowmarsh", "Saltcote", "Harrowgate", "Dunmere", "Kestrel Point", "Marrowfield", "Tollcross",
          "Brackenholm", "Selby Point", "Wyndham Ness", "Ashby Vale", "Fenwick Bay")
ORGS = ("Estuary Authority", "Northvale Agency", "Coastline Board", "Greywater Trust", "Heronford Institute",
        "Millbrook Council")
PLAIN = ("{Sub} costs rise again across the region", "Officials weigh changes to {sub}",
         "Debate over {sub} grows louder this spring", "Experts expect slower progress on {sub}")
NAMED = ("Regulators in {place} approve {n} million plan for {sub}",
         "Officials in {place} report {n} percent jump tied to {sub}",
         "The {org} backs {n} million review of {sub} in {place}")


def paper_scale_articles(topics: dict[str, list[str]], per_subtopic: int = 5) -> dict[str, list[dict[str, str]]]:
    """`per_subtopic` invented articles per subtopic, deterministic. Which headlines are plain alternates
    between subtopics (the 2nd and 4th, or the 1st and 4th), so about half the headlines the necessity
    filter passes are covered by a closed-book answer."""
    articles: dict[str, list[dict[str, str]]] = {}
    subtopics = [sub for subs in topics.values() for sub in subs]
    for s, sub in enumerate(subtopics):
        plain = {1, 3} if s % 2 == 0 else {0, 3}
        found = []
        for j in range(per_subtopic):
            place, org, n = PLACES[(s + j) % len(PLACES)], ORGS[(s * 3 + j) % len(ORGS)], 10 + (s * 7 + j * 13) % 90
            if j in plain:
                title = PLAIN[(s + j) % len(PLAIN)].format(Sub=sub.capitalize(), sub=sub)
                description = "Observers expect further changes later this year."
            else:
                title = NAMED[(s + j) % len(NAMED)].format(place=place, org=org, n=n, sub=sub)
                description = f"The {org} said the {n} million decision in {place} would take effect next year."
            slug = hashlib.sha256(f"{sub}/{j}".encode()).hexdigest()[:10]
            found.append({"title": title, "url": f"https://news{s % 4}.courier.example/{slug}",
                          "publishedAt": f"2025-03-{28 - j:02d}T{8 + s % 10:02d}:00:00Z", "description": description})
        articles[sub] = found
    return articles


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
        self.thin_share = 0.0  # share of other queries (by a hash of the query) answered with two results
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

    def paper_scale(self, topics: dict[str, list[str]], per_subtopic: int = 5,
                    thin_share: float = 0.16) -> "NewsAndSearch":
        self.articles, self.thin_share = paper_scale_articles(topics, per_subtopic), thin_share
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
        if found is None:
            thin = int(hashlib.sha256(query.encode()).hexdigest()[:8], 16) / 16**8 < self.thin_share
            found = results(2 if thin else 4, about=query[:40])
        _json(h, {"query": query, "results": found})


def _params(h: BaseHTTPRequestHandler) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(h.path).query).items()}


def _json(h: BaseHTTPRequestHandler, data: object) -> None:
    send(h, 200, json.dumps(data).encode("utf-8"), "application/json")
