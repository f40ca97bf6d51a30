"""Live fetching with httpx: safe, polite, bounded, retried. One FetchResult per URL, never raises.

Every hop (the first request and each redirect) is checked by `safety.resolve_target` and the
connection goes to the checked address (Host header and TLS SNI keep the real name), so a DNS answer
cannot change between the check and the connection. Bodies are streamed and cut at `max_bytes`
(decoded size, so compression bombs are cut too); each URL also has a total deadline, counted from
its first request (not from when it joined the queue), so a server that drips bytes cannot hold a
slot forever and a long queue does not time URLs out before they start.
"""
from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Mapping, Sequence
from urllib.parse import urljoin

import httpx

from ..core.backoff import backoff_seconds, retry_after_seconds
from ..core.models import FetchResult, SandboxPage
from ..environment import env_float, env_int
from .extract import extract_page
from .safety import AllowList, Resolver, Target, UnsafeURLError, resolve_target, system_resolver

REDIRECT_STATUSES = {301, 302, 303, 307, 308}
RETRY_STATUSES = {429, 500, 502, 503, 504}
USER_AGENT = "dreval/0.1 (evaluation of research reports; fetches each cited page once)"
ACCEPT = "text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8,application/json;q=0.8,*/*;q=0.1"


@dataclass(frozen=True)
class LiveFetchConfig:
    global_concurrency: int = 32
    per_host_concurrency: int = 4
    politeness_s: float = 0.2  # minimum gap between request starts to one host
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 20.0
    total_timeout_s: float = 60.0  # per URL, all hops and retries included
    max_redirects: int = 5
    max_bytes: int = 10_000_000
    max_attempts: int = 3
    backoff_base_s: float = 0.5
    backoff_cap_s: float = 30.0
    user_agent: str = USER_AGENT
    # Text extraction is CPU work; for large fetches it runs in worker processes (spawned, not
    # forked: the parent may hold threads) so it overlaps with the network instead of stalling it.
    extract_workers: int = max(1, (os.cpu_count() or 2) - 1)
    pool_min_urls: int = 64

    @classmethod
    def from_env(cls) -> "LiveFetchConfig":
        return cls(
            global_concurrency=env_int("DREVAL_FETCH_CONCURRENCY", 32, minimum=1),
            per_host_concurrency=env_int("DREVAL_FETCH_PER_HOST", 4, minimum=1),
            politeness_s=env_float("DREVAL_FETCH_POLITENESS", 0.2),
            total_timeout_s=env_float("DREVAL_FETCH_TIMEOUT", 60.0),
            max_bytes=env_int("DREVAL_FETCH_MAX_BYTES", 10_000_000, minimum=1024),
            max_redirects=env_int("DREVAL_FETCH_MAX_REDIRECTS", 5, minimum=0),
            max_attempts=env_int("DREVAL_FETCH_MAX_ATTEMPTS", 3, minimum=1),
            # Wikimedia's policy asks for a way to reach the operator: set one with a URL or e-mail in it
            user_agent=os.environ.get("DREVAL_FETCH_USER_AGENT") or USER_AGENT,
        )


class _Retryable(Exception):
    def __init__(self, message: str, wait_hint: float | None = None, status: int | None = None):
        super().__init__(message)
        self.wait_hint = wait_hint
        self.status = status


class _DeadlineExceeded(Exception):
    pass


@dataclass
class _Deadline:
    """Time left for one URL, counted from its first request."""

    total_s: float
    started: float | None = None

    def remaining(self) -> float:
        if self.started is None:
            self.started = time.monotonic()
        left = self.total_s - (time.monotonic() - self.started)
        if left <= 0:
            raise _DeadlineExceeded()
        return left


@dataclass(frozen=True)
class RawBody:
    """An answer as received; `detail` is empty exactly when it is a complete 2xx answer."""

    url: str
    status: int | None
    content_type: str | None
    data: bytes
    detail: str
    headers: Mapping[str, str] = field(default_factory=dict)  # of the final answer (Retry-After, MediaWiki-API-Error)

    @property
    def ok(self) -> bool:
        return not self.detail


@dataclass
class _Body:
    url: str
    status: int
    content_type: str | None = None
    data: bytes = b""
    truncated: bool = False
    location: str | None = None  # where a redirect points
    headers: Mapping[str, str] = field(default_factory=dict)


