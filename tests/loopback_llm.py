"""A loopback HTTP server speaking the OpenAI chat-completions protocol.

For tests and benchmarks: point the real ``openai`` client (and ``instructor``
on top of it) at ``LoopbackLLM().base_url`` and get deterministic structured
answers, injectable faults and exact, reproducible token usage -- with no
network and no API key.

Usage::

    with LoopbackLLM(answer=lambda req, schema: {"verdict": "supported"}) as llm:
        client = openai.AsyncOpenAI(base_url=llm.base_url, api_key="x", max_retries=0)
        llm.fail_next(status(429, headers={"Retry-After": "1"}))
        ...

Response shape, chosen from the request:

* ``tools`` present -> one tool call to the requested function (``tool_choice``
  if it names one, else ``tools[0]``) whose ``arguments`` are the answer as a
  JSON string; ``content`` is null; ``finish_reason`` is ``"tool_calls"``.
* else ``response_format`` present (json_object / json_schema) -> ``content``
  is the answer as a JSON string; ``finish_reason`` is ``"stop"``.
* else, when the answer callable returns a ``str`` -> ``content`` is that text
  (a plain chat completion, e.g. a system writing its report);
* else (e.g. instructor's MD_JSON mode) -> ``content`` is the JSON inside a
  fenced ```json block.

``max_tokens`` (or ``max_completion_tokens``) is honoured: an answer longer than it (4 characters
a token) is cut there and ``finish_reason`` is ``"length"``.

Embeddings: ``POST /v1/embeddings`` answers each input with ``hashed_vector`` (a hashed bag of
words, so texts sharing words are near); ``embedding_models`` limits which models embed (others get
a 404); the request is recorded in ``requests`` with ``_path`` and consumes a queued status or delay
fault; ``embeddings_peak`` is the most embedding requests answered at once.

Usage accounting: ``prompt_tokens = ceil(chars of all message contents / 4)``
plus ``IMAGE_TOKENS`` per image part (reported as
``usage.prompt_tokens_details.image_tokens`` when the request has images and
``report_image_tokens`` is on), ``completion_tokens = ceil(len(answer JSON
text) / 4)`` (for a ``raw_content`` fault: the raw text; for MD_JSON: the JSON
without the fences).

Images: a message's content may be a list of parts (``{"type": "text"}`` and
``{"type": "image_url", "image_url": {"url": "data:<mime>;base64,..."}}``).
Each recorded request gets ``_images``: one ``{"sha256", "mime", "n_bytes"}``
per image part, in order, of the decoded bytes (``None`` fields for a part
that is not a base64 data URL); ``image_parts(request)`` gives the decoded
(mime, bytes) to an answer callable.

``record_spans`` (benchmarks): ``spans`` gets (arrived, answered) of each chat request, in
``time.monotonic`` seconds, to tell how busy the endpoint was.

Standard library only.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import socket
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Mapping, Union

__all__ = [
    "LoopbackLLM",
    "Fault",
    "StatusFault",
    "DelayFault",
    "RawContentFault",
    "AnswerOverrideFault",
    "status",
    "delay",
    "raw_content",
    "answer_override",
    "CHAT_PATHS",
    "EMBEDDING_PATHS",
    "hashed_vector",
    "IMAGE_TOKENS",
    "image_parts",
    "message_text",
]

CHAT_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})
EMBEDDING_PATHS = frozenset({"/v1/embeddings", "/embeddings"})
EMBEDDING_DIMENSIONS = 64  # length of the stand-in vectors
IMAGE_TOKENS = 255  # prompt tokens counted per image part (fixed, so tests can add them up)

AnswerFn = Callable[[dict, Union[dict, None]], Any]


# --------------------------------------------------------------------------- faults


@dataclass(frozen=True)
class StatusFault:
    """Reply with HTTP ``code`` and an OpenAI-style error body (or ``body``)."""

    code: int
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Any = None  # dict/list -> JSON-encoded; str/bytes -> sent verbatim; None -> default error


@dataclass(frozen=True)
class DelayFault:
    """Sleep ``seconds`` (on top of ``latency_s``), then answer normally."""

    seconds: float


@dataclass(frozen=True)
class RawContentFault:
    """Answer normally, but with ``text`` verbatim as content / tool-call arguments."""

    text: str


@dataclass(frozen=True)
class AnswerOverrideFault:
    """Answer with ``obj`` instead of calling the ``answer`` callable."""

    obj: Any


Fault = Union[StatusFault, DelayFault, RawContentFault, AnswerOverrideFault]


def status(code: int, headers: Mapping[str, str] | None = None, body: Any = None) -> StatusFault:
    return StatusFault(int(code), dict(headers or {}), body)


def delay(seconds: float) -> DelayFault:
    return DelayFault(float(seconds))


def raw_content(text: str) -> RawContentFault:
    return RawContentFault(str(text))


def answer_override(obj: Any) -> AnswerOverrideFault:
    return AnswerOverrideFault(obj)


# OpenAI-ish (type, code) per status, for the default error body.
_ERROR_KINDS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_denied", None),
    404: ("invalid_request_error", "not_found"),
    408: ("timeout", None),
    409: ("conflict", None),
    422: ("invalid_request_error", None),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    502: ("server_error", None),
    503: ("server_error", "service_unavailable"),
}


def _error_body(code: int, message: str | None = None) -> dict:
    kind, err_code = _ERROR_KINDS.get(code, ("server_error" if code >= 500 else "invalid_request_error", None))
    return {
        "error": {
            "message": message or f"loopback fault: HTTP {code}",
            "type": kind,
            "param": None,
            "code": err_code,
        }
    }


# --------------------------------------------------------------------------- helpers


def hashed_vector(text: str, dimensions: int = EMBEDDING_DIMENSIONS) -> list[float]:
    """A deterministic stand-in embedding: each lower-cased word adds 1 at its hash's slot."""
    vector = [0.0] * dimensions
    for word in "".join(c.lower() if c.isalnum() else " " for c in text).split():
        vector[int(hashlib.sha256(word.encode("utf-8")).hexdigest(), 16) % dimensions] += 1.0
    return vector if any(vector) else [1.0] + [0.0] * (dimensions - 1)


