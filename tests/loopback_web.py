"""A loopback web server with the behaviours a fetcher meets on the real web (for tests and bench).

Routes are registered as `server.route(path, handler)`; a handler gets the request handler object and
writes the response itself, or use the helpers `page(...)`, `redirect(...)`, etc. Every request is
counted per path in `server.hits`.
"""
from __future__ import annotations

import gzip
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

from pdf_fixture import make_pdf, wrap

Handler = Callable[[BaseHTTPRequestHandler], None]


class LoopbackWeb:
    def __init__(self, host: str = "127.0.0.1", latency_s: float = 0.0):
        self.routes: dict[str, Handler] = {}
        self.hits: Counter = Counter()
        self.latency_s = latency_s
        self._lock = threading.Lock()
        web = self

        class RequestHandler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as two writes: no 40 ms delayed-ACK stall

            def do_GET(self):  # noqa: N802 - http.server's naming
                path = self.path.split("?")[0]
                with web._lock:
                    web.hits[path] += 1
                if web.latency_s:
                    time.sleep(web.latency_s)
                handler = web.routes.get(path) or web.routes.get("*")
                if handler is None:
                    send(self, 404, b"<html><body><h1>404 Not Found</h1></body></html>", "text/html")
                    return
                try:
                    handler(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client hung up on purpose (byte cap, timeout)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer((host, 0), RequestHandler)
        self._server.daemon_threads = True
        self.host, self.port = self._server.server_address[:2]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        kwargs={"poll_interval": 0.05})  # shutdown waits one poll

    def route(self, path: str, handler: Handler) -> "LoopbackWeb":
        self.routes[path] = handler
        return self

    def url(self, path: str) -> str:
        return f"http://{self.host}:{self.port}{path}"

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def total_hits(self) -> int:
        return sum(self.hits.values())

    def __enter__(self) -> "LoopbackWeb":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


def send(h: BaseHTTPRequestHandler, status: int, body: bytes, content_type: str | None,
         headers: dict[str, str] | None = None) -> None:
    h.send_response(status)
    if content_type:
        h.send_header("Content-Type", content_type)
    for name, value in (headers or {}).items():
        h.send_header(name, value)
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


def page(body: bytes | str, content_type: str | None = "text/html; charset=utf-8", status: int = 200,
         headers: dict[str, str] | None = None) -> Handler:
    data = body.encode("utf-8") if isinstance(body, str) else body
    return lambda h: send(h, status, data, content_type, headers)


def redirect(location: str, status: int = 302) -> Handler:
    return lambda h: send(h, status, b"", None, {"Location": location})


def gzipped(html: str) -> Handler:
    data = gzip.compress(html.encode("utf-8"))
    return lambda h: send(h, 200, data, "text/html; charset=utf-8", {"Content-Encoding": "gzip"})


def huge(total_bytes: int, chunk: int = 1 << 16) -> Handler:
    """A body of `total_bytes`, generated as it is sent (the server never holds it)."""
    def handle(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/plain; charset=utf-8")
        h.send_header("Content-Length", str(total_bytes))
        h.end_headers()
        line = b"The Lowmarsh ferry carried 41,200 passengers in 2023. " * (chunk // 54)
        sent = 0
        while sent < total_bytes:
            piece = line[: min(len(line), total_bytes - sent)]
            h.wfile.write(piece)
            sent += len(piece)
    return handle


def slow(seconds: float, then: Handler) -> Handler:
    def handle(h: BaseHTTPRequestHandler) -> None:
        time.sleep(seconds)
        then(h)
    return handle


def drip(interval_s: float, total: int = 10_000) -> Handler:
    """Headers at once, then one byte per interval: every read succeeds, the page never ends."""
    def handle(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Content-Length", str(total))
        h.end_headers()
        for _ in range(total):
            h.wfile.write(b"x")
            h.wfile.flush()
            time.sleep(interval_s)
    return handle


def sequence(*handlers: Handler) -> Handler:
    """The n-th request gets the n-th handler; later ones get the last."""
    calls = [0]
    lock = threading.Lock()

    def handle(h: BaseHTTPRequestHandler) -> None:
        with lock:
            index = min(calls[0], len(handlers) - 1)
            calls[0] += 1
        handlers[index](h)
    return handle


def minimal_pdf(text: str) -> bytes:
    """A one-page PDF holding `text`, 80 characters a line."""
    return make_pdf(wrap(text))
