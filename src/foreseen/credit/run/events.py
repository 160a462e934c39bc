"""The credit run's ledger events: one class per kind, with a format version.

The ledger itself (:mod:`foreseen.core.ledger`) is generic: a hash-chained list
of ``(type, payload)``. What a credit run writes into it is defined here, one
frozen dataclass per event kind; :func:`entry` turns an event into the ledger's
``(type, payload)`` pair and :func:`read` turns a ledger event back into its
class. The first event of every run ledger, :class:`PlanFrozen`, carries
:data:`EVENTS_FORMAT`; a ledger written before the format was versioned has no
``events_format`` and is read as version 1 (the payloads are the same).

==========================  =====================================================
``plan_frozen``             the plan this ledger belongs to (always first)
``call_started``            one attempt of a slot's call begins
``call_failed``             the attempt got nothing usable (transport failure)
``call_completed``          an answer arrived (``valid`` says if it is a forecast)
``fallback_assigned``       the slot gets the plan's fallback forecast (ITT)
``budget_exhausted``        the budget refused the next call; the run stopped
``slot_halted``             a slot failed during an outage: not terminal, run again
``run_halted``              the circuit breaker stopped the run (an outage)
``request_rejected``        the server answered that a call's request is wrong (a
                            configuration error): the run stopped, the slot is
                            not terminal and runs again once the plan's backend
                            is fixed
``batch_submitted``         a batch run sent these slots to the provider's batch API
                            (written and synced before the run waits for it)
``batch_closed``            every result of that batch is recorded (or it was given
                            up); a resumed run collects the batches not closed
``outcomes_executed``       a prospective plan's outcomes were executed (after
                            every slot's terminal event) and sealed
``outcomes_revealed``       the sealed outcomes were opened (digest checked)
``analysis_written``        a report was written from this ledger
==========================  =====================================================

A slot's **terminal** event is ``call_completed`` with ``valid: true`` or
``fallback_assigned``; every slot of a finished run has exactly one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, TypedDict

from foreseen.core.ledger import LedgerEvent
from foreseen.core.schema import OPTIONAL, SchemaError, from_json, to_json
from foreseen.credit.plan.plan_file import PlanSlot

EVENTS_FORMAT = "foreseen.credit.events/1"


class SlotFields(TypedDict):
    """:class:`SlotIdentity`'s fields as keyword arguments of a slot event."""

    slot_id: str
    explainer: str | None
    state_id: str
    context_id: str
    repeat: int
    delivered: bool | None
    signal: float | None


@dataclass(frozen=True)
class SlotIdentity:
    """Which slot an event is about (copied from the plan's slot); slot events extend it."""

    slot_id: str
    explainer: str | None
    state_id: str
    context_id: str
    repeat: int
    delivered: bool | None
    signal: float | None

    @staticmethod
    def of(slot: PlanSlot) -> SlotIdentity:
        """The identity of a plan slot (what every event of the slot repeats)."""
        return SlotIdentity(slot.slot_id, slot.explainer, slot.state_id, slot.context_id,
                            slot.repeat, slot.delivered, slot.signal)

    def fields(self) -> SlotFields:
        """The identity's fields (to start a slot event: ``CallCompleted(**id.fields(), …)``)."""
        return SlotFields(slot_id=self.slot_id, explainer=self.explainer,
                          state_id=self.state_id, context_id=self.context_id,
                          repeat=self.repeat, delivered=self.delivered, signal=self.signal)


@dataclass(frozen=True)
class PlanFrozen:
    """The plan this ledger belongs to."""

    TYPE: ClassVar[str] = "plan_frozen"
    plan_id: str
    parent: str | None
    post_outcome: bool
    slots: int
    events_format: str | None = field(default=EVENTS_FORMAT, metadata=OPTIONAL)


@dataclass(frozen=True)
class CallStarted:
    """One attempt of a slot's call begins (with the frozen prompt's digest)."""

    TYPE: ClassVar[str] = "call_started"
    slot_id: str
    attempt: int
    prompt_sha256: str


@dataclass(frozen=True)
class CallFailed:
    """Nothing usable arrived for this attempt; ``retry_after`` is the server's wait."""

    TYPE: ClassVar[str] = "call_failed"
    slot_id: str
    attempt: int
    error: str
    retry_after: float | None
    budget_charge_usd: float | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class Usage:
    """Token counts the service reported (None when it did not).

    ``input_tokens`` counts every input token; of them, ``cache_write_tokens``
    were written to the provider's prompt cache and ``cache_read_tokens`` read
    from it (written only when the service reported them; older ledgers have
    neither).
    """

    input_tokens: int | None
    output_tokens: int | None
    cache_write_tokens: int | None = field(default=None, metadata=OPTIONAL)
    cache_read_tokens: int | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class CallCompleted(SlotIdentity):
    """An answer arrived: the raw text, its parse (``forecast``) or why it is not valid."""

    TYPE: ClassVar[str] = "call_completed"
    attempt: int
    valid: bool
    reason: str | None
    forecast: dict[str, Any] | None
    latency_s: float
    raw: str
    requested_model: str
    returned_model: str | None
    returned_model_reason: str | None
    usage: Usage
    cost_usd: float | None
    budget_charge_usd: float | None = field(default=None, metadata=OPTIONAL)
    temperature: float | None = field(default=None, metadata=OPTIONAL)
    #: how the answer was constrained (json_schema, json_object, tools, grammar, text)
    output_mode: str | None = field(default=None, metadata=OPTIONAL)
    #: what the prompt cache saved on this call: its tokens at the plain input price minus
    #: ``cost_usd`` (written only when the service reported cache usage and it is priced)
    cache_saved_usd: float | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class FallbackAssigned(SlotIdentity):
    """The slot's terminal fallback forecast (intention to treat), with the reason."""

    TYPE: ClassVar[str] = "fallback_assigned"
    reason: str
    forecast: dict[str, Any]


