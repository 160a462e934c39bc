"""Deterministic fault injection for the runner (``--inject-faults SEED``).

:func:`fault_schedule` is a **pure function** of (seed, slot id, attempt):

* with probability ``dead_rate`` (decided per slot) every attempt of the slot
  raises :class:`TransportError` — the slot exhausts its attempts;
* otherwise each attempt, independently, raises :class:`TransportError` with
  probability ``transport_rate`` (half of them with ``retry_after = 0``),
  else returns a content fault with probability ``content_rate`` — truncated
  JSON, a non-finite number, lower > upper, a missing field, or not JSON —
  else passes the inner backend's response through unchanged.

Uniform draws are ``int(SHA-256("seed|slot|attempt|salt")[:8]) / 2^64``, so
a test can recompute the expected integrity from the schedule alone.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from foreseen.credit.backends.base import (
    Backend,
    BackendResponse,
    ForecastRequest,
    TransportError,
    WrappingBackend,
)

TRANSPORT = "transport"
TRANSPORT_RETRY_NOW = "transport_retry_after_0"
NONE = "none"
CONTENT_FAULTS: tuple[str, ...] = ("truncated_json", "non_finite", "inverted_interval",
                                   "missing_field", "not_json")
DEAD_RATE = 0.06
TRANSPORT_RATE = 0.2
CONTENT_RATE = 0.1


def _uniform(seed: int, slot_id: str, attempt: int, salt: str) -> float:
    digest = hashlib.sha256(f"{seed}|{slot_id}|{attempt}|{salt}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


def fault_schedule(seed: int, slot_id: str, attempt: int, *, dead_rate: float = DEAD_RATE,
                   transport_rate: float = TRANSPORT_RATE,
                   content_rate: float = CONTENT_RATE) -> str:
    """The fault for this (seed, slot, attempt): ``none``, a transport fault, or a content fault."""
    if _uniform(seed, slot_id, 0, "dead") < dead_rate:
        return TRANSPORT
    draw = _uniform(seed, slot_id, attempt, "kind")
    if draw < transport_rate:
        retry_now = _uniform(seed, slot_id, attempt, "retry") < 0.5
        return TRANSPORT_RETRY_NOW if retry_now else TRANSPORT
    if draw < transport_rate + content_rate:
        pick = _uniform(seed, slot_id, attempt, "content")
        return CONTENT_FAULTS[min(int(pick * len(CONTENT_FAULTS)), len(CONTENT_FAULTS) - 1)]
    return NONE


def _mangle(text: str, fault: str) -> str:
    try:
        obj: Any = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        obj = None
    if fault == "truncated_json":
        return text[: max(1, len(text) // 2)]
    if fault == "not_json":
        return "The intervention will probably help a little."
    if not isinstance(obj, dict):
        return "{"
    if fault == "non_finite":
        return json.dumps({**obj, "point": float("nan")})
    if fault == "inverted_interval":
        low = obj.get("lower", 0.0)
        return json.dumps({**obj, "lower": (low if isinstance(low, (int, float)) else 0) + 1.0,
                           "upper": (low if isinstance(low, (int, float)) else 0) - 1.0})
    if fault == "missing_field":
        return json.dumps({k: v for k, v in obj.items() if k != "upper"})
    raise ValueError(f"unknown content fault {fault!r}")


class FaultInjectingBackend(WrappingBackend):
    """Wraps a backend; faults follow :func:`fault_schedule` (attempts counted per slot)."""

    def __init__(self, inner: Backend, seed: int) -> None:
        super().__init__(inner)
        self.seed = seed
        self.name = f"{inner.name}+faults"
        self._attempts: dict[str, int] = {}

    async def complete(self, request: ForecastRequest) -> BackendResponse:
        attempt = self._attempts.get(request.slot_id, 0) + 1
        self._attempts[request.slot_id] = attempt
        fault = fault_schedule(self.seed, request.slot_id, attempt)
        if fault == TRANSPORT:
            raise TransportError(f"injected transport fault (attempt {attempt})")
        if fault == TRANSPORT_RETRY_NOW:
            raise TransportError(f"injected 429 (attempt {attempt})", retry_after=0.0)
        response = await self.inner.complete(request)
        if fault == NONE:
            return response
        return BackendResponse(
            text=_mangle(response.text, fault), requested_model=response.requested_model,
            returned_model=response.returned_model,
            returned_model_reason=response.returned_model_reason,
            input_tokens=response.input_tokens, output_tokens=response.output_tokens,
            cost_usd=response.cost_usd)
