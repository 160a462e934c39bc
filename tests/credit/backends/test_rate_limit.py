"""The async token bucket: exact waits on a fake clock, FIFO, settle, and refusals."""

from __future__ import annotations

import asyncio

import pytest

from foreseen.core.errors import UserInputError
from foreseen.credit.backends.http.rate_limit import RateLimiter


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_requests_per_minute_burst_then_exact_refill_wait() -> None:
    clock = FakeClock()
    limiter = RateLimiter(requests_per_minute=60, clock=clock, sleep=clock.sleep)

    async def run() -> None:
        for _ in range(60):
            await limiter.acquire(0)
        assert clock.now == 0.0  # a full bucket allows a burst of 60
        await limiter.acquire(0)
        assert clock.now == pytest.approx(1.0)  # refill 1 per second

    asyncio.run(run())


def test_tokens_per_minute_wait_and_settle_returns_unused_tokens() -> None:
    clock = FakeClock()
    limiter = RateLimiter(tokens_per_minute=6000, clock=clock, sleep=clock.sleep)

    async def run() -> None:
        await limiter.acquire(6000)
        await limiter.acquire(100)  # 100 tokens at 100 tokens/s
        assert clock.now == pytest.approx(1.0)
        limiter.settle(100, 40)  # 60 tokens given back
        before = clock.now
        await limiter.acquire(60)
        assert clock.now == before

    asyncio.run(run())


def test_concurrent_acquirers_are_paced_at_the_limit() -> None:
    clock = FakeClock()
    limiter = RateLimiter(requests_per_minute=120, clock=clock, sleep=clock.sleep)
    order: list[int] = []

    async def one(index: int) -> None:
        await limiter.acquire(1)
        order.append(index)

    async def run() -> None:
        await asyncio.gather(*(one(i) for i in range(200)))

    asyncio.run(run())
    # 120 at once, the other 80 at 2 per second: 40 s; first come, first served
    assert clock.now == pytest.approx(40.0)
    assert order == list(range(200))


def test_no_limit_never_waits_and_bad_limits_are_refused() -> None:
    clock = FakeClock()
    limiter = RateLimiter(clock=clock, sleep=clock.sleep)
    asyncio.run(limiter.acquire(10**9))
    assert clock.sleeps == []
    with pytest.raises(UserInputError, match="positive number"):
        RateLimiter(requests_per_minute=0)
    big = RateLimiter(tokens_per_minute=100, clock=clock, sleep=clock.sleep)
    with pytest.raises(UserInputError, match="tokens_per_minute"):
        asyncio.run(big.acquire(101))
