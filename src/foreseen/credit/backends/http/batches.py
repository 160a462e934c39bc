"""The providers' batch APIs: submit many slots at once, poll, read each item's result.

Two protocols, one interface (:class:`BatchApi`); the request body of every
item is the backend's own :meth:`~.backend.HttpBackend.payload` — byte for
byte what the online call sends — and every answer is read by the backend's
own :meth:`~.backend.HttpBackend.batch_response` at the batch price.

* **Anthropic Message Batches** (:class:`AnthropicBatches`): ``POST
  {base_url}/v1/messages/batches`` with ``{"requests": [{"custom_id",
  "params"}]}``; ``GET …/batches/{id}`` until ``processing_status = "ended"``;
  then the JSONL at ``results_url``, one ``{"custom_id", "result": {"type":
  "succeeded" | "errored" | "canceled" | "expired", …}}`` a line.
* **OpenAI Batch** (:class:`OpenAIBatches`): the items as a JSONL file
  (``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``)
  uploaded by ``POST {base_url}/files`` (``purpose = batch``), then ``POST
  {base_url}/batches`` (``completion_window = "24h"``); ``GET …/batches/{id}``
  until ``completed``, ``failed``, ``expired`` or ``cancelled``; then ``GET
  …/files/{output_file_id}/content`` and ``…/{error_file_id}/content``.

Each item's result is one of (:class:`ItemResult`): ``answer`` (a message
arrived: read like an online answer, a content error included), ``transient``
(the provider failed on it: overloaded, 5xx, 429 — the online path's outage
class, :func:`~.common.is_transient`), ``rejected`` (the request is wrong:
``invalid_request_error`` or a 4xx) or ``missing`` (no result: the batch
expired or was cancelled first, or the item is absent). A batch whose input
the provider refused as a whole (OpenAI ``failed``) rejects every item.

Calls to the batch API itself (create, poll, results) that fail as an outage
(:class:`~foreseen.credit.backends.base.TransportError`: 429, 5xx, connection
errors) are retried by :class:`Retrying`, at most ``attempts`` times each, after
the plan's retry delay — except a submission that timed out or whose connection
was lost after it was made (:class:`~.common.ConnectionLost`), which the provider
may have accepted: it is not sent again (the run stops; resuming submits the
slots anew — the one window where a batch may be paid twice, and the run's
halt line says so).

Item ids: Anthropic allows ``[A-Za-z0-9_-]{1,64}``, so each slot is sent
under :func:`custom_id` (``s`` + 40 hex digits of its id's SHA-256).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, Protocol, TypeVar

from foreseen.core.digest import canonical_json, sha256_text
from foreseen.core.errors import RequestRejected, UserInputError
from foreseen.credit.backends.base import BackendResponse, ForecastRequest, TransportError
from foreseen.credit.backends.http.backend import HttpBackend
from foreseen.credit.backends.http.common import (
    ConnectionLost,
    HttpAnswer,
    error_summary,
    import_aiohttp,
    is_transient,
    read_api_key,
)
from foreseen.credit.backends.secrets import scrub

#: what a server without the batch route answers its creation with (not found, not allowed)
NO_BATCH_ROUTE = frozenset({404, 405})

ItemKind = Literal["answer", "transient", "rejected", "missing"]
#: statuses after which a batch changes no more
ANTHROPIC_ENDED = frozenset({"ended"})
OPENAI_ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
OPENAI_ENDPOINT = "/v1/chat/completions"


def custom_id(slot_id: str) -> str:
    """The item id a slot is sent under: ``s`` + the first 40 hex digits of SHA-256(id)."""
    return "s" + sha256_text(slot_id)[:40]


@dataclass(frozen=True)
class ItemResult:
    """One item's result (module docstring); ``response`` set for an ``answer``."""

    custom_id: str
    kind: ItemKind
    response: BackendResponse | None = None
    error: str | None = None
    status: int | None = None


class BatchSubmission(NamedTuple):
    """A created batch: its id, and the id of its uploaded input file (None: no file)."""

    batch_id: str
    input_file_id: str | None


