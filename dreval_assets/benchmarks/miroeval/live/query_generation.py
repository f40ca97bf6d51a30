"""MiroEval-style live query generation (methods/miroeval.md section 4), without Dagster.

Pipeline: topics x subtopics -> recent headlines from a news endpoint -> the judge writes candidate
research queries in domain personas (`personas.py`: we assign them) -> three filters, in order ->
the paper's selection (`query_selection.py`: keep 50, choose 35 by diversity of topic and persona)
-> chosen candidates become `Task`s of benchmark `miroeval` (`miroeval.live-<hash of the query>`).

Scale: the paper makes 180 candidates from 12 topics x 3 subtopics. Our default is the same
arithmetic: 36 subtopics x 5 headlines x 1 query per headline = 180 candidates, each headline of a
subtopic asked from another of its topic's five personas.

Filters (a candidate failing one is not sent to the next; `Candidate.rejected_by` says which):
1. `search`: the search endpoint returns >= 3 results from >= 2 distinct registered domains;
2. `necessity`: the judge (`research_necessity`) says answering needs external, current sources;
3. `inverse_quality`: the judge answers closed-book (`closed_book_answer`, no search) and a second
   judgment (`answer_adequacy`) finds that answer inadequate; an adequate closed-book answer rejects.
Other outcomes: `judge_failure` (an N/A or unusable judgment for this candidate), `endpoint_failure`
(the search endpoint failed or answered in the wrong shape for this candidate), `known` (its task key
is in `known_keys`: an earlier refresh registered it or decided it; no filter is run again, so a
re-run registers nothing twice and asks the judge nothing new) and `duplicate` (the same query,
up to case and spacing, came earlier in this run). Every candidate is returned with whatever outcomes
it reached; failures that happen before there is a candidate (the news endpoint for a subtopic, the
persona-query judgment for a headline) are `GenerationProblem`s of the `GenerationResult`.

Endpoints (JSON over HTTP through `fetch.api.JsonApi`, i.e. our `LiveFetcher` with its URL safety,
politeness, byte cap and retries):
- news, NewsAPI-compatible:
  `GET <news_url>?q=<subtopic>&sortBy=publishedAt&pageSize=<headlines_per_subtopic>`
  -> `{"articles": [{"title": str, "url": str, "publishedAt": str, "description": str?}, ...]}`
  (articles without a title or an http(s) url are skipped; `{"status": "error", "message": ...}`
  is a failure);
- search, SearXNG-compatible: `GET <search_url>?q=<query>&format=json`
  -> `{"results": [{"url": str, "title": str, "content": str}, ...]}`.
An optional `ApiKey(param, value)` per endpoint is sent as one more query parameter; its value never
appears in a repr, a candidate, a problem or an error text (it is replaced by `***`).

Distinct domains use a simple registered-domain rule: the last two labels of the host name
(`news.example.org` and `www.example.org` are both `example.org`; an IP address is its own domain).
Its limit: under multi-label public suffixes it merges different sites (`a.co.uk` and `b.co.uk` are
both `co.uk`), so the filter can only be stricter than a public-suffix-list rule, never looser.

The templates' response models are in `generation_models`; the offline handlers of the four
templates (the `heuristic` judge's baseline) are in `generation_offline`.
"""
from __future__ import annotations

import hashlib
import ipaddress
import logging
from dataclasses import dataclass, field
from typing import Any, Collection, Literal, Mapping, Sequence
from urllib.parse import urlsplit

from pydantic import BaseModel, ValidationError

from ....core.keys import task_key
from ....fetch.api import ApiError, JsonApi, with_params
from ....core.models import Task
from ....judges.base import Judge, Judgment, JudgmentRequest
from ....judges.prompts import fence_untrusted
from .candidates import Candidate
from .filter_rates import FilterRate, filter_rates
from .generation_models import Adequacy, ClosedBookAnswer, Necessity, PersonaQueries
from .personas import assign_personas
from .query_selection import DEFAULT_CHOOSE, DEFAULT_KEEP, select

