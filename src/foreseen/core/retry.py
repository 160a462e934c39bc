"""One retry policy for every network call: bounded attempts, exponential backoff, Retry-After.

Retrying happens in one layer per client (the credit runner for model calls,
:mod:`foreseen.core.http` for GETs); backends and transports only *classify*
a failure as retryable (with an optional server-given wait) or final.

The wait before retry ``i`` (0-based: the wait after the first failed attempt
is ``i = 0``):

* the server's wait (``Retry-After`` / ``retry-after-ms``) when it sent one,
  capped at ``retry_after_cap_s`` so a hostile header cannot stall a run for
  days;
* else ``min(max_s, base_s · 2^i)``, multiplied by ``0.5 + u`` when
  ``jitter`` is on, with ``u ∈ [0, 1)`` supplied by the caller (the credit
  runner derives it from the plan seed and the slot, so a rerun waits the
  same way; "full jitter" spreads retries of concurrent slots, AWS
  Architecture Blog, Brooker 2015).

:func:`parse_retry_after` reads RFC 9110 §10.2.3 ``Retry-After`` (delay
seconds or an HTTP date; a date in the past means 0) and the
``retry-after-ms`` extension some model APIs send.
"""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC

from foreseen.core.errors import ConfigError


@dataclass(frozen=True)
class RetryPolicy:
    """Attempts (first one included), backoff base and cap (s), jitter, server-wait cap (s)."""

    max_attempts: int = 4
    base_s: float = 0.5
    max_s: float = 60.0
    jitter: bool = False
    retry_after_cap_s: float = 600.0

    def __post_init__(self) -> None:
        if isinstance(self.max_attempts, bool) or self.max_attempts < 1:
            raise ConfigError(f"max_attempts must be at least 1, not {self.max_attempts}")
        for name in ("base_s", "max_s", "retry_after_cap_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ConfigError(f"{name} must be a finite number >= 0, not {value}")

    @property
    def retries(self) -> int:
        """Retries after the first attempt."""
        return self.max_attempts - 1

    def delay(self, retry_index: int, retry_after: float | None = None, u: float = 0.5) -> float:
        """Seconds to wait before retry ``retry_index`` (0-based); ``u`` ∈ [0, 1) for jitter."""
        if retry_after is not None and math.isfinite(retry_after) and retry_after >= 0:
            return min(float(retry_after), self.retry_after_cap_s)
        wait = min(self.max_s, self.base_s * 2.0 ** retry_index)
        return wait * (0.5 + u) if self.jitter else wait


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After``; None if absent/unreadable."""
    lowered = {key.lower(): value for key, value in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000.0
        except ValueError:
            value = math.nan
        if math.isfinite(value):
            return max(0.0, value)
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        if when.tzinfo is None:  # RFC 5322 "-0000": no zone given, read as UTC
            when = when.replace(tzinfo=UTC)
        current = time.time() if now is None else now
        return max(0.0, when.timestamp() - current)
    return max(0.0, seconds) if math.isfinite(seconds) else None
