"""Evidence search for claims no citation decided: where else to look before saying UNKNOWN.

`EvidenceSearch` is what the claim-verdict stage asks: `search_many` takes the statements (and each
one's task sandbox corpus) and returns, per statement, the pages to judge it against, best first,
each with the query that found it, plus the searches and page reads that failed (never silently
dropped: the stage records them as N/A rows with their reason bucket).

- `SandboxSearch` (offline default, origin `sandbox`): the task's sandbox page sharing most of the
  claim's words (at least `MIN_OVERLAP`); no query, no network.
- `WebSearch` (origin `search`, `DREVAL_EVIDENCE_SEARCH=web`): a SearXNG-compatible JSON endpoint
  (`DREVAL_SEARCH_URL`, the one live query generation uses): `GET <url>?q=<query>&format=json` ->
  `{"results": [{"url", "title", "content"}, ...]}`, through `fetch.api.JsonApi` (URL safety,
  politeness, byte cap, retries). Per statement at most `max_queries` searches (the statement itself,
  then its key terms: figures, names, rarest words) and `max_pages` page reads (results merged rank
  by rank across its queries, one per normalised URL). Each query is searched once per run across
  all systems and its answer cached (`SearchCache`, the `search_results` table); every page goes
  through the fetcher chain (sandbox, then the `pages` store, then the live web), all pages of a run
  in one batch, so a URL is fetched once across all systems and runs. A failed search is
  `provider_failure` (the search provider is infrastructure; the partition is due again and the
  failure is not cached); an unreadable page keeps the fetcher's bucket (`data_accessibility`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence

from ..core.models import SandboxPage
from ..errors import redact, redact_url
from .api import ApiError, JsonApi, with_params
from .base import Fetcher
from .urls import url_key

MIN_OVERLAP = 0.3  # share of a claim's words a page must contain to be worth asking the judge
_WORD_RE = re.compile(r"[^\W_]+")

DEFAULT_MAX_QUERIES = 2  # searches per statement (DREVAL_SEARCH_MAX_QUERIES)
DEFAULT_MAX_PAGES = 3  # page reads per statement (DREVAL_SEARCH_MAX_PAGES)
QUERY_MAX_WORDS = 32  # a search engine reads a sentence, not a paragraph
KEY_TERMS = 8  # words of the second query
_MARKERS = re.compile(r"\[\^?\d+(?:[-,\s]+\d+)*\]|【\d+】|［\d+］|<sup>\d+</sup>|https?://\S+")
_NUMBER = re.compile(r"\d[\d.,%]*")
_STOP = frozenset("""a an and are as at be been by for from has have in into is it its of on or that the their
there these this to was were which with will would than then also more most over under about after before
between during such they them our we he she his her not but can could may might""".split())


@dataclass(frozen=True)
class FoundPage:
    """A page to judge a statement against, and the query that found it (None: no query, the sandbox)."""
    url: str
    title: str
    text: str
    query: str | None = None


@dataclass(frozen=True)
class SearchFailure:
    """A search or page read that gave nothing to judge: recorded as an N/A verdict row."""
    source: str  # the page URL, or "search: <query>" for a failed search
    query: str | None
    na_reason: str
    detail: str


@dataclass
class SearchOutcome:
    pages: list[FoundPage] = field(default_factory=list)  # best first
    failures: list[SearchFailure] = field(default_factory=list)


class EvidenceSearch(Protocol):
    name: str  # the origin its verdict rows carry
    reads_web: bool  # True: it needs no sandbox corpus to search

    def search(self, claim: str, corpus: Sequence[SandboxPage], limit: int = 1) -> list[SandboxPage]:
        """Up to `limit` sandbox pages likely to decide the claim, best first."""
        ...

    def search_many(self, claims: Sequence[str], corpora: Sequence[Sequence[SandboxPage]]) -> list[SearchOutcome]:
        """One outcome per claim, in order."""
        ...


class SandboxSearch:
    name = "sandbox"
    reads_web = False

    def __init__(self) -> None:
        # each page's words, read once per search object (a run's step), not once per claim
        self._page_words: dict[str, frozenset[str]] = {}

    def search(self, claim: str, corpus: Sequence[SandboxPage], limit: int = 1) -> list[SandboxPage]:
        words = {w.casefold() for w in _WORD_RE.findall(claim) if len(w) > 2}
        if not words:
            return []
        scored = []
        for order, page in enumerate(corpus):
            if page.text.strip():
                share = len(words & self._words_of(page.text)) / len(words)
                if share >= MIN_OVERLAP:
                    scored.append((-share, order, page))
        return [page for _, _, page in sorted(scored, key=lambda s: (s[0], s[1]))[:limit]]

    def search_many(self, claims: Sequence[str], corpora: Sequence[Sequence[SandboxPage]]) -> list[SearchOutcome]:
        return [SearchOutcome([FoundPage(p.url, p.title, p.text) for p in self.search(claim, corpus)])
                for claim, corpus in zip(claims, corpora, strict=True)]

    def _words_of(self, text: str) -> frozenset[str]:
        words = self._page_words.get(text)
        if words is None:
            words = self._page_words[text] = frozenset(w.casefold() for w in _WORD_RE.findall(text))
        return words


class SearchCache(Protocol):
    def get(self, endpoint: str, queries: Sequence[str]) -> dict[str, list[dict]]:
        """Stored result lists by query (only the queries answered before)."""
        ...

    def put(self, endpoint: str, answers: Mapping[str, list[dict]]) -> None:
        ...


class MemorySearchCache:
    def __init__(self):
        self.answers: dict[tuple[str, str], list[dict]] = {}

    def get(self, endpoint: str, queries: Sequence[str]) -> dict[str, list[dict]]:
        return {q: self.answers[(endpoint, q)] for q in queries if (endpoint, q) in self.answers}

    def put(self, endpoint: str, answers: Mapping[str, list[dict]]) -> None:
        self.answers.update({(endpoint, q): r for q, r in answers.items()})


class WebSearch:
    name = "search"
    reads_web = True

    def __init__(self, api: JsonApi, fetcher: Fetcher, search_url: str, max_queries: int = DEFAULT_MAX_QUERIES,
                 max_pages: int = DEFAULT_MAX_PAGES, cache: SearchCache | None = None):
        if max_queries < 1 or max_pages < 1:
            raise ValueError("a web search needs at least one query and one page read per statement")
        self.api, self.fetcher, self.search_url = api, fetcher, search_url
        self.max_queries, self.max_pages = max_queries, max_pages
        self.cache = cache or MemorySearchCache()
        self.searches_sent = 0  # endpoint requests (cache misses), for run metadata and tests

    def search(self, claim: str, corpus: Sequence[SandboxPage], limit: int = 1) -> list[SandboxPage]:
        outcome = self.search_many([claim], [corpus])[0]
        return [SandboxPage(url=p.url, title=p.title, role="supportive", text=p.text) for p in outcome.pages[:limit]]

    def search_many(self, claims: Sequence[str], corpora: Sequence[Sequence[SandboxPage]]) -> list[SearchOutcome]:
        queries = [queries_for(claim, self.max_queries) for claim in claims]
        answers = self._answers(sorted({q for qs in queries for q in qs}))
        outcomes, picked = [], []
        for qs in queries:
            outcome = SearchOutcome()
            for q in qs:
                if isinstance(answers[q], ApiError):
                    outcome.failures.append(SearchFailure(f"search: {q}", q, "provider_failure",
                                                          redact(f"the search endpoint failed: {answers[q]}")[:500]))
            picked.append(_merge_ranked([(q, answers[q]) for q in qs if not isinstance(answers[q], ApiError)],
                                        self.max_pages))
            outcomes.append(outcome)
        urls = list(dict.fromkeys(hit["url"] for hits in picked for hit in hits))
        fetched = dict(zip(urls, self.fetcher.fetch_groups([(urls, [])])[0] if urls else []))
        for outcome, hits in zip(outcomes, picked):
            for hit in hits:
                page = fetched[hit["url"]]
                if page.status == "ok" and (page.text or "").strip():
                    outcome.pages.append(FoundPage(hit["url"], page.title or hit["title"], page.text, hit["query"]))
                else:
                    outcome.failures.append(SearchFailure(hit["url"], hit["query"], page.na_reason or "data_accessibility",
                                                          page.detail or "the page found by search is not readable"))
        return outcomes

    def _answers(self, queries: Sequence[str]) -> dict[str, list[dict] | ApiError]:
        """Each query's valid results (cached), or the ApiError of a failed search (not cached)."""
        found: dict[str, Any] = dict(self.cache.get(redact_url(self.search_url), queries))
        todo = [q for q in queries if q not in found]
        fresh: dict[str, list[dict]] = {}
        if todo:
            self.searches_sent += len(todo)
            urls = [with_params(self.search_url, {"q": q, "format": "json"}) for q in todo]
            for q, answer in zip(todo, self.api.get_each(urls)):
                if isinstance(answer, ApiError):
                    found[q] = answer
                    continue
                results = answer.get("results") if isinstance(answer, dict) else None
                if not isinstance(results, list):
                    found[q] = ApiError("the answer has no 'results' list")
                    continue
                fresh[q] = found[q] = [{"url": str(r["url"]), "title": str(r.get("title") or "")}
                                       for r in results if isinstance(r, dict) and _web_url(r.get("url"))]
        self.cache.put(redact_url(self.search_url), fresh)  # stored and published: no key in it
        return found