@dataclass(frozen=True)
class BudgetExhausted:
    """The budget refused the next call: limit, spent, the refused bound, slots left."""

    TYPE: ClassVar[str] = "budget_exhausted"
    limit_usd: float
    spent_usd: float
    refused_call_bound_usd: float | None
    slots_left: int


@dataclass(frozen=True)
class SlotHalted(SlotIdentity):
    """A slot whose calls failed while the service was down: retried by the next run."""

    TYPE: ClassVar[str] = "slot_halted"
    reason: str


@dataclass(frozen=True)
class RunHaltedEvent:
    """The circuit breaker stopped the run: why, slots halted, slots not started."""

    TYPE: ClassVar[str] = "run_halted"
    reason: str
    slots_halted: int
    slots_unstarted: int


@dataclass(frozen=True)
class RequestRejected:
    """The server rejected a call's request (HTTP status and its words, key-scrubbed)."""

    TYPE: ClassVar[str] = "request_rejected"
    slot_id: str
    attempt: int
    status: int | None
    message: str


@dataclass(frozen=True)
class OutcomesExecuted:
    """A prospective plan's outcomes were executed after every forecast and sealed.

    ``sha256`` is the sealed outcome file's SHA-256 (what the reveal checks),
    ``code_sha256`` the outcome-execution code digest the plan committed to and
    that was checked before executing, ``states`` how many outcomes it holds.
    """

    TYPE: ClassVar[str] = "outcomes_executed"
    sha256: str
    code_sha256: str
    states: int


@dataclass(frozen=True)
class OutcomesRevealed:
    """The sealed outcome file was opened: its SHA-256, how many states it holds and the
    plan that opened it (``plan_id``; absent in ledgers written before it was recorded).

    The ledger is the run's clock: an amendment made on this plan (or after it)
    is post hoc (:mod:`foreseen.credit.run.post_hoc`).
    """

    TYPE: ClassVar[str] = "outcomes_revealed"
    sha256: str
    states: int
    plan_id: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class AnalysisWritten:
    """A report was written from this ledger: the SHA-256 of its text and its file name."""

    TYPE: ClassVar[str] = "analysis_written"
    report_sha256: str
    path: str


@dataclass(frozen=True)
class BatchSlot:
    """One slot of a submitted batch: the attempt this submission is, its item's id."""

    slot_id: str
    attempt: int
    custom_id: str


@dataclass(frozen=True)
class BatchSubmitted:
    """A batch accepted by the provider (``provider``: anthropic or openai) with its slots.

    ``input_file_id``: the uploaded request file (OpenAI Batch only).
    """

    TYPE: ClassVar[str] = "batch_submitted"
    batch_id: str
    provider: str
    slots: tuple[BatchSlot, ...]
    input_file_id: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class BatchClosed:
    """The batch's results are all recorded; ``status`` is the provider's final status."""

    TYPE: ClassVar[str] = "batch_closed"
    batch_id: str
    status: str
    answered: int
    failed: int
    missing: int


Event = (PlanFrozen | CallStarted | CallFailed | CallCompleted | FallbackAssigned
         | BudgetExhausted | SlotHalted | RunHaltedEvent | RequestRejected | OutcomesExecuted
         | OutcomesRevealed | AnalysisWritten | BatchSubmitted | BatchClosed)
EVENT_TYPES: dict[str, type[Any]] = {cls.TYPE: cls for cls in (
    PlanFrozen, CallStarted, CallFailed, CallCompleted, FallbackAssigned, BudgetExhausted,
    SlotHalted, RunHaltedEvent, RequestRejected, OutcomesExecuted, OutcomesRevealed,
    AnalysisWritten, BatchSubmitted, BatchClosed)}
TERMINAL: tuple[str, ...] = (CallCompleted.TYPE, FallbackAssigned.TYPE)


def entry(event: Event) -> tuple[str, dict[str, Any]]:
    """The ledger's ``(type, payload)`` for ``event``."""
    payload = to_json(event)
    if not isinstance(payload, dict):
        raise TypeError("an event is written as a JSON object")
    return event.TYPE, payload


def read(event: LedgerEvent) -> Event | None:
    """The typed event of a ledger line (None for kinds this module does not define)."""
    cls = EVENT_TYPES.get(event.type)
    if cls is None:
        return None
    try:
        typed: Event = from_json(cls, dict(event.payload), f"ledger line {event.seq + 1}")
    except SchemaError as error:
        from foreseen.core.errors import IntegrityError

        raise IntegrityError(f"{error} ({event.type} event)") from None
    return typed


def is_terminal(event: LedgerEvent) -> bool:
    """``fallback_assigned``, or ``call_completed`` with ``valid: true``."""
    if event.type == FallbackAssigned.TYPE:
        return True
    return event.type == CallCompleted.TYPE and bool(event.payload.get("valid"))
