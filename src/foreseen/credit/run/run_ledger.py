"""A plan's ledger as a run and an analysis read it: what is kept, whose it is, what is done.

Read once (streamed) keeping only what :func:`run_keep` keeps; opened for a run
only by the plan that started it (:func:`open_run_ledger`,
:func:`check_ledger_plan`); a slot is done when it has its one terminal event
(:func:`terminal_slots`); the analysis reads one :class:`SlotRecord` per slot
(:func:`slot_records`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from foreseen.core.errors import IntegrityError, UserInputError
from foreseen.core.ledger import Ledger, LedgerEvent, VerifiedLedger
from foreseen.credit.model import Forecast, SlotRecord
from foreseen.credit.plan.followups import is_followup_context
from foreseen.credit.plan.freeze import FrozenPlan
from foreseen.credit.run.events import (
    CallCompleted,
    CallFailed,
    FallbackAssigned,
    OutcomesExecuted,
    OutcomesRevealed,
    PlanFrozen,
    entry,
    is_terminal,
)

#: event types a run or an analysis needs from a ledger (everything else is only counted)
_KEPT_TYPES = frozenset({PlanFrozen.TYPE, OutcomesRevealed.TYPE, OutcomesExecuted.TYPE,
                         CallCompleted.TYPE, CallFailed.TYPE, FallbackAssigned.TYPE,
                         "batch_submitted", "batch_closed"})



def run_keep(event: LedgerEvent) -> LedgerEvent | None:
    """What a run or an analysis keeps of a ledger event while reading it once.

    Kept: ``plan_frozen``, ``outcomes_revealed``, ``outcomes_executed``, ``call_completed``,
    ``call_failed``, ``fallback_assigned``, ``batch_submitted`` and ``batch_closed`` (a batch
    run's, :mod:`foreseen.credit.run.batch`) events, each **without** its
    ``raw`` answer text (the bulk of a ledger; nothing downstream reads it from
    memory). Everything else (``call_started``, repairs, …) is verified and
    counted, not kept. A kept event's ``hash`` is the hash of the full line.
    """
    if event.type not in _KEPT_TYPES:
        return None
    if "raw" not in event.payload:
        return event
    payload = {k: v for k, v in event.payload.items() if k != "raw"}
    return LedgerEvent(event.seq, event.type, payload, event.prev, event.hash)



def read_run_ledger(ledger_path: str | os.PathLike[str]) -> VerifiedLedger:
    """Verify a run's ledger in one streamed pass, keeping what :func:`run_keep` keeps."""
    return VerifiedLedger.read(ledger_path, run_keep)



def slots_left(plan: FrozenPlan, ledger_path: str | os.PathLike[str]) -> int:
    """How many of the plan's slots have no terminal event in the ledger (all: no ledger).

    What the probe before a run asks first: with nothing left to run it is not sent
    (it would cost a call for nothing). A ledger this read cannot take as it is (a
    torn last line, a head file behind after a kill) counts as work left: the run
    itself repairs or refuses it when it opens the ledger.
    """
    if not Path(ledger_path).exists():
        return len(plan.body["slots"])
    planned = {str(slot["slot_id"]) for slot in plan.body["slots"]}
    try:
        done = terminal_slots(read_run_ledger(ledger_path).kept)
    except UserInputError:
        return len(planned)
    return len(planned - set(done))



def open_run_ledger(plan: FrozenPlan, ledger_path: str | os.PathLike[str]) -> Ledger:
    """Open (or start) the plan's ledger; refuse a ledger that belongs to another plan.

    The ledger is read once (streamed); ``ledger.events`` holds what
    :func:`run_keep` keeps of the events read (not of those the run appends).
    """
    ledger = Ledger.open(ledger_path, run_keep, keep_appended=False)
    try:
        if not ledger.count:
            ledger.append(*entry(PlanFrozen(plan.plan_id, plan.parent, plan.post_outcome,
                                            len(plan.body["slots"]))))
            return ledger
        check_ledger_plan(ledger.events, plan, Path(ledger_path))
        revealed = any(e.type in (OutcomesRevealed.TYPE, OutcomesExecuted.TYPE)
                       for e in ledger.events)
        if revealed and not plan.post_outcome and len(terminal_slots(ledger.events)) < len(
                plan.body["slots"]):
            raise UserInputError(
                f"ledger {Path(ledger_path).name}: outcomes were executed or revealed before"
                " the run finished; open slots may not be forecast after that"
            )
    except BaseException:
        ledger.close()
        raise
    return ledger



#: the plan keys an amendment may change and still analyse its ancestors' ledgers
ANALYSIS_ONLY_KEYS = frozenset({"analysis", "analysis_code_sha256", "analysis_modules"})



def analysis_ancestor(plan: FrozenPlan, ledger_plan_id: object) -> bool:
    """Whether ``ledger_plan_id`` is an ancestor of ``plan`` through analysis-only amendments.

    An amendment changes no slot, prompt or commitment; one that changed only
    :data:`ANALYSIS_ONLY_KEYS` (since that ancestor) may analyse the ancestor's
    ledger: the calls are the same calls, only what is computed from them differs.
    """
    amendments = plan.body.get("amendments")
    if not isinstance(amendments, list):
        return False
    for index, amendment in enumerate(amendments):
        if isinstance(amendment, dict) and amendment.get("parent") == ledger_plan_id:
            later = amendments[index:]
            return all(isinstance(a, dict) and isinstance(a.get("changed"), list)
                       and set(a["changed"]) <= ANALYSIS_ONLY_KEYS for a in later)
    return False



def check_ledger_plan(events: Sequence[LedgerEvent], plan: FrozenPlan, path: Path, *,
                      analysis: bool = False) -> None:
    """The first event must be ``plan_frozen`` with this plan's id.

    With ``analysis`` (reading a ledger to reveal or analyse it, never to run
    it) the ledger of an ancestor reached through analysis-only amendments is
    accepted too (:func:`analysis_ancestor`).
    """
    first = events[0] if events else None
    if first is None or first.seq != 0 or first.type != PlanFrozen.TYPE:
        raise IntegrityError(f"ledger {path.name} does not start with a plan_frozen event")
    ledger_plan = first.payload.get("plan_id")
    if analysis and ledger_plan != plan.plan_id and analysis_ancestor(plan, ledger_plan):
        return
    if ledger_plan != plan.plan_id:
        raise IntegrityError(
            f"ledger {path.name} belongs to plan {str(first.payload.get('plan_id'))[:12]}…,"
            f" not to plan {plan.plan_id[:12]}… (plan or ledger changed?)"
        )



def terminal_slots(events: Sequence[LedgerEvent]) -> dict[str, LedgerEvent]:
    """Slot id → its terminal event; raises if a slot has two."""
    terminal: dict[str, LedgerEvent] = {}
    for event in events:
        if is_terminal(event):
            sid = str(event.payload["slot_id"])
            if sid in terminal:
                raise IntegrityError(f"slot {sid} has more than one terminal event")
            terminal[sid] = event
    return terminal



def read_slot_records(ledger_path: str | os.PathLike[str]) -> list[SlotRecord]:
    """The analysis view of a ledger: one :class:`SlotRecord` per terminal event, by slot id."""
    return slot_records(read_run_ledger(ledger_path).kept)



def slot_records(events: Sequence[LedgerEvent]) -> list[SlotRecord]:
    """One :class:`SlotRecord` per terminal event among ``events``, sorted by slot id."""
    records = []
    for sid, event in terminal_slots(events).items():
        payload = event.payload
        if is_followup_context(payload.get("context_id")):
            continue  # a follow-up's answer is a class (run.followup_answers)
        forecast = Forecast.from_json(payload["forecast"])
        records.append(SlotRecord(
            slot_id=sid, state_id=str(payload["state_id"]),
            context_id=str(payload["context_id"]), repeat=int(payload["repeat"]),
            forecast=forecast, fallback=event.type == FallbackAssigned.TYPE,
            explainer=payload.get("explainer"), delivered=payload.get("delivered"),
            signal=payload.get("signal")))
    records.sort(key=lambda r: r.slot_id)
    return records
