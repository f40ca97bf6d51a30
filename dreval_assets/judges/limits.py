"""Rate limits and backoff for judge calls: a requests/tokens-per-minute limiter, Retry-After parsing."""
from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from email.utils import parsedate_to_datetime
from typing import Awaitable, Callable, Mapping

WINDOW_S = 60.0


class RateLimiter:
    """Sliding one-minute window over requests and (estimated) tokens; `None` disables a limit."""

    def __init__(self, requests_per_minute: int | None = None, tokens_per_minute: int | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        self.rpm = requests_per_minute
        self.tpm = tokens_per_minute
        self._clock = clock
        self._sleep = sleep
        self._sent: deque[tuple[float, int]] = deque()  # (time, tokens) of requests in the window
        self._lock = asyncio.Lock()

    async def acquire(self, tokens: int) -> float:
        """Wait until a request of `tokens` fits both limits; returns the seconds waited."""
        if self.rpm is None and self.tpm is None:
            return 0.0
        if self.tpm is not None:
            tokens = min(tokens, self.tpm)  # one request larger than the budget still goes, alone
        waited = 0.0
        async with self._lock:
            while True:
                now = self._clock()
                while self._sent and now - self._sent[0][0] >= WINDOW_S:
                    self._sent.popleft()
                delay = self._delay_needed(now, tokens)
                if delay <= 0:
                    self._sent.append((now, tokens))
                    return waited
                await self._sleep(delay)
                waited += delay

    def _delay_needed(self, now: float, tokens: int) -> float:
        delays = [0.0]
        if self.rpm is not None and len(self._sent) >= self.rpm:
            delays.append(self._sent[len(self._sent) - self.rpm][0] + WINDOW_S - now)
        if self.tpm is not None:
            used = sum(t for _, t in self._sent)
            excess = used + tokens - self.tpm
            for sent_at, sent_tokens in self._sent:  # wait until enough old tokens leave the window
                if excess <= 0:
                    break
                excess -= sent_tokens
                delays.append(sent_at + WINDOW_S - now)
        return max(delays)


def retry_after_seconds(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds a server asked us to wait: `retry-after-ms`, `retry-after` seconds or HTTP date."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    if "retry-after-ms" in lowered:
        try:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def backoff_seconds(attempt: int, base_s: float, cap_s: float, rng: random.Random | None = None) -> float:
    """Full-jitter exponential backoff for attempt 1, 2, ...: uniform in [0, min(cap, base * 2^(n-1))]."""
    rng = rng or random
    return rng.uniform(0, min(cap_s, base_s * 2 ** (attempt - 1)))