log = logging.getLogger(__name__)

BENCHMARK = "miroeval"
MIN_SEARCH_RESULTS = 3
MIN_SEARCH_DOMAINS = 2
KEPT_SEARCH_RESULTS = 10  # results stored on the candidate (all valid ones are counted)
KEPT_SNIPPET_CHARS = 500
DEFAULT_LABELS = {"asset": "live_query_generation"}


# --- data ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ApiKey:
    """An endpoint key sent as query parameter `param`; the value is kept out of reprs and texts."""

    param: str
    value: str = field(repr=False)

    def redact(self, text: str) -> str:
        return text.replace(self.value, "***") if self.value else text


@dataclass(frozen=True)
class Headline:
    topic: str
    subtopic: str
    title: str
    url: str
    published_at: str
    description: str = ""
    number: int = 0  # its place among the subtopic's headlines (which personas it is asked from)


@dataclass(frozen=True)
class GenerationProblem:
    """A failure before any candidate existed: the news endpoint for a subtopic (`stage="news"`) or
    the persona-query judgment for one headline (`stage="persona_queries"`)."""

    topic: str
    subtopic: str
    stage: Literal["news", "persona_queries"]
    detail: str
    headline: str = ""


@dataclass
class GenerationResult:
    candidates: list[Candidate]
    problems: list[GenerationProblem]

    @property
    def tasks(self) -> list[Task]:
        return [c.task for c in self.candidates if c.task is not None]

    def filter_rates(self) -> list[FilterRate]:
        return filter_rates(self.candidates)

    def counts(self) -> dict[str, int]:
        """Candidates, accepted, kept and chosen ones, rejections per reason and problems (for run
        metadata)."""
        counts = {"candidates": len(self.candidates), "accepted": sum(c.accepted for c in self.candidates),
                  "kept": sum(c.kept for c in self.candidates), "chosen": sum(c.chosen for c in self.candidates),
                  "problems": len(self.problems)}
        for candidate in self.candidates:
            if candidate.rejected_by:
                counts[f"rejected_{candidate.rejected_by}"] = counts.get(f"rejected_{candidate.rejected_by}", 0) + 1
        return counts


# --- the pipeline ----------------------------------------------------------------------------------

def generate_queries(news: JsonApi, news_url: str, search: JsonApi, search_url: str, judge: Judge,
                     topics: Mapping[str, Sequence[str]], headlines_per_subtopic: int = 5,
                     queries_per_headline: int = 1, known_keys: Collection[str] | Mapping[str, str] = frozenset(),
                     *, keep: int = DEFAULT_KEEP, choose: int = DEFAULT_CHOOSE, news_key: ApiKey | None = None,
                     search_key: ApiKey | None = None, labels: Mapping[str, str] | None = None) -> GenerationResult:
    """Headlines for every (topic, subtopic), candidate queries from the judge, the three filters,
    then the selection (`keep`, `choose`).

    Never raises for one bad endpoint answer or judgment; see the module docstring for what each
    outcome means. Judge calls are batched per stage (`judge.judge_many`); `labels` go to the ledger.
    `known_keys` may map each key to what an earlier refresh did with it (the `known` detail).
    """
    if headlines_per_subtopic < 1 or queries_per_headline < 1:
        raise ValueError("headlines_per_subtopic and queries_per_headline must be at least 1")
    labels = dict(labels or DEFAULT_LABELS)
    problems: list[GenerationProblem] = []
    headlines = fetch_headlines(news, news_url, topics, headlines_per_subtopic, problems, news_key)
    candidates = write_candidates(judge, headlines, queries_per_headline, problems, labels)
    _skip_known_and_duplicates(candidates, known_keys)
    search_filter(search, search_url, [c for c in candidates if c.pending], search_key)
    necessity_filter(judge, [c for c in candidates if c.pending], labels)
    inverse_quality_filter(judge, [c for c in candidates if c.pending], labels)
    for candidate in candidates:
        if candidate.pending:
            candidate.accepted = True
    select(candidates, keep, choose)
    for candidate in candidates:
        if candidate.chosen:
            candidate.task = task_for(candidate, judge.judge_id)
    result = GenerationResult(candidates, problems)
    log.info("live query generation: %s", result.counts())
    return result


