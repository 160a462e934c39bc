"""An arm's task-weighted metrics worked out by hand on an unbalanced arm with a fallback.

Tasks A (states a1, a2) and B (b1), two repeats each, α = 0.2 (so 2/α = 10);
a2's second repeat is a fallback (point 0, interval [0, 0], invalid). Per state
the repeats are averaged, then the states of a task, then the tasks equally.
"""

from __future__ import annotations

import pytest

from foreseen.credit.analysis.metrics import arm_states, arm_summary, direction_summary
from foreseen.credit.model import Forecast, SlotRecord

Y = {"a1": 0.1, "a2": -0.2, "b1": 0.3}
TASK = {"a1": "A", "a2": "A", "b1": "B"}
SCALES = {"A": 0.15, "B": 0.3}  # mean |y| of each task


def _slot(state: str, repeat: int, point: float, low: float, high: float,
          fallback: bool = False) -> SlotRecord:
    forecast = (Forecast(0.0, 0.0, 0.0, valid=False, reason="unparseable") if fallback
                else Forecast(point, low, high))
    return SlotRecord(slot_id=f"{state}|{repeat}", state_id=state, context_id="matched_card",
                      repeat=repeat, forecast=forecast, fallback=fallback, explainer="probe",
                      delivered=True)


SLOTS = [_slot("a1", 1, 0.2, 0.0, 0.3), _slot("a1", 2, 0.0, -0.1, 0.05),
         _slot("a2", 1, -0.1, -0.3, 0.0), _slot("a2", 2, 0.0, 0.0, 0.0, fallback=True),
         _slot("b1", 1, 0.5, 0.4, 0.6), _slot("b1", 2, 0.3, 0.2, 0.5)]


def test_arm_metrics_by_hand() -> None:
    metrics = arm_summary(arm_states(SLOTS, Y, TASK, SCALES, 0.2), (0.0,))
    # point error per state: a1 0.1, a2 0.15, b1 0.1 → A 0.125, B 0.1
    assert metrics.point_mae == pytest.approx((0.125 + 0.1) / 2)
    assert metrics.task_scaled_mae == pytest.approx(((0.1 / 0.15 + 0.15 / 0.15) / 2
                                                     + 0.1 / 0.3) / 2)
    # interval score: a1 (0.3, 0.15 + 10·0.05), a2 (0.3, 0 + 10·0.2), b1 (0.2 + 10·0.1, 0.3)
    assert metrics.interval_score == pytest.approx(((0.475 + 1.15) / 2 + 0.75) / 2)
    assert metrics.coverage == pytest.approx(0.5)
    assert metrics.width == pytest.approx(((0.225 + 0.15) / 2 + 0.25) / 2)
    # drift: |ŷ1 − ŷ2| per state: 0.2, 0.1, 0.2; the trimmed mean is task-weighted:
    # weights a1 ¼, a2 ¼, b1 ½; sorted 0.1 (¼), 0.2 (¼), 0.2 (½); the mass in [0.1, 0.9]
    # is 0.15 of 0.1, ¼ of 0.2 and 0.4 of 0.2 → (0.015 + 0.05 + 0.08) / 0.8
    assert metrics.drift == pytest.approx(((0.2 + 0.1) / 2 + 0.2) / 2)
    assert metrics.drift_trimmed_mean_10pct == pytest.approx(0.145 / 0.8)
    assert metrics.drift_reason is None and metrics.drift_trimmed_mean_10pct_reason is None
    assert (metrics.n_states, metrics.n_tasks, metrics.n_slots) == (3, 2, 6)
    assert (metrics.n_fallback, metrics.n_invalid) == (1, 1)
    assert metrics.width_includes_fallbacks is True and metrics.reason is None