@dataclass(frozen=True)
class BatchState:
    """A batch as last polled: the provider's status, whether it ended, and its counts."""

    batch_id: str
    status: str
    ended: bool
    counts: Mapping[str, int]
    #: where the results are (Anthropic results_url; OpenAI output and error file ids)
    locations: tuple[str | None, ...] = ()


class BatchApi(Protocol):
    """What the batch runner needs of a provider's batch API."""

    @property
    def provider(self) -> str:
        """``anthropic`` or ``openai`` (recorded in ``batch_submitted``)."""

    async def submit(self, requests: Sequence[ForecastRequest]) -> BatchSubmission:
        """Create a batch of ``requests`` (its id; OpenAI: the input file's id too)."""

    async def poll(self, batch_id: str) -> BatchState:
        """The batch's current state."""

    async def results(self, state: BatchState,
                      requests: Mapping[str, ForecastRequest]) -> list[ItemResult]:
        """The ended batch's item results (``requests``: custom id → its request)."""


T = TypeVar("T")


@dataclass(frozen=True)
class Retrying:
    """A :class:`BatchApi` whose calls are retried after an outage (module docstring).

    ``delay(attempt, retry_after)``: seconds to wait before the next attempt.
    """

    inner: BatchApi
    attempts: int
    delay: Callable[[int, float | None], float]
    sleep: Callable[[float], Awaitable[None]]

    @property
    def provider(self) -> str:
        return self.inner.provider

    async def _retry(self, call: Callable[[], Awaitable[T]], *, submit: bool = False) -> T:
        for attempt in range(1, self.attempts + 1):
            try:
                return await call()
            except TransportError as error:
                if attempt >= self.attempts or (submit and (
                        error.billable or isinstance(error, ConnectionLost))):
                    raise
                await self.sleep(self.delay(attempt, error.retry_after))
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def submit(self, requests: Sequence[ForecastRequest]) -> BatchSubmission:
        return await self._retry(lambda: self.inner.submit(requests), submit=True)

    async def poll(self, batch_id: str) -> BatchState:
        return await self._retry(lambda: self.inner.poll(batch_id))

    async def results(self, state: BatchState,
                      requests: Mapping[str, ForecastRequest]) -> list[ItemResult]:
        return await self._retry(lambda: self.inner.results(state, requests))


def batch_api(backend: object) -> BatchApi:
    """The batch API of the plan's backend; refused for a backend without one."""
    from foreseen.credit.backends.http.anthropic import AnthropicBackend
    from foreseen.credit.backends.http.openai_compatible import OpenAICompatibleBackend

    if isinstance(backend, AnthropicBackend):
        return AnthropicBatches(backend)
    if isinstance(backend, OpenAICompatibleBackend):
        return OpenAIBatches(backend)
    name = getattr(backend, "name", type(backend).__name__)
    raise UserInputError(f"batch mode needs a provider batch API (backend anthropic or"
                         f" openai_compatible); the plan's forecaster is {name!r}")


def _jsonl(text: str) -> list[dict[str, Any]]:
    """The JSON objects of a provider's JSONL results text, as parsed (each is read by
    the protocol's ``item``; blank lines skipped, a broken line refused)."""
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            raise UserInputError(f"batch results: line {number} is not JSON") from None
        if isinstance(row, dict):
            rows.append(row)
    return rows


def _counts(value: Any) -> dict[str, int]:
    """The provider's request counts under its own names (``processing``, ``succeeded``,
    ``completed`` …; shown in progress messages): the integer fields of ``value``."""
    if not isinstance(value, Mapping):
        return {}
    return {str(k): int(v) for k, v in value.items() if isinstance(v, int)}