def fetch_headlines(news: JsonApi, news_url: str, topics: Mapping[str, Sequence[str]], per_subtopic: int,
                    problems: list[GenerationProblem], key: ApiKey | None = None) -> list[Headline]:
    pairs = [(topic, subtopic) for topic, subtopics in topics.items() for subtopic in subtopics]
    urls = [_url(news_url, {"q": subtopic, "sortBy": "publishedAt", "pageSize": per_subtopic}, key)
            for _, subtopic in pairs]
    headlines: list[Headline] = []
    for (topic, subtopic), answer in zip(pairs, _get_each(news, urls, key)):
        found, detail = _parse_articles(answer, topic, subtopic, per_subtopic)
        if detail:
            problems.append(GenerationProblem(topic, subtopic, "news", detail))
        headlines.extend(found)
    return headlines


def write_candidates(judge: Judge, headlines: Sequence[Headline], per_headline: int,
                     problems: list[GenerationProblem], labels: Mapping[str, str]) -> list[Candidate]:
    assigned = [assign_personas(h.topic, h.number, per_headline) for h in headlines]
    requests = [JudgmentRequest("miroeval/persona_queries", {
        "topic": h.topic, "subtopic": h.subtopic, "headline": fence_untrusted(h.title),
        "description": fence_untrusted(h.description or "(none)"), "published_at": h.published_at or "unknown",
        "count": per_headline, "personas": "\n".join(f"- {p}" for p in personas)}, PersonaQueries, labels)
        for h, personas in zip(headlines, assigned)]
    candidates = []
    for headline, personas, outcome in zip(headlines, assigned, _judge_all(judge, requests)):
        if isinstance(outcome, str):
            problems.append(GenerationProblem(headline.topic, headline.subtopic, "persona_queries", outcome,
                                              headline.title))
            continue
        seen: set[str] = set()
        for number, item in enumerate(outcome.queries):
            query = " ".join(item.query.split())
            if not query or _normal(query) in seen:
                continue
            seen.add(_normal(query))
            persona = _persona_of(item.persona, personas, number)
            candidates.append(Candidate(
                topic=headline.topic, subtopic=headline.subtopic, headline=headline.title,
                headline_url=headline.url, published_at=headline.published_at, persona=persona, query=query,
                headline_description=headline.description, task_key=live_task_key(query)))
            if len(seen) == per_headline:
                break
        if not seen:
            problems.append(GenerationProblem(headline.topic, headline.subtopic, "persona_queries",
                                              "the judge wrote no queries", headline.title))
    return candidates


def search_filter(search: JsonApi, search_url: str, candidates: Sequence[Candidate],
                  key: ApiKey | None = None) -> None:
    urls = [_url(search_url, {"q": c.query, "format": "json"}, key) for c in candidates]
    for candidate, answer in zip(candidates, _get_each(search, urls, key)):
        if isinstance(answer, _Failure):
            candidate.reject("endpoint_failure", f"search: {answer.detail}")
            continue
        results = answer.get("results") if isinstance(answer, dict) else None
        if not isinstance(results, list):
            candidate.reject("endpoint_failure", "search: the answer has no 'results' list")
            continue
        valid = [r for r in results if isinstance(r, dict) and registered_domain(str(r.get("url") or ""))]
        candidate.n_search_results = len(valid)
        candidate.distinct_domains = len({registered_domain(str(r["url"])) for r in valid})
        candidate.search_results = [{"url": str(r["url"]), "title": str(r.get("title") or ""),
                                     "content": str(r.get("content") or "")[:KEPT_SNIPPET_CHARS]}
                                    for r in valid[:KEPT_SEARCH_RESULTS]]
        candidate.passed_search = (candidate.n_search_results >= MIN_SEARCH_RESULTS
                                   and candidate.distinct_domains >= MIN_SEARCH_DOMAINS)
        if not candidate.passed_search:
            candidate.reject("search", f"{candidate.n_search_results} result(s) from "
                                       f"{candidate.distinct_domains} domain(s)")


