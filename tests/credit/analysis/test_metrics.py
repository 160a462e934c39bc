"""Tests of losses, per-state aggregation and baselines (credit.metrics, credit.baselines)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from foreseen.core.schema import to_json
from foreseen.credit.analysis.baselines import baselines, claim_metrics
from foreseen.credit.analysis.metrics import (
    arm_states,
    direction_correct,
    direction_summary,
    interval_score,
    repeat_drift,
    task_scales,
    task_weighted_mean,
    trimmed_mean,
    weighted_trimmed_mean,
)

from support.analysis_fixtures import make_explanations, make_outcomes, make_study, slot


def test_interval_score_known_values_and_direct_formula() -> None:
    # [0, 1] at alpha 0.2: inside → width 1; 0.5 below → 1 + 10·0.5; 1 above → 1 + 10·1
    got = interval_score(np.zeros(3), np.ones(3), np.array([0.5, -0.5, 2.0]), 0.2)
    assert got.tolist() == pytest.approx([1.0, 6.0, 11.0])
    rng = np.random.default_rng(0)
    lo = rng.normal(size=200)
    hi = lo + rng.exponential(size=200)
    y = rng.normal(size=200)
    for alpha in (0.05, 0.2, 0.5):
        direct = [(u - low) + (2 / alpha) * (low - t) * (t < low)
                  + (2 / alpha) * (t - u) * (t > u)
                  for low, u, t in zip(lo, hi, y, strict=True)]
        assert interval_score(lo, hi, y, alpha) == pytest.approx(direct)


def test_repeat_drift_is_mean_absolute_pairwise_difference() -> None:
    points = np.array([0.1, -0.3, 0.4, 0.0])
    pairs = [abs(a - b) for a, b in itertools.combinations(points, 2)]
    assert repeat_drift(points) == pytest.approx(np.mean(pairs))
    assert np.isnan(repeat_drift(np.array([1.0])))


def test_direction_no_call_and_zero_outcome_are_wrong() -> None:
    mean = np.array([0.2, -0.1, 0.0, 0.3, 0.1, 0.2])
    y = np.array([0.5, -0.2, 0.0, -0.1, 0.0, 0.4])
    no_call = np.array([False, False, False, False, False, True])
    assert direction_correct(mean, y, no_call).tolist() == [True, True, False, False, False,
                                                             False]


def test_task_weighted_mean_matches_brute_force_loop() -> None:
    rng = np.random.default_rng(3)
    tasks = [f"t{i}" for i in rng.integers(0, 5, size=40)]
    values = rng.normal(size=40)
    values[[3, 7]] = np.nan
    per_task: dict[str, list[float]] = {}
    for t, v in zip(tasks, values, strict=True):
        if np.isfinite(v):
            per_task.setdefault(t, []).append(float(v))
    brute = sum(sum(v) / len(v) for v in per_task.values()) / len(per_task)
    mean, n = task_weighted_mean(values, tasks)
    assert mean == pytest.approx(brute)
    assert n == len(per_task)
    assert task_weighted_mean(np.array([np.nan]), ["a"]) == (None, 0)


def test_trimmed_mean_with_one_state_per_task_is_scipy_trim_mean() -> None:
    values = np.array([0.0, 1, 2, 3, 4, 5, 6, 7, 8, 100.0])
    tasks = [f"t{i}" for i in range(values.size)]
    assert trimmed_mean(values, tasks) == pytest.approx(stats.trim_mean(values, 0.1))
    twenty = np.random.default_rng(4).normal(size=20)
    assert trimmed_mean(twenty, [f"t{i}" for i in range(20)]) == pytest.approx(
        stats.trim_mean(twenty, 0.1))
    assert trimmed_mean(np.array([np.nan]), ["t"]) is None


def test_trimmed_mean_weights_tasks_equally_and_cuts_a_boundary_value_in_part() -> None:
    # task a has four states at 0, task b one state at 10: weights ⅛ each and ½;
    # sorted mass 0 (½ in all) then 10 (½); keep [0.1, 0.9]: 0.4 of 0 and 0.4 of 10
    values = np.array([0.0, 0.0, 0.0, 0.0, 10.0])
    tasks = ["a", "a", "a", "a", "b"]
    assert trimmed_mean(values, tasks) == pytest.approx(0.4 * 10 / 0.8)
    # unweighted, scipy cuts floor(0.5) = 0 states and gives the state mean, 2
    assert stats.trim_mean(values, 0.1) == 2.0
    assert weighted_trimmed_mean(np.array([1.0, 2.0]), np.array([0.0, 1.0])) == 2.0
    assert weighted_trimmed_mean(np.array([1.0]), np.array([0.0])) is None


def test_arm_states_average_repeats_then_itt_and_valid_only() -> None:
    outcomes = {"a": 0.1, "b": -0.2, "c": 0.05}
    tasks = {"a": "t1", "b": "t1", "c": "t2"}
    scales = task_scales(outcomes, tasks)
    assert scales == pytest.approx({"t1": 0.15, "t2": 0.05})
    slots = [slot("a", "matched_card", 1, 0.3), slot("a", "matched_card", 2, 0.1),
             slot("b", "matched_card", 1, 0.0, fallback=True),
             slot("b", "matched_card", 2, 0.0, fallback=True),
             slot("c", "matched_card", 1, 0.0, fallback=True),
             slot("c", "matched_card", 2, 0.09)]
    itt = arm_states(slots, outcomes, tasks, scales, 0.2)
    assert itt.state_ids == ("a", "b", "c")
    assert itt.losses["point_mae"].tolist() == pytest.approx([0.1, 0.2, 0.045])
    assert itt.losses["task_scaled_mae"][0] == pytest.approx(0.1 / 0.15)
    assert itt.losses["drift"].tolist() == pytest.approx([0.2, 0.0, 0.09])
    # b: every repeat a fallback → no call → wrong; c: mean 0.045 > 0 = sign(y)
    assert itt.losses["direction_error"].tolist() == [0.0, 1.0, 0.0]
    assert itt.n_fallback == 3
    valid = arm_states(slots, outcomes, tasks, scales, 0.2, valid_only=True)
    assert valid.state_ids == ("a", "c")
    assert valid.losses["point_mae"].tolist() == pytest.approx([0.1, 0.04])
    assert np.isnan(valid.losses["drift"][1])
    summary = direction_summary(itt, (0.0, 0.06))
    assert summary.accuracy == pytest.approx((0.5 + 1.0) / 2)
    assert summary.sweep[1].n_states == 2  # |y| > 0.06: a and b


def test_baselines_against_brute_force() -> None:
    study = make_study(4)
    y = make_outcomes(study, seed=5)
    tasks = {s.id: s.task_id for s in study.states}
    scales = task_scales(y, tasks)
    result = baselines(study.states, y, scales, 0.2, None)
    per_task: dict[str, list[float]] = {}
    loco: dict[str, list[float]] = {}
    for s in study.states:
        per_task.setdefault(s.task_id, []).append(abs(y[s.id]))
        others = [y[o.id] for o in study.states if o.task_id == s.task_id and o.cell != s.cell]
        loco.setdefault(s.task_id, []).append(abs(np.mean(others) - y[s.id]))
    zero = result.constant_zero
    assert zero.point_mae == pytest.approx(np.mean([np.mean(v) for v in per_task.values()]))
    assert zero.direction_accuracy == 0.0
    assert zero.interval_score is None
    assert zero.interval_score_reason == "no_declared_interval"
    assert list(to_json(zero)) == ["point_mae", "task_scaled_mae", "direction_accuracy",
                                   "interval_score", "interval_score_reason", "coverage",
                                   "coverage_reason", "width", "width_reason"]
    assert result.task_mean_loco.point_mae == pytest.approx(
        np.mean([np.mean(v) for v in loco.values()]))
    declared = baselines(study.states, y, scales, 0.2, (-0.05, 0.05))
    expected = np.mean([np.mean([interval_score(np.array([-0.05]), np.array([0.05]),
                                                np.array([y[s.id]]), 0.2)[0]
                                 for s in study.states if s.task_id == t.id])
                        for t in study.tasks])
    assert declared.constant_zero.interval_score == pytest.approx(expected)
    assert declared.constant_zero.width == pytest.approx(0.1)
    assert list(to_json(declared.constant_zero)) == [
        "point_mae", "task_scaled_mae", "direction_accuracy", "declared_interval",
        "interval_score", "coverage", "width"]


def test_claim_metrics_count_claims_and_cover() -> None:
    study = make_study(3)
    y = make_outcomes(study, seed=2)
    explanations = make_explanations(study, y)
    claims = claim_metrics(explanations, study.states, y)
    n_positive = sum(y[s.id] > 0 for s in study.states if s.condition == "ordinary")
    elicited = sum(s.condition == "elicited" for s in study.states)
    assert claims.direction.n_claims == len(study.states)
    assert claims.direction.n_correct == elicited + n_positive
    assert claims.interval.n_intervals == elicited
    assert claims.interval.coverage.value == 1.0
    assert to_json(claims.interval.coverage) == {"value": 1.0}
    empty = claim_metrics({}, study.states, y)
    assert to_json(empty.direction.accuracy) == {"value": None,
                                                 "reason": "no_direction_claims"}
