"""A spending limit in USD that stops a run cleanly before it is exceeded (credit §5).

Before each call attempt the runner **reserves** the attempt's upper-bound cost

    bound = (prompt-token bound · input price + max_tokens · output price) / 10⁶

(:meth:`foreseen.credit.backends.http.common.HttpOptions.cost_bound_usd`: the
prompt bound is its UTF-8 byte count plus framing, which no byte-level BPE
tokeniser exceeds). A reservation is granted only if

    spent + reserved_in_flight + bound ≤ limit,

so the money actually charged can never pass the limit while every answer
costs at most its bound. When it is refused, the run stops starting calls:
calls in flight finish, every other slot stays unstarted (no terminal event),
and the runner logs one ``budget_exhausted`` event. Rerunning with a higher
limit resumes exactly the unstarted slots; the money already spent is read
back from the ledger (:meth:`Budget.from_ledger`).

What an attempt is charged (:func:`charge_for_response`,
:func:`charge_for_failure`): its priced usage when the answer reports one;
its full bound when an answer arrived without usage, or when the request
timed out (the provider may have billed it); nothing for other transport
failures (429, 5xx, connection errors are not billed). The charge is written
into the ledger event as ``budget_charge_usd``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from foreseen.core.errors import UserInputError
from foreseen.core.ledger import LedgerEvent
from foreseen.credit.backends.base import (
    Backend,
    BackendResponse,
    ForecastRequest,
    TransportError,
)
from foreseen.credit.run.events import BudgetExhausted, CallCompleted, CallFailed

CHARGE_FIELD = "budget_charge_usd"


@dataclass
class Budget:
    """The limit, what was spent (including earlier runs of the ledger) and what is reserved."""

    limit_usd: float
    spent_usd: float = 0.0
    reserved_usd: float = 0.0
    refused_bound_usd: float | None = None

    def __post_init__(self) -> None:
        if isinstance(self.limit_usd, bool) or not isinstance(self.limit_usd, (int, float)) \
                or not math.isfinite(self.limit_usd) or self.limit_usd < 0:
            raise UserInputError("the budget must be a finite number of USD >= 0")

    @classmethod
    def from_ledger(cls, limit_usd: float, events: Sequence[LedgerEvent]) -> Budget:
        """A budget whose spent amount is what the ledger's calls were charged so far.

        Each ``call_completed``/``call_failed`` event counts its
        ``budget_charge_usd``; a ``call_completed`` written without a budget
        counts its ``cost_usd`` (0 when null).
        """
        spent = 0.0
        for event in events:
            if event.type not in (CallCompleted.TYPE, CallFailed.TYPE):
                continue
            charge = event.payload.get(CHARGE_FIELD)
            if charge is None and event.type == CallCompleted.TYPE:
                charge = event.payload.get("cost_usd")
            if isinstance(charge, (int, float)) and not isinstance(charge, bool):
                spent += float(charge)
        return cls(float(limit_usd), spent_usd=spent)

    @property
    def exhausted(self) -> bool:
        """True once a reservation was refused (the run starts no further call)."""
        return self.refused_bound_usd is not None

    def try_reserve(self, bound_usd: float) -> bool:
        """Reserve ``bound_usd`` if ``spent + reserved + bound ≤ limit``; else mark exhausted."""
        if self.exhausted:
            return False
        if self.spent_usd + self.reserved_usd + bound_usd > self.limit_usd:
            self.refused_bound_usd = bound_usd
            return False
        self.reserved_usd += bound_usd
        return True

    def settle(self, bound_usd: float, charge_usd: float) -> None:
        """Release a reservation and record what the attempt was charged."""
        self.reserved_usd = max(0.0, self.reserved_usd - bound_usd)
        self.spent_usd += charge_usd

    def event(self, slots_left: int) -> BudgetExhausted:
        """The ``budget_exhausted`` ledger event."""
        return BudgetExhausted(self.limit_usd, round(self.spent_usd, 12),
                               self.refused_bound_usd, slots_left)


def call_bound_usd(backend: Backend, request: ForecastRequest) -> float:
    """The backend's upper-bound cost of one attempt; 0 for backends that cost nothing.

    A backend that can cost money exposes ``cost_bound_usd(request)``; when it
    returns None (model missing from the pricing table) a budget cannot be
    enforced and the run is refused. A call whose shared start may be written
    to the provider's prompt cache can cost more than that (Anthropic bills a
    write at 1.25 × the input price): the bound is the larger of the two,
    ``max(cost_bound_usd, cached_cost_bound_usd(read=False))``.
    """
    bound = backend.cost_bound_usd(request)
    if bound is None:
        raise UserInputError(
            "a budget needs the model's price: add it to the forecaster's pricing table")
    written = backend.cached_cost_bound_usd(request, read=False)
    return float(bound if written is None else max(bound, written))


def charge_for_response(response: BackendResponse, bound_usd: float) -> float:
    """The priced usage of an answer; its bound when the answer reported no usage."""
    return float(response.cost_usd) if response.cost_usd is not None else bound_usd


def charge_for_failure(error: TransportError, bound_usd: float) -> float:
    """Timeouts (``billable``) are charged their bound; other transport failures nothing."""
    return bound_usd if error.billable else 0.0
