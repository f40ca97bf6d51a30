"""The judge model's context window: how many tokens a prompt and its answer may take together.

From `DREVAL_JUDGE_CONTEXT` when set, else asked from the server where it says (once per process for an
endpoint and model, `known_window`: each step of a run makes its own judges): llama.cpp's
`GET /props` (`default_generation_settings.n_ctx`), vLLM's `GET /v1/models` (`max_model_len` of the
model), LM Studio's (`max_context_length`). Unknown (None) otherwise, e.g. OpenAI's API: then no
prompt is refused for its size. A prompt's tokens are estimated from its characters (a CJK character
is about a token, other text about `CHARS_PER_TOKEN` characters a token), with a margin."""
from __future__ import annotations

import math
import os
import re
import threading
from dataclasses import dataclass

import httpx

from ..errors import ConfigError, redact_url

CHARS_PER_TOKEN = 3.5  # a little under the ~4 of English text on common tokenizers: err on the long side
MARGIN = 1.1  # the estimate's slack, and the chat template's tokens around the prompt
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
ASK_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class ContextWindow:
    tokens: int | None  # None: unknown
    source: str  # where it came from, for the preflight line

    def room_for_answer(self, prompt_tokens: int) -> int | None:
        """Tokens left for the answer after the prompt; None when the window is unknown."""
        return None if self.tokens is None else self.tokens - prompt_tokens


def prompt_tokens(text: str, images: int = 0, image_tokens: int = 800) -> int:
    """An estimate on the long side of a prompt's tokens."""
    return _text_tokens(text) + images * image_tokens + 16


def cut_to_tokens(text: str, tokens: int) -> str:
    """The longest prefix of `text` whose estimate stays within `tokens` (whole text when it fits)."""
    if _text_tokens(text) <= tokens:
        return text
    low, high = 0, len(text)  # prefix lengths: low fits, high does not
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if _text_tokens(text[:middle]) <= tokens else (low, middle)
    return text[:low]


def _text_tokens(text: str) -> int:
    cjk = len(CJK.findall(text))
    return math.ceil(MARGIN * (cjk + (len(text) - cjk) / CHARS_PER_TOKEN))


def context_of(judge: object) -> int | None:
    """The judge model's context window in tokens; None when unknown or the judge has none (offline)."""
    ask = getattr(judge, "context_tokens", None)
    return ask() if callable(ask) else None


def room_for(judge: object, request: object) -> int | None:
    """Tokens of the model's context that `request` leaves unused with its answer budget: what a
    caller may add to it (a text it left empty, more of a text it splits). None when unknown."""
    ask = getattr(judge, "room_for", None)
    return ask(request) if callable(ask) else None


def passage_tokens(prompt_room: int) -> int:
    """A prompt room (this module's estimate) in `core/passages.py` tokens (four characters each)."""
    return max(0, int(prompt_room * CHARS_PER_TOKEN / (MARGIN * 4)))


_KNOWN: dict[tuple, ContextWindow] = {}  # (base URL, model, key, DREVAL_JUDGE_CONTEXT) -> what it was told
_KNOWN_LOCK = threading.Lock()


def known_window(base_url: str | None, model: str, api_key: str = "") -> ContextWindow:
    """`discover`, asked once per process for an endpoint and model: a run's judges (every step makes its
    own) share what the first was told, instead of each asking before its first call (two requests and a
    new HTTP client each; against a hosted API, a round trip or two on the step's way to its first call)."""
    key = (base_url, model, api_key, os.environ.get("DREVAL_JUDGE_CONTEXT", ""))
    with _KNOWN_LOCK:
        found = _KNOWN.get(key)
    if found is None:
        found = discover(base_url, model, api_key)
        with _KNOWN_LOCK:
            found = _KNOWN.setdefault(key, found)
    return found


def forget_known_windows() -> None:
    """The next `known_window` asks again (a test's next server may reuse an earlier one's port)."""
    with _KNOWN_LOCK:
        _KNOWN.clear()


def discover(base_url: str | None, model: str, api_key: str = "", setting: str | None = None) -> ContextWindow:
    setting = os.environ.get("DREVAL_JUDGE_CONTEXT", "") if setting is None else setting
    if setting.strip():
        try:
            tokens = int(setting)
        except ValueError as exc:
            raise ConfigError(f"DREVAL_JUDGE_CONTEXT={setting!r}: the model's context size in tokens") from exc
        if tokens <= 0:
            raise ConfigError(f"DREVAL_JUDGE_CONTEXT={setting!r}: must be positive")
        return ContextWindow(tokens, "DREVAL_JUDGE_CONTEXT")
    if not base_url:
        return ContextWindow(None, "unknown (set DREVAL_JUDGE_CONTEXT)")
    root = re.sub(r"/v1/?$", "", base_url.rstrip("/"))
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    with httpx.Client(timeout=ASK_TIMEOUT_S, headers=headers) as client:
        props = _get_json(client, f"{root}/props")
        n_ctx = (props.get("default_generation_settings") or {}).get("n_ctx") or props.get("n_ctx")
        if isinstance(n_ctx, int) and n_ctx > 0:
            return ContextWindow(n_ctx, redact_url(f"{root}/props"))
        models = _get_json(client, f"{base_url.rstrip('/')}/models")
        for entry in models.get("data") or []:
            if isinstance(entry, dict) and entry.get("id") == model:
                size = entry.get("max_model_len") or entry.get("max_context_length")
                if isinstance(size, int) and size > 0:
                    return ContextWindow(size, redact_url(f"{base_url.rstrip('/')}/models"))
    return ContextWindow(None, "unknown (the server does not say; set DREVAL_JUDGE_CONTEXT)")


def _get_json(client: httpx.Client, url: str) -> dict:
    try:
        response = client.get(url)
        return response.json() if response.status_code == 200 else {}
    except (httpx.HTTPError, ValueError):
        return {}
