"""The batch protocols against the official SDKs (test-only dependencies).

Both ways: the SDKs' own clients drive the test server's batch endpoints and
parse every answer with their types (``anthropic.types.messages.MessageBatch``,
``MessageBatchIndividualResponse``; ``openai.types.Batch``, ``FileObject``), the
faults included (expired and cancelled batches, errored items); and every
request foreseen sends to a batch API fits the SDK's request param types.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import openai
import pytest
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from anthropic.types.messages import MessageBatch, MessageBatchIndividualResponse
from anthropic.types.messages.batch_create_params import BatchCreateParams as AnthropicCreate
from openai.types import Batch, BatchCreateParams, FileObject
from openai.types.chat import ChatCompletion
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

from foreseen.credit.backends.base import ForecastRequest
from foreseen.credit.backends.http.batches import (
    OPENAI_ENDPOINT,
    BatchSubmission,
    batch_api,
    custom_id,
)
from foreseen.credit.backends.registry import make_backend

from support.fake_llm_server import FakeLLMServer
from support.http import API_NAMES, KEY, KEY_ENV, backend_options
from support.typed_check import check

REQUESTS = [ForecastRequest(f"-|s{i}|description|1", f"s{i}", "description", 1,
                            f"State {i}. Forecast the change as JSON.", i, cache_prefix=9)
            for i in range(4)]


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


def _backend(api: str, server: FakeLLMServer) -> Any:
    return make_backend({"backend": API_NAMES[api],
                         "options": backend_options(api, server.base_url)})


def _script(server: FakeLLMServer, stop: str | None) -> None:
    server.batch_api.item_faults = {custom_id(REQUESTS[0].slot_id): ["errored"],
                                    custom_id(REQUESTS[1].slot_id): ["invalid"]}
    if stop is not None:
        server.batch_api.batch_script = {1: (stop, 3)}


@pytest.mark.parametrize("stop", [None, "expired", "canceled"])
def test_the_anthropic_sdk_reads_the_test_servers_batches(stop: str | None) -> None:
    with FakeLLMServer(KEY) as server:
        _script(server, stop)
        payloads = [_backend("anthropic", server).payload(r) for r in REQUESTS]
        client = anthropic.Anthropic(api_key=KEY, base_url=server.base_url, max_retries=0)
        created = client.messages.batches.create(requests=[
            {"custom_id": custom_id(r.slot_id), "params": p}  # type: ignore[misc]
            for r, p in zip(REQUESTS, payloads, strict=True)])
        assert isinstance(created, MessageBatch) and created.processing_status == "in_progress"
        ended = client.messages.batches.retrieve(created.id)
        assert ended.processing_status == "ended" and ended.results_url is not None
        results = list(client.messages.batches.results(created.id))
    assert all(isinstance(r, MessageBatchIndividualResponse) for r in results)
    kinds = [r.result.type for r in results]
    assert kinds[:3] == ["errored", "errored", "succeeded"]
    assert kinds[3] == ("succeeded" if stop is None else stop)
    counts = ended.request_counts
    assert (counts.succeeded, counts.errored, counts.processing) == (
        kinds.count("succeeded"), 2, 0)
    errored = results[1].result
    assert errored.type == "errored" and errored.error.error.type == "invalid_request_error"


@pytest.mark.parametrize("stop", [None, "expired", "canceled"])
def test_the_openai_sdk_reads_the_test_servers_batches(stop: str | None) -> None:
    with FakeLLMServer(KEY) as server:
        _script(server, stop)
        backend = _backend("openai", server)
        lines = "".join(json.dumps({"custom_id": custom_id(r.slot_id), "method": "POST",
                                    "url": OPENAI_ENDPOINT, "body": backend.payload(r)}) + "\n"
                        for r in REQUESTS)
        client = openai.OpenAI(api_key=KEY, base_url=server.base_url + "/v1", max_retries=0)
        uploaded = client.files.create(file=("in.jsonl", lines.encode()), purpose="batch")
        assert isinstance(uploaded, FileObject) and uploaded.purpose == "batch"
        created = client.batches.create(input_file_id=uploaded.id, endpoint=OPENAI_ENDPOINT,
                                        completion_window="24h")
        ended = client.batches.retrieve(created.id)
        assert isinstance(ended, Batch)
        assert ended.status == {None: "completed", "expired": "expired",
                                "canceled": "cancelled"}[stop]
        output = client.files.content(ended.output_file_id or "").text
        errors = client.files.content(ended.error_file_id or "").text
    answered = [json.loads(line) for line in output.splitlines()]
    failed = [json.loads(line) for line in errors.splitlines()]
    for row in answered:
        ChatCompletion.model_validate(row["response"]["body"])
    assert ended.request_counts is not None
    assert (ended.request_counts.completed, ended.request_counts.failed) == (
        len(answered), len(failed))
    codes = sorted(str(r["error"]["code"]) if r["error"] else str(r["response"]["status_code"])
                   for r in failed)
    expected = ["400", "500"] + ([] if stop is None else [
        "batch_expired" if stop == "expired" else "batch_cancelled"])
    assert codes == expected


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_foreseens_batch_requests_fit_the_sdk_param_types(api: str) -> None:
    with FakeLLMServer(KEY) as server:
        backend = _backend(api, server)
        submitted = asyncio.run(_submit(backend))
        batch_id, file_id = submitted.batch_id, submitted.input_file_id
        bodies = server.batch_api.create_bodies
        files = dict(server.batch_api.files)
    assert len(bodies) == 1 and batch_id in server.batch_api.created
    if api == "anthropic":
        assert file_id is None  # Anthropic takes the items in the creating request
        check(bodies[0], AnthropicCreate)
        items = bodies[0]["requests"]
        for item in items:
            check(item["params"], MessageCreateParamsNonStreaming)
        params = [item["params"] for item in items]
    else:
        check(bodies[0], BatchCreateParams)
        assert file_id is not None and bodies[0]["input_file_id"] == file_id
        rows = [json.loads(line) for line in files[file_id].decode().splitlines()]
        assert {r["url"] for r in rows} == {OPENAI_ENDPOINT}
        for row in rows:
            check(row["body"], CompletionCreateParamsNonStreaming)
        params = [row["body"] for row in rows]
        items = rows
    # byte for byte the online bodies, under ids the providers accept
    assert params == [backend.payload(r) for r in REQUESTS]
    assert all(len(item["custom_id"]) <= 64 and item["custom_id"].replace("_", "").isalnum()
               for item in items)


async def _submit(backend: Any) -> BatchSubmission:
    try:
        return await batch_api(backend).submit(REQUESTS)
    finally:
        await backend.aclose()


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_the_key_never_reaches_an_item_error_or_a_batch_id_error(api: str) -> None:
    """A provider's error text that echoes the key (a proxy quoting the request headers) is
    written to the ledger's call_failed and to the one-line error: it must be scrubbed."""
    from foreseen.core.errors import UserInputError
    from foreseen.credit.backends.http.batches import _batch_id
    from foreseen.credit.backends.http.common import HttpAnswer

    with FakeLLMServer(KEY) as server:
        api_of = batch_api(_backend(api, server))
        cid = custom_id(REQUESTS[0].slot_id)
        row: dict[str, Any] = (
            {"custom_id": cid, "result": {"type": f"weird {KEY}"}} if api == "anthropic" else
            {"custom_id": cid, "response": None,
             "error": {"code": "server_error", "message": f"upstream said: Bearer {KEY}"}})
        result = api_of.item(row, {cid: REQUESTS[0]})  # type: ignore[attr-defined]
        assert result.error is not None and KEY not in result.error
        with pytest.raises(UserInputError) as refused:
            _batch_id(HttpAnswer(200, {"echo": KEY}, json.dumps({"echo": KEY})),
                      api_of.scrubbed)  # type: ignore[attr-defined]
    assert KEY not in str(refused.value)


