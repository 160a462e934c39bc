"""The runner: parsing/validation, transport-only retries, fallbacks, resume, slot records."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from foreseen.core.errors import UserInputError
from foreseen.core.ledger import Ledger, read_ledger, verify_ledger
from foreseen.credit.backends.base import Backend, BackendResponse, ForecastRequest, TransportError
from foreseen.credit.plan.freeze import FrozenPlan
from foreseen.credit.run.run_ledger import read_slot_records
from foreseen.credit.run.runner import ForecastParseError, parse_forecast, run_plan, run_plan_async

import support.spine as spine_support
from support.spine import make_plan


@pytest.mark.parametrize("text,reason", [
    ('{"point": 1, "lower": 0, "upper"', "not valid JSON"),
    ("improve", "not valid JSON"),
    ('[1, 2]', "not a JSON object"),
    ('{"point": NaN, "lower": 0, "upper": 1}', "non-finite"),
    ('{"point": 1e999, "lower": 0, "upper": 1}', "not finite"),
    ('{"point": 0.5, "lower": 1, "upper": 0}', "lower > upper"),
    ('{"point": 0.5, "lower": 0}', "missing field 'upper'"),
    ('{"point": true, "lower": 0, "upper": 1}', "not a number"),
    ('{"point": 0, "lower": 0, "upper": 1, "direction_probability": 2}', "not in \\[0, 1\\]"),
])
def test_invalid_responses_are_rejected_with_a_reason(text: str, reason: str) -> None:
    with pytest.raises(ForecastParseError, match=reason):
        parse_forecast(text)


def test_valid_response_parses_and_point_outside_interval_is_allowed() -> None:
    forecast = parse_forecast('{"point": 2, "lower": -1, "upper": 1, "extra": "x"}')
    assert (forecast.point, forecast.lower, forecast.upper) == (2.0, -1.0, 1.0)
    assert forecast.valid and forecast.direction_probability is None


class ScriptedBackend(Backend):
    """Per slot id, a list of actions: "ok", "bad", "transport", ("retry_after", s)."""

    name = "scripted"

    def __init__(self, script: Mapping[str, list[Any]]) -> None:
        self.script = {k: list(v) for k, v in script.items()}
        self.calls: dict[str, int] = {}

    def configuration(self) -> dict[str, Any]:
        return {}

    async def complete(self, request: ForecastRequest) -> BackendResponse:
        self.calls[request.slot_id] = self.calls.get(request.slot_id, 0) + 1
        actions = self.script.get(request.slot_id, ["ok"])
        action = actions.pop(0) if len(actions) > 1 else actions[0]
        if action == "transport":
            raise TransportError("boom")
        if isinstance(action, tuple):
            raise TransportError("429", retry_after=action[1])
        if action == "bad":
            return BackendResponse("not json", "m", None, "none")
        return BackendResponse('{"point": 0.1, "lower": 0, "upper": 0.2}', "m", "m-1")


def _run(plan: FrozenPlan, ledger: Path, backend: Any, sleeps: list[float] | None = None) -> Any:
    async def fake_sleep(seconds: float) -> None:
        if sleeps is not None:
            sleeps.append(seconds)

    return asyncio.run(run_plan_async(plan, ledger, backend, sleep=fake_sleep))


def test_retries_only_transport_and_never_reasks_content(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, max_attempts=3)
    ids = [s.slot_id for s in plan.slots]
    recover, exhaust, garbage, wait = ids[0], ids[1], ids[2], ids[3]
    backend = ScriptedBackend({recover: ["transport", "ok"], exhaust: ["transport"],
                               garbage: ["bad", "ok"], wait: [("retry_after", 1.5), "ok"]})
    sleeps: list[float] = []
    summary = _run(plan, tmp_path / "l.jsonl", backend, sleeps)
    assert backend.calls[recover] == 2 and backend.calls[exhaust] == 3
    assert backend.calls[garbage] == 1 and backend.calls[wait] == 2
    assert 1.5 in sleeps  # retry_after honoured
    records = {r.slot_id: r for r in read_slot_records(tmp_path / "l.jsonl")}
    assert len(records) == len(ids)
    assert records[recover].forecast.valid and not records[recover].fallback
    assert records[exhaust].fallback and records[exhaust].forecast.reason == "transport_exhausted"
    assert (records[exhaust].forecast.point, records[exhaust].forecast.upper) == (0.0, 0.0)
    assert records[garbage].fallback
    assert records[garbage].forecast.reason.startswith("response is not valid JSON")
    assert summary.fallbacks == 2 and summary.completed_valid == len(ids) - 2


def test_every_slot_has_exactly_one_terminal_event(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    run_plan(plan, tmp_path / "l.jsonl", backend=spine_support.make_backend())
    events = read_ledger(tmp_path / "l.jsonl")
    assert events[0].type == "plan_frozen" and events[0].payload["plan_id"] == plan.plan_id
    terminal = [e.payload["slot_id"] for e in events if e.type == "fallback_assigned"
                or (e.type == "call_completed" and e.payload["valid"])]
    assert sorted(terminal) == sorted(s.slot_id for s in plan.slots)
    completed = next(e for e in events if e.type == "call_completed")
    assert completed.payload["returned_model"] is None
    assert completed.payload["returned_model_reason"] == "offline backend has no model id"
    assert completed.payload["requested_model"] == "spine-test"
    assert math.isfinite(completed.payload["latency_s"])
    assert json.loads(completed.payload["raw"])["point"] == completed.payload["forecast"]["point"]


def test_resume_runs_only_missing_slots_and_results_do_not_depend_on_concurrency(
        tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    full = tmp_path / "full.jsonl"
    run_plan(plan, full, backend=spine_support.make_backend(), concurrency=1)
    partial = tmp_path / "partial.jsonl"
    # Copy the first half of the full run's terminal events into a fresh ledger.
    ledger = Ledger.open(partial)
    source = read_ledger(full)
    half = [e for e in source[1:] if e.type == "call_completed"][: len(plan.slots) // 2]
    ledger.append("plan_frozen", dict(source[0].payload))
    ledger.append_many([(e.type, e.payload) for e in half])
    backend = ScriptedBackend({})
    real = spine_support.make_backend()

    async def counting(request: ForecastRequest) -> BackendResponse:
        backend.calls[request.slot_id] = 1
        return await real.complete(request)

    backend.complete = counting  # type: ignore[method-assign]
    summary = run_plan(plan, partial, backend=backend, concurrency=5)
    assert summary.skipped == len(half)
    assert set(backend.calls) == {s.slot_id for s in plan.slots} - {
        e.payload["slot_id"] for e in half}
    assert read_slot_records(partial) == read_slot_records(full)
    verify_ledger(partial)


def test_invalid_completion_without_fallback_gets_fallback_without_a_new_call(
        tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    slot = plan.slots[0]
    ledger = Ledger.open(tmp_path / "l.jsonl")
    ledger.append("plan_frozen", {"plan_id": plan.plan_id})
    ledger.append("call_completed", {"slot_id": slot.slot_id, "valid": False,
                                     "reason": "lower > upper", "forecast": None})
    backend = ScriptedBackend({})
    run_plan(plan, tmp_path / "l.jsonl", backend=backend)
    assert slot.slot_id not in backend.calls
    record = next(r for r in read_slot_records(tmp_path / "l.jsonl")
                  if r.slot_id == slot.slot_id)
    assert record.fallback and record.forecast.reason == "lower > upper"


def test_ledger_of_another_plan_is_refused(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    other = make_plan(tmp_path / "o", seed=8)
    run_plan(other, tmp_path / "l.jsonl", backend=spine_support.make_backend())
    before = (tmp_path / "l.jsonl").read_bytes()
    with pytest.raises(UserInputError, match="belongs to plan"):
        run_plan(plan, tmp_path / "l.jsonl", backend=spine_support.make_backend())
    assert (tmp_path / "l.jsonl").read_bytes() == before


def test_changed_renderer_output_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                            ) -> None:
    plan = make_plan(tmp_path)
    original = spine_support.render_context

    def tampered(*args: Any, **kwargs: Any) -> Any:
        rendered = original(*args, **kwargs)
        return spine_support.Rendered(rendered.context_id, rendered.state_id,
                                      rendered.explainer, rendered.donor_state_id,
                                      rendered.prompt + " leak", rendered.payload,
                                      rendered.delivered)

    monkeypatch.setattr(spine_support, "render_context", tampered)
    with pytest.raises(UserInputError, match="rendered prompt differs"):
        run_plan(plan, tmp_path / "l.jsonl", backend=spine_support.make_backend())
    assert not (tmp_path / "l.jsonl").exists()
