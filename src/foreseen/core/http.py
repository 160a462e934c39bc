"""One HTTP GET client for every download: explicit timeouts, bounded retries (standard library).

``HttpGetter(policy, headers=..., timeout=...).get(url, missing_ok=...) -> bytes | None``.
The retry loop lives here and nowhere else; its waits come from the project's
one retry policy, :class:`foreseen.core.retry.RetryPolicy`:

* retried: connection errors, DNS failures, timeouts, dropped connections,
  HTTP 429 and 5xx — at most ``policy.max_attempts`` attempts in all;
* the wait before retry ``i`` (0-based) is :meth:`RetryPolicy.delay`: the
  server's ``Retry-After`` / ``retry-after-ms``
  (:func:`foreseen.core.retry.parse_retry_after`) when it sends one, else the
  policy's exponential backoff;
* a 404 is returned as ``None`` when the caller says the resource is optional
  (``missing_ok=True``) and raised as :class:`NotFoundError` otherwise;
* a 403 with ``X-RateLimit-Remaining: 0`` (an exhausted API rate limit) is not
  retried.

Everything that fails ends as a one-line :class:`~foreseen.core.errors.SourceError`
naming the host — never the request headers, so an ``Authorization`` token
cannot leak into a message. Redirects to another host drop the
``Authorization`` header. Nothing here knows what is being downloaded: the
teams fetcher and any other client pass their own URLs and headers.
"""

from __future__ import annotations

import http.client
import math
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from typing import IO, Any

from foreseen.core.errors import ConfigError, SourceError
from foreseen.core.retry import RetryPolicy, parse_retry_after

RETRY_STATUSES = frozenset({429}) | frozenset(range(500, 600))
DEFAULT_TIMEOUT_S = 30.0


class NotFoundError(SourceError):
    """The server answered 404 for a resource the caller requires."""

    def __init__(self, url: str) -> None:
        super().__init__(f"{host_of(url)} has no {url} (HTTP 404)")
        self.url = url


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
    """GET the bodies of URLs under one :class:`RetryPolicy` (module docstring).

    ``headers`` are sent with every request; :meth:`get` can add more for one URL
    (e.g. a token that only one host may see). ``timeout`` is per attempt, in
    seconds. ``sleep`` is replaceable so tests can record the waits.
    """

    def __init__(
        self,
        policy: RetryPolicy,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not (math.isfinite(timeout) and timeout > 0):
            raise ConfigError(f"timeout must be a positive number of seconds, not {timeout}")
        self.policy = policy
        self.timeout = timeout
        self._headers = dict(headers or {})
        self._sleep = sleep
        self._opener = urllib.request.build_opener(_SameHostAuthRedirect())
        self.requests_made = 0

    def get(
        self, url: str, *, missing_ok: bool = False, headers: Mapping[str, str] | None = None
    ) -> bytes | None:
        """Body of ``url``; ``None`` for a 404 when ``missing_ok``; retries per the policy."""
        attempts = self.policy.max_attempts
        sent = {**self._headers, **(headers or {})}
        for attempt in range(attempts):
            last_try = attempt == attempts - 1
            request = urllib.request.Request(url, headers=sent)
            self.requests_made += 1
            server_wait: float | None = None
            try:
                with self._opener.open(request, timeout=self.timeout) as response:
                    body: bytes = response.read()
                    return body
            except urllib.error.HTTPError as exc:
                status = exc.code
                answer = {key.lower(): value for key, value in (exc.headers or {}).items()}
                exc.close()
                if status == 404:
                    if missing_ok:
                        return None
                    raise NotFoundError(url) from None
                if status == 403 and answer.get("x-ratelimit-remaining") == "0":
                    raise SourceError(
                        f"{host_of(url)} refused the request: API rate limit exhausted "
                        "(set a token in the environment, or wait)"
                    ) from None
                if status not in RETRY_STATUSES:
                    raise SourceError(f"{host_of(url)} answered HTTP {status} for {url}") from None
                if last_try:
                    raise SourceError(
                        f"{host_of(url)} answered HTTP {status} for {url} "
                        f"after {attempts} attempts"
                    ) from None
                server_wait = parse_retry_after(answer)
            except (urllib.error.URLError, TimeoutError, ConnectionError,
                    http.client.HTTPException, OSError) as exc:
                if last_try:
                    raise SourceError(
                        f"cannot reach {host_of(url)}: {_reason(exc)} "
                        f"(after {attempts} attempts; offline?)"
                    ) from None
            self._sleep(self.policy.delay(attempt, server_wait))
        raise AssertionError("unreachable")  # pragma: no cover
