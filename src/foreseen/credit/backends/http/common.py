"""What the HTTP backends share: options, the API key, one reused client, error mapping.

* **Options** (:class:`HttpOptions`) come from the plan's forecaster options:
  ``base_url``, ``model``, ``api_key_env`` (the *name* of the environment
  variable holding the key — never the key), ``max_tokens``, ``temperature``,
  ``timeout_s``, ``pricing`` (:mod:`.pricing`), ``requests_per_minute`` and
  ``tokens_per_minute`` (:mod:`.rate_limit`; they never change a result, so
  they stay out of ``configuration()``), ``max_connections``, ``answer_tokens``.
* **The answer's token cap** (``answer_tokens``): ``"sized"`` (the default)
  sends ``max_tokens = min(max_tokens, answer_token_cap(schema))`` when the
  output mode constrains the answer to a schema whose longest compact JSON is
  known (``json_schema``, ``tools``, ``grammar``; :func:`answer_token_cap`);
  a free-text answer (a note, the ``text`` and ``json_object`` modes, whose
  length the schema does not bound) is sent the configured ``max_tokens``.
  ``"max_tokens"`` always sends the configured value: how plans frozen before
  the option existed run (their frozen configuration has no ``answer_tokens``
  key; :func:`legacy_answer_tokens`).
* **The key** is read from the environment at call time
  (:func:`read_api_key`), kept in no attribute, and scrubbed (:func:`scrub`)
  from every text that could reach a ledger, a log or an exception.
* **One** :class:`aiohttp.ClientSession` per backend and event loop, reused
  for every call (:class:`ReusedClient`), with explicit timeouts and limits.
* **Errors** fall into three classes (credit §5; design "Talking to
  real servers"), decided here once for every HTTP backend:

  - **outage** — connection errors, timeouts, HTTP 408, 409, 425, 429, every
    5xx but 501 (gateways and overload: 502, 503, 504, 529 …, whatever their
    page says) and a 500 that is not a validation error: :class:`~.base.TransportError`
    (retried by the runner, then its circuit breaker), honouring
    ``Retry-After`` / ``retry-after-ms`` (:func:`parse_retry_after`);
  - **rejected** — every other answer that is not 2xx (400, 401, 403, 404,
    405, 413, 422, 501, a redirect …) and a 500 whose error text is a request
    validation error (:func:`is_validation_failure`: llama-cpp-python answers
    an unsupported ``response_format`` with HTTP 500 and pydantic's words):
    :class:`~foreseen.core.errors.RequestRejected`, which stops the run at
    once with the server's own message (key-scrubbed) and what to change;
    resuming cannot help until the configuration changes;
  - **content** — a 2xx whose body or answer does not parse: a response with
    ``error`` set, which the runner turns into the plan's fallback without
    re-asking (intention to treat).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from foreseen.core.digest import canonical_json_bytes, sha256_json
from foreseen.core.errors import MissingExtraError, RequestRejected, UserInputError
from foreseen.core.retry import parse_retry_after
from foreseen.credit.backends.base import BackendResponse, ForecastRequest, TransportError
from foreseen.credit.backends.grammar import max_output_chars
from foreseen.credit.backends.http.pricing import PricingTable, prompt_token_bound
from foreseen.credit.backends.output_modes import OutputMode, parse_output_mode
from foreseen.credit.backends.schemas import FORECAST_SCHEMA, response_schema
from foreseen.credit.backends.secrets import scrub, scrub_optional

SLOT_HEADER = "X-Foreseen-Slot"
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
#: phrases servers use when a 5xx is really a rejected request (lower case): pydantic's
#: validation errors (llama-cpp-python, vLLM, LiteLLM), "not supported" answers (Ollama,
#: llama.cpp), and the OpenAI error type for a malformed request
VALIDATION_MARKERS = ("validation error", "input should be", "literal_error",
                      "extra inputs are not permitted", "field required", "not supported",
                      "unsupported", "invalid_request_error", "badrequesterror",
                      "is not a valid")
FRAMING_TOKENS = 256
#: request-body fields foreseen sets itself; provider options may add others, not these
RESERVED_BODY_FIELDS = frozenset({"model", "messages", "max_tokens", "temperature", "system",
                                  "tools", "tool_choice", "response_format", "grammar"})
ERROR_TEXT_LIMIT = 300
#: answer_tokens values: size the cap to a structured answer, or always send max_tokens
ANSWER_TOKENS = ("sized", "max_tokens")
#: output modes that hold the answer to the schema's JSON (its length is then bounded)
SIZED_MODES = frozenset({"json_schema", "tools", "grammar"})
#: tokens allowed beyond the longest compact JSON of the schema: whitespace a provider
#: may add, numbers longer than the grammar's, and the tool-call framing of the answer
ANSWER_MARGIN_TOKENS = 64


def answer_token_cap(schema: Mapping[str, Any]) -> int | None:
    """The most tokens a structured answer to ``schema`` needs, or None when unbounded.

    ``max_output_chars(schema) + ANSWER_MARGIN_TOKENS``: a byte-level BPE token
    covers at least one byte, so an answer of ``c`` ASCII characters is at most
    ``c`` tokens; the longest compact JSON of the schema
    (:func:`~foreseen.credit.backends.grammar.max_output_chars`: numbers of at
    most 12 characters, strings capped by ``maxLength``) plus the margin. A
    schema outside the bounded subset (a string without ``maxLength``) has no
    cap: None. The forecast schema's cap is 172 tokens (108 + 64).
    """
    try:
        return max_output_chars(schema) + ANSWER_MARGIN_TOKENS
    except (ValueError, KeyError, TypeError):
        return None


def legacy_answer_tokens(options: Mapping[str, Any],
                         frozen_configuration: Mapping[str, Any]) -> dict[str, Any]:
    """The backend options (the plan's options object, as ``build_backend`` takes it)
    rebuilding a backend as a plan froze it.

    A plan frozen before ``answer_tokens`` existed has no such key in its
    frozen configuration: its calls always sent ``max_tokens``, so it is
    rebuilt with ``answer_tokens = "max_tokens"`` (and its configuration
    matches the frozen one). Other options are returned unchanged.
    """
    if ("answer_tokens" in frozen_configuration or "answer_tokens" in options
            or "max_tokens" not in frozen_configuration):
        return dict(options)
    return {**options, "answer_tokens": "max_tokens"}

class RequestTimeout(TransportError):
    """The request timed out; the provider may still have billed it (``billable``)."""

    billable = True


class ConnectionLost(TransportError):
    """The connection failed after it was made: the request may have reached the server.

    Retried online like any outage (a call is answered or not); but a request that
    *creates* something (a batch) is not sent again after it
    (:class:`~foreseen.credit.backends.http.batches.Retrying`): the first may exist.
    """


LOOPBACK_NAMES = frozenset({"localhost"})


def is_loopback(base_url: str) -> bool:
    """Whether ``base_url`` names this machine (a local server: llama.cpp, vLLM, Ollama).

    The host must be ``localhost`` or a loopback IP address (127.0.0.0/8, ::1) —
    an address, not a name that starts like one (``127.evil.com`` is a remote host).
    """
    import ipaddress
    from urllib.parse import urlsplit

    host = (urlsplit(base_url).hostname or "").lower()
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def read_api_key(env_name: str, base_url: str | None = None) -> str:
    """The key from the environment variable named in the plan.

    Unset: refused — except for a server on this machine (``base_url`` on the
    loopback), which local servers (llama.cpp, vLLM, Ollama) run without a key
    by default; then no key is sent (the empty string).
    """
    value = os.environ.get(env_name, "")
    if not value.strip():
        if base_url is not None and is_loopback(base_url):
            return ""
        raise UserInputError(
            f"environment variable {env_name} is not set; it must hold the API key")
    return value.strip()


OMIT = "omit"


def _temperature(value: Any) -> float | None:
    """A temperature in [0, 2], or None for ``"omit"`` (send no sampling parameter)."""
    if value == OMIT:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            0.0 <= value <= 2.0):
        raise UserInputError("backend option temperature must be a number in [0, 2] or \"omit\""
                             " (send none: the model's own sampling)")
    return float(value)


def _number_option(options: Mapping[str, Any], key: str, default: float | None,
                   *, minimum: float = 0.0, strict: bool = False) -> float | None:
    value = options.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(
            value) or value < minimum or (strict and value == minimum):
        bound = ">" if strict else ">="
        raise UserInputError(f"backend option {key} must be a number {bound} {minimum:g}")
    return float(value)


@dataclass(frozen=True)
class HttpOptions:
    """The plan's options for an HTTP backend (see the module docstring)."""

    base_url: str
    model: str
    api_key_env: str
    max_tokens: int = 512
    #: None: no sampling parameter is sent (the model's own sampling; the option "omit")
    temperature: float | None = None
    timeout_s: float = 60.0
    pricing: PricingTable = field(default_factory=lambda: PricingTable({}))
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    max_connections: int = 100
    system: str | None = None
    provider_options: Mapping[str, Any] = field(default_factory=dict)
    #: how answers are constrained (:mod:`foreseen.credit.backends.output_modes`), or "auto"
    output_mode: str = "json_schema"
    #: "sized" (cap a structured answer at its known size) or "max_tokens" (module docstring)
    answer_tokens: str = "sized"

    @classmethod
    def parse(cls, options: Mapping[str, Any], *, default_base_url: str,
              default_key_env: str, backend: str = "openai_compatible",
              default_mode: OutputMode = "json_schema") -> HttpOptions:
        known = {"base_url", "model", "api_key_env", "max_tokens", "temperature", "timeout_s",
                 "pricing", "requests_per_minute", "tokens_per_minute", "max_connections",
                 "system", "api_version", "provider_options", "output_mode",
                 "answer_tokens"}
        unknown = sorted(set(options) - known)
        if unknown:
            raise UserInputError(f"unknown backend option {unknown[0]!r}")
        model = options.get("model")
        if not isinstance(model, str) or not model:
            raise UserInputError("backend option model is required (a model name)")
        base_url = options.get("base_url", default_base_url)
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise UserInputError("backend option base_url must start with http:// or https://")
        key_env = options.get("api_key_env", default_key_env)
        if not isinstance(key_env, str) or not key_env.replace("_", "").isalnum():
            raise UserInputError(
                "backend option api_key_env must be the NAME of an environment variable")
        max_tokens = options.get("max_tokens", 512)
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise UserInputError("backend option max_tokens must be an integer >= 1")
        connections = options.get("max_connections", 100)
        if isinstance(connections, bool) or not isinstance(connections, int) or connections < 1:
            raise UserInputError("backend option max_connections must be an integer >= 1")
        system = options.get("system")
        if system is not None and not isinstance(system, str):
            raise UserInputError("backend option system must be a string")
        provider = options.get("provider_options") or {}
        if not isinstance(provider, Mapping) or not all(isinstance(k, str) for k in provider):
            raise UserInputError("backend option provider_options must be an object")
        reserved = sorted(set(provider) & RESERVED_BODY_FIELDS)
        if reserved:
            raise UserInputError(
                f"provider_options may not set {reserved[0]!r} (it has its own option;"
                " how answers are constrained is output_mode)")
        answer_tokens = options.get("answer_tokens", "sized")
        if answer_tokens not in ANSWER_TOKENS:
            raise UserInputError("backend option answer_tokens must be \"sized\" (cap a"
                                 " structured answer at its known size) or \"max_tokens\"")
        return cls(
            base_url=base_url.rstrip("/"), model=model, api_key_env=key_env,
            max_tokens=max_tokens,
            temperature=_temperature(options.get("temperature", OMIT)),
            timeout_s=float(_number_option(options, "timeout_s", 60.0, strict=True) or 60.0),
            pricing=PricingTable.from_json(options.get("pricing")),
            requests_per_minute=_number_option(options, "requests_per_minute", None,
                                               strict=True),
            tokens_per_minute=_number_option(options, "tokens_per_minute", None, strict=True),
            max_connections=connections, system=system,
            provider_options=dict(provider),
            output_mode=parse_output_mode(options.get("output_mode"), backend, default_mode),
            answer_tokens=str(answer_tokens))

    def configuration(self, backend: str, **extra: Any) -> dict[str, Any]:
        """What changes a result, frozen into the plan: never the key, never rate limits.

        ``answer_tokens`` appears only when ``"sized"``: a backend that always
        sends ``max_tokens`` has the configuration plans froze before the option.
        """
        sized = {"answer_tokens": "sized"} if self.answer_tokens == "sized" else {}
        return {**sized, "backend": backend, "base_url": self.base_url, "model": self.model,
                "api_key_env": self.api_key_env, "max_tokens": self.max_tokens,
                "temperature": OMIT if self.temperature is None else self.temperature,
                "timeout_s": self.timeout_s,
                "pricing": self.pricing.to_json(), "system": self.system,
                "provider_options": dict(self.provider_options),
                "forecast_schema_sha256": sha256_json(FORECAST_SCHEMA), **extra}

    def answer_max_tokens(self, request: ForecastRequest) -> int:
        """The ``max_tokens`` sent for ``request`` (module docstring: the answer's token cap).

        ``min(max_tokens, answer_token_cap(schema))`` when ``answer_tokens`` is
        ``"sized"``, the output mode is one of :data:`SIZED_MODES` and the
        request asks for a schema with a cap; otherwise ``max_tokens``.
        """
        wanted = response_schema(request)
        if (self.answer_tokens != "sized" or wanted is None
                or self.output_mode not in SIZED_MODES):
            return self.max_tokens
        cap = answer_token_cap(wanted.schema)
        return self.max_tokens if cap is None else min(self.max_tokens, cap)

    def input_token_bound(self, request: ForecastRequest) -> int:
        """Upper bound on one call's input tokens: prompt bytes + framing + schema + system."""
        wanted = response_schema(request)
        schema_size = 0 if wanted is None else len(json.dumps(wanted.schema))
        framing = FRAMING_TOKENS + schema_size + len(self.system or "")
        return prompt_token_bound(request.prompt) + framing

    def token_bound(self, request: ForecastRequest) -> int:
        """Upper bound on one call's tokens: the input bound + the answer's ``max_tokens`` sent."""
        return self.input_token_bound(request) + self.answer_max_tokens(request)

    def cost_bound_usd(self, request: ForecastRequest) -> float | None:
        """Upper bound on one call's cost (None when the model has no price)."""
        price = self.pricing.price(self.model)
        if price is None:
            return None
        return price.cost(self.input_token_bound(request), self.answer_max_tokens(request))

    def cached_cost_bound_usd(self, request: ForecastRequest, *, read: bool) -> float | None:
        """The cost bound with the prompt's shared start (``request.cache_prefix``
        characters, bounded by its bytes) written to the cache or read from it."""
        price = self.pricing.price(self.model)
        if price is None:
            return None
        shared = prompt_token_bound(request.prompt[: request.cache_prefix])
        cached = {"cache_read_tokens" if read else "cache_write_tokens": shared}
        return price.cost(self.input_token_bound(request), self.answer_max_tokens(request),
                          **cached)


@dataclass(frozen=True)
class HttpAnswer:
    """An HTTP answer that arrived: status, parsed JSON body (or None) and the raw text."""

    status: int
    body: Any
    text: str


def import_aiohttp() -> ModuleType:
    """The aiohttp module; :class:`MissingExtraError` naming the ``llm`` extra when absent."""
    try:
        import aiohttp
    except ImportError:
        raise MissingExtraError("aiohttp", "llm") from None
    return aiohttp


def _certifi_bundle() -> str | None:
    """The Mozilla CA bundle of certifi, if installed (else the system's default paths)."""
    try:
        import certifi
    except ImportError:
        return None
    return str(certifi.where())


def _decode(content: bytes, charset: str | None) -> str:
    """The body as text: its declared charset (UTF-8 if none or unknown), bad bytes replaced."""
    try:
        return content.decode(charset or "utf-8", errors="replace")
    except LookupError:
        return content.decode("utf-8", errors="replace")


class ReusedClient:
    """One :class:`aiohttp.ClientSession` per event loop, created on first use and reused.

    The session's connector keeps up to ``max_connections`` keep-alive
    connections; every request waits at most ``timeout_s`` for a connection,
    to connect, and between bytes of the answer. TLS is verified against
    certifi's CA bundle (one context, loaded once). Redirects are not
    followed: a 3xx answer arrives and is final. Per request the client costs
    about a tenth of a millisecond of CPU (aiohttp's C parser), so 64
    concurrent calls do not make the run CPU-bound (``benchmarks/credit_http.py``).
    """

    def __init__(self, timeout_s: float, max_connections: int) -> None:
        self.timeout_s = timeout_s
        self.max_connections = max_connections
        self._clients: list[Any] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self) -> Any:
        """This event loop's ``aiohttp.ClientSession`` (created on first use in the loop)."""
        loop = asyncio.get_running_loop()
        if not self._clients or self._loop is not loop:
            aiohttp = import_aiohttp()
            tls = ssl.create_default_context(cafile=_certifi_bundle())
            connector = aiohttp.TCPConnector(limit=self.max_connections,
                                             limit_per_host=self.max_connections, ssl=tls)
            timeout = aiohttp.ClientTimeout(total=None, connect=self.timeout_s,
                                            sock_connect=self.timeout_s,
                                            sock_read=self.timeout_s)
            self._clients = [aiohttp.ClientSession(connector=connector, timeout=timeout,
                                                   auto_decompress=True)]
            self._loop = loop
        return self._clients[0]

    async def aclose(self) -> None:
        if self._clients and self._loop is asyncio.get_running_loop():
            for client in self._clients:
                await client.close()
        self._clients, self._loop = [], None

    async def post_json(self, url: str, headers: Mapping[str, str], payload: Mapping[str, Any],
                        secret: str, key_env: str) -> HttpAnswer:
        """POST JSON; map failures as in the module docstring (every text key-scrubbed)."""
        sent = {"content-type": "application/json", **headers}
        return await self.send("POST", url, sent, canonical_json_bytes(payload), secret,
                               key_env)

    async def send(self, method: str, url: str, headers: Mapping[str, str], data: Any,
                   secret: str, key_env: str) -> HttpAnswer:
        """Send one request (``data``: bytes, a form or None); map failures as in the module
        docstring. The body is parsed as JSON when it is JSON (else ``body`` is None)."""
        aiohttp = import_aiohttp()
        session = self.get()
        try:
            async with session.request(method, url, data=data, headers=dict(headers),
                                       allow_redirects=False) as response:
                content = await response.read()
                status = response.status
                answer_headers = dict(response.headers)
                text = _decode(content, response.charset)
        except TimeoutError as error:
            raise RequestTimeout(f"timeout after {self.timeout_s:g} s "
                                 f"({type(error).__name__})") from None
        except aiohttp.ClientError as error:
            message = scrub(str(error), (secret,))[:ERROR_TEXT_LIMIT]
            # no connection made: nothing was sent; else the server may have had the request
            lost = TransportError if isinstance(error, aiohttp.ClientConnectorError) \
                else ConnectionLost
            raise lost(f"connection error {type(error).__name__}: {message}") from None
        try:
            body: Any = json.loads(text)
        except (ValueError, RecursionError):
            body = None
        if not 200 <= status < 300:
            summary = error_summary(body, text, secret)
            if is_transient(status, summary):
                raise TransportError(f"HTTP {status}: {summary}",
                                     retry_after=parse_retry_after(answer_headers))
            raise rejected(status, summary, key_env, answer_headers.get("Location"))
        return HttpAnswer(status, body, text)


