"""Rate limiter and Retry-After parsing, on a fake clock (no real waiting)."""
import asyncio
import random
from email.utils import formatdate

import pytest

from dreval_assets.core.backoff import backoff_seconds, retry_after_seconds
from dreval_assets.judges.limits import RateLimiter


class FakeClock:
    def __init__(self):
        self.now = 0.0
        self.slept = []

    def __call__(self):
        return self.now

    async def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def run_requests(limiter, tokens_list):
    async def go():
        return [await limiter.acquire(t) for t in tokens_list]
    return asyncio.run(go())


def test_requests_per_minute_spaces_the_overflow():
    clock = FakeClock()
    limiter = RateLimiter(requests_per_minute=3, clock=clock, sleep=clock.sleep)
    waits = run_requests(limiter, [1] * 5)
    assert waits[:3] == [0, 0, 0]
    assert waits[3] == pytest.approx(60) and waits[4] == 0  # the 4th waits a window; the 5th then fits
    assert clock.now == pytest.approx(60)


def test_tokens_per_minute_waits_for_old_tokens_to_expire():
    clock = FakeClock()
    limiter = RateLimiter(tokens_per_minute=1000, clock=clock, sleep=clock.sleep)
    waits = run_requests(limiter, [600, 300, 400])
    assert waits[:2] == [0, 0]
    assert waits[2] == pytest.approx(60)


def test_no_limits_never_waits():
    clock = FakeClock()
    limiter = RateLimiter(clock=clock, sleep=clock.sleep)
    assert run_requests(limiter, [10**9] * 3) == [0, 0, 0] and clock.slept == []


@pytest.mark.parametrize("headers, expected", [
    ({"Retry-After": "2"}, 2.0), ({"retry-after": "0.5"}, 0.5), ({"retry-after-ms": "250"}, 0.25),
    ({"x": "y"}, None), (None, None), ({"Retry-After": "soon"}, None),
])
def test_retry_after_forms(headers, expected):
    assert retry_after_seconds(headers) == expected


def test_retry_after_http_date():
    now = 1_800_000_000.0
    assert retry_after_seconds({"Retry-After": formatdate(now + 30, usegmt=True)}, now=now) == pytest.approx(30)


def test_backoff_is_bounded_and_grows():
    rng = random.Random(1)
    samples = [backoff_seconds(n, 0.5, 4.0, rng) for n in (1, 2, 3, 4, 5, 6) for _ in range(50)]
    assert all(0 <= s <= 4.0 for s in samples)
    assert max(backoff_seconds(1, 0.5, 4.0, rng) for _ in range(50)) <= 0.5
