"""A local fake of the Anthropic Messages and OpenAI chat-completions APIs, with scheduled faults.

Started inside the test (or benchmark) process: an asyncio HTTP/1.1 server
with keep-alive in a background thread. It checks each API's request shape
and key, answers in each API's response shape, and injects faults from
:func:`fault_for` — a **pure function of (seed, slot id, attempt)** — so a test
can compute the expected outcome of every slot without the server. The slot
id travels in the ``X-Foreseen-Slot`` header; the attempt is the server's
count of requests for that slot (attempts of one slot are sequential).

Faults (each has a class: transport → retried; content → fallback; benign):

* transport: ``http_429`` (Retry-After), ``http_500`` (error body),
  ``http_overloaded`` (Anthropic 529 / OpenAI 503, error body), ``timeout``
  (never answers before the client's timeout), ``disconnect`` (closes the
  connection without an answer); a ``dead`` slot (per-slot draw) answers
  ``http_500`` on every attempt;
* content: ``truncated_json`` (200 with a body cut in half),
  ``schema_breaking`` (the answer lacks ``upper``), ``not_json_answer`` (prose);
* rejected (never drawn by the schedule; scripted only): ``http_400_error_body``
  (an error body that echoes the key — the client must scrub it);
* benign: ``slow`` (answers after ``slow_s``), ``no_model_id`` (no ``model``).

**Usage** is reported as a provider bills it: input tokens from everything the
request gives the model to read (:func:`sent_text`: system, messages, tools,
response format), output tokens from the answer as returned, cache writes and
reads by each provider's rules and minimum cacheable length
(:meth:`FakeLLMServer.anthropic_cache`, :meth:`FakeLLMServer.openai_cache`); an answer longer
than the request's ``max_tokens`` is cut there (:func:`capped`; Anthropic
``stop_reason = "max_tokens"``, OpenAI ``finish_reason = "length"``).

**Scripted** answers (``scripted``: slot id → directive) override the above
for a slot: ``json:<text>`` answers ``<text>`` as the structured answer (an
Anthropic tool call with that input, or OpenAI content), ``text:<text>`` as
prose, ``refuse:<text>`` as a refusal (OpenAI ``message.refusal``; Anthropic
``stop_reason = "refusal"`` with the text), ``down`` answers ``http_500``
on every attempt and ``fault:<fault>`` answers that fault (above) on every attempt.

**Batch APIs**: Anthropic Message Batches and OpenAI Batch, each item answered as
above (:mod:`support.fake_batch_api`; its faults are set on ``server.batch_api``).

**Flavours** (``flavour``) imitate which output modes real OpenAI-compatible
servers accept and how they say no (:data:`FLAVOURS`; their documented
behaviour, ``docs/servers.md``): a mode a flavour *rejects* answers that
server's error (status and body shape); a mode it *ignores* is answered as if
no constraint were asked (prose); an accepted mode is answered in that mode
(``tools``: a tool call whose ``arguments`` are the JSON).

Run as a script (``python fake_llm_server.py --latency 0.1``) it prints
``port <n>`` and serves until its standard input closes.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

TRANSPORT_FAULTS: tuple[str, ...] = ("http_429", "http_500", "http_overloaded", "timeout",
                                     "disconnect")
CONTENT_FAULTS: tuple[str, ...] = ("truncated_json", "schema_breaking", "not_json_answer")
REJECTED_FAULTS: tuple[str, ...] = ("http_400_error_body",)
BENIGN_FAULTS: tuple[str, ...] = ("slow", "no_model_id")
ALL_FAULTS: tuple[str, ...] = TRANSPORT_FAULTS + CONTENT_FAULTS + BENIGN_FAULTS
RETRY_AFTER_S = 1.5
MODES = ("json_schema", "json_object", "tools", "grammar", "text")


@dataclass(frozen=True)
class Flavour:
    """How one kind of OpenAI-compatible server treats each output mode, and its errors.

    ``modes``: mode → ``accept``, ``ignore`` (unconstrained: answered as in ``text``
    mode, the JSON only when the prompt asks for it) or ``(status,
    message)`` (rejected with that status); ``error_shape``: ``openai`` (``{"error":
    {"message", "type", "param", "code"}}``), ``vllm_legacy`` (root-level ``{"object":
    "error", "message", "type", "code"}``) or ``llamacpp`` (``{"error": {"code",
    "message", "type"}}``); ``model_not_found``: the status and message for an unknown
    model (``serves`` names the one model it serves; None: any).
    """

    modes: Mapping[str, Any]
    error_shape: str = "openai"
    error_type: str = "invalid_request_error"
    model_not_found: tuple[int, str] = (404, "The model `{model}` does not exist")
    serves: str | None = None


#: documented behaviours of real servers (docs/servers.md has the sources)
FLAVOURS: dict[str, Flavour] = {
    # OpenAI: strict about request fields its published types do not define (a json_object
    # response_format has no schema field there; grammar is no request field)
    "openai": Flavour({"json_schema": "accept",
                       "json_object": (400, "Additional properties are not allowed ('schema'"
                                       " was unexpected) - 'response_format'"),
                       "tools": "accept",
                       "grammar": (400, "Unrecognized request argument supplied: grammar"),
                       "text": "accept"}),
    # vLLM (OpenAI-compatible server): unknown fields are ignored with a warning; older
    # releases answer errors at the root of the body
    "vllm": Flavour({"json_schema": "accept", "json_object": "accept", "tools": "accept",
                     "grammar": "ignore", "text": "accept"}, error_shape="vllm_legacy",
                    error_type="BadRequestError",
                    model_not_found=(404, "The model `{model}` does not exist.")),
    # Ollama's /v1 compatibility layer: unknown fields ignored; an unknown model is a 404
    "ollama": Flavour({"json_schema": "accept", "json_object": "accept", "tools": "accept",
                       "grammar": "ignore", "text": "accept"},
                      model_not_found=(404, 'model "{model}" not found, try pulling it'
                                       ' first'), error_type="api_error"),
    # llama.cpp's C++ server (llama-server) started without --jinja: a request it cannot
    # parse is an invalid_request_error (HTTP 400)
    "llamacpp": Flavour({"json_schema": "accept", "json_object": "accept",
                         "tools": (400, "tools param requires --jinja flag"),
                         "grammar": "accept", "text": "accept"}, error_shape="llamacpp"),
    # llama-cpp-python 0.3's server: response_format type is 'text' or 'json_object' only;
    # its route handler turns the validation error into HTTP 500
    "llama_cpp_python": Flavour({
        "json_schema": (500, "[{'type': 'literal_error', 'loc': ('body', 'response_format',"
                        " 'type'), 'msg': \"Input should be 'text' or 'json_object'\","
                        " 'input': 'json_schema'}]"),
        "json_object": "accept", "tools": "accept", "grammar": "accept", "text": "accept"},
        error_type="internal_server_error"),
}


def uniform(seed: int, slot: str, attempt: int, salt: str) -> float:
    """A uniform draw in [0, 1) from SHA-256(f"{seed}|{slot}|{attempt}|{salt}")."""
    digest = hashlib.sha256(f"{seed}|{slot}|{attempt}|{salt}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


def fault_for(seed: int, slot: str, attempt: int, *, rate: float = 0.2,
              dead_rate: float = 0.0) -> str:
    """The fault for this attempt of this slot: ``none`` or one of :data:`ALL_FAULTS`.

    A slot is dead (``http_500`` on every attempt) with probability ``dead_rate``;
    otherwise each attempt is faulty with probability ``rate``, the kind drawn
    uniformly from :data:`ALL_FAULTS`.
    """
    if dead_rate > 0 and uniform(seed, slot, 0, "dead") < dead_rate:
        return "http_500"
    if uniform(seed, slot, attempt, "faulty") >= rate:
        return "none"
    pick = uniform(seed, slot, attempt, "kind")
    return ALL_FAULTS[min(int(pick * len(ALL_FAULTS)), len(ALL_FAULTS) - 1)]


def answer_for(slot: str) -> dict[str, float]:
    """The deterministic valid forecast the server gives a slot."""
    draw = uniform(0, slot, 0, "answer")
    point = round(draw * 0.2 - 0.1, 6)
    return {"point": point, "lower": round(point - 0.05, 6), "upper": round(point + 0.05, 6),
            "direction_probability": round(0.3 + 0.4 * draw, 6)}


def usage_for(prompt: str, answer_text: str) -> tuple[int, int]:
    """Deterministic token usage: (prompt bytes // 4 + 7, answer bytes // 4 + 3)."""
    return len(prompt.encode()) // 4 + 7, len(answer_text.encode()) // 4 + 3


def _blocks(content: Any) -> list[dict[str, Any]]:
    """A message's or system's content as text blocks (a string is one unmarked block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [block for block in content if isinstance(block, dict)]
    return []


def prefix_pieces(request: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """The request's input in the order a provider caches it, as (text, breakpoint) pieces.

    Tools and the response format first (canonical JSON), then the system
    prompt, then each message's text blocks; a piece is a breakpoint when its
    block carries ``cache_control`` (Anthropic's prefix order: tools, system,
    messages).
    """
    pieces: list[tuple[str, bool]] = []
    for key in ("tools", "response_format"):
        if request.get(key) is not None:
            pieces.append((json.dumps(request[key], sort_keys=True, separators=(",", ":")),
                           False))
    for block in _blocks(request.get("system")):
        pieces.append((str(block.get("text", "")), "cache_control" in block))
    for message in request.get("messages", []):
        for block in _blocks(message.get("content")):
            pieces.append((str(block.get("text", "")), "cache_control" in block))
    return pieces


def sent_text(request: Mapping[str, Any]) -> str:
    """Everything a request gives the model to read, as the provider bills it.

    The canonical JSON of the tools and of the ``response_format`` (a provider
    renders both into the model's input), the system prompt and every message's
    text (:func:`prefix_pieces`).
    """
    return "".join(text for text, _ in prefix_pieces(request))


def prefix_tokens(text: str) -> int:
    """Tokens of a cached prefix: its bytes // 4 (the rule :func:`usage_for` uses)."""
    return len(text.encode()) // 4


def capped(answer_text: str, max_tokens: int) -> tuple[str, bool]:
    """The answer a provider returns under ``max_tokens``: cut when longer (True), else whole.

    The answer's tokens are its bytes // 4 + 3 (:func:`usage_for`); an answer
    over the cap is cut to ``4 · (max_tokens − 3)`` bytes, as a provider stops
    generating at the cap (Anthropic ``stop_reason = "max_tokens"``, OpenAI
    ``finish_reason = "length"``).
    """
    if len(answer_text.encode()) // 4 + 3 <= max_tokens:
        return answer_text, False
    keep = max(0, 4 * (max_tokens - 3))
    return answer_text.encode()[:keep].decode("utf-8", errors="ignore"), True


@dataclass
class FakeLLMServer:
    """The fake server; use as a context manager. ``base_url`` once started."""

    key: str
    seed: int = 0
    fault_rate: float = 0.0
    dead_rate: float = 0.0
    latency_s: float = 0.0
    slow_s: float = 0.2
    hang_s: float = 60.0
    host: str = "127.0.0.1"
    port: int = 0
    attempts: dict[str, int] = field(default_factory=dict)
    log: list[tuple[str, int, str, str]] = field(default_factory=list)
    shape_errors: list[str] = field(default_factory=list)
    #: an outage schedule: called with the server's request count (1, 2, …); True → the
    #: service is down for that request (it answers 503 overloaded, a transport failure)
    down: Callable[[int], bool] | None = None
    requests: int = 0
    #: slot id → scripted directive (module docstring)
    scripted: dict[str, str] = field(default_factory=dict)
    #: which OpenAI-compatible server to imitate (:data:`FLAVOURS`)
    flavour: str = "openai"
    #: output mode of every OpenAI-API request, in arrival order
    modes_seen: list[str] = field(default_factory=list)
    #: the provider's minimum cacheable prompt length in tokens (Anthropic Sonnet and
    #: Opus 4: 1,024; OpenAI: 1,024)
    cache_min_tokens: int = 1024
    #: digests of the prompt prefixes in the cache (model + text)
    cached: set[str] = field(default_factory=set)
    #: every request body received, in arrival order
    bodies: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        try:
            from support.fake_batch_api import FakeBatches
        except ImportError:  # run as a script from tests/support
            from fake_batch_api import FakeBatches  # type: ignore[no-redef]

        #: the batch APIs (:mod:`support.fake_batch_api`): their faults are set on it
        self.batch_api = FakeBatches(self)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._server: asyncio.AbstractServer | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> FakeLLMServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._serve, name="fake-llm-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake LLM server did not start")

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        self._server = loop.run_until_complete(
            asyncio.start_server(self._connection, self.host, self.port, backlog=512))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.close()

    def stop(self) -> None:
        loop, server = self._loop, self._server
        if loop is None or server is None:
            return

        def shutdown() -> None:
            server.close()
            loop.stop()

        loop.call_soon_threadsafe(shutdown)
        if self._thread is not None:
            self._thread.join(10)
        self._loop = None

    async def _connection(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        name, _, value = line.partition(":")
                        headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                reply = await self._handle(method, path, headers, body)
                if reply is None:
                    return  # disconnect / timeout: close without an answer
                status, extra, payload = reply
                phrase = {200: "OK", 400: "Bad Request", 401: "Unauthorized",
                          429: "Too Many Requests", 500: "Internal Server Error",
                          503: "Service Unavailable", 529: "Overloaded"}.get(status, "Status")
                header_lines = "".join(f"{k}: {v}\r\n" for k, v in extra.items())
                writer.write(f"HTTP/1.1 {status} {phrase}\r\nContent-Type: application/json\r\n"
                             f"Content-Length: {len(payload)}\r\n{header_lines}\r\n"
                             .encode("latin-1") + payload)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            return  # client gone, or the server is shutting down
        finally:
            writer.close()

    def _check_shape(self, api: str, request: Mapping[str, Any]) -> str | None:
        if not isinstance(request.get("model"), str) or not request.get("model"):
            return "model missing"
        if not isinstance(request.get("max_tokens"), int):
            return "max_tokens missing"
        messages = request.get("messages")
        if not isinstance(messages, list) or not messages or messages[-1].get("role") != "user":
            return "messages must end with a user message"
        return (_anthropic_shape(request, messages) if api == "anthropic"
                else _openai_shape(request))

    async def _handle(self, method: str, path: str, headers: Mapping[str, str],
                      raw: bytes) -> tuple[int, dict[str, str], bytes] | None:
        if self.batch_api.routes(path):
            return await self.batch_api.handle(method, path, headers, raw)
        api = "anthropic" if path.endswith("/messages") else (
            "openai" if path.endswith("/chat/completions") else "")
        if method != "POST" or not api:
            return 404, {}, b'{"error": {"type": "not_found_error", "message": "no route"}}'
        given = (headers.get("x-api-key") if api == "anthropic"
                 else headers.get("authorization", "").removeprefix("Bearer "))
        if given != self.key or (api == "anthropic" and "anthropic-version" not in headers):
            body = {"error": {"type": "authentication_error",
                              "message": f"invalid x-api-key {given}"}}
            return 401, {}, json.dumps(body).encode()
        request = json.loads(raw)
        self.bodies.append(request)
        problem = self._check_shape(api, request)
        if problem is not None:
            self.shape_errors.append(problem)
            return 400, {}, json.dumps({"error": {"type": "invalid_request_error",
                                                  "message": problem}}).encode()
        if api == "openai":
            refused = self._flavour_refusal(request)
            if refused is not None:
                return refused
        slot = headers.get("x-foreseen-slot", "")
        attempt = self.attempts.get(slot, 0) + 1
        self.attempts[slot] = attempt
        self.requests += 1
        fault = fault_for(self.seed, slot, attempt, rate=self.fault_rate,
                          dead_rate=self.dead_rate)
        if self.down is not None and self.down(self.requests):
            fault = "http_overloaded"
        directive = self.scripted.get(slot)
        if directive is not None:
            fault = ("http_500" if directive == "down" else directive.removeprefix("fault:")
                     if directive.startswith("fault:") else "none")
        self.log.append((slot, attempt, fault, api))
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if directive is not None and directive != "down" and not directive.startswith("fault:"):
            return 200, {}, _scripted(api, directive, request)
        return await self._reply(api, fault, slot, request)

    def _key(self, request: Mapping[str, Any], text: str) -> str:
        return hashlib.sha256(f"{request['model']}\n{text}".encode()).hexdigest()

    def anthropic_cache(self, request: Mapping[str, Any]) -> tuple[int, int]:
        """(tokens written, tokens read) by Anthropic's prompt-cache rules.

        Each ``cache_control`` block ends a prefix (tools, system, messages up to
        it); a prefix shorter than :attr:`cache_min_tokens` is never cached. The
        longest cached prefix is read; the longest cacheable one beyond it is
        written (the tokens between the two); every cacheable prefix is then in
        the cache.
        """
        prefixes, text = [], ""
        for piece, breakpoint in prefix_pieces(request):
            text += piece
            if breakpoint and prefix_tokens(text) >= self.cache_min_tokens:
                prefixes.append(text)
        read = max((prefix_tokens(p) for p in prefixes if self._key(request, p) in self.cached),
                   default=0)
        longest = max((prefix_tokens(p) for p in prefixes), default=0)
        self.cached.update(self._key(request, p) for p in prefixes)
        return max(0, longest - read), read

    def openai_cache(self, request: Mapping[str, Any], tokens_in: int) -> int:
        """Tokens read from OpenAI's automatic prompt cache.

        A prompt of :attr:`cache_min_tokens` tokens or more is cached by itself in
        steps of 128 tokens from that minimum: the read is the longest such
        prefix seen before (no write is billed).
        """
        if tokens_in < self.cache_min_tokens:
            return 0
        data, read = sent_text(request).encode(), 0
        length = self.cache_min_tokens
        while 4 * length <= len(data):
            key = self._key(request, data[: 4 * length].decode("utf-8", errors="replace"))
            if key in self.cached:
                read = length
            self.cached.add(key)
            length += 128
        return read

    def _flavour_refusal(self, request: Mapping[str, Any]
                         ) -> tuple[int, dict[str, str], bytes] | None:
        """The flavour's answer to a mode it rejects or a model it does not serve."""
        flavour = FLAVOURS[self.flavour]
        mode = request_mode(request)
        self.modes_seen.append(mode)
        if flavour.serves is not None and request["model"] != flavour.serves:
            status, message = flavour.model_not_found
            return status, {}, flavour_error(flavour, status,
                                             message.format(model=request["model"]))
        rule = flavour.modes[mode]
        if isinstance(rule, tuple):
            return rule[0], {}, flavour_error(flavour, rule[0], rule[1])
        return None

    async def _reply(self, api: str, fault: str, slot: str,
                     request: Mapping[str, Any]) -> tuple[int, dict[str, str], bytes] | None:
        anthropic = api == "anthropic"
        if fault in ("timeout", "disconnect"):
            if fault == "timeout":
                await asyncio.sleep(self.hang_s)
            return None
        http_error = _http_fault(anthropic, fault, self.key)
        if http_error is not None:
            return http_error
        if fault == "slow":
            await asyncio.sleep(self.slow_s)
        name, schema = requested_schema(api, request)
        prompt = "".join(str(block.get("text", ""))
                         for block in _blocks(request["messages"][-1]["content"]))
        mode = "tools" if anthropic else request_mode(request)
        ignored = not anthropic and FLAVOURS[self.flavour].modes[mode] == "ignore"
        if ignored:
            name, schema = "", None
        answer: dict[str, Any] | None = (
            None if schema is None else dict(answer_for(slot)) if name == "forecast"
            else instance_of(name, schema))
        if answer is not None and fault == "schema_breaking":
            answer.pop("upper" if "upper" in answer else next(iter(answer)))
        text = (NOTE if answer is None or fault == "not_json_answer"
                else json.dumps(answer))
        if (mode == "text" or ignored) and not anthropic and asks_for_a_forecast(prompt) and (
                fault != "not_json_answer"):
            # a model asked in prose (or whose constraint the server ignored) answers what
            # the prompt asks: prose around a fenced object
            forecast = dict(answer_for(slot))
            if fault == "schema_breaking":
                forecast.pop("upper")
            text = f"Here is my forecast.\n```json\n{json.dumps(forecast)}\n```\n"
        text, cut = capped(text, request["max_tokens"])
        tokens_in, tokens_out = usage_for(sent_text(request), text)
        write, read = (self.anthropic_cache(request) if anthropic
                       else (0, self.openai_cache(request, tokens_in)))
        model = None if fault == "no_model_id" else f"{request['model']}-fake-20250101"
        if anthropic:
            tool_call = not (answer is None or fault == "not_json_answer" or cut)
            block: dict[str, Any] = (
                {"type": "tool_use", "id": "toolu_1", "name": request["tools"][0]["name"],
                 "input": answer} if tool_call else {"type": "text", "text": text})
            body: dict[str, Any] = {
                "id": "msg_1", "type": "message", "role": "assistant", "content": [block],
                "stop_reason": ("max_tokens" if cut else "tool_use" if tool_call
                                else "end_turn"),
                "stop_sequence": None,
                "usage": {"input_tokens": tokens_in - write - read,
                          "cache_creation_input_tokens": write,
                          "cache_read_input_tokens": read, "output_tokens": tokens_out}}
        else:
            message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
            if mode == "tools" and answer is not None and fault != "not_json_answer":
                message = {"role": "assistant", "content": None, "refusal": None,
                           "tool_calls": [{"id": "call_1", "type": "function", "function": {
                               "name": request["tools"][0]["function"]["name"],
                               "arguments": text}}]}
            body = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1764547200,
                    "choices": [{"index": 0, "finish_reason": "length" if cut else "stop",
                                 "logprobs": None, "message": message}],
                    "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out,
                              "total_tokens": tokens_in + tokens_out,
                              "prompt_tokens_details": {"cached_tokens": read}}}
        if model is not None:
            body["model"] = model
        payload = json.dumps(body).encode()
        if fault == "truncated_json":
            payload = payload[: len(payload) // 2]
        return 200, {}, payload


NOTE = ("I expect this change to improve the held-out metric by about 0.01, because the"
        " training set is small; the validation curve should flatten.")
QUOTES = {"direction": "improve the held-out metric", "target": "by about 0.01",
          "observable": "the validation curve should flatten", "regime": "",
          "falsification": "", "counterfactual": ""}


def asks_for_a_forecast(prompt: str) -> bool:
    """Whether a prompt asks for the forecast JSON (a forecast slot, or the probe)."""
    return '"point"' in prompt and '"direction_probability"' in prompt


def request_mode(request: Mapping[str, Any]) -> str:
    """The output mode an OpenAI-API request asks for (``text`` when it asks for none)."""
    fmt = request.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") in ("json_schema", "json_object"):
        return str(fmt["type"])
    if request.get("tools"):
        return "tools"
    if "grammar" in request:
        return "grammar"
    return "text"


def schema_name(schema: Mapping[str, Any]) -> str:
    """Which foreseen schema this is, from its properties (for modes that send no name)."""
    properties = schema.get("properties", {})
    if "point" in properties:
        return "forecast"
    if "intervention_id" in properties:
        return "propose"
    target = properties.get("target", {})
    return "card" if target.get("type") == "object" else "extract"


def requested_schema(api: str, request: Mapping[str, Any]) -> tuple[str, Any]:
    """(schema name, JSON schema) the request asks its answer to follow; (\"\", None): text.

    A ``grammar`` request is answered as the forecast (the fake reads no GBNF).
    """
    if api == "anthropic":
        tools = request.get("tools")
        if not tools:
            return "", None
        return str(tools[0]["name"]).removeprefix("submit_"), tools[0]["input_schema"]
    mode = request_mode(request)
    if mode == "json_schema":
        fmt = request["response_format"]
        return str(fmt["json_schema"]["name"]), fmt["json_schema"]["schema"]
    if mode == "json_object":
        schema = request["response_format"]["schema"]
        return schema_name(schema), schema
    if mode == "tools":
        function = request["tools"][0]["function"]
        return str(function["name"]).removeprefix("submit_"), function["parameters"]
    if mode == "grammar":
        from foreseen.credit.backends.schemas import FORECAST_SCHEMA

        return "forecast", FORECAST_SCHEMA
    return "", None


def flavour_error(flavour: Flavour, status: int, message: str) -> bytes:
    """An error body in the flavour's shape."""
    if flavour.error_shape == "vllm_legacy":
        return json.dumps({"object": "error", "message": message, "type": flavour.error_type,
                           "param": None, "code": status}).encode()
    if flavour.error_shape == "llamacpp":
        return json.dumps({"error": {"code": status, "message": message,
                                     "type": flavour.error_type}}).encode()
    return json.dumps({"error": {"message": message, "type": flavour.error_type,
                                 "param": None, "code": None}}).encode()


_NUMBERS = {"point": 0.01, "lower": -0.01, "upper": 0.03, "benefit_probability": 0.6,
            "direction_probability": 0.6}


def instance_of(name: str, schema: Mapping[str, Any], key: str = "") -> Any:
    """A deterministic answer that follows ``schema`` (an extraction quotes :data:`NOTE`)."""
    kind = schema.get("type")
    if kind == "object":
        if name == "extract":
            return {k: QUOTES.get(k, "") for k in schema["properties"]}
        return {k: instance_of(name, sub, k) for k, sub in schema["properties"].items()}
    if kind == "number":
        return _NUMBERS.get(key, 0.01)
    if "enum" in schema:
        values = list(schema["enum"])
        return "improve" if "improve" in values else values[0]
    if kind == "string":
        return f"the {key.replace('_', ' ')} stated briefly"[: int(schema.get("maxLength", 80))]
    raise ValueError(f"no instance for schema type {kind!r}")


def _scripted(api: str, directive: str, request: Mapping[str, Any]) -> bytes:
    """The 200 body of a scripted answer (``json:``, ``text:`` or ``refuse:``)."""
    kind, _, text = directive.partition(":")
    model = f"{request['model']}-fake-20250101"
    usage_in, usage_out = usage_for(sent_text(request), text)
    if api == "anthropic":
        tools = request.get("tools") or [{"name": "submit_answer"}]
        block: dict[str, Any] = (
            {"type": "tool_use", "id": "toolu_1", "name": tools[0]["name"],
             "input": json.loads(text)} if kind == "json" else {"type": "text", "text": text})
        stop = {"json": "tool_use", "text": "end_turn", "refuse": "refusal"}[kind]
        body: dict[str, Any] = {
            "id": "msg_1", "type": "message", "role": "assistant", "content": [block],
            "model": model, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": usage_in, "output_tokens": usage_out}}
    else:
        refused = kind == "refuse"
        body = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1764547200,
                "model": model,
                "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                             "message": {"role": "assistant",
                                         "content": None if refused else text,
                                         "refusal": text if refused else None}}],
                "usage": {"prompt_tokens": usage_in, "completion_tokens": usage_out,
                          "total_tokens": usage_in + usage_out}}
    return json.dumps(body).encode()


