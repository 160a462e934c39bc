"""The call sequence every HTTP backend follows (Anthropic, OpenAI-compatible).

For one slot attempt: read the key from the environment → wait for the rate
limiter (one request, an upper bound of tokens) → POST the provider's JSON →
on an answer, extract the structured output, the usage and the returned
model id, price it, and give the unused tokens back to the limiter. Provider
modules only say how to build the body and headers and how to read the answer
(:meth:`HttpBackend.extract`). Exceptions and texts never carry the key.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from foreseen.credit.backends.base import Backend, BackendResponse, ForecastRequest
from foreseen.credit.backends.http.common import (
    SLOT_HEADER,
    HttpAnswer,
    HttpOptions,
    ReusedClient,
    failed_response,
    read_api_key,
    returned_model,
)
from foreseen.credit.backends.http.rate_limit import RateLimiter
from foreseen.credit.backends.schemas import response_schema
from foreseen.credit.backends.secrets import scrub, scrub_optional
from foreseen.credit.backends.usage import TokenUsage


@dataclass(frozen=True, slots=True)
class Extracted:
    """What a provider module reads from a 2xx body: the answer text or an error, and usage."""

    text: str | None
    error: str | None
    usage: TokenUsage


class HttpBackend(Backend):
    """Shared implementation; subclasses set ``name``, ``path`` and the three hooks."""

    name = "http"
    path = ""

    def __init__(self, options: HttpOptions, limiter: RateLimiter | None = None) -> None:
        self.options = options
        self.limiter = limiter or RateLimiter(options.requests_per_minute,
                                              options.tokens_per_minute)
        self.client = ReusedClient(options.timeout_s, options.max_connections)

    @property
    def url(self) -> str:
        return self.options.base_url + self.path

    def configuration(self) -> dict[str, Any]:
        return self.options.configuration(self.name)

    @abstractmethod
    def headers(self, key: str, request: ForecastRequest) -> dict[str, str]:
        """The request headers (the key goes here and nowhere else)."""

    @abstractmethod
    def payload(self, request: ForecastRequest) -> dict[str, Any]:
        """The JSON request body for one slot, sent as is (online, and as a batch item's
        body): the provider's own request shape."""

    @abstractmethod
    def extract(self, body: Mapping[str, Any]) -> Extracted:
        """The answer text (or the reason it is unusable) and token usage of a 2xx body
        (the provider's JSON, any shape)."""

    def cost_bound_usd(self, request: ForecastRequest) -> float | None:
        """Upper bound on the cost of one attempt (for :mod:`foreseen.credit.run.budget`)."""
        return self.options.cost_bound_usd(request)

    def cached_cost_bound_usd(self, request: ForecastRequest, *, read: bool) -> float | None:
        """The cost bound with the shared start written or read (see :class:`HttpOptions`)."""
        return self.options.cached_cost_bound_usd(request, read=read)

    def token_bound(self, request: ForecastRequest) -> int | None:
        """Prompt bytes + framing + schema + ``max_tokens`` (see :class:`HttpOptions`)."""
        return self.options.token_bound(request)

    def answer_token_limit(self) -> int:
        """The configured ``max_tokens``: what a free-text answer is sent (a structured
        one may be sent less, :meth:`HttpOptions.answer_max_tokens`)."""
        return self.options.max_tokens

    async def aclose(self) -> None:
        """Close the reused HTTP client (the runner calls this at the end of a run)."""
        await self.client.aclose()

    def batch_factor(self) -> float:
        """What a batch call pays of the online price (:meth:`PricingTable.batch_factor`)."""
        return self.options.pricing.batch_factor(self.options.model, self.options.base_url)

    def batch_response(self, body: Any, text: str, request: ForecastRequest,
                       key: str) -> BackendResponse:
        """The answer to ``request`` that a batch returned (``body``: the provider's message
        or completion, as the online call answers it), priced at the batch price.

        Read exactly as :meth:`complete` reads an online answer; its cost and
        caching saving are multiplied by :meth:`batch_factor`.
        """
        response = self._response(HttpAnswer(200, body, text), key)
        if response_schema(request) is not None:
            response = replace(response, output_mode=self.options.output_mode)
        factor = self.batch_factor()
        return replace(
            response,
            cost_usd=None if response.cost_usd is None else response.cost_usd * factor,
            cache_saved_usd=(None if response.cache_saved_usd is None
                             else response.cache_saved_usd * factor))

    async def complete(self, request: ForecastRequest) -> BackendResponse:
        key = read_api_key(self.options.api_key_env, self.options.base_url)
        bound = self.options.token_bound(request)
        await self.limiter.acquire(bound)
        headers = {**self.headers(key, request), SLOT_HEADER: request.slot_id}
        answer = await self.client.post_json(self.url, headers, self.payload(request), key,
                                             self.options.api_key_env)
        response = self._response(answer, key)
        if response_schema(request) is not None:
            response = replace(response, output_mode=self.options.output_mode)
        used = (None if response.input_tokens is None or response.output_tokens is None
                else response.input_tokens + response.output_tokens)
        self.limiter.settle(bound, used)
        return response

    def _cache_saved(self, usage: TokenUsage, cost: float | None) -> float | None:
        """The same tokens priced as plain input, minus ``cost`` (pricing.py's formula).

        None when the call is unpriced or the service reported no cache fields.
        """
        if cost is None or (usage.cache_write_tokens is None
                            and usage.cache_read_tokens is None):
            return None
        plain = self.options.pricing.cost(self.options.model, usage.input_tokens,
                                          usage.output_tokens)
        return None if plain is None else plain - cost

    def _response(self, answer: HttpAnswer, key: str) -> BackendResponse:
        if not isinstance(answer.body, Mapping):
            return failed_response(self.options, answer, key,
                                   "response body is not a JSON object (truncated?)")
        extracted = self.extract(answer.body)
        usage = extracted.usage
        model, model_reason = returned_model(answer.body)
        model, model_reason = scrub_optional(model, (key,)), scrub_optional(model_reason, (key,))
        cost = self.options.pricing.cost(self.options.model, usage.input_tokens,
                                         usage.output_tokens,
                                         cache_write_tokens=usage.cache_write_tokens,
                                         cache_read_tokens=usage.cache_read_tokens)
        saved = self._cache_saved(usage, cost)
        if extracted.text is None:
            return BackendResponse(
                cache_write_tokens=usage.cache_write_tokens,
                cache_read_tokens=usage.cache_read_tokens, cache_saved_usd=saved,
                text=scrub(answer.text, (key,))[:2000], requested_model=self.options.model,
                returned_model=model, returned_model_reason=model_reason,
                input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                cost_usd=cost, error=scrub(extracted.error or "no answer in response", (key,)),
                temperature=self.options.temperature)
        return BackendResponse(
            cache_write_tokens=usage.cache_write_tokens,
            cache_read_tokens=usage.cache_read_tokens, cache_saved_usd=saved,
            text=scrub(extracted.text, (key,)), requested_model=self.options.model,
            returned_model=model, returned_model_reason=model_reason,
            input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
            cost_usd=cost, temperature=self.options.temperature)
