"""Anthropic Messages API backend (``anthropic``; credit §5, §10).

``POST {base_url}/v1/messages`` with headers ``x-api-key`` (from the
environment variable named in the plan) and ``anthropic-version``. Output
modes (:mod:`foreseen.credit.backends.output_modes`): ``tools`` (default;
frozen as ``structured_output = "tool_use"``) or ``text`` (the prompt asks for
the JSON; no tool is sent). Structured output by **tool use**: one tool
``submit_<schema name>`` whose ``input_schema`` is the answer's JSON schema, forced with
``tool_choice = {"type": "tool", "name": ...}``; the answer text is the
canonical JSON of that tool call's ``input``. When no tool call came back,
the text blocks are the answer (the runner validates it and falls back if it
is not a forecast), except after ``stop_reason = "refusal"``: a final error
``model refused: <text>``, as the OpenAI backend reports ``message.refusal``.
Usage: ``usage.input_tokens`` / ``usage.output_tokens``, and the prompt
cache's ``cache_creation_input_tokens`` / ``cache_read_input_tokens`` (which
Anthropic does *not* count in ``input_tokens``: foreseen's input count is the
sum of the three); the returned model id is the body's ``model``.

**Prompt caching.** A request whose prompt has a shared start
(``request.cache_prefix`` characters: the study's and the state's part) is sent
as two text blocks whose concatenation is the prompt, byte for byte, the first
marked ``cache_control = {"type": "ephemeral"}`` (a 5-minute cache
breakpoint): calls that share the start read it from the cache at a tenth of
the input price once it is written (at 1.25 ×). Anthropic caches a prefix only
from the model's minimum length (1,024 tokens for Sonnet and Opus 4, more for
Haiku); a shorter one is billed as ordinary input.

API version: ``2026-10-21`` by default (``api_version`` option). That version
refuses every sampling parameter, so ``temperature`` must be ``"omit"`` (the
model's own sampling is what repeats measure); ``api_version = "2023-06-01"``
still takes a temperature for the models that accept one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from foreseen.core.digest import canonical_json
from foreseen.core.errors import UserInputError
from foreseen.credit.backends.base import ForecastRequest
from foreseen.credit.backends.http.backend import Extracted, HttpBackend
from foreseen.credit.backends.http.common import HttpOptions
from foreseen.credit.backends.output_modes import AUTO, unresolved
from foreseen.credit.backends.schemas import response_schema
from foreseen.credit.backends.usage import TokenUsage, usage_count

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"
#: the current Messages API version; it takes no sampling parameter (temperature, top_p,
#: top_k: HTTP 400 even at their defaults), so temperature must be "omit" with it
DEFAULT_API_VERSION = "2026-10-21"
SAMPLING_VERSIONS = frozenset({"2023-06-01"})


class AnthropicBackend(HttpBackend):
    """Anthropic Messages API with tool-use structured output."""

    name = "anthropic"
    path = "/v1/messages"

    def __init__(self, **options: Any) -> None:
        version = options.get("api_version", DEFAULT_API_VERSION)
        if not isinstance(version, str) or not version:
            raise UserInputError("backend option api_version must be a string")
        self.api_version = version
        super().__init__(HttpOptions.parse(options, default_base_url=DEFAULT_BASE_URL,
                                           default_key_env=DEFAULT_KEY_ENV,
                                           backend="anthropic", default_mode="tools"))
        if self.options.temperature is not None and version not in SAMPLING_VERSIONS:
            raise UserInputError(
                f"Anthropic API version {version} takes no temperature: set temperature ="
                " \"omit\" (the model's own sampling), or api_version = \"2023-06-01\" for a"
                " model that still accepts one")

    def configuration(self) -> dict[str, Any]:
        mode = self.options.output_mode
        return self.options.configuration(
            self.name, api_version=self.api_version,
            structured_output="tool_use" if mode == "tools" else mode)

    def headers(self, key: str, request: ForecastRequest) -> dict[str, str]:
        sent = {"anthropic-version": self.api_version, "content-type": "application/json"}
        return {"x-api-key": key, **sent} if key else sent

    def payload(self, request: ForecastRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            **self.options.provider_options,
            "model": self.options.model,
            "max_tokens": self.options.answer_max_tokens(request),
            "messages": [{"role": "user", "content": user_content(request)}],
        }
        if self.options.temperature is not None:
            body["temperature"] = self.options.temperature
        wanted = response_schema(request)
        if self.options.output_mode == AUTO:
            raise unresolved(self.name)
        if wanted is not None and self.options.output_mode == "tools":
            tool = f"submit_{wanted.name}"
            body["tools"] = [{"name": tool,
                              "description": f"Submit the {wanted.name} as structured data.",
                              "input_schema": wanted.schema}]
            body["tool_choice"] = {"type": "tool", "name": tool}
        if self.options.system is not None:
            body["system"] = self.options.system
        return body

    def extract(self, body: Mapping[str, Any]) -> Extracted:
        usage = anthropic_usage(body.get("usage"))
        content = body.get("content")
        if not isinstance(content, list):
            return Extracted(None, "response has no content list", usage)
        texts: list[str] = []
        for block in content:
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "tool_use" and isinstance(block.get("input"), Mapping):
                return Extracted(canonical_json(block["input"]), None, usage)
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
        if body.get("stop_reason") == "refusal":
            return Extracted(None, f"model refused: {''.join(texts)[:200]}", usage)
        if texts:
            return Extracted("".join(texts), None, usage)
        return Extracted(None, "response has neither a tool call nor text", usage)


def user_content(request: ForecastRequest) -> str | list[dict[str, Any]]:
    """The user message: the prompt, split at its shared start with a cache breakpoint.

    ``request.cache_prefix`` strictly inside the prompt: two text blocks (the
    first with ``cache_control``); the whole prompt shared: one block with
    ``cache_control``; nothing shared: the prompt as a plain string. The blocks'
    texts always concatenate to the prompt.
    """
    prompt, cut = request.prompt, request.cache_prefix
    if cut <= 0:
        return prompt
    marked = {"type": "ephemeral"}
    if cut >= len(prompt):
        return [{"type": "text", "text": prompt, "cache_control": marked}]
    return [{"type": "text", "text": prompt[:cut], "cache_control": marked},
            {"type": "text", "text": prompt[cut:]}]


def anthropic_usage(usage: Any) -> TokenUsage:
    """The usage of an Anthropic usage object (``usage``: the answer's JSON, any shape).

    Anthropic's ``input_tokens`` counts only the input after the last cache
    breakpoint; the input in all is ``input_tokens + cache_creation_input_tokens +
    cache_read_input_tokens`` (an absent cache field is 0). Without
    ``input_tokens`` the input is unknown (None) and the cache fields are as given.
    """
    plain = usage_count(usage, "input_tokens")
    output = usage_count(usage, "output_tokens")
    write = usage_count(usage, "cache_creation_input_tokens")
    read = usage_count(usage, "cache_read_input_tokens")
    if plain is None:
        return TokenUsage(None, output, write, read)
    return TokenUsage(plain + (write or 0) + (read or 0), output, write or 0, read or 0)
