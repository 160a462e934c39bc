"""OpenAI-compatible chat completions backend (``openai_compatible``; credit §5, §10).

``POST {base_url}/chat/completions`` with ``Authorization: Bearer <key>``
(the key from the environment variable named in the plan; none for a server on
the loopback when the variable is unset). How the answer is constrained is the
``output_mode`` (:mod:`foreseen.credit.backends.output_modes`; default
``json_schema``): ``response_format`` json_schema (strict) or json_object with
a ``schema`` field, a forced ``tools`` call (the answer is the call's
``arguments``), a llama.cpp ``grammar``, or plain ``text``. The answer text is
``choices[0].message.content`` (or the tool call's arguments); a refusal in
``message.refusal`` is a final error. Usage: ``usage.prompt_tokens`` (cached ones included) /
``usage.completion_tokens``, and ``usage.prompt_tokens_details.cached_tokens``
(OpenAI caches a shared prompt start of 1,024 tokens or more by itself, in
128-token steps, and writes at no extra cost: the stable part of the prompt comes
first for that reason); the returned model id is the body's ``model``.
Works with OpenAI and with servers that implement the same shape (vLLM,
Ollama, LM Studio, llama.cpp's servers, LiteLLM); which modes each accepts is
in ``docs/servers.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from foreseen.core.digest import canonical_json
from foreseen.credit.backends.base import ForecastRequest
from foreseen.credit.backends.grammar import gbnf_grammar
from foreseen.credit.backends.http.backend import Extracted, HttpBackend
from foreseen.credit.backends.http.common import HttpOptions
from foreseen.credit.backends.output_modes import AUTO, unresolved
from foreseen.credit.backends.schemas import response_schema
from foreseen.credit.backends.usage import TokenUsage, usage_count

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"


class OpenAICompatibleBackend(HttpBackend):
    """OpenAI-compatible chat completions; answers constrained by the ``output_mode``."""

    name = "openai_compatible"
    path = "/chat/completions"

    def __init__(self, **options: Any) -> None:
        super().__init__(HttpOptions.parse(options, default_base_url=DEFAULT_BASE_URL,
                                           default_key_env=DEFAULT_KEY_ENV,
                                           backend="openai_compatible",
                                           default_mode="json_schema"))

    def configuration(self) -> dict[str, Any]:
        return self.options.configuration(self.name, structured_output=self.options.output_mode)

    def headers(self, key: str, request: ForecastRequest) -> dict[str, str]:
        if not key:
            return {"content-type": "application/json"}
        return {"authorization": f"Bearer {key}", "content-type": "application/json"}

    def payload(self, request: ForecastRequest) -> dict[str, Any]:
        wanted = response_schema(request)
        messages: list[dict[str, str]] = []
        if self.options.system is not None:
            messages.append({"role": "system", "content": self.options.system})
        messages.append({"role": "user", "content": request.prompt})
        body: dict[str, Any] = {
            **self.options.provider_options,
            "model": self.options.model,
            "max_tokens": self.options.answer_max_tokens(request),
            "messages": messages,
        }
        if self.options.temperature is not None:
            body["temperature"] = self.options.temperature
        if wanted is not None:
            body.update(self.constraint(wanted.name, wanted.schema))
        return body

    def constraint(self, name: str, schema: dict[str, Any]) -> dict[str, Any]:
        """The request-body fields that constrain the answer to ``schema`` in the output
        mode (merged into :meth:`payload`'s body, sent as is)."""
        mode = self.options.output_mode
        if mode == AUTO:
            raise unresolved(self.name)
        if mode == "json_schema":
            return {"response_format": {"type": "json_schema",
                                        "json_schema": {"name": name, "schema": schema,
                                                        "strict": True}}}
        if mode == "json_object":
            return {"response_format": {"type": "json_object", "schema": schema}}
        if mode == "tools":
            tool = f"submit_{name}"
            return {"tools": [{"type": "function", "function": {
                        "name": tool, "description": f"Submit the {name} as structured data.",
                        "parameters": schema}}],
                    "tool_choice": {"type": "function", "function": {"name": tool}}}
        if mode == "grammar":
            return {"grammar": gbnf_grammar(schema)}
        return {}

    def extract(self, body: Mapping[str, Any]) -> Extracted:
        usage = openai_usage(body.get("usage"))
        choices = body.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        message = first.get("message") if isinstance(first, Mapping) else None
        if not isinstance(message, Mapping):
            return Extracted(None, "response has no choices[0].message", usage)
        refusal = message.get("refusal")
        if isinstance(refusal, str) and refusal:
            return Extracted(None, f"model refused: {refusal[:200]}", usage)
        calls = message.get("tool_calls")
        if self.options.output_mode == "tools" and isinstance(calls, list) and calls:
            function = calls[0].get("function") if isinstance(calls[0], Mapping) else None
            arguments = function.get("arguments") if isinstance(function, Mapping) else None
            if isinstance(arguments, str):
                return Extracted(arguments, None, usage)
            if isinstance(arguments, Mapping):
                return Extracted(canonical_json(arguments), None, usage)
            return Extracted(None, "tool call has no arguments", usage)
        content = message.get("content")
        if not isinstance(content, str):
            return Extracted(None, "response message has no text content", usage)
        return Extracted(content, None, usage)


def openai_usage(usage: Any) -> TokenUsage:
    """The usage of an OpenAI usage object (``usage``: the answer's JSON, any shape).

    Input ``prompt_tokens``, which already counts the cached tokens
    (``prompt_tokens_details.cached_tokens``, read as at most the input);
    output ``completion_tokens``; cache writes 0 (OpenAI bills none). Without
    ``prompt_tokens`` the input and the cache writes are unknown (None).
    """
    prompt = usage_count(usage, "prompt_tokens")
    completion = usage_count(usage, "completion_tokens")
    details = usage.get("prompt_tokens_details") if isinstance(usage, Mapping) else None
    cached = usage_count(details, "cached_tokens")
    if prompt is None:
        return TokenUsage(None, completion, None, cached)
    return TokenUsage(prompt, completion, 0, min(cached or 0, prompt))
