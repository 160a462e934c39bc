"""OpenAI-compatible chat completions backend (``openai_compatible``; spec credit.md §5, §10).

``POST {base_url}/chat/completions`` with ``Authorization: Bearer <key>``
(the key from the environment variable named in the plan). Structured output
by ``response_format = {"type": "json_schema", "json_schema": {"name",
"schema", "strict": true}}``; the answer text is
``choices[0].message.content`` (a refusal in ``message.refusal`` is a final
error). Usage: ``usage.prompt_tokens`` / ``usage.completion_tokens``; the
returned model id is the body's ``model``. Works with OpenAI and with
servers that implement the same shape (vLLM, llama.cpp server, LiteLLM).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from foreseen.credit.backends.base import ForecastRequest
from foreseen.credit.backends.http.backend import Extracted, HttpBackend
from foreseen.credit.backends.http.common import (
    HttpOptions,
    usage_numbers,
)
from foreseen.credit.backends.schemas import response_schema

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"


class OpenAICompatibleBackend(HttpBackend):
    """OpenAI-compatible chat completions with ``json_schema`` structured output."""

    name = "openai_compatible"
    path = "/chat/completions"

    def __init__(self, **options: Any) -> None:
        super().__init__(HttpOptions.parse(options, default_base_url=DEFAULT_BASE_URL,
                                           default_key_env=DEFAULT_KEY_ENV))

    def configuration(self) -> dict[str, Any]:
        return self.options.configuration(self.name, structured_output="json_schema")

    def headers(self, key: str, request: ForecastRequest) -> dict[str, str]:
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
            "max_tokens": self.options.max_tokens,
            "messages": messages,
        }
        if self.options.temperature is not None:
            body["temperature"] = self.options.temperature
        if wanted is not None:
            name, schema = wanted
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": name, "schema": schema,
                                                       "strict": True}}
        return body

    def extract(self, body: Mapping[str, Any]) -> Extracted:
        tokens_in, tokens_out = usage_numbers(body.get("usage"), "prompt_tokens",
                                              "completion_tokens")
        choices = body.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        message = first.get("message") if isinstance(first, Mapping) else None
        if not isinstance(message, Mapping):
            return Extracted(None, "response has no choices[0].message", tokens_in, tokens_out)
        refusal = message.get("refusal")
        if isinstance(refusal, str) and refusal:
            return Extracted(None, f"model refused: {refusal[:200]}", tokens_in, tokens_out)
        content = message.get("content")
        if not isinstance(content, str):
            return Extracted(None, "response message has no text content", tokens_in,
                             tokens_out)
        return Extracted(content, None, tokens_in, tokens_out)
