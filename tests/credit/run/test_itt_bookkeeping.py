"""Intention-to-treat bookkeeping asserted directly: ledger fields, run summary, integrity.

Every assigned slot ends in exactly one terminal event; a fallback is written
with ``valid: false`` and its reason; fallbacks assigned on resume (an invalid
``call_completed`` whose ``fallback_assigned`` was not yet written) are counted
in the :class:`~foreseen.credit.run.runner.RunSummary`; integrity is valid /
assigned per arm and per task, and an estimate's integrity is the lower of its
two arms' rates.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from foreseen.core.ledger import Ledger, read_ledger
from foreseen.credit.analysis.analyze import AnalysisConfig, IntegrityTally, analyze
from foreseen.credit.backends.base import Backend, BackendResponse, ForecastRequest, TransportError
from foreseen.credit.model import Forecast, SlotRecord
from foreseen.credit.run.run_ledger import read_slot_records
from foreseen.credit.run.runner import run_plan, run_plan_async

from support.analysis_fixtures import make_explanations, make_outcomes, make_slots, make_study, slot
from support.spine import make_plan

CONFIG = AnalysisConfig(replicates=200, bootstrap_seed=3)


class _Scripted(Backend):
    """``bad`` slots answer garbage, ``down`` slots fail in transport, others answer 0.1."""

    name = "scripted"

    def __init__(self, bad: set[str], down: set[str]) -> None:
        self.bad, self.down = bad, down
        self.calls: list[str] = []

    def configuration(self) -> dict[str, object]:
        return {}

    async def complete(self, request: ForecastRequest) -> BackendResponse:
        self.calls.append(request.slot_id)
        if request.slot_id in self.down:
            raise TransportError("connection refused")
        if request.slot_id in self.bad:
            return BackendResponse('{"point": 1, "lower": 2, "upper": 0}', "m", "m")
        return BackendResponse('{"point": 0.1, "lower": 0, "upper": 0.2}', "m", "m")


async def _no_sleep(seconds: float) -> None:
    return None


def test_fallbacks_are_written_invalid_with_their_reason(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, max_attempts=2)
    ids = [s.slot_id for s in plan.slots]
    bad, down = ids[0], ids[1]
    ledger = tmp_path / "l.jsonl"
    summary = asyncio.run(run_plan_async(plan, ledger, _Scripted({bad}, {down}),
                                         sleep=_no_sleep))
    events = read_ledger(ledger)
    fallbacks = {e.payload["slot_id"]: e.payload for e in events
                 if e.type == "fallback_assigned"}
    assert set(fallbacks) == {bad, down}
    for sid, reason in ((bad, "lower > upper"), (down, "transport_exhausted")):
        forecast = fallbacks[sid]["forecast"]
        assert forecast["valid"] is False and forecast["reason"] == reason
        assert (forecast["point"], forecast["lower"], forecast["upper"]) == (0.0, 0.0, 0.0)
        assert fallbacks[sid]["reason"] == reason
    completed = {e.payload["slot_id"]: e.payload for e in events if e.type == "call_completed"}
    assert completed[bad]["valid"] is False and completed[bad]["forecast"] is None
    assert down not in completed
    assert all(completed[s]["valid"] is True for s in ids if s not in (bad, down))
    # exactly one terminal event per assigned slot
    terminal = [e.payload["slot_id"] for e in events
                if e.type == "fallback_assigned"
                or (e.type == "call_completed" and e.payload["valid"])]
    assert sorted(terminal) == sorted(ids)
    records = {r.slot_id: r for r in read_slot_records(ledger)}
    assert records[bad].fallback and not records[bad].forecast.valid
    assert sum(r.fallback for r in records.values()) == 2
    assert (summary.assigned, summary.skipped) == (len(ids), 0)
    assert (summary.completed_valid, summary.fallbacks) == (len(ids) - 2, 2)
    assert summary.fallback_reasons == {"lower > upper": 1, "transport_exhausted": 1}
    assert summary.transport_failures == 2


def test_fallbacks_written_on_resume_are_counted_in_the_summary(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    first, second = plan.slots[0], plan.slots[1]
    ledger_path = tmp_path / "l.jsonl"
    ledger = Ledger.open(ledger_path)
    ledger.append("plan_frozen", {"plan_id": plan.plan_id})
    for slot_ in (first, second):
        ledger.append("call_completed", {"slot_id": slot_.slot_id, "valid": False,
                                         "reason": "response is not valid JSON",
                                         "forecast": None})
    backend = _Scripted(set(), set())
    summary = run_plan(plan, ledger_path, backend=backend)
    assert first.slot_id not in backend.calls and second.slot_id not in backend.calls
    assert len(backend.calls) == len(plan.slots) - 2
    assert summary.fallbacks == 2
    assert summary.fallback_reasons == {"response is not valid JSON": 2}
    assert summary.completed_valid == len(plan.slots) - 2 and summary.skipped == 0
    events = read_ledger(ledger_path)
    resumed = [e.payload for e in events if e.type == "fallback_assigned"]
    assert sorted(p["slot_id"] for p in resumed) == sorted([first.slot_id,
                                                            second.slot_id])
    assert all(p["forecast"]["valid"] is False for p in resumed)
    again = run_plan(plan, ledger_path, backend=backend)
    assert (again.skipped, again.fallbacks, again.completed_valid) == (len(plan.slots), 0, 0)


def _fallback_slots(records: list[SlotRecord], which: set[str]) -> list[SlotRecord]:
    return [slot(r.state_id, r.context_id, r.repeat, 0.0, fallback=True,
                 explainer=r.explainer or "probe") if r.slot_id in which else r
            for r in records]


def test_integrity_is_valid_over_assigned_per_arm_and_per_task() -> None:
    study = make_study(4)
    y = make_outcomes(study)
    records = make_slots(study, y)
    # three matched-card fallbacks on task t00, one description fallback on t01
    matched_t00 = [r.slot_id for r in records
                   if r.context_id == "matched_card" and r.state_id.startswith("t00")][:3]
    desc_t01 = [r.slot_id for r in records
                if r.context_id == "description" and r.state_id.startswith("t01")][:1]
    slots = _fallback_slots(records, set(matched_t00) | set(desc_t01))
    report = analyze(study, {"probe": make_explanations(study, y)}, slots, y, CONFIG)
    per_context = report.integrity.per_context
    # 4 tasks × 4 states × 2 repeats = 32 slots per arm
    assert (per_context["probe|matched_card"].assigned,
            per_context["probe|matched_card"].valid,
            per_context["probe|matched_card"].fallback) == (32, 29, 3)
    assert per_context["probe|matched_card"].rate == 29 / 32
    assert per_context["-|description"].rate == 31 / 32
    assert per_context["probe|donor_card@seed_swap"].rate == 1.0
    per_task = report.integrity.per_task
    # a task holds 4 states × 3 arms × 2 repeats = 24 slots
    assert (per_task["t00"].assigned, per_task["t00"].valid) == (24, 21)
    assert per_task["t01"].rate == 23 / 24 and per_task["t02"].rate == 1.0
    overall = report.integrity.overall
    assert (overall.assigned, overall.valid, overall.fallback) == (96, 92, 4)
    assert report.estimates["integrity/probe|matched_card"].estimate == 29 / 32


def test_an_estimate_carries_the_lower_integrity_of_its_two_arms() -> None:
    study = make_study(4)
    y = make_outcomes(study)
    records = make_slots(study, y)
    matched = [r.slot_id for r in records if r.context_id == "matched_card"][:2]
    description = [r.slot_id for r in records if r.context_id == "description"][:4]
    donor = [r.slot_id for r in records if r.context_id == "donor_card@seed_swap"][:1]
    slots = _fallback_slots(records, set(matched) | set(description) | set(donor))
    report = analyze(study, {"probe": make_explanations(study, y)}, slots, y, CONFIG)
    estimates = report.estimates
    # Δ_desc of matched: min(description 28/32, matched 30/32) = the description's rate
    assert estimates["delta_desc/probe/matched_card/point_mae/itt"].integrity == 28 / 32
    assert estimates["drift_reduction/probe/matched_card/itt"].integrity == 28 / 32
    # Δ_donor: min(donor 31/32, matched 30/32) = the matched arm's rate
    assert estimates["delta_donor/probe/donor_card@seed_swap/point_mae/itt"].integrity == 30 / 32
    # Δ_desc of donor: min(description 28/32, donor 31/32)
    assert estimates["delta_desc/probe/donor_card@seed_swap/point_mae/itt"].integrity == 28 / 32


def test_an_invalid_forecast_not_marked_fallback_is_not_valid() -> None:
    """Both halves of ``valid = forecast.valid and not fallback`` count."""
    good = slot("s1", "matched_card", 1, 0.1)
    invalid = replace(good, slot_id="x|2", repeat=2,
                      forecast=Forecast(0.0, 0.0, 0.0, valid=False, reason="unparseable"))
    marked = replace(good, slot_id="x|3", repeat=3, fallback=True)
    tally = IntegrityTally.of([good, invalid, marked])
    assert (tally.assigned, tally.valid, tally.fallback) == (3, 1, 1)
    assert tally.rate == 1 / 3
    assert IntegrityTally.of([]).rate is None