class LiveFetcher:
    name = "live"

    def __init__(self, config: LiveFetchConfig = LiveFetchConfig(), allow: AllowList = AllowList(),
                 resolver: Resolver = system_resolver, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        self.config = config
        self.allow = allow
        self.resolver = resolver
        self.requests_sent = 0
        # When each host may next be asked. Kept by the fetcher, not per batch of URLs: a client that
        # asks one URL at a time (a MediaWiki refresh) must keep the gap between its calls too.
        self._next_start: dict[str, float] = {}
        self._clock, self._sleep = clock, sleep  # injectable, so tests check the gaps without waiting

    def fetch_many(self, urls: Sequence[str], sandbox: Sequence[SandboxPage] = ()) -> list[FetchResult]:
        return asyncio.run(self.fetch_all(urls)) if urls else []

    async def fetch_all(self, urls: Sequence[str]) -> list[FetchResult]:
        c = self.config
        use_pool = c.extract_workers > 0 and len(urls) >= c.pool_min_urls
        self._pool = ProcessPoolExecutor(c.extract_workers, mp_context=multiprocessing.get_context("spawn")) \
            if use_pool else None
        try:
            async with self._client() as client:
                return list(await asyncio.gather(*(self._fetch_one(client, url) for url in urls)))
        finally:
            if self._pool:
                self._pool.shutdown(cancel_futures=True)

    def fetch_bodies(self, urls: Sequence[str]) -> list[RawBody]:
        """The raw bodies (API answers: JSON, feeds) with the same safety, limits and retries as
        pages, and no text extraction. Never raises."""
        return asyncio.run(self._bodies(urls)) if urls else []

    async def _bodies(self, urls: Sequence[str]) -> list[RawBody]:
        async with self._client() as client:
            return list(await asyncio.gather(*(self._body_one(client, url) for url in urls)))

    async def _body_one(self, client: httpx.AsyncClient, url: str) -> RawBody:
        attempts = [0]
        try:
            body = await self._follow(client, url, attempts, _Deadline(self.config.total_timeout_s))
        except UnsafeURLError as exc:
            return RawBody(url, None, None, b"", f"refused: {exc}")
        except _DeadlineExceeded:
            return RawBody(url, None, None, b"", f"no complete answer within {self.config.total_timeout_s:.0f}s")
        except _Retryable as exc:
            return RawBody(url, exc.status, None, b"", f"gave up after {attempts[0]} attempt(s): {exc}")
        except httpx.HTTPError as exc:
            return RawBody(url, None, None, b"", f"{type(exc).__name__}: {exc}")
        if body.truncated:
            return RawBody(url, body.status, body.content_type, b"", f"answer larger than {self.config.max_bytes} bytes")
        detail = "" if 200 <= body.status < 300 else f"HTTP {body.status}"
        return RawBody(url, body.status, body.content_type, body.data, detail, body.headers)

    @contextlib.asynccontextmanager
    async def _client(self):
        """One client with this fetcher's limits; the per-host and global slots live as long as it."""
        c = self.config
        timeout = httpx.Timeout(c.read_timeout_s, connect=c.connect_timeout_s)
        limits = httpx.Limits(max_connections=c.global_concurrency, max_keepalive_connections=c.global_concurrency)
        self._global = asyncio.Semaphore(c.global_concurrency)
        self._hosts: dict[str, tuple[asyncio.Semaphore, asyncio.Lock]] = {}
        async with httpx.AsyncClient(timeout=timeout, limits=limits, follow_redirects=False, trust_env=False) as client:
            yield client

    async def _fetch_one(self, client: httpx.AsyncClient, url: str) -> FetchResult:
        attempts = [0]
        deadline = _Deadline(self.config.total_timeout_s)
        try:
            body = await self._follow(client, url, attempts, deadline)
        except UnsafeURLError as exc:
            return _unknown(url, f"refused: {exc}", attempts[0])
        except _DeadlineExceeded:
            return _unknown(url, f"no complete answer within {self.config.total_timeout_s:.0f}s", attempts[0])
        except _Retryable as exc:
            return _unknown(url, f"gave up after {attempts[0]} attempt(s): {exc}", attempts[0], exc.status)
        except httpx.HTTPError as exc:
            return _unknown(url, f"{type(exc).__name__}: {exc}", attempts[0])
        if not 200 <= body.status < 300:
            return _unknown(url, f"HTTP {body.status}", attempts[0], body.status, final_url=body.url)
        page = await self._extract(body)
        common = dict(url=url, backend=self.name, final_url=body.url, http_status=body.status,
                      content_type=page.content_type, charset=page.charset, title=page.title,
                      n_bytes=len(body.data), truncated=body.truncated, attempts=attempts[0])
        if page.status != "ok":
            return FetchResult(status="unknown", na_reason="data_accessibility", blocked=page.blocked,
                               detail=page.detail, **common)
        detail = f"body cut at {self.config.max_bytes} bytes" if body.truncated else ""
        return FetchResult(status="ok", text=page.text, detail=detail, **common)

    async def _extract(self, body: _Body):
        if self._pool is None:
            return extract_page(body.data, body.content_type, body.url, body.truncated)
        return await asyncio.get_running_loop().run_in_executor(
            self._pool, extract_page, body.data, body.content_type, body.url, body.truncated)

    async def _follow(self, client: httpx.AsyncClient, url: str, attempts: list[int], deadline: _Deadline) -> _Body:
        current = url
        for _ in range(self.config.max_redirects + 1):
            target = await resolve_target(current, self.allow, self.resolver)
            body = await self._get_with_retries(client, target, attempts, deadline)
            if body.location is None:
                return body
            current = urljoin(current, body.location)
        raise UnsafeURLError(f"more than {self.config.max_redirects} redirects")

    async def _get_with_retries(self, client: httpx.AsyncClient, target: Target, attempts: list[int],
                                deadline: _Deadline) -> _Body:
        for attempt in range(1, self.config.max_attempts + 1):
            attempts[0] += 1
            try:
                return await self._get(client, target, deadline)
            except _Retryable as exc:
                if attempt == self.config.max_attempts:
                    raise
                wait = exc.wait_hint if exc.wait_hint is not None else backoff_seconds(
                    attempt, self.config.backoff_base_s, self.config.backoff_cap_s)
                if wait > self.config.backoff_cap_s:
                    raise _Retryable(f"{exc}; server asked to wait {wait:.0f}s", status=exc.status) from exc
                if wait >= deadline.remaining():
                    raise _DeadlineExceeded() from exc
                await self._sleep(wait)
        raise AssertionError("unreachable")

    async def _get(self, client: httpx.AsyncClient, target: Target, deadline: _Deadline) -> _Body:
        semaphore, gap_lock = self._hosts.setdefault(
            target.host, (asyncio.Semaphore(self.config.per_host_concurrency), asyncio.Lock()))
        async with semaphore:
            await self._wait_politely(target.host, gap_lock)  # before taking a global slot: waiting is free
            async with self._global:
                try:
                    return await asyncio.wait_for(self._send(client, target), deadline.remaining())
                except asyncio.TimeoutError as exc:
                    raise _DeadlineExceeded() from exc

    async def _send(self, client: httpx.AsyncClient, target: Target) -> _Body:
        """One request: send, then stream the body under the byte cap."""
        request = client.build_request(
            "GET", target.pinned_url,
            headers={"Host": target.host_header, "User-Agent": self.config.user_agent, "Accept": ACCEPT},
            extensions={"sni_hostname": target.host} if target.scheme == "https" else {})
        self.requests_sent += 1
        try:
            response = await client.send(request, stream=True)
        except (httpx.TimeoutException, httpx.NetworkError) as exc:
            raise _Retryable(f"{type(exc).__name__} talking to {target.host}") from exc
        try:
            return await self._read(response, target)
        except (httpx.TimeoutException, httpx.NetworkError) as exc:
            raise _Retryable(f"{type(exc).__name__} reading from {target.host}") from exc
        finally:
            await response.aclose()

    async def _read(self, response: httpx.Response, target: Target) -> _Body:
        status = response.status_code
        if status in RETRY_STATUSES:
            raise _Retryable(f"HTTP {status}", retry_after_seconds(response.headers), status)
        if status in REDIRECT_STATUSES:
            return _Body(target.url, status, location=response.headers.get("location"))
        data, truncated = bytearray(), False
        async for chunk in response.aiter_bytes():
            room = self.config.max_bytes - len(data)
            if len(chunk) > room:
                data += chunk[:room]
                truncated = True
                break
            data += chunk
        return _Body(target.url, status, response.headers.get("content-type"), bytes(data), truncated,
                     headers=dict(response.headers))

    async def _wait_politely(self, host: str, gap_lock: asyncio.Lock) -> None:
        async with gap_lock:
            now = self._clock()
            start = max(now, self._next_start.get(host, now))
            self._next_start[host] = start + self.config.politeness_s
        if start > now:
            await self._sleep(start - now)


def _unknown(url: str, detail: str, attempts: int, status: int | None = None, final_url: str | None = None) -> FetchResult:
    return FetchResult(url=url, status="unknown", backend="live", na_reason="data_accessibility", detail=detail,
                       attempts=attempts, http_status=status, final_url=final_url)
