"""What a ledger says about a batch run's batches (:mod:`foreseen.credit.run.batch`).

A ``batch_submitted`` event without a later ``batch_closed`` is an **open**
batch: a resumed run collects it instead of submitting its slots again. A
slot's attempt count is the highest attempt any submission gave it; a result
already recorded (``call_completed`` or ``call_failed`` with that slot and
attempt) is not written again when its batch is collected after a kill.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from foreseen.core.errors import RequestRejected as RequestRejectedError
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
    recorded: set[tuple[str, int]] = field(default_factory=set)
    rejections: list[RequestRejectedError] = field(default_factory=list)
    unstarted: list[str] = field(default_factory=list)
    states: dict[str, BatchState] = field(default_factory=dict)

    @classmethod
    def of(cls, events: Sequence[LedgerEvent]) -> BatchLedger:
        """The ledger's batches: those without ``batch_closed`` are open."""
        known = cls()
        closed = {str(e.payload["batch_id"]) for e in events if e.type == BatchClosed.TYPE}
        for event in events:
            if event.type == BatchSubmitted.TYPE:
                submitted = read(event)
                assert isinstance(submitted, BatchSubmitted)
                for slot in submitted.slots:
                    known.attempts[slot.slot_id] = max(known.attempts.get(slot.slot_id, 0),
                                                       slot.attempt)
                if submitted.batch_id not in closed:
                    known.open.append(submitted)
            elif event.type in (CallCompleted.TYPE, CallFailed.TYPE):
                known.recorded.add((str(event.payload["slot_id"]),
                                    int(event.payload["attempt"])))
        return known