def necessity_filter(judge: Judge, candidates: Sequence[Candidate], labels: Mapping[str, str]) -> None:
    requests = [JudgmentRequest("miroeval/research_necessity", _context(c), Necessity, labels) for c in candidates]
    for candidate, outcome in zip(candidates, _judge_all(judge, requests)):
        if isinstance(outcome, str):
            candidate.reject("judge_failure", f"research_necessity: {outcome}")
            continue
        candidate.needs_external, candidate.necessity_reason = outcome.needs_external_sources, outcome.reason
        if not outcome.needs_external_sources:
            candidate.reject("necessity", outcome.reason)


def inverse_quality_filter(judge: Judge, candidates: Sequence[Candidate], labels: Mapping[str, str]) -> None:
    requests = [JudgmentRequest("miroeval/closed_book_answer", {"query": fence_untrusted(c.query)}, ClosedBookAnswer,
                                labels) for c in candidates]
    answered = []
    for candidate, outcome in zip(candidates, _judge_all(judge, requests)):
        if isinstance(outcome, str):
            candidate.reject("judge_failure", f"closed_book_answer: {outcome}")
        else:
            candidate.closed_book_answer = outcome.answer
            answered.append(candidate)
    requests = [JudgmentRequest("miroeval/answer_adequacy",
                                {**_context(c), "answer": fence_untrusted(c.closed_book_answer or "")},
                                Adequacy, labels) for c in answered]
    for candidate, outcome in zip(answered, _judge_all(judge, requests)):
        if isinstance(outcome, str):
            candidate.reject("judge_failure", f"answer_adequacy: {outcome}")
            continue
        candidate.adequate, candidate.adequacy_reason = outcome.adequate, outcome.reason
        if outcome.adequate:
            candidate.reject("inverse_quality", f"the closed-book answer is adequate: {outcome.reason}")


def live_task_id(query: str) -> str:
    """`live-<16 hex>`: a hash of the query, ignoring case and spacing, so re-runs give the same id."""
    return "live-" + hashlib.sha256(_normal(query).encode("utf-8")).hexdigest()[:16]


def live_task_key(query: str) -> str:
    return task_key(BENCHMARK, live_task_id(query))


def task_for(candidate: Candidate, generator: str = "") -> Task:
    attributes = {"origin": "live", "topic": candidate.topic, "subtopic": candidate.subtopic,
                  "persona": candidate.persona, "headline": candidate.headline,
                  "headline_url": candidate.headline_url, "published_at": candidate.published_at}
    if generator:
        attributes["generator"] = generator
    return Task(key=live_task_key(candidate.query), benchmark=BENCHMARK, original_id=live_task_id(candidate.query),
                query=candidate.query, language="en", domain=candidate.topic, attributes=attributes)


def registered_domain(url: str) -> str:
    """The last two labels of an http(s) URL's host ('' when there is no usable host); see the module
    docstring for the limit of this rule."""
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").rstrip(".").lower()
    except ValueError:
        return ""
    if parts.scheme.lower() not in ("http", "https") or not host:
        return ""
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    labels = [label for label in host.split(".") if label]
    return ".".join(labels[-2:])


# --- helpers ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Failure:
    detail: str


def _url(base: str, params: dict[str, Any], key: ApiKey | None) -> str:
    if key is not None and key.value:
        params = {**params, key.param: key.value}
    return with_params(base, params)


def _get_each(api: JsonApi, urls: Sequence[str], key: ApiKey | None) -> list[Any]:
    """Parsed JSON per URL, or a `_Failure` for that URL alone (its text with the key redacted)."""
    redact = key.redact if key else (lambda text: text)
    return [_Failure(redact(str(answer))) if isinstance(answer, ApiError) else answer
            for answer in api.get_each(urls)]