def _web_url(url: Any) -> bool:
    return isinstance(url, str) and re.match(r"^https?://[^\s/]+", url.strip(), re.I) is not None


def _merge_ranked(answers: Sequence[tuple[str, list[dict]]], limit: int) -> list[dict]:
    """Results rank by rank across the queries (q1 #1, q2 #1, q1 #2, ...), one per normalised URL,
    each with the first query that found it; at most `limit`."""
    picked, seen = [], set()
    depth = max((len(results) for _, results in answers), default=0)
    for rank in range(depth):
        for query, results in answers:
            if rank < len(results) and len(picked) < limit:
                key = url_key(results[rank]["url"])
                if key not in seen:
                    seen.add(key)
                    picked.append({**results[rank], "query": query})
    return picked


def queries_for(claim: str, max_queries: int = DEFAULT_MAX_QUERIES) -> list[str]:
    """The searches for one statement, at most `max_queries`: the statement without citation
    markers and URLs (its first `QUERY_MAX_WORDS` words), then its key terms (figures, capitalised
    names, then the longest remaining words; `KEY_TERMS` of them) when they differ."""
    text = re.sub(r"\s+", " ", _MARKERS.sub(" ", claim)).strip()
    words = text.split(" ")
    queries = [" ".join(words[:QUERY_MAX_WORDS])] if text else []
    tokens = [w.strip(".,;:!?\"'()[]") for w in words]
    tokens = [t for t in tokens if t and t.casefold() not in _STOP]
    numbers = [t for t in tokens if _NUMBER.fullmatch(t)]
    names = [t for t in tokens if t[:1].isupper() and t not in numbers]
    rest = sorted((t for t in tokens if t not in numbers and t not in names and len(t) > 3),
                  key=lambda t: (-len(t), tokens.index(t)))
    terms = list(dict.fromkeys(numbers + names + rest))[:KEY_TERMS]
    if terms:
        ordered = [t for t in dict.fromkeys(tokens) if t in terms]  # keep the statement's order
        key_query = " ".join(ordered)
        if key_query and key_query not in queries:
            queries.append(key_query)
    return queries[:max_queries]


def make_search(kind: str, search_url: str = "", max_queries: int = DEFAULT_MAX_QUERIES,
                max_pages: int = DEFAULT_MAX_PAGES, fetcher: Fetcher | None = None, api: JsonApi | None = None,
                cache: SearchCache | None = None) -> EvidenceSearch:
    """The backend named by `DREVAL_EVIDENCE_SEARCH`: `sandbox` (default) or `web`."""
    if kind == "sandbox":
        return SandboxSearch()
    if kind == "web":
        if not search_url or fetcher is None or api is None:
            raise ValueError("the web evidence search needs DREVAL_SEARCH_URL, the live fetcher and a JSON client")
        return WebSearch(api, fetcher, search_url, max_queries, max_pages, cache)
    raise ValueError(f"unknown evidence search {kind!r}: choose sandbox or web")