def _error(anthropic: bool, kind: str, message: str) -> bytes:
    if anthropic:
        return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()
    return json.dumps({"error": {"type": kind, "message": message, "code": None}}).encode()


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--key", default="sk-bench-local")
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--flavour", default="openai", choices=sorted(FLAVOURS))
    parser.add_argument("--cache-min-tokens", type=int, default=1024)
    args = parser.parse_args()
    server = FakeLLMServer(key=args.key, latency_s=args.latency, fault_rate=args.fault_rate,
                           flavour=args.flavour, cache_min_tokens=args.cache_min_tokens)
    server.start()
    print(f"port {server.port}", flush=True)
    sys.stdin.read()
    server.stop()


if __name__ == "__main__":
    main()


def _anthropic_shape(request: Mapping[str, Any], messages: list[Any]) -> str | None:
    """What is wrong with an Anthropic Messages request's blocks and tools (None: nothing)."""
    marks = [piece for piece in prefix_pieces(request) if piece[1]]
    if len(marks) > 4:
        return "at most 4 blocks may carry cache_control"
    for message in messages:
        for block in _blocks(message.get("content")):
            control = block.get("cache_control")
            if block.get("type") != "text" or not isinstance(block.get("text"), str) \
                    or control not in (None, {"type": "ephemeral"}):
                return "content blocks must be text with an ephemeral cache_control"
    tools = request.get("tools")
    choice = request.get("tool_choice")
    if tools is None:
        return None if choice is None else "tool_choice without tools"
    if not (isinstance(tools, list) and tools and "input_schema" in tools[0]):
        return "tools with input_schema missing"
    if not (isinstance(choice, dict) and choice.get("type") == "tool"
            and choice.get("name") == tools[0].get("name")):
        return "tool_choice must force the tool"
    return None