def is_transient(status: int, summary: str) -> bool:
    """Whether a non-2xx answer is an outage (retried) rather than a rejected request.

    408, 409, 425, 429, every 5xx but 501, and a 500 that is not a validation
    error (:func:`is_validation_failure`); the module docstring's classes.
    """
    return status in RETRYABLE_STATUS or (status >= 500 and status not in (500, 501)) or (
        status == 500 and not is_validation_failure(summary))


def is_validation_failure(summary: str) -> bool:
    """Whether an error text says the *request* was invalid (:data:`VALIDATION_MARKERS`)."""
    lowered = summary.lower()
    return any(marker in lowered for marker in VALIDATION_MARKERS)


def rejected(status: int, summary: str, key_env: str,
             location: str | None = None) -> RequestRejected:
    """The one-line error for a request the server refused: its words, and what to change."""
    if status in (401, 403):
        hint = f"check the key in {key_env} and that it may use this model"
    elif status == 404 or "not found" in summary.lower() or "does not exist" in summary.lower():
        hint = "check the model name and base_url"
    elif 300 <= status < 400:
        hint = f"set base_url to the address the server redirects to ({location or 'unknown'})"
    elif status == 413 or ("context" in summary.lower() and "length" in summary.lower()):
        hint = "the prompt is too long for the server: use a model or server with a larger" \
               " context window"
    else:
        hint = ("change the backend configuration (output_mode — output_mode = \"auto\" lets"
                " 'foreseen credit probe' pick one the server accepts —, model,"
                " provider_options)")
    return RequestRejected(
        f"the server rejected the request: HTTP {status}: {summary}; {hint}; nothing was"
        " recorded as a fallback and the slots stay pending: resume once the server accepts"
        " the request (e.g. after fixing the server's own setup), or freeze a new plan with the"
        " changed configuration (a frozen plan's request cannot change)",
        status=status, server_message=summary)


