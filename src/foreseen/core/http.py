"""HTTP GET with explicit timeouts and bounded, exponential-backoff retries (standard library).

Retried: connection errors, DNS failures, timeouts, dropped connections, HTTP 429
and 5xx. The wait before retry ``i`` (0-based) is the server's ``Retry-After``
(seconds or an HTTP date) when it sends one, else ``backoff · 2**i``; both are
capped at ``max_delay``. ``retries`` counts the retries after the first attempt.

A 404 is returned as ``None`` when the caller says the resource is optional and
raised as :class:`NotFoundError` otherwise. Everything else that fails ends as a
one-line :class:`UserInputError` naming the host — never the request headers, so
an ``Authorization`` token cannot leak into a message. Redirects to another host
drop the ``Authorization`` header.
"""

from __future__ import annotations

import email.utils
import http.client
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, Any

from foreseen.core.errors import UserInputError

RETRY_STATUSES = frozenset({429}) | frozenset(range(500, 600))


class NotFoundError(Exception):
    """The server answered 404 for a resource the caller requires."""

    def __init__(self, url: str) -> None:
        super().__init__(f"not found: {url}")
        self.url = url


@dataclass(frozen=True)
class RetryPolicy:
    """Timeout per attempt (s), retries after the first attempt, backoff base and cap (s)."""

    timeout: float = 30.0
    retries: int = 3
    backoff: float = 0.5
    max_delay: float = 60.0

    def __post_init__(self) -> None:
        if not self.timeout > 0:
            raise UserInputError(f"timeout must be positive, not {self.timeout}")
        if self.retries < 0:
            raise UserInputError(f"retries must be 0 or more, not {self.retries}")
        if self.backoff < 0 or self.max_delay < 0:
            raise UserInputError("backoff and max_delay must not be negative")

    def delay(self, retry_index: int, retry_after: str | None) -> float:
        """Seconds to wait before retry ``retry_index`` (0-based)."""
        server_delay = parse_retry_after(retry_after)
        wanted = server_delay if server_delay is not None else self.backoff * 2.0**retry_index
        return min(self.max_delay, max(0.0, wanted))


def parse_retry_after(value: str | None) -> float | None:
    """A ``Retry-After`` header as seconds from now (delta-seconds or HTTP date), else None."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


class _SameHostAuthRedirect(urllib.request.HTTPRedirectHandler):
    """Follow redirects, but never carry ``Authorization`` to another host."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: http.client.HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and urllib.parse.urlsplit(newurl).netloc != urllib.parse.urlsplit(
            req.full_url
        ).netloc:
            new.remove_header("Authorization")
        return new


def host_of(url: str) -> str:
    """The host (and port) part of a URL, for messages."""
    return urllib.parse.urlsplit(url).netloc or url


def _reason(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.URLError) and not isinstance(exc, urllib.error.HTTPError):
        reason: Any = exc.reason
        return str(getattr(reason, "strerror", None) or reason)
    return str(exc) or type(exc).__name__


class HttpGetter:
    """GET bodies of URLs under a :class:`RetryPolicy`; ``headers_for(url)`` adds headers."""

    def __init__(
        self,
        policy: RetryPolicy,
        headers_for: Callable[[str], Mapping[str, str]] = lambda url: {},
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.policy = policy
        self._headers_for = headers_for
        self._sleep = sleep
        self._opener = urllib.request.build_opener(_SameHostAuthRedirect())
        self.requests_made = 0

    def get(self, url: str, *, missing_ok: bool = False) -> bytes | None:
        """Body of ``url``; ``None`` for a 404 when ``missing_ok``; retries per the policy."""
        attempts = self.policy.retries + 1
        for attempt in range(attempts):
            last_try = attempt == attempts - 1
            request = urllib.request.Request(url, headers=dict(self._headers_for(url)))
            self.requests_made += 1
            retry_after: str | None = None
            try:
                with self._opener.open(request, timeout=self.policy.timeout) as response:
                    body: bytes = response.read()
                    return body
            except urllib.error.HTTPError as exc:
                status = exc.code
                retry_after = exc.headers.get("Retry-After") if exc.headers else None
                remaining = exc.headers.get("X-RateLimit-Remaining") if exc.headers else None
                exc.close()
                if status == 404:
                    if missing_ok:
                        return None
                    raise NotFoundError(url) from None
                if status == 403 and remaining == "0":
                    raise UserInputError(
                        f"{host_of(url)} refused the request: API rate limit exhausted "
                        "(set a token in the environment, or wait)"
                    ) from None
                if status not in RETRY_STATUSES:
                    raise UserInputError(
                        f"{host_of(url)} answered HTTP {status} for {url}"
                    ) from None
                if last_try:
                    raise UserInputError(
                        f"{host_of(url)} answered HTTP {status} for {url} "
                        f"after {attempts} attempts"
                    ) from None
            except (urllib.error.URLError, TimeoutError, ConnectionError,
                    http.client.HTTPException, OSError) as exc:
                if last_try:
                    raise UserInputError(
                        f"cannot reach {host_of(url)}: {_reason(exc)} "
                        f"(after {attempts} attempts; offline?)"
                    ) from None
            self._sleep(self.policy.delay(attempt, retry_after))
        raise AssertionError("unreachable")  # pragma: no cover
