"""Fault injection: the report's integrity equals what the pure schedule implies, exactly."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from foreseen.core.ledger import read_ledger
from foreseen.credit.run.faults import CONTENT_FAULTS, FaultInjectingBackend, fault_schedule
from foreseen.credit.run.pipeline import analyze_run
from foreseen.credit.run.runner import run_plan

import support.spine as spine_support
from support.spine import make_plan

SEED = 11
TRANSPORT_KINDS = {"transport", "transport_retry_after_0"}


def _expected(slot_id: str, max_attempts: int) -> tuple[bool, int]:
    """(valid?, calls made) recomputed from the schedule alone."""
    for attempt in range(1, max_attempts + 1):
        fault = fault_schedule(SEED, slot_id, attempt)
        if fault in TRANSPORT_KINDS:
            continue
        assert fault in {"none", *CONTENT_FAULTS}
        return fault == "none", attempt
    return False, max_attempts


def test_schedule_is_pure_and_mixes_every_kind() -> None:
    kinds = Counter(fault_schedule(SEED, f"s{i}", a) for i in range(3000) for a in (1, 2, 3))
    assert set(kinds) == TRANSPORT_KINDS | set(CONTENT_FAULTS) | {"none"}
    again = [fault_schedule(SEED, f"s{i}", 2) for i in range(200)]
    assert again == [fault_schedule(SEED, f"s{i}", 2) for i in range(200)]
    assert again != [fault_schedule(SEED + 1, f"s{i}", 2) for i in range(200)]


def test_integrity_per_context_matches_the_schedule(tmp_path: Path) -> None:
    max_attempts = 3
    plan = make_plan(tmp_path, max_attempts=max_attempts)
    backend = FaultInjectingBackend(spine_support.make_backend(), SEED)
    run_plan(plan, tmp_path / "l.jsonl", backend=backend)
    report = analyze_run(plan, tmp_path / "l.jsonl", tmp_path / "outcomes.sealed.json",
                         tmp_path / "out", markdown=spine_support.simple_markdown)
    expected: dict[str, Counter[str]] = {}
    exhausted = recovered = 0
    for slot in plan.slots:
        label = f"{slot.explainer or '-'}|{slot.context_id}"
        valid, calls = _expected(slot.slot_id, max_attempts)
        tally = expected.setdefault(label, Counter())
        tally["assigned"] += 1
        tally["valid"] += int(valid)
        exhausted += int(not valid and all(
            fault_schedule(SEED, slot.slot_id, a) in TRANSPORT_KINDS
            for a in range(1, max_attempts + 1)))
        recovered += int(valid and calls > 1)
    assert exhausted > 0 and recovered > 0  # the schedule exercises both paths here
    per_context = report.integrity.per_context
    assert set(per_context) == set(expected)
    for label, tally in expected.items():
        row = per_context[label]
        assert (row.assigned, row.valid) == (tally["assigned"], tally["valid"]), label
        assert row.fallback == tally["assigned"] - tally["valid"]
        assert 0 < row.valid < row.assigned
    events = read_ledger(tmp_path / "l.jsonl")
    terminal = Counter(e.payload["slot_id"] for e in events
                       if e.type == "fallback_assigned"
                       or (e.type == "call_completed" and e.payload["valid"]))
    assert set(terminal.values()) == {1} and len(terminal) == len(plan.slots)
    exhausted_events = [e for e in events if e.type == "fallback_assigned"
                        and e.payload["reason"] == "transport_exhausted"]
    assert len(exhausted_events) == exhausted
