"""Prospective plans: outcomes executed only after the forecast ledger closes (paper §3).

A prospective plan (:attr:`foreseen.credit.plan.freeze.FrozenPlan.prospective`)
was frozen before any outcome existed; it commits to the digest of the code
that executes the outcomes and to that code's inputs. Its run folder gets its
outcome file only after the forecasts:

1. :func:`record_outcome_execution` reads the ledger once and refuses
   (:class:`~foreseen.core.errors.IntegrityError`) unless every slot of the
   plan has its terminal event and the execution code's digest is still the
   committed one; it then calls the study's executor, writes the sealed
   outcome file (atomically) and appends ``outcomes_executed`` (the file's
   SHA-256, the code digest, the number of states) to the ledger. A rerun
   finds the event and executes nothing again.
2. :func:`executed_outcomes` is what a reveal reads: the ``outcomes_executed``
   event, checked to come after every slot's terminal event; a reveal before
   the ledger closes, or before the execution, is refused.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from foreseen.core.digest import sha256_file
from foreseen.core.errors import ConfigError, IntegrityError
from foreseen.core.ledger import LedgerEvent
from foreseen.credit.plan.freeze import (
    FrozenPlan,
    check_outcome_code,
    read_outcomes,
    write_outcomes,
)
from foreseen.credit.run.events import OutcomesExecuted, entry
from foreseen.credit.run.run_ledger import check_ledger_plan, read_run_ledger, terminal_slots

OutcomeExecutor = Callable[[], Mapping[str, float]]


def _require_closed(plan: FrozenPlan, events: Sequence[LedgerEvent], what: str) -> int:
    """The seq of the last terminal event; IntegrityError while a slot has no result."""
    terminal = terminal_slots(events)
    open_slots = sorted({str(s["slot_id"]) for s in plan.body["slots"]} - set(terminal))
    if open_slots:
        raise IntegrityError(
            f"prospective plan: {what} refused: the forecast ledger is not closed"
            f" ({len(open_slots)} of {len(plan.body['slots'])} slots have no result yet,"
            f" first: {open_slots[0]})")
    return max((e.seq for e in terminal.values()), default=0)


def _execution_event(events: Sequence[LedgerEvent]) -> LedgerEvent | None:
    executed = [e for e in events if e.type == OutcomesExecuted.TYPE]
    if len(executed) > 1:
        raise IntegrityError("ledger: the outcomes were executed more than once")
    return executed[0] if executed else None


def executed_outcomes(plan: FrozenPlan, events: Sequence[LedgerEvent]) -> OutcomesExecuted | None:
    """The checked ``outcomes_executed`` record of a prospective plan's ledger (None: sealed plan).

    Refused (IntegrityError) when a slot has no terminal event, when the
    outcomes were not executed, or when the execution is not after every
    slot's terminal event.
    """
    if not plan.prospective:
        return None
    return _checked_record(plan, events)


def _checked_record(plan: FrozenPlan, events: Sequence[LedgerEvent]) -> OutcomesExecuted:
    last_terminal = _require_closed(plan, events, "reveal")
    event = _execution_event(events)
    if event is None:
        raise IntegrityError("prospective plan: reveal refused: the ledger records no outcome"
                             " execution (outcomes_executed) yet")
    if event.seq < last_terminal:
        raise IntegrityError("prospective plan: the outcomes were executed before the last"
                             " forecast (ledger order)")
    return OutcomesExecuted(str(event.payload["sha256"]), str(event.payload["code_sha256"]),
                            int(event.payload["states"]))


def record_outcome_execution(plan: FrozenPlan, ledger_path: str | os.PathLike[str],
                             sealed: str | os.PathLike[str],
                             execute: OutcomeExecutor) -> OutcomesExecuted:
    """Execute a prospective plan's outcomes after its forecasts and seal them (docstring)."""
    if not plan.prospective:
        raise ConfigError("plan: outcomes are executed after the forecasts only for a"
                          " prospective plan")
    path = Path(ledger_path)
    view = read_run_ledger(path)
    check_ledger_plan(view.kept, plan, path)
    _require_closed(plan, view.kept, "outcome execution")
    done = _execution_event(view.kept)
    if done is not None:
        return _checked_record(plan, view.kept)
    code = check_outcome_code(plan, libraries=True)
    outcomes = dict(execute())
    target = Path(sealed)
    digest = write_outcomes(target, plan.study, outcomes)
    read_outcomes(target, plan.study)  # exactly the study's states, finite values
    record = OutcomesExecuted(digest, code, len(outcomes))
    view.appender().append(*entry(record))
    if sha256_file(target) != digest:
        raise IntegrityError(f"outcome file {target.name} changed while it was sealed")
    return record