class _Failing:
    """A batch API whose calls fail with ``error`` (counting them)."""

    provider = "anthropic"

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.calls = 0

    async def submit(self, requests: Any) -> tuple[str, str | None]:
        self.calls += 1
        raise self.error

    async def poll(self, batch_id: str) -> Any:
        self.calls += 1
        raise self.error

    async def results(self, state: Any, requests: Any) -> Any:
        raise AssertionError("not called")


async def _instant(_: float) -> None:
    return None


@pytest.mark.parametrize(("kind", "submissions"), [("refused", 3), ("lost", 1), ("timeout", 1)])
def test_a_submission_that_may_have_arrived_is_never_sent_twice(kind: str,
                                                                submissions: int) -> None:
    """A refused connection sent nothing (retried); a lost one or a timeout may have created
    the batch: sending it again could pay every slot twice. Polls are retried either way."""
    from foreseen.credit.backends.base import TransportError
    from foreseen.credit.backends.http.batches import Retrying
    from foreseen.credit.backends.http.common import ConnectionLost, RequestTimeout

    error = {"refused": TransportError("connection error ClientConnectorError: refused"),
             "lost": ConnectionLost("connection error ServerDisconnectedError: gone"),
             "timeout": RequestTimeout("timeout after 5 s")}[kind]
    inner = _Failing(error)
    api = Retrying(inner, 3, lambda attempt, after: 0.0, _instant)  # type: ignore[arg-type]
    with pytest.raises(TransportError):
        asyncio.run(api.submit(REQUESTS))
    assert inner.calls == submissions
    polled = _Failing(error)
    with pytest.raises(TransportError):
        asyncio.run(Retrying(polled, 3, lambda attempt, after: 0.0,  # type: ignore[arg-type]
                             _instant).poll("b1"))
    assert polled.calls == 3


def test_a_connection_dropped_after_it_was_made_is_a_lost_connection() -> None:
    """The server reads the request and hangs up (ConnectionLost); a port nobody listens on
    refuses the connection (a plain transport error: nothing was sent)."""
    import socket

    from foreseen.credit.backends.base import TransportError
    from foreseen.credit.backends.http.common import ConnectionLost, ReusedClient

    async def scenario() -> tuple[Exception, Exception]:
        async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.read(1024)
            writer.close()

        server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        with socket.socket() as probe:  # a free port, closed again: nobody listens there
            probe.bind(("127.0.0.1", 0))
            closed = probe.getsockname()[1]
        client = ReusedClient(5.0, 2)
        caught: list[Exception] = []
        for url in (f"http://127.0.0.1:{port}/v1/messages/batches",
                    f"http://127.0.0.1:{closed}/v1/messages/batches"):
            try:
                await client.send("POST", url, {}, b"{}", KEY, KEY_ENV)
            except TransportError as error:
                caught.append(error)
        await client.aclose()
        server.close()
        await server.wait_closed()
        return caught[0], caught[1]

    lost, refused = asyncio.run(scenario())
    assert isinstance(lost, ConnectionLost)
    assert not isinstance(refused, ConnectionLost) and not refused.billable
