"""When to try again: Retry-After parsing and jittered exponential backoff (judges and fetchers)."""
from __future__ import annotations

import random
import time
from email.utils import parsedate_to_datetime
from typing import Mapping


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


def wait_before_retry(attempt: int, hint: float | None, base_s: float, cap_s: float) -> float | None:
    """Seconds to wait before try `attempt + 1`: the server's Retry-After when it gave one (None when it
    asks for longer than `cap_s`: give up), else the jittered backoff."""
    if hint is not None:
        return hint if hint <= cap_s else None
    return backoff_seconds(attempt, base_s, cap_s)