class _Api(ABC):
    """The HTTP plumbing both protocols share: the key, one client, error mapping."""

    provider = ""

    def __init__(self, backend: HttpBackend) -> None:
        self.backend = backend
        self.options = backend.options

    def key(self) -> str:
        return read_api_key(self.options.api_key_env, self.options.base_url)

    async def call(self, method: str, url: str, data: Any = None,
                   headers: Mapping[str, str] | None = None) -> HttpAnswer:
        key = self.key()
        sent = {**self.auth(key), **(headers or {})}
        return await self.backend.client.send(method, url, sent, data, key,
                                              self.options.api_key_env)

    async def create(self, url: str, data: Any,
                     headers: Mapping[str, str] | None = None) -> HttpAnswer:
        """POST the first request of a submission; a server that does not know the route
        (HTTP 404 or 405) has no batch API: said so, with what to do instead."""
        try:
            return await self.call("POST", url, data, headers)
        except RequestRejected as error:
            if error.status not in NO_BATCH_ROUTE:
                raise
            raise RequestRejected(
                f"the server at {self.options.base_url} has no {self.provider} batch API"
                f" (POST {url} answered HTTP {error.status}: {error.server_message}); run"
                " without --batch (and batch = false), or use a provider that offers"
                " one; nothing was submitted", status=error.status,
                server_message=error.server_message) from None

    def scrubbed(self, text: str) -> str:
        """``text`` without the key (provider texts may echo a request's headers)."""
        return scrub(text, (self.key(),))

    @abstractmethod
    def auth(self, key: str) -> dict[str, str]:
        """The provider's authentication headers for ``key`` (none without a key)."""

    def answer(self, cid: str, body: Any, request: ForecastRequest | None) -> ItemResult:
        """An item whose message arrived, read as the online path reads it."""
        if request is None:
            return ItemResult(cid, "missing", error="result for an item not submitted")
        text = canonical_json(body) if isinstance(body, Mapping) else str(body)
        response = self.backend.batch_response(body, text, request, self.key())
        return ItemResult(cid, "answer", response=response)


class AnthropicBatches(_Api):
    """Anthropic Message Batches (module docstring)."""

    provider = "anthropic"

    @property
    def root(self) -> str:
        return self.options.base_url + "/v1/messages/batches"

    def auth(self, key: str) -> dict[str, str]:
        version = str(getattr(self.backend, "api_version", ""))
        sent = {"anthropic-version": version}
        return {"x-api-key": key, **sent} if key else sent

    async def submit(self, requests: Sequence[ForecastRequest]) -> BatchSubmission:
        items = [{"custom_id": custom_id(r.slot_id), "params": self.backend.payload(r)}
                 for r in requests]
        data = canonical_json({"requests": items}).encode()
        answer = await self.create(self.root, data, {"content-type": "application/json"})
        return BatchSubmission(_batch_id(answer, self.scrubbed), None)

    async def poll(self, batch_id: str) -> BatchState:
        body = (await self.call("GET", f"{self.root}/{batch_id}")).body
        status = str(body.get("processing_status")) if isinstance(body, Mapping) else "?"
        url = body.get("results_url") if isinstance(body, Mapping) else None
        return BatchState(batch_id, status, status in ANTHROPIC_ENDED,
                          _counts(body.get("request_counts") if isinstance(body, Mapping)
                                  else None), (url if isinstance(url, str) else None,))

    async def results(self, state: BatchState,
                      requests: Mapping[str, ForecastRequest]) -> list[ItemResult]:
        url = state.locations[0] if state.locations else None
        if url is None:
            return []
        rows = _jsonl((await self.call("GET", url)).text)
        return [self.item(row, requests) for row in rows]

    def item(self, row: Mapping[str, Any], requests: Mapping[str, ForecastRequest]
             ) -> ItemResult:
        """One results line (module docstring)."""
        cid = str(row.get("custom_id"))
        result = row.get("result") if isinstance(row.get("result"), Mapping) else {}
        assert isinstance(result, Mapping)
        kind = result.get("type")
        if kind == "succeeded":
            return self.answer(cid, result.get("message"), requests.get(cid))
        if kind == "errored":
            outer = result.get("error")
            inner = outer.get("error") if isinstance(outer, Mapping) else None
            summary = error_summary({"error": inner}, "", self.key())
            error_type = inner.get("type") if isinstance(inner, Mapping) else None
            if error_type == "invalid_request_error":
                return ItemResult(cid, "rejected", error=summary, status=400)
            return ItemResult(cid, "transient", error=summary)
        return ItemResult(cid, "missing", error=self.scrubbed(f"item {kind}")[:300])


