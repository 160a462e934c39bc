"""An async token bucket on requests per minute and tokens per minute (credit §5).

Each limit ``L`` (per minute) is a bucket of capacity ``L`` that refills
continuously at ``L / 60`` per second, starting full. :meth:`RateLimiter.acquire`
takes one request and ``n`` tokens; when either bucket holds less, it waits
exactly until both have refilled enough:

    wait = max over buckets of (needed − level) / (L / 60)      [seconds].

Waiters are served first come, first served (one lock), so a large request is
never starved by small ones. Tokens are taken as an upper bound before the
call; :meth:`RateLimiter.settle` returns the unused part once the response's
usage is known (never above capacity). A limit of ``None`` never binds.
The clock and the sleep function are injectable so tests run without waiting.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable

from foreseen.core.errors import UserInputError

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


class TokenBucket:
    """One bucket: ``capacity`` units, refilled at ``capacity / 60`` units per second."""

    def __init__(self, per_minute: float, clock: Clock) -> None:
        if isinstance(per_minute, bool) or not isinstance(per_minute, (int, float)) or not (
                math.isfinite(per_minute) and per_minute > 0):
            raise UserInputError(f"rate limit must be a positive number per minute, "
                                 f"got {per_minute!r}")
        self.capacity = float(per_minute)
        self.rate = self.capacity / 60.0
        self._clock = clock
        self._level = self.capacity
        self._stamp = clock()

    def level(self) -> float:
        """Units available now (after refilling for the time elapsed)."""
        now = self._clock()
        self._level = min(self.capacity, self._level + (now - self._stamp) * self.rate)
        self._stamp = now
        return self._level

    def wait_for(self, amount: float) -> float:
        """Seconds until ``amount`` units are available (0 if they are now)."""
        missing = amount - self.level()
        return 0.0 if missing <= 0 else missing / self.rate

    def take(self, amount: float) -> None:
        self.level()
        self._level -= amount

    def give_back(self, amount: float) -> None:
        self.level()
        self._level = min(self.capacity, self._level + amount)


class RateLimiter:
    """Requests-per-minute and tokens-per-minute limits shared by all calls of one backend."""

    def __init__(self, requests_per_minute: float | None = None,
                 tokens_per_minute: float | None = None, *, clock: Clock = time.monotonic,
                 sleep: Sleep = asyncio.sleep) -> None:
        self.requests = (TokenBucket(requests_per_minute, clock)
                         if requests_per_minute is not None else None)
        self.tokens = (TokenBucket(tokens_per_minute, clock)
                       if tokens_per_minute is not None else None)
        self._sleep = sleep
        self._lock: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.waited_s = 0.0

    @property
    def binding(self) -> bool:
        """True when at least one limit is set."""
        return self.requests is not None or self.tokens is not None

    def _get_lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._lock is None or self._loop is not loop:
            self._lock, self._loop = asyncio.Lock(), loop
        return self._lock

    async def acquire(self, tokens: int) -> None:
        """Wait until one request and ``tokens`` tokens fit in the buckets, then take them."""
        if not self.binding:
            return
        if self.tokens is not None and tokens > self.tokens.capacity:
            raise UserInputError(
                f"one call may use {tokens} tokens, more than the limit of "
                f"{self.tokens.capacity:g} tokens per minute; raise tokens_per_minute")
        async with self._get_lock():
            while True:
                wait = max(self.requests.wait_for(1.0) if self.requests else 0.0,
                           self.tokens.wait_for(tokens) if self.tokens else 0.0)
                if wait <= 0.0:
                    break
                self.waited_s += wait
                await self._sleep(wait)
            if self.requests is not None:
                self.requests.take(1.0)
            if self.tokens is not None:
                self.tokens.take(float(tokens))

    def settle(self, reserved_tokens: int, used_tokens: int | None) -> None:
        """Return ``reserved − used`` tokens (nothing when usage is unknown or exceeds it)."""
        if self.tokens is None or used_tokens is None or used_tokens >= reserved_tokens:
            return
        self.tokens.give_back(float(reserved_tokens - used_tokens))