def _parse_articles(answer: Any, topic: str, subtopic: str, limit: int) -> tuple[list[Headline], str]:
    if isinstance(answer, _Failure):
        return [], answer.detail
    if not isinstance(answer, dict):
        return [], "the news answer is not a JSON object"
    if answer.get("status") == "error":
        return [], f"the news endpoint reported an error: {str(answer.get('message') or '')[:200]}"
    articles = answer.get("articles")
    if not isinstance(articles, list):
        return [], "the news answer has no 'articles' list"
    headlines = []
    for article in articles:
        if not isinstance(article, dict):
            continue
        title, url = " ".join(str(article.get("title") or "").split()), str(article.get("url") or "").strip()
        if not title or not registered_domain(url):
            continue
        headlines.append(Headline(topic, subtopic, title, url, str(article.get("publishedAt") or ""),
                                  " ".join(str(article.get("description") or "").split()), len(headlines)))
        if len(headlines) == limit:
            break
    return headlines, "" if headlines else "no usable headlines (each needs a title and an http(s) url)"


def _judge_all(judge: Judge, requests: list[JudgmentRequest]) -> list[BaseModel | str]:
    """Each request's validated answer, or a string saying why there is none."""
    if not requests:
        return []
    try:
        judgments = list(judge.judge_many(requests))
    except Exception as exc:  # the protocol says it never raises; a broken judge still must not sink the run
        judgments = []
        failure = f"the judge raised {type(exc).__name__}: {exc}"
    else:
        failure = f"the judge returned {len(judgments)} judgments for {len(requests)} requests"
    if len(judgments) != len(requests):
        return [failure] * len(requests)
    return [_validated(request, judgment) for request, judgment in zip(requests, judgments)]


def _validated(request: JudgmentRequest, judgment: Judgment) -> BaseModel | str:
    if judgment is None or judgment.answer is None:
        reason = getattr(judgment, "na_reason", None) or "no answer"
        error = getattr(judgment, "error", "")
        return f"{reason}: {error}" if error else str(reason)
    answer = judgment.answer
    if isinstance(answer, request.response_model):
        return answer
    try:
        data = answer.model_dump() if isinstance(answer, BaseModel) else answer
        return request.response_model.model_validate(data)
    except ValidationError as exc:
        return f"unusable answer for {request.response_model.__name__}: {exc.error_count()} validation error(s)"


def _context(candidate: Candidate) -> dict[str, Any]:
    return {"query": fence_untrusted(candidate.query), "headline": fence_untrusted(candidate.headline),
            "description": fence_untrusted(candidate.headline_description or "(none)"),
            "published_at": candidate.published_at or "unknown"}


def _normal(query: str) -> str:
    return " ".join(query.split()).casefold()


def _persona_of(written: str, assigned: Sequence[str], number: int) -> str:
    """The assigned persona the judge wrote for: the one it names, else the one in its place in the
    list (the prompt asks for that order); what it wrote only when it wrote more than it was asked."""
    named = next((p for p in assigned if _normal(p) == _normal(written)), None)
    if named is not None:
        return named
    return assigned[number] if number < len(assigned) else " ".join(written.split())


def _skip_known_and_duplicates(candidates: Sequence[Candidate],
                              known_keys: Collection[str] | Mapping[str, str]) -> None:
    details = known_keys if isinstance(known_keys, Mapping) else {}
    known = set(known_keys)
    first_of: dict[str, int] = {}
    for number, candidate in enumerate(candidates):
        if candidate.task_key in known:
            candidate.reject("known", details.get(candidate.task_key) or "an earlier run already made this task")
        elif candidate.task_key in first_of:
            candidate.reject("duplicate", f"the same query as candidate {first_of[candidate.task_key]}")
        else:
            first_of[candidate.task_key] = number
