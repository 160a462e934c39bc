"""The one interface every forecaster backend obeys (offline, HTTP, command, local).

A backend turns a :class:`ForecastRequest` (one call slot's rendered prompt)
into a :class:`BackendResponse` (the raw text that arrived, plus usage and
identity). It never parses or validates the forecast — the runner does, so
every backend gets the same treatment:

* a backend raises :class:`TransportError` when nothing usable arrived
  (connection error, timeout, HTTP 429 or 5xx); the runner retries those with
  bounded exponential backoff and jitter, honouring ``retry_after``;
* a response that *arrives* is final, even when its text is garbage: the
  runner assigns the plan's deterministic fallback and never re-asks.

Offline backends draw any randomness from ``request.seed`` (a pure function
of the slot), never from a stream consumed in completion order.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ForecastRequest:
    """One call slot: the rendered prompt and the structured context it was rendered from.

    ``context`` is the JSON the prompt was rendered from (public state,
    intervention, and the explanation content the context kind adds); offline
    forecasters read it instead of re-parsing the prompt. It never holds
    outcomes (a ``signal`` context in a post-outcome child plan is the one
    declared exception).
    """

    slot_id: str
    state_id: str
    context_kind: str
    repeat: int
    prompt: str
    seed: int
    context: Mapping[str, Any] = field(default_factory=dict)
    #: characters at the start of ``prompt`` that other calls share (the study's and the
    #: state's part: :func:`foreseen.credit.plan.prompts.render_prompt_parts`); a backend
    #: with a prompt cache marks a breakpoint there; 0: nothing known to be shared
    cache_prefix: int = 0


@dataclass(frozen=True)
class BackendResponse:
    """What arrived: raw text, token usage, cost, the model identity, and any final error."""

    text: str
    requested_model: str
    returned_model: str | None
    returned_model_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    #: set when what arrived is a final error (e.g. HTTP 400, a body that is not JSON):
    #: the runner assigns the fallback with this reason and never re-asks
    error: str | None = None
    #: the sampling temperature the call was made with (None: not known to the backend)
    temperature: float | None = None
    #: how the answer was constrained (an output mode; None: free text or not known)
    output_mode: str | None = None
    #: input tokens written to the provider's prompt cache (counted in ``input_tokens``)
    cache_write_tokens: int | None = None
    #: input tokens read from the provider's prompt cache (counted in ``input_tokens``)
    cache_read_tokens: int | None = None
    #: the cost of the same tokens without the prompt cache minus ``cost_usd`` (None:
    #: unpriced, or no cache usage reported)
    cache_saved_usd: float | None = None


class TransportError(Exception):
    """Nothing usable arrived (connection error, timeout, 429, 5xx): the runner may retry.

    ``retry_after`` is the server's requested wait in seconds (None: use the
    plan's backoff). ``billable`` marks failures the provider may still charge
    for (a timeout after the request was sent); a budget charges their bound.
    """

    billable = False

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Backend(ABC):
    """A forecaster or explainer backend; ``configuration()`` is frozen into the plan.

    Subclasses implement :meth:`configuration` and :meth:`complete` and set
    ``name``. Capabilities have default bodies, so callers never probe with
    ``getattr`` or read a field of the configuration: :meth:`cost_bound_usd`
    (0 — costs nothing), :meth:`answer_token_limit` (the configuration's
    ``max_tokens``, if any), :meth:`aclose` and :meth:`close` (nothing to release), :attr:`stand_in`
    (False: a real model; offline stand-ins set True so every report can say so).
    """

    name: str = "backend"
    #: True for offline stand-ins that imitate a model without calling one
    stand_in: bool = False

    @abstractmethod
    def configuration(self) -> dict[str, Any]:
        """The JSON object frozen into the plan: model, temperature/effort, template digest
        (never a secret); compared as canonical JSON, not read field by field."""

    @abstractmethod
    async def complete(self, request: ForecastRequest) -> BackendResponse:
        """Return the raw response to one slot, or raise :class:`TransportError`."""

    def cost_bound_usd(self, request: ForecastRequest) -> float | None:
        """Upper bound of one attempt's cost in USD; None when the price is unknown."""
        return 0.0

    def token_bound(self, request: ForecastRequest) -> int | None:
        """Upper bound of one attempt's tokens (prompt and answer); None when unknown."""
        return None

    def answer_token_limit(self) -> int | None:
        """The most tokens a free-text answer may have (the ``max_tokens`` it is sent);
        None when the backend declares no limit. An answer of this many output tokens
        was likely cut off (an LLM explainer flags such a note).

        Default: the frozen configuration's ``max_tokens`` when it is a positive
        integer (a backend written before this method existed declared its limit
        there, and keeps its truncation check), else None.
        """
        declared = self.configuration().get("max_tokens")
        if isinstance(declared, int) and not isinstance(declared, bool) and declared > 0:
            return declared
        return None

    def cached_cost_bound_usd(self, request: ForecastRequest, *, read: bool) -> float | None:
        """Upper bound of one attempt's cost when its shared start is written to a prompt
        cache (``read`` False) or read from it (True); a backend without a cache: the bound."""
        return self.cost_bound_usd(request)

    async def aclose(self) -> None:
        """Release asynchronous resources (an HTTP client); called once a run ends."""
        return None

    def close(self) -> None:
        """Release synchronous resources (a loaded local model)."""
        return None


class WrappingBackend(Backend):
    """A backend around another one (fault injection, a response cache).

    Everything but :meth:`complete` is the inner backend's: its configuration
    (a wrapper never changes a result, so a plan frozen without it runs with
    it), its cost bound, its resources and whether it is a stand-in.
    """

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.name = inner.name
        self.stand_in = inner.stand_in

    def configuration(self) -> dict[str, Any]:
        return self.inner.configuration()

    def cost_bound_usd(self, request: ForecastRequest) -> float | None:
        return self.inner.cost_bound_usd(request)

    def token_bound(self, request: ForecastRequest) -> int | None:
        return self.inner.token_bound(request)

    def answer_token_limit(self) -> int | None:
        return self.inner.answer_token_limit()

    def cached_cost_bound_usd(self, request: ForecastRequest, *, read: bool) -> float | None:
        return self.inner.cached_cost_bound_usd(request, read=read)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def close(self) -> None:
        self.inner.close()
