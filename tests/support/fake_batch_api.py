"""The batch APIs of :class:`~support.fake_llm_server.FakeLLMServer`, with scheduled faults.

Anthropic Message Batches (``POST /v1/messages/batches``, ``GET
/v1/messages/batches/{id}``, ``GET …/{id}/results``: JSONL) and OpenAI Batch
(``POST /v1/files`` multipart with ``purpose = batch``, ``POST /v1/batches``,
``GET /v1/batches/{id}``, ``GET /v1/files/{id}/content``), in the shapes the
official SDKs parse (``tests/credit/backends/test_batch_protocols.py`` checks
them with the SDKs' own types).

Every item is answered by the server's online path (:meth:`FakeLLMServer._reply`):
the same answer, the same usage — input tokens as sent, output as answered,
cache writes and reads by the provider's rules and minimum cacheable length —
as if the item had been sent alone, in submission order.

Faults:

* **slow processing**: a batch ends ``processing_s`` seconds after it was
  created (a run can be killed while it polls);
* **expired / cancelled batch** (``batch_script``: batch number, 1-based →
  ``("expired" | "canceled", k)``): the first ``k`` items are answered, the
  others get no answer (Anthropic ``expired``/``canceled`` results, OpenAI
  ``batch_expired``/``batch_cancelled`` lines in the error file): partial results;
  ``("failed", 0)``: an OpenAI batch whose input is refused as a whole;
* **per-item errors** (``item_faults``: custom id → the fault of each of its
  attempts, then ``none``): ``errored`` (a transient provider error:
  Anthropic ``overloaded_error``, OpenAI status 500), ``invalid`` (Anthropic
  ``invalid_request_error``, OpenAI 400), ``dropped`` (the item is absent from
  the results), or any content fault of the online path
  (``schema_breaking``, ``not_json_answer``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from support.fake_llm_server import FakeLLMServer

Reply = tuple[int, dict[str, str], bytes]


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class FakeBatch:
    """One submitted batch: its items, when it ends, and its results once processed."""

    batch_id: str
    api: str
    number: int
    items: list[tuple[str, dict[str, Any]]]
    created: float
    ends: float
    input_file_id: str | None = None
    results: dict[str, dict[str, Any]] | None = None
    final: str = "ended"


@dataclass
class FakeBatches:
    """The batch endpoints of one fake server (module docstring)."""

    server: FakeLLMServer
    processing_s: float = 0.0
    batch_script: dict[int, tuple[str, int]] = field(default_factory=dict)
    item_faults: dict[str, list[str]] = field(default_factory=dict)
    batches: dict[str, FakeBatch] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    #: batch creations received, in order (a resumed run must not add one)
    created: list[str] = field(default_factory=list)
    item_attempts: dict[str, int] = field(default_factory=dict)
    #: the next this many batch-API requests are answered "overloaded" (an outage)
    down_requests: int = 0
    #: the JSON body of every batch creation, in order
    create_bodies: list[dict[str, Any]] = field(default_factory=list)
    #: False: a server without batch endpoints (llama.cpp, vLLM): their paths are a 404
    available: bool = True

    def routes(self, path: str) -> bool:
        """Whether ``path`` is a batch-API path (never when the API is not ``available``)."""
        return self.available and (
            "/batches" in path or path.endswith("/files") or "/files/" in path)

    async def handle(self, method: str, path: str, headers: Mapping[str, str],
                     raw: bytes) -> Reply:
        anthropic = "/messages/batches" in path
        bearer = headers.get("authorization", "").removeprefix("Bearer ")
        # Anthropic takes the key as x-api-key (foreseen) or as a bearer token (its SDK)
        given = (headers.get("x-api-key") or bearer) if anthropic else bearer
        if given != self.server.key or (anthropic and "anthropic-version" not in headers):
            return 401, {}, _error(anthropic, "authentication_error", "invalid key")
        if self.down_requests > 0:
            self.down_requests -= 1
            return (529 if anthropic else 503), {}, _error(anthropic, "overloaded_error",
                                                           "overloaded")
        parts = path.split("?")[0].rstrip("/").split("/")
        if method == "POST" and parts[-1] == "files":
            return self.upload(headers, raw)
        if method == "POST" and parts[-1] == "batches":
            return self.create(anthropic, raw)
        if method == "GET" and parts[-1] == "content" and parts[-3] == "files":
            data = self.files.get(parts[-2])
            return (200, {}, data) if data is not None else (404, {}, _error(
                False, "not_found_error", "no such file"))
        batch = self.batches.get(parts[-2] if parts[-1] == "results" else parts[-1])
        if method != "GET" or batch is None:
            return 404, {}, _error(anthropic, "not_found_error", "no such batch")
        await self.process(batch)
        if parts[-1] == "results":
            if batch.results is None:
                return 404, {}, _error(True, "not_found_error", "batch still in progress")
            lines = "".join(json.dumps(row) + "\n" for row in batch.results.values())
            return 200, {}, lines.encode()
        return 200, {}, json.dumps(self.describe(batch)).encode()

    def upload(self, headers: Mapping[str, str], raw: bytes) -> Reply:
        fields = multipart_fields(headers.get("content-type", ""), raw)
        if fields.get("purpose") != b"batch" or "file" not in fields:
            return 400, {}, _error(False, "invalid_request_error", "purpose and file needed")
        file_id = f"file-{len(self.files) + 1:06d}"
        self.files[file_id] = fields["file"]
        body = {"id": file_id, "object": "file", "bytes": len(fields["file"]),
                "created_at": int(time.time()), "filename": "input.jsonl", "purpose": "batch",
                "status": "processed"}
        return 200, {}, json.dumps(body).encode()

    def create(self, anthropic: bool, raw: bytes) -> Reply:
        request = json.loads(raw)
        self.create_bodies.append(request)
        if anthropic:
            items = [(str(r["custom_id"]), r["params"]) for r in request["requests"]]
            file_id = None
        else:
            file_id = str(request.get("input_file_id"))
            data = self.files.get(file_id)
            if data is None or request.get("endpoint") != "/v1/chat/completions":
                return 400, {}, _error(False, "invalid_request_error", "bad input file")
            lines = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
            items = [(str(r["custom_id"]), r["body"]) for r in lines]
        number = len(self.created) + 1
        batch_id = (f"msgbatch_{number:06d}" if anthropic else f"batch_{number:06d}")
        now = time.time()
        batch = FakeBatch(batch_id, "anthropic" if anthropic else "openai", number, items, now,
                          now + self.processing_s, file_id)
        self.batches[batch_id] = batch
        self.created.append(batch_id)
        return 200, {}, json.dumps(self.describe(batch)).encode()

    async def process(self, batch: FakeBatch) -> None:
        """Answer the batch's items once its processing time is over (module docstring)."""
        if batch.results is not None or time.time() < batch.ends:
            return
        stop, answered = self.batch_script.get(batch.number, ("ended", len(batch.items)))
        batch.final = stop
        results: dict[str, dict[str, Any]] = {}
        if stop == "failed":  # OpenAI: the input file refused as a whole, nothing run
            batch.results = results
            return
        for index, (cid, params) in enumerate(batch.items):
            if index >= answered:
                results[cid] = self.unanswered(batch, cid, stop)
                continue
            row = await self.item(batch, cid, params)
            if row is not None:
                results[cid] = row
        batch.results = results

    def unanswered(self, batch: FakeBatch, cid: str, stop: str) -> dict[str, Any]:
        if batch.api == "anthropic":
            return {"custom_id": cid, "result": {"type": stop}}
        code = "batch_expired" if stop == "expired" else "batch_cancelled"
        return {"id": f"batch_req_{cid}", "custom_id": cid, "response": None,
                "error": {"code": code, "message": "This request could not be executed"
                          " before the batch ended."}}

    async def item(self, batch: FakeBatch, cid: str,
                   params: dict[str, Any]) -> dict[str, Any] | None:
        attempt = self.item_attempts.get(cid, 0) + 1
        self.item_attempts[cid] = attempt
        plan = self.item_faults.get(cid, [])
        fault = plan[attempt - 1] if attempt <= len(plan) else "none"
        api = batch.api
        self.server.log.append((cid, attempt, fault, f"{api}-batch"))
        self.server.bodies.append(params)
        if fault == "dropped":
            return None
        problem = self.server._check_shape(api, params)
        if fault in ("errored", "invalid") or problem is not None:
            invalid = fault == "invalid" or problem is not None
            kind = "invalid_request_error" if invalid else "overloaded_error"
            return self.failure(batch, cid, kind, problem or kind, 400 if invalid else 500)
        status, _, payload = await self.server._reply(api, fault, cid, params)
        body = json.loads(payload)
        if api == "anthropic":
            return {"custom_id": cid, "result": {"type": "succeeded", "message": body}}
        return {"id": f"batch_req_{cid}", "custom_id": cid, "error": None,
                "response": {"status_code": status, "request_id": f"req_{cid}", "body": body}}

    def failure(self, batch: FakeBatch, cid: str, kind: str, message: str,
                status: int) -> dict[str, Any]:
        if batch.api == "anthropic":
            return {"custom_id": cid, "result": {"type": "errored", "error": {
                "type": "error", "error": {"type": kind, "message": message},
                "request_id": f"req_{cid}"}}}
        return {"id": f"batch_req_{cid}", "custom_id": cid, "error": None,
                "response": {"status_code": status, "request_id": f"req_{cid}",
                             "body": {"error": {"message": message, "type": kind,
                                                "param": None, "code": None}}}}

    def describe(self, batch: FakeBatch) -> dict[str, Any]:
        """The batch object each API answers (Anthropic MessageBatch, OpenAI Batch)."""
        rows = list((batch.results or {}).values())
        done = batch.results is not None
        if batch.api == "anthropic":
            kinds = [row["result"]["type"] for row in rows]
            counts = {k: kinds.count(k) for k in ("succeeded", "errored", "canceled",
                                                  "expired")}
            counts["processing"] = 0 if done else len(batch.items)
            return {"id": batch.batch_id, "type": "message_batch",
                    "processing_status": "ended" if done else "in_progress",
                    "request_counts": counts, "created_at": _iso(batch.created),
                    "expires_at": _iso(batch.created + 86400),
                    "ended_at": _iso(batch.ends) if done else None, "archived_at": None,
                    "cancel_initiated_at": (_iso(batch.ends) if batch.final == "canceled"
                                            else None),
                    "results_url": (f"{self.server.base_url}/v1/messages/batches/"
                                    f"{batch.batch_id}/results" if done else None)}
        return self.describe_openai(batch, rows, done)

    def describe_openai(self, batch: FakeBatch, rows: list[dict[str, Any]],
                        done: bool) -> dict[str, Any]:
        good = [r for r in rows if r.get("response") and r["response"]["status_code"] == 200]
        bad = [r for r in rows if r not in good]
        output = error = None
        if done and good:
            output = f"file-out-{batch.batch_id}"
            self.files[output] = "".join(json.dumps(r) + "\n" for r in good).encode()
        if done and bad:
            error = f"file-err-{batch.batch_id}"
            self.files[error] = "".join(json.dumps(r) + "\n" for r in bad).encode()
        status = {"ended": "completed", "expired": "expired", "canceled": "cancelled",
                  "failed": "failed"}[batch.final] if done else "in_progress"
        errors = None if status != "failed" else {"object": "list", "data": [
            {"code": "invalid_request", "message": "the input file is not valid",
             "param": None, "line": 1}]}
        ended = int(batch.ends) if done else None
        return {"id": batch.batch_id, "object": "batch", "endpoint": "/v1/chat/completions",
                "errors": errors, "input_file_id": batch.input_file_id,
                "completion_window": "24h", "status": status, "output_file_id": output,
                "error_file_id": error, "created_at": int(batch.created),
                "in_progress_at": int(batch.created), "expires_at": int(batch.created) + 86400,
                "finalizing_at": ended, "completed_at": ended if status == "completed" else None,
                "failed_at": None, "expired_at": ended if status == "expired" else None,
                "cancelling_at": None,
                "cancelled_at": ended if status == "cancelled" else None,
                "request_counts": {"total": len(batch.items), "completed": len(good),
                                   "failed": len(bad)}, "metadata": None}


def multipart_fields(content_type: str, raw: bytes) -> dict[str, bytes]:
    """The fields of a ``multipart/form-data`` body, by name."""
    marker = "boundary="
    if marker not in content_type:
        return {}
    boundary = content_type.split(marker, 1)[1].split(";")[0].strip().strip('"').encode()
    fields: dict[str, bytes] = {}
    for part in raw.split(b"--" + boundary):
        head, sep, body = part.partition(b"\r\n\r\n")
        if not sep or b"name=" not in head:
            continue
        name = head.split(b"name=", 1)[1].split(b";")[0].split(b"\r\n")[0].strip(b'"')
        fields[name.decode()] = body.removesuffix(b"\r\n")
    return fields


def _error(anthropic: bool, kind: str, message: str) -> bytes:
    if anthropic:
        return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()
    return json.dumps({"error": {"message": message, "type": kind, "param": None,
                                 "code": None}}).encode()
