"""Rate limits for judge calls: a requests/tokens-per-minute limiter."""
from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Awaitable, Callable

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
