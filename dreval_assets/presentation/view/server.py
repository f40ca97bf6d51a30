"""`dreval view`: the pages served on loopback by uvicorn. Each request reads the published copy
afresh (read-only), so a run that publishes a new copy shows on the next reload and is never blocked."""
from __future__ import annotations

import errno
import socket
import threading

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from .pages import Site

HOST = "127.0.0.1"
# the page's own policy again as a header; an image opened on its own (an SVG) runs nothing either
PAGE_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
IMAGE_HEADERS = {**PAGE_HEADERS, "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox"}


def application(site: Site) -> Starlette:
    lock = threading.Lock()  # one page at a time: the site holds one connection while it renders

    def render(path: str):
        with lock:
            return site.page(path)

    async def serve(request: Request) -> Response:
        page = await run_in_threadpool(render, request.path_params["path"])
        if page is None:
            return PlainTextResponse("no such page", status_code=404, headers=PAGE_HEADERS)
        headers = PAGE_HEADERS if page.media_type.startswith("text/html") else IMAGE_HEADERS
        return Response(page.body, media_type=page.media_type, headers=headers)

    return Starlette(routes=[Route("/{path:path}", serve, methods=["GET", "HEAD"])])


def bind(port: int) -> tuple[socket.socket, bool]:
    """A listening socket on loopback: the given port, or a free one when it is taken (and say so)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
        moved = False
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE or port == 0:
            raise
        sock.bind((HOST, 0))
        moved = True
    sock.listen(64)
    return sock, moved


def serve(site: Site, sock: socket.socket) -> None:
    """Serve until interrupted."""
    import uvicorn

    config = uvicorn.Config(application(site), log_level="warning", lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
