"""What a ledger says about a batch run's batches (:mod:`foreseen.credit.run.batch`).

A ``batch_submitted`` event without a later ``batch_closed`` is an **open**
batch: a resumed run collects it instead of submitting its slots again. A
slot's attempt count is the highest attempt any submission gave it; a result
already recorded (``call_completed`` or ``call_failed`` with that slot and
attempt, written *after* the submission that gave the slot that attempt) is not
written again when its batch is collected after a kill. An earlier event with
the same numbers (an online run's attempt, numbered from 1 each run) is not
that result: the batch's answer is still recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from foreseen.core.errors import RequestRejected as RequestRejectedError
from foreseen.core.errors import UserInputError
from foreseen.core.ledger import LedgerEvent
from foreseen.credit.backends.http.batches import BatchState
from foreseen.credit.run.events import (
    BatchClosed,
    BatchSubmitted,
    CallCompleted,
    CallFailed,
    read,
)


@dataclass
class BatchLedger:
    """What a batch run knows: open batches, attempts, results already in the ledger,
    and what this run met (rejections, slots left unstarted, the last polled states)."""

    open: list[BatchSubmitted] = field(default_factory=list)
    attempts: dict[str, int] = field(default_factory=dict)
    #: (slot, attempt) → its result event already in the ledger
    recorded: dict[tuple[str, int], LedgerEvent] = field(default_factory=dict)
    rejections: list[RequestRejectedError] = field(default_factory=list)
    unstarted: list[str] = field(default_factory=list)
    states: dict[str, BatchState] = field(default_factory=dict)

    @classmethod
    def of(cls, events: Sequence[LedgerEvent]) -> BatchLedger:
        """The ledger's batches: those without ``batch_closed`` are open."""
        known = cls()
        closed = {str(e.payload["batch_id"]) for e in events if e.type == BatchClosed.TYPE}
        submitted_pairs: set[tuple[str, int]] = set()
        for event in events:
            if event.type == BatchSubmitted.TYPE:
                submitted = read(event)
                assert isinstance(submitted, BatchSubmitted)
                for slot in submitted.slots:
                    known.attempts[slot.slot_id] = max(known.attempts.get(slot.slot_id, 0),
                                                       slot.attempt)
                    submitted_pairs.add((slot.slot_id, slot.attempt))
                if submitted.batch_id not in closed:
                    known.open.append(submitted)
            elif event.type in (CallCompleted.TYPE, CallFailed.TYPE):
                pair = (str(event.payload.get("slot_id")), event.payload.get("attempt"))
                if pair in submitted_pairs:  # (an event without an attempt is in no batch)
                    known.recorded[pair] = event
        return known


def refuse_open_batches(events: Sequence[LedgerEvent]) -> None:
    """Refuse an online run on a ledger with an open batch: the provider answers (and
    bills) its slots, so sending them online would pay for them twice."""
    closed = {e.payload.get("batch_id") for e in events if e.type == BatchClosed.TYPE}
    still_open = [str(e.payload.get("batch_id")) for e in events
                  if e.type == BatchSubmitted.TYPE and e.payload.get("batch_id") not in closed]
    if still_open:
        raise UserInputError(
            f"the ledger holds batch {still_open[0]!r} ({len(still_open)} open in all),"
            " submitted by a batch run and not collected yet: resume with 'credit run --batch'"
            " to collect it (running its slots online would pay for them twice)")