def _openai_shape(request: Mapping[str, Any]) -> str | None:
    """What is wrong with a chat-completions request's constraint fields (None: nothing)."""
    fmt = request.get("response_format")
    if fmt is not None and not (
            isinstance(fmt, dict) and (
                (fmt.get("type") == "json_schema" and "schema" in fmt.get("json_schema", {}))
                or (fmt.get("type") == "json_object" and isinstance(fmt.get("schema"), dict)))):
        return "response_format malformed"
    tools = request.get("tools")
    if tools is not None:
        function = tools[0].get("function", {}) if isinstance(tools, list) else {}
        choice = request.get("tool_choice")
        if not ("parameters" in function and isinstance(choice, dict)
                and choice.get("function", {}).get("name") == function.get("name")):
            return "tools must force one function with parameters"
    if "grammar" in request and not isinstance(request["grammar"], str):
        return "grammar must be a string"
    return None


def _http_fault(anthropic: bool, fault: str, key: str) -> tuple[int, dict[str, str], bytes] | None:
    """The HTTP error a scripted fault answers with (None: the fault is not an HTTP error)."""
    if fault == "http_429":
        extra = ({"retry-after": f"{RETRY_AFTER_S:g}"} if anthropic
                 else {"retry-after-ms": str(int(RETRY_AFTER_S * 1000))})
        return 429, extra, _error(anthropic, "rate_limit_error", "slow down")
    if fault == "http_500":
        return 500, {}, _error(anthropic, "api_error", "internal server error")
    if fault == "http_overloaded":
        return (529 if anthropic else 503), {}, _error(anthropic, "overloaded_error",
                                                       "overloaded")
    if fault == "http_400_error_body":
        return 400, {}, _error(anthropic, "invalid_request_error",
                               f"request refused for key {key}")
    return None