def error_summary(body: Any, text: str, secret: str) -> str:
    """A short, key-scrubbed description of an error body (type and message).

    Reads the error shapes servers answer with: OpenAI, Anthropic, llama.cpp
    and Ollama's ``{"error": {"type", "message"}}`` (or ``{"error": "text"}``),
    vLLM's older root-level ``{"object": "error", "type", "message"}`` and
    FastAPI's ``{"detail": …}``; anything else is the body's first characters.
    """
    if isinstance(body, Mapping):
        error = body.get("error")
        if isinstance(error, Mapping):
            kind = error.get("type") or error.get("code") or "error"
            message = error.get("message") or ""
            return scrub(f"{kind}: {message}", (secret,))[:ERROR_TEXT_LIMIT]
        if isinstance(error, str):
            return scrub(error, (secret,))[:ERROR_TEXT_LIMIT]
        if isinstance(body.get("message"), str):
            kind = body.get("type") or "error"
            return scrub(f"{kind}: {body['message']}", (secret,))[:ERROR_TEXT_LIMIT]
        if "detail" in body:
            detail = body["detail"]
            shown = detail if isinstance(detail, str) else json.dumps(detail)
            return scrub(" ".join(shown.split()), (secret,))[:ERROR_TEXT_LIMIT]
    snippet = " ".join(text.split())[:ERROR_TEXT_LIMIT]
    return scrub(snippet, (secret,)) or "empty body"


def returned_model(body: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The model id the server says answered, or (None, reason)."""
    model = body.get("model")
    if isinstance(model, str) and model:
        return model, None
    return None, "response has no model field"


def failed_response(options: HttpOptions, answer: HttpAnswer, secret: str,
                    reason: str) -> BackendResponse:
    """A final answer that is not a forecast (error status, broken body): the runner falls back."""
    body = answer.body if isinstance(answer.body, Mapping) else {}
    model, model_reason = returned_model(body)
    return BackendResponse(
        text=scrub(answer.text, (secret,))[:2000], requested_model=options.model,
        returned_model=scrub_optional(model, (secret,)), returned_model_reason=model_reason,
        error=scrub(reason, (secret,))[:ERROR_TEXT_LIMIT])
