"""The runner's smaller rules: the plan's fallback forecast, the backend the plan pins, the
ledger's first event, the seeded retry delays, and what a slot record carries."""

from __future__ import annotations

import hashlib
import random
from dataclasses import replace
from pathlib import Path

import pytest

from foreseen.core.errors import ConfigError, IntegrityError, UserInputError
from foreseen.core.ledger import Ledger, read_ledger
from foreseen.credit.model import Forecast
from foreseen.credit.run.run_ledger import check_ledger_plan, read_slot_records
from foreseen.credit.run.runner import (
    ForecastParseError,
    _retry_delay,
    build_backend,
    fallback_forecast,
    parse_forecast,
)

from support.spine import NAME, make_plan


def test_the_fallback_forecast_is_the_plans(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    declared = replace(plan, body={**plan.body, "analysis": {
        "fallback_point": 0.5, "fallback_interval": [-1, 2]}})
    assert fallback_forecast(declared, "timeout") == Forecast(
        0.5, -1.0, 2.0, None, valid=False, reason="timeout")
    silent = replace(plan, body={k: v for k, v in plan.body.items() if k != "analysis"})
    assert fallback_forecast(silent, "r") == Forecast(0.0, 0.0, 0.0, None, valid=False,
                                                      reason="r")
    empty = replace(plan, body={**plan.body, "analysis": {}})
    assert fallback_forecast(empty, "r") == fallback_forecast(silent, "r")


def test_the_backend_must_be_the_one_the_plan_froze(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    assert build_backend(plan, NAME).configuration() == plan.body["forecaster"]["configuration"]
    with pytest.raises(ConfigError) as caught:
        build_backend(plan, "zero")
    assert str(caught.value) == f"the plan was frozen for forecaster {NAME!r}, not 'zero'"
    changed = replace(plan, body={**plan.body, "forecaster": {
        **plan.body["forecaster"], "options": {"sleep_ms": 5.0}}})
    with pytest.raises(IntegrityError) as caught:
        build_backend(changed)
    assert str(caught.value) == (f"forecaster {NAME!r} configuration differs from the frozen "
                                 "plan's")


def test_a_ledger_must_start_with_this_plans_plan_frozen_event(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    path = tmp_path / "l.jsonl"
    ledger = Ledger.open(path)
    with pytest.raises(UserInputError) as caught:
        check_ledger_plan([], plan, path)
    assert str(caught.value) == "ledger l.jsonl does not start with a plan_frozen event"
    ledger.append("call_started", {"slot_id": "s"})
    with pytest.raises(UserInputError, match="does not start with a plan_frozen event"):
        check_ledger_plan(read_ledger(path), plan, path)
    other = tmp_path / "o.jsonl"
    Ledger.open(other).append("plan_frozen", {"plan_id": "f" * 64})
    with pytest.raises(UserInputError) as caught:
        check_ledger_plan(read_ledger(other), plan, other)
    assert str(caught.value) == (f"ledger o.jsonl belongs to plan {'f' * 12}…, not to plan "
                                 f"{plan.plan_id[:12]}… (plan or ledger changed?)")
    mine = tmp_path / "m.jsonl"
    Ledger.open(mine).append("plan_frozen", {"plan_id": plan.plan_id})
    check_ledger_plan(read_ledger(mine), plan, mine)


def test_retry_delays_are_jittered_backoff_seeded_per_slot_and_attempt(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    execution = {**plan.body["execution"], "backoff_base_s": 1.0, "backoff_max_s": 3.0,
                 "max_attempts": 5}
    timed = replace(plan, body={**plan.body, "execution": execution})
    for attempt, wait in ((1, 1.0), (2, 2.0), (3, 3.0), (4, 3.0)):
        seed = int.from_bytes(hashlib.sha256(
            f"{timed.seed}|s1#retry{attempt}".encode()).digest()[:8], "big")
        u = random.Random(seed).random()
        assert _retry_delay(timed, "s1", attempt, None) == pytest.approx(wait * (0.5 + u))
    assert _retry_delay(timed, "s1", 1, None) != _retry_delay(timed, "s2", 1, None)
    assert _retry_delay(timed, "s1", 2, 1.25) == 1.25  # the server's wait wins


def test_slot_records_carry_delivery_and_signal_from_the_ledger(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    ledger = Ledger.open(path)
    ledger.append("plan_frozen", {"plan_id": "p"})
    forecast = Forecast(0.1, 0.0, 0.2).to_json()
    ledger.append_many([
        ("call_completed", {"slot_id": "b", "state_id": "s1", "context_id": "signal@exact",
                            "repeat": 2, "valid": True, "forecast": forecast,
                            "explainer": "signal", "delivered": True, "signal": 0.25}),
        ("fallback_assigned", {"slot_id": "a", "state_id": "s2", "context_id": "description",
                               "repeat": 1, "forecast": Forecast(
                                   0.0, 0.0, 0.0, valid=False, reason="r").to_json()}),
    ])
    first, second = read_slot_records(path)
    assert (first.slot_id, first.fallback, first.delivered, first.signal,
            first.explainer) == ("a", True, None, None, None)
    assert (second.slot_id, second.state_id, second.context_id, second.repeat) == (
        "b", "s1", "signal@exact", 2)
    assert (second.fallback, second.delivered, second.signal, second.explainer) == (
        False, True, 0.25, "signal")
    assert second.forecast == Forecast(0.1, 0.0, 0.2)


def test_forecast_parsing_at_its_boundaries() -> None:
    point = parse_forecast('{"point": 0.1, "lower": 0.1, "upper": 0.1}')  # lower = upper
    assert (point.lower, point.upper, point.direction_probability) == (0.1, 0.1, None)
    for p in (0.0, 1.0, 0.25):
        parsed = parse_forecast(f'{{"point": 0, "lower": -1, "upper": 1, '
                                f'"direction_probability": {p}}}')
        assert parsed.direction_probability == p and parsed.valid
    for bad, message in (('"0.5"', "direction_probability is not a number"),
                         ("true", "direction_probability is not a number"),
                         ("1.0000001", r"direction_probability is not in \[0, 1\]"),
                         ("-0.0000001", r"direction_probability is not in \[0, 1\]")):
        with pytest.raises(ForecastParseError) as caught:
            parse_forecast(f'{{"point": 0, "lower": 0, "upper": 1, '
                           f'"direction_probability": {bad}}}')
        assert str(caught.value) == message.replace("\\", "")
    with pytest.raises(ForecastParseError) as caught:
        parse_forecast("[0.1]")
    assert str(caught.value) == "response is not a JSON object"