class OpenAIBatches(_Api):
    """OpenAI Batch (module docstring)."""

    provider = "openai"

    def auth(self, key: str) -> dict[str, str]:
        return {"authorization": f"Bearer {key}"} if key else {}

    async def submit(self, requests: Sequence[ForecastRequest]) -> BatchSubmission:
        aiohttp = import_aiohttp()

        lines = "".join(canonical_json({"custom_id": custom_id(r.slot_id), "method": "POST",
                                        "url": OPENAI_ENDPOINT,
                                        "body": self.backend.payload(r)}) + "\n"
                        for r in requests)
        form = aiohttp.FormData()
        form.add_field("purpose", "batch")
        form.add_field("file", lines.encode(), filename="foreseen-batch.jsonl",
                       content_type="application/jsonl")
        uploaded = await self.create(self.options.base_url + "/files", form)
        file_id = _batch_id(uploaded, self.scrubbed)
        body = canonical_json({"input_file_id": file_id, "endpoint": OPENAI_ENDPOINT,
                               "completion_window": "24h"}).encode()
        created = await self.call("POST", self.options.base_url + "/batches", body,
                                  {"content-type": "application/json"})
        return BatchSubmission(_batch_id(created, self.scrubbed), file_id)

    async def poll(self, batch_id: str) -> BatchState:
        body = (await self.call("GET", f"{self.options.base_url}/batches/{batch_id}")).body
        fields = body if isinstance(body, Mapping) else {}
        status = str(fields.get("status"))
        files = tuple(f if isinstance(f, str) else None
                      for f in (fields.get("output_file_id"), fields.get("error_file_id")))
        return BatchState(batch_id, status, status in OPENAI_ENDED,
                          _counts(fields.get("request_counts")), files)

    async def results(self, state: BatchState,
                      requests: Mapping[str, ForecastRequest]) -> list[ItemResult]:
        if state.status == "failed":  # the input was refused as a whole
            return [ItemResult(cid, "rejected", error="the provider refused the batch input",
                               status=400) for cid in requests]
        rows: list[dict[str, Any]] = []
        for file_id in state.locations:
            if file_id is not None:
                url = f"{self.options.base_url}/files/{file_id}/content"
                rows += _jsonl((await self.call("GET", url)).text)
        return [self.item(row, requests) for row in rows]

    def item(self, row: Mapping[str, Any], requests: Mapping[str, ForecastRequest]
             ) -> ItemResult:
        """One output or error line (module docstring)."""
        cid = str(row.get("custom_id"))
        response = row.get("response") if isinstance(row.get("response"), Mapping) else None
        error = row.get("error") if isinstance(row.get("error"), Mapping) else None
        if response is not None and response.get("status_code") == 200:
            return self.answer(cid, response.get("body"), requests.get(cid))
        if response is not None and isinstance(response.get("status_code"), int):
            status = int(response["status_code"])
            summary = error_summary(response.get("body"), "", self.key())
            kind: ItemKind = "transient" if is_transient(status, summary) else "rejected"
            return ItemResult(cid, kind, error=summary, status=status)
        code = str(error.get("code")) if error is not None else "no response"
        if code in ("batch_expired", "batch_cancelled", "no response"):
            return ItemResult(cid, "missing", error=f"item {code}")
        message = str(error.get("message", "")) if error is not None else ""
        return ItemResult(cid, "transient", error=self.scrubbed(f"{code}: {message}")[:300])


def _batch_id(answer: HttpAnswer, scrubbed: Callable[[str], str]) -> str:
    """The id of a created batch or file (``scrubbed``: removes the key from a text)."""
    body = answer.body
    ident = body.get("id") if isinstance(body, Mapping) else None
    if not isinstance(ident, str) or not ident:
        raise UserInputError("the batch API answered without an id: "
                             + scrubbed(answer.text)[:200])
    return ident
