"""Live fetching throughput against loopback servers with 100 ms latency (no real network).

    python bench/bench_fetch.py

500 distinct URLs spread over 100 loopback hosts (127.0.0.1 .. 127.0.0.100, as cited pages spread
over many sites; served from a separate process), fetched sequentially and then with the default limits (32 in flight, 4 per host,
0.2 s politeness per host) through the chain with a pages store; then the same URLs again, which
must make zero requests.
"""
from __future__ import annotations

import multiprocessing
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import httpx  # noqa: E402
from loopback_web import LoopbackWeb, page, send  # noqa: E402

from dreval_assets.fetch.chain import ChainFetcher  # noqa: E402
from dreval_assets.fetch.live import LiveFetchConfig, LiveFetcher  # noqa: E402
from dreval_assets.fetch.safety import AllowList  # noqa: E402
from dreval_assets.store.db import Store  # noqa: E402
from dreval_assets.store.pages import PageStore  # noqa: E402

HOSTS, PER_HOST, LATENCY_S = 100, 5, 0.1
PARAGRAPHS = [
    "The Lowmarsh ferry carried {n} passengers in 2023, up from 36,900 in 2022, according to the operator's note.",
    "Estuary Links added a third vessel named Curlew in March 2023, which allowed a half-hourly summer timetable.",
    "Average crossing time fell to 14 minutes after the new pier opened at Saltcote in the autumn of that year.",
    "Fares rose by 4 percent in April, the first increase since 2019, while season tickets were frozen for residents.",
    "The council's transport committee expects demand to reach 50,000 crossings a year by 2027 if tourism recovers.",
    "Engineers replaced the slipway at Lowmarsh quay in January, closing the route for nine days of works.",
]


def article(n: int) -> str:
    body = "".join(f"<p>{p.format(n=40_000 + n)} {p.format(n=41_000 + n)}</p>" for p in PARAGRAPHS * 4)
    return (f"<html><head><title>Ferry note {n}</title></head><body><nav>Home | News | Transport</nav>"
            f"<article><h1>Ferry note {n}</h1>{body}</article><footer>Contact us</footer></body></html>")


def serve(addresses, stop) -> None:
    """Child process: the web servers, so their threads do not compete with the fetcher for the GIL."""
    with ExitStack() as stack:
        servers = [stack.enter_context(LoopbackWeb(host=f"127.0.0.{i}", latency_s=LATENCY_S)) for i in range(1, HOSTS + 1)]
        for index, server in enumerate(servers):
            server.route("*", page(article(index)))
            server.route("/__hits", lambda h, s=server: send(h, 200, str(s.total_hits - s.hits["/__hits"]).encode(), "text/plain"))
        addresses.put([s.address for s in servers])
        stop.wait()


def hits(addresses) -> int:
    return sum(int(httpx.get(f"http://{a}/__hits").text) for a in addresses)


def main() -> None:
    context = multiprocessing.get_context("spawn")
    queue, stop = context.Queue(), context.Event()
    server_process = context.Process(target=serve, args=(queue, stop), daemon=True)
    server_process.start()
    addresses = queue.get(timeout=60)
    try:
        run(addresses)
    finally:
        stop.set()
        server_process.join(timeout=10)


def run(addresses: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        allow = AllowList(frozenset(addresses))
        urls = [f"http://{a}/page-{n}" for a in addresses for n in range(PER_HOST)]

        sequential = LiveFetcher(LiveFetchConfig(global_concurrency=1, per_host_concurrency=1, politeness_s=0), allow)
        started = time.perf_counter()
        assert all(r.status == "ok" for r in sequential.fetch_many(urls))
        sequential_s = time.perf_counter() - started

        store = Store(Path(tmp) / "pages.duckdb")
        store.ensure_schema()
        before = hits(addresses)
        chain = ChainFetcher(pages=PageStore(store), live=LiveFetcher(LiveFetchConfig(), allow))
        started = time.perf_counter()
        assert all(r.status == "ok" for r in chain.fetch_many(urls, []))
        concurrent_s = time.perf_counter() - started
        first_requests = hits(addresses) - before

        before = hits(addresses)
        started = time.perf_counter()
        again = ChainFetcher(pages=PageStore(store), live=LiveFetcher(LiveFetchConfig(), allow)).fetch_many(urls, [])
        cached_s = time.perf_counter() - started
        assert all(r.backend == "cache" for r in again)
        second_requests = hits(addresses) - before

    print(f"{len(urls)} URLs on {HOSTS} hosts, {LATENCY_S * 1000:.0f} ms latency")
    print(f"sequential: {sequential_s:.2f} s; concurrent (defaults) with pages store: {concurrent_s:.2f} s "
          f"({first_requests} requests) -> {sequential_s / concurrent_s:.1f}x faster")
    print(f"second run: {second_requests} requests, {cached_s:.2f} s (all from the pages store)")


if __name__ == "__main__":
    main()