def test_one_repeat_has_no_drift_and_no_fallback_flag() -> None:
    first = [s for s in SLOTS if s.repeat == 1]
    metrics = arm_summary(arm_states(first, Y, TASK, SCALES, 0.2), (0.0,))
    assert metrics.drift is None and metrics.drift_trimmed_mean_10pct is None
    assert metrics.drift_reason == metrics.drift_trimmed_mean_10pct_reason == (
        "fewer_than_two_repeats")
    assert metrics.width_includes_fallbacks is False and metrics.n_fallback == 0
    assert metrics.point_mae == pytest.approx(((0.1 + 0.1) / 2 + 0.2) / 2)


def test_an_arm_without_states_says_so() -> None:
    metrics = arm_summary(arm_states([], Y, TASK, SCALES, 0.2), (0.0,))
    assert metrics.reason == "no_states" and metrics.point_mae is None
    assert (metrics.n_states, metrics.n_tasks, metrics.n_slots) == (0, 0, 0)


def test_direction_summary_and_its_sweep_by_hand() -> None:
    """Mean calls: a1 +0.1 (y +0.1 ✓), a2 −0.05 (y −0.2 ✓), b1 +0.4 (y +0.3 ✓) — then
    a second arm with a zero mean call, a fallback-only state and y = 0."""
    arm = arm_states(SLOTS, Y, TASK, SCALES, 0.2)
    summary = direction_summary(arm, (0.0, 0.15, 0.3))
    assert summary.accuracy == 1.0 and (summary.n_states, summary.n_tasks) == (3, 2)
    assert (summary.n_no_call, summary.n_y_zero) == (0, 0)
    # |y| > 0.15: a2 and b1 (A and B); |y| > 0.3: none
    assert [(p.threshold, p.accuracy, p.n_states, p.n_tasks) for p in summary.sweep] == [
        (0.0, 1.0, 3, 2), (0.15, 1.0, 2, 2), (0.3, None, 0, 0)]
    assert [p.accuracy_reason for p in summary.sweep] == [None, None,
                                                          "no_state_above_threshold"]
    y = {"a1": 0.1, "a2": 0.0, "b1": -0.3}
    mixed = [_slot("a1", 1, 0.1, 0.0, 0.2), _slot("a1", 2, -0.1, -0.2, 0.0),  # mean 0
             _slot("a2", 1, 0.2, 0.1, 0.3),                                   # y = 0
             _slot("b1", 1, 0.0, 0.0, 0.0, fallback=True)]                    # no call
    summary = direction_summary(arm_states(mixed, y, TASK, SCALES, 0.2), (0.05,))
    assert summary.accuracy == 0.0
    assert (summary.n_no_call, summary.n_y_zero) == (2, 1)
    assert [(p.accuracy, p.n_states) for p in summary.sweep] == [(0.0, 2)]


def test_coverage_is_a_closed_interval_and_valid_only_drops_every_invalid_call() -> None:
    y = {"a1": 0.0, "a2": 0.2, "b1": 0.3}
    on_bounds = [_slot("a1", 1, 0.1, 0.0, 0.2), _slot("a2", 1, 0.1, 0.0, 0.2),
                 _slot("b1", 1, 0.3, 0.29, 0.31)]
    states = arm_states(on_bounds, y, TASK, SCALES, 0.2)
    assert states.coverage.tolist() == [1.0, 1.0, 1.0]  # y = lower, y = upper, inside
    invalid = SlotRecord(slot_id="a1|2", state_id="a1", context_id="matched_card", repeat=2,
                         forecast=Forecast(0.0, 0.0, 0.0, valid=False, reason="unparseable"),
                         fallback=False, explainer="probe", delivered=True)
    valid_only = arm_states([*on_bounds, invalid], y, TASK, SCALES, 0.2, valid_only=True)
    assert valid_only.n_slots == 3 and valid_only.n_invalid == 0
    itt = arm_states([*on_bounds, invalid], y, TASK, SCALES, 0.2)
    assert (itt.n_slots, itt.n_invalid, itt.n_fallback) == (4, 1, 0)