def _ceil4(n: int) -> int:
    return math.ceil(n / 4)


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):  # multi-part content: count the text parts
        total = 0
        for part in content:
            if isinstance(part, str):
                total += len(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                total += len(part["text"])
        return total
    return 0


def message_text(content: Any) -> str:
    """A message's text: the string, or its text parts joined (images left out)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _image_urls(request: dict) -> list[str]:
    urls = []
    for message in request.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and part.get("type") == "image_url":
                url = part.get("image_url")
                urls.append(url.get("url", "") if isinstance(url, dict) else str(url or ""))
    return urls


def _decode_data_url(url: str) -> tuple[str, bytes] | None:
    head, sep, payload = url.partition(",")
    if not sep or not head.startswith("data:") or not head.endswith(";base64"):
        return None
    try:
        return head[5:-7], base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return None


def image_parts(request: dict) -> list[tuple[str, bytes] | None]:
    """The decoded (mime, bytes) of each image part of the request, in order (None: not a data URL)."""
    return [_decode_data_url(url) for url in _image_urls(request)]


def _image_records(request: dict) -> list[dict]:
    records = []
    for part in image_parts(request):
        mime, data = part if part is not None else (None, None)
        records.append({"sha256": hashlib.sha256(data).hexdigest() if data is not None else None,
                        "mime": mime, "n_bytes": len(data) if data is not None else None})
    return records


def _prompt_chars(request: dict) -> int:
    messages = request.get("messages")
    if not isinstance(messages, list):
        return 0
    return sum(_content_chars(m.get("content")) for m in messages if isinstance(m, dict))


def _chosen_tool(request: dict) -> dict:
    """The function the client asked for: ``tool_choice`` if it names one, else tools[0]."""
    tools = [t for t in request.get("tools") or [] if isinstance(t, dict)]
    choice = request.get("tool_choice")
    if isinstance(choice, dict):
        wanted = (choice.get("function") or {}).get("name")
        for tool in tools:
            if (tool.get("function") or {}).get("name") == wanted:
                return tool.get("function") or {}
    return (tools[0].get("function") or {}) if tools else {}


def _schema_of(request: dict) -> dict | None:
    if request.get("tools"):
        params = _chosen_tool(request).get("parameters")
        return params if isinstance(params, dict) else None
    fmt = request.get("response_format")
    if isinstance(fmt, dict):
        js = fmt.get("json_schema")
        if isinstance(js, dict) and isinstance(js.get("schema"), dict):
            return js["schema"]
    return None


# --------------------------------------------------------------------------- server


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 128  # many clients connect at once in concurrency benchmarks

    def __init__(self, llm: "LoopbackLLM") -> None:
        self.llm = llm
        self.open_sockets: set[socket.socket] = set()
        self.open_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request, client_address) -> None:  # noqa: D401 - silence tracebacks
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "LoopbackLLM/1.0"
    sys_version = ""
    timeout = 60  # idle keep-alive connections are dropped after this long
    # TCP_NODELAY, as real servers set it: the headers and the body leave in two writes, and with Nagle's
    # algorithm the body waited for the client's delayed ACK of the headers (~40 ms on every answer)
    disable_nagle_algorithm = True
    server: _Server

    def setup(self) -> None:
        super().setup()
        with self.server.open_lock:
            self.server.open_sockets.add(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            with self.server.open_lock:
                self.server.open_sockets.discard(self.connection)

    def log_message(self, format: str, *args: Any) -> None:  # silence per-request logging
        pass

    # -- plumbing

    def _read_body(self) -> bytes:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = 0
        return self.rfile.read(length) if length > 0 else b""

    def _send(self, code: int, payload: Any, headers: Mapping[str, str] | None = None) -> bool:
        if isinstance(payload, bytes):
            data = payload
        elif isinstance(payload, str):
            data = payload.encode("utf-8")
        else:
            data = json.dumps(payload).encode("utf-8")
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, str(value))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
            return True
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, OSError):
            self.close_connection = True
            return False

    # -- verbs

    def do_POST(self) -> None:
        body = self._read_body()
        path = self.path.split("?", 1)[0].rstrip("/")
        if path not in CHAT_PATHS | EMBEDDING_PATHS:
            self._send(404, _error_body(404, f"unknown path {self.path!r}"))
            return
        try:
            request = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            self._send(400, _error_body(400, "request body is not valid JSON"))
            return
        if not isinstance(request, dict):
            self._send(400, _error_body(400, "request body must be a JSON object"))
            return
        if self.server.llm.remember_answers and path in CHAT_PATHS:
            request["_body"] = hashlib.sha1(body).digest()
        handle = self.server.llm._embed if path in EMBEDDING_PATHS else self.server.llm._handle
        code, payload, headers, usage = handle(request)
        # counted before the answer leaves (a client may read the totals as soon as it has it), taken
        # back when it could not be delivered
        if usage is not None:
            self.server.llm._add_usage(*usage)
        if not self._send(code, payload, headers) and usage is not None:
            self.server.llm._add_usage(*(-n for n in usage))

    def do_GET(self) -> None:
        self._read_body()
        path = self.path.split("?", 1)[0].rstrip("/")
        self.server.llm.gets.append(path)
        if path in CHAT_PATHS:
            self._send(405, _error_body(405, "use POST"), {"Allow": "POST"})
        elif path == "/props" and self.server.llm.context_tokens:  # llama.cpp's server settings
            self._send(200, {"default_generation_settings": {"n_ctx": self.server.llm.context_tokens}})
        else:
            self._send(404, _error_body(404, f"unknown path {self.path!r}"))

    do_PUT = do_DELETE = do_PATCH = do_GET


class LoopbackLLM:
    """In-process fake of the OpenAI chat-completions endpoint (see module doc)."""

    def __init__(self, answer: AnswerFn | None = None, latency_s: float = 0.0,
                 report_image_tokens: bool = True, context_tokens: int | None = None,
                 embedding_models: frozenset[str] | None = None, keep_requests: bool = True,
                 remember_answers: int = 0, record_spans: bool = False) -> None:
        self.answer: AnswerFn = answer if answer is not None else (lambda request, schema: {})
        # a context window, as llama.cpp's: told at GET /props; a longer prompt plus max_tokens is a 400
        self.context_tokens = context_tokens
        self.gets: list[str] = []  # the paths of GET requests (a context window asked), in order
        self.embedding_models = embedding_models  # None: any model embeds; else only these (others: 404)
        self.embeddings_in_flight = self.embeddings_peak = 0  # embedding requests being answered, at most
        self.latency_s = float(latency_s)
        self.report_image_tokens = report_image_tokens  # off: usage has no prompt_tokens_details
        # off (a benchmark's thousands of calls): `requests` stays empty and only `n_calls` counts; what a
        # stand-in holds its collector walks, and a full collection stalls every handler thread at once
        self.keep_requests = keep_requests
        # a benchmark's stand-in: the answers to the last N distinct request bodies, so a repeated request
        # (TVIR's judge runs ask the same prompts) costs no answering again: a real endpoint's work is
        # not done on the cores of the run it answers
        self.remember_answers = remember_answers
        self._answers: OrderedDict[bytes, str] = OrderedDict()
        self.answers_remembered = 0  # requests answered from memory
        # a benchmark's account of the endpoint's use: (arrived, answered) of each chat request, monotonic
        self.spans: list[tuple[float, float]] | None = [] if record_spans else None
        self.requests: list[dict] = []
        self._n_requests = 0
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._prompt_tokens = 0
        self._completion_tokens = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle

    def start(self) -> "LoopbackLLM":
        if self._server is not None:
            raise RuntimeError("LoopbackLLM already started")
        self._stopping.clear()
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
            name=f"LoopbackLLM:{self.port}", daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()  # wake handlers sleeping in latency / delay faults
        server.shutdown()
        server.server_close()
        with server.open_lock:
            conns = list(server.open_sockets)
        for conn in conns:  # drop idle keep-alive connections so handler threads exit
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "LoopbackLLM":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- introspection

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("LoopbackLLM is not running")
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def n_image_parts(self) -> int:
        """Image parts received over all kept requests (`keep_requests`)."""
        with self._lock:
            return sum(len(r["_images"]) for r in self.requests)

    @property
    def n_calls(self) -> int:
        with self._lock:
            return self._n_requests

    @property
    def prompt_tokens_total(self) -> int:
        with self._lock:
            return self._prompt_tokens

    @property
    def completion_tokens_total(self) -> int:
        with self._lock:
            return self._completion_tokens

    def fail_next(self, *faults: Fault) -> None:
        """Queue faults; each following request consumes one (FIFO) before normal answers resume."""
        for f in faults:
            if not isinstance(f, (StatusFault, DelayFault, RawContentFault, AnswerOverrideFault)):
                raise TypeError(f"not a fault: {f!r}")
        with self._lock:
            self._faults.extend(faults)

    @property
    def pending_faults(self) -> int:
        with self._lock:
            return len(self._faults)

    # -- request handling (runs on handler threads)

    def _add_usage(self, prompt: int, completion: int) -> None:
        with self._lock:
            self._prompt_tokens += prompt
            self._completion_tokens += completion

    def _record(self, request: dict) -> None:
        """Under `_lock`: one more request counted (and kept, unless `keep_requests` is off)."""
        self._n_requests += 1
        if self.keep_requests:
            self.requests.append(request)

    def _answer(self, request: dict, schema: dict | None, body: bytes | None) -> Any:
        if body is None:
            return self.answer(request, schema)
        with self._lock:
            if body in self._answers:
                self._answers.move_to_end(body)
                self.answers_remembered += 1
                return json.loads(self._answers[body])
        obj = self.answer(request, schema)
        try:
            text = json.dumps(obj)  # kept as text: thousands of answers are no work for the collector
        except (TypeError, ValueError):
            return obj  # not remembered: the caller says why it cannot be sent
        with self._lock:
            self._answers[body] = text
            if len(self._answers) > self.remember_answers:
                self._answers.popitem(last=False)
        return obj

    def forget_answers(self) -> None:
        """Start a measurement afresh: no answer remembered from an earlier one."""
        with self._lock:
            self._answers.clear()

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def _embed(self, request: dict) -> tuple[int, Any, dict, tuple[int, int] | None]:
        """`/v1/embeddings`: a hashed bag of words per input (deterministic: texts sharing words are
        near); recorded in `requests` with `_path`, faults consumed as for chat."""
        request["_path"], request["_images"] = "/v1/embeddings", []
        with self._lock:
            self._record(request)
            fault = self._faults.popleft() if self._faults else None
            self.embeddings_in_flight += 1
            self.embeddings_peak = max(self.embeddings_peak, self.embeddings_in_flight)
        try:
            self._sleep(self.latency_s + (fault.seconds if isinstance(fault, DelayFault) else 0.0))
        finally:
            with self._lock:
                self.embeddings_in_flight -= 1
        if isinstance(fault, StatusFault):
            payload = fault.body if fault.body is not None else _error_body(fault.code)
            return fault.code, payload, dict(fault.headers), None
        if self.embedding_models is not None and request.get("model") not in self.embedding_models:
            return 404, _error_body(404, f"model {request.get('model')!r} has no embeddings here"), {}, None
        texts = request.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return 400, _error_body(400, "input must be a string or a list of strings"), {}, None
        tokens = sum(_ceil4(len(t)) for t in texts)
        payload = {"object": "list", "model": request.get("model") or "loopback",
                   "data": [{"object": "embedding", "index": i, "embedding": hashed_vector(t)}
                            for i, t in enumerate(texts)],
                   "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}
        return 200, payload, {}, (tokens, 0)

    def _handle(self, request: dict) -> tuple[int, Any, dict, tuple[int, int] | None]:
        """Return (status, payload, extra headers, usage-to-record-if-sent), `latency_s` after the request
        arrived: the answer is computed within that time (an endpoint answering after 300 ms does so
        whatever its own work), unless computing it, or a delay fault, takes longer."""
        received = time.monotonic()
        delayed = [0.0]  # a delay fault's seconds come on top of the latency
        answered = self._respond(request, delayed)
        self._sleep(self.latency_s - (time.monotonic() - received - delayed[0]))
        if self.spans is not None:
            self.spans.append((received, time.monotonic()))
        return answered

    def _respond(self, request: dict, delayed: list[float]) -> tuple[int, Any, dict, tuple[int, int] | None]:
        body = request.pop("_body", None)  # the request body's digest, when answers are remembered
        request["_images"] = _image_records(request)
        with self._lock:
            self._record(request)
            n = self._n_requests
            fault = self._faults.popleft() if self._faults else None

        if isinstance(fault, StatusFault):
            payload = fault.body if fault.body is not None else _error_body(fault.code)
            return fault.code, payload, dict(fault.headers), None
        if isinstance(fault, DelayFault):
            self._sleep(fault.seconds)
            delayed[0] = fault.seconds
            if self._stopping.is_set():
                return 503, _error_body(503, "loopback server stopping"), {}, None

        if self.context_tokens:
            needed = _ceil4(_prompt_chars(request)) + (request.get("max_tokens") or 0)
            if needed > self.context_tokens:
                return 400, _error_body(400, f"the request exceeds the available context size ({needed} > "
                                             f"{self.context_tokens} tokens)"), {}, None

        schema = _schema_of(request)
        plain = False
        if isinstance(fault, RawContentFault):
            text = fault.text
        else:
            if isinstance(fault, AnswerOverrideFault):
                obj = fault.obj
            else:
                try:
                    obj = self._answer(request, schema, body)
                except Exception as exc:  # surface answer-callable bugs as a 500, not a hang
                    msg = f"answer callable raised {type(exc).__name__}: {exc}"
                    return 500, _error_body(500, msg), {}, None
            plain = isinstance(obj, str) and not request.get("tools") and request.get("response_format") is None
            try:
                text = obj if plain else json.dumps(obj, ensure_ascii=False)
            except (TypeError, ValueError) as exc:
                return 500, _error_body(500, f"answer is not JSON-serialisable: {exc}"), {}, None

        n_images = len(request["_images"])
        prompt_tokens = _ceil4(_prompt_chars(request)) + IMAGE_TOKENS * n_images
        completion_tokens = _ceil4(len(text))
        budget = request.get("max_tokens") or request.get("max_completion_tokens")
        cut = isinstance(budget, int) and completion_tokens > budget
        if cut:  # as a real server does: the answer stops at the budget, finish_reason "length"
            text, completion_tokens = text[:4 * budget], budget

        if request.get("tools"):
            name = _chosen_tool(request).get("name") or "answer"
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": text}}
                ],
            }
            finish_reason = "tool_calls"
        elif request.get("response_format") is not None:
            message = {"role": "assistant", "content": text}
            finish_reason = "stop"
        elif plain:  # a plain chat completion (a system writing its report): the text as is
            message = {"role": "assistant", "content": text}
            finish_reason = "stop"
        else:
            message = {"role": "assistant", "content": "```json\n" + text + "\n```"}
            finish_reason = "stop"

        if cut:
            finish_reason = "length"
        payload = {
            "id": f"chatcmpl-loopback-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model") or "loopback",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        if n_images and self.report_image_tokens:
            payload["usage"]["prompt_tokens_details"] = {"image_tokens": IMAGE_TOKENS * n_images}
        return 200, payload, {}, (prompt_tokens, completion_tokens)
