"""The baselines and the drift reduction worked out by hand on a small unbalanced design.

Tasks A (cells A1: a1, a2; A2: a3) and B (cell B1: b1); y = 0.2, −0.1, 0.4, 0.0.
"""

from __future__ import annotations

import numpy as np
import pytest

from foreseen.credit.analysis.baselines import baselines
from foreseen.credit.analysis.contrasts import Resampler, drift_reduction, pair_arms
from foreseen.credit.analysis.metrics import arm_states
from foreseen.credit.model import Forecast, SlotRecord, State

CELLS = {"a1": ("A", "A1"), "a2": ("A", "A1"), "a3": ("A", "A2"), "b1": ("B", "B1")}
Y = {"a1": 0.2, "a2": -0.1, "a3": 0.4, "b1": 0.0}
SCALES = {"A": 0.5, "B": 0.01}
STATES = [State(id=s, task_id=t, cell=c, seed=0, budget=1.0, budget_index=0,
                intervention_id="i", condition="ordinary") for s, (t, c) in CELLS.items()]


def test_the_three_baselines_by_hand() -> None:
    result = baselines(STATES, Y, SCALES, 0.2, (-0.1, 0.3))
    zero = result.constant_zero
    assert zero.point_mae == pytest.approx(((0.2 + 0.1 + 0.4) / 3 + 0.0) / 2)
    assert zero.task_scaled_mae == pytest.approx(((0.2 + 0.1 + 0.4) / 3 / 0.5 + 0.0) / 2)
    assert zero.direction_accuracy == 0.0  # zero makes no call
    # interval [-0.1, 0.3]: width 0.4; a3 is 0.1 above → 0.4 + 10·0.1
    assert zero.interval_score == pytest.approx(((0.4 + 0.4 + 1.4) / 3 + 0.4) / 2)
    assert zero.coverage == pytest.approx((2 / 3 + 1.0) / 2)
    assert zero.width == pytest.approx(0.4) and zero.declared_interval == (-0.1, 0.3)
    assert result.constant_improve.direction_accuracy == pytest.approx((2 / 3 + 0.0) / 2)
    # leave one cell out: a1, a2 get a3's y (0.4); a3 gets mean(0.2, −0.1) = 0.05; b1 none
    loco = result.task_mean_loco
    assert loco.point_mae == pytest.approx((0.2 + 0.5 + 0.35) / 3)
    assert loco.task_scaled_mae == pytest.approx((0.2 + 0.5 + 0.35) / 3 / 0.5)
    assert loco.direction_accuracy == pytest.approx((1 + 0 + 1) / 3)
    assert loco.n_states_without_prior == 1 and loco.point_mae_reason is None
    assert (result.n_states, result.n_tasks) == (4, 2)


def test_baselines_without_a_declared_interval_or_a_second_cell() -> None:
    result = baselines(STATES, Y, SCALES, 0.2, None)
    zero = result.constant_zero
    assert (zero.interval_score, zero.coverage, zero.width) == (None, None, None)
    assert zero.interval_score_reason == zero.coverage_reason == zero.width_reason == (
        "no_declared_interval")
    single = baselines([s for s in STATES if s.cell != "A2"], Y, SCALES, 0.2, None)
    loco = single.task_mean_loco
    assert loco.point_mae is None and loco.n_states_without_prior == 3
    assert loco.point_mae_reason == loco.direction_accuracy_reason == "no_task_with_two_cells"
    assert loco.task_scaled_mae_reason == "no_task_with_two_cells"
    assert baselines(STATES, {"a1": 0.2}, SCALES, 0.2, None).n_states == 1


def _arm(context: str, points: dict[str, tuple[float, float]]) -> list[SlotRecord]:
    return [SlotRecord(slot_id=f"{context}|{s}|{r}", state_id=s, context_id=context, repeat=r,
                       forecast=Forecast(p, p - 0.1, p + 0.1), fallback=False,
                       explainer=None if context == "description" else "probe",
                       delivered=None if context == "description" else True)
            for s, pair in points.items() for r, p in enumerate(pair, start=1)]


def test_drift_reduction_is_one_minus_the_ratio_of_task_weighted_drifts() -> None:
    task_of = {s: t for s, (t, _) in CELLS.items()}
    scales = {"A": 1.0, "B": 1.0}
    # description drifts |ŷ1 − ŷ2|: a1 0.2, a2 0.4, a3 0.0, b1 0.3; matched: 0.1, 0.1, 0.0, 0.1
    description = arm_states(_arm("description", {"a1": (0.0, 0.2), "a2": (0.1, -0.3),
                                                  "a3": (0.5, 0.5), "b1": (0.3, 0.0)}),
                             Y, task_of, scales, 0.2)
    matched = arm_states(_arm("matched_card", {"a1": (0.1, 0.2), "a2": (0.0, -0.1),
                                               "a3": (0.4, 0.4), "b1": (0.05, -0.05)}),
                         Y, task_of, scales, 0.2)
    resampler = Resampler(300, 4)
    result = drift_reduction(pair_arms(description, matched), resampler)
    arm_drift = ((0.1 + 0.1 + 0.0) / 3 + 0.1) / 2
    comparator_drift = ((0.2 + 0.4 + 0.0) / 3 + 0.3) / 2
    assert result.arm_drift == pytest.approx(arm_drift)
    assert result.comparator_drift == pytest.approx(comparator_drift)
    assert result.estimate == pytest.approx(1 - arm_drift / comparator_drift)
    assert (result.n_states, result.n_clusters, result.reason) == (4, 2, None)
    weights = resampler.task_weights(("A", "B"))
    arm_means, comp_means = np.array([0.2 / 3, 0.1]), np.array([0.2, 0.3])
    replicates = 1 - (weights @ arm_means) / (weights @ comp_means)
    assert result.ci95 == pytest.approx(tuple(np.quantile(replicates, [0.025, 0.975])))
    assert result.lower_bound_one_sided == pytest.approx(np.quantile(replicates, 0.05))


def test_drift_reduction_null_reasons() -> None:
    task_of = {s: t for s, (t, _) in CELLS.items()}
    scales = {"A": 1.0, "B": 1.0}
    one_repeat = arm_states([s for s in _arm("description", {"a1": (0.0, 0.2)}) if s.repeat == 1],
                            Y, task_of, scales, 0.2)
    result = drift_reduction(pair_arms(one_repeat, one_repeat), Resampler(100, 0))
    assert (result.estimate, result.reason, result.n_clusters) == (
        None, "fewer_than_two_repeats", 0)
    steady = arm_states(_arm("description", {"a1": (0.1, 0.1), "b1": (0.2, 0.2)}), Y, task_of,
                        scales, 0.2)
    moving = arm_states(_arm("matched_card", {"a1": (0.1, 0.3), "b1": (0.2, 0.2)}), Y, task_of,
                        scales, 0.2)
    result = drift_reduction(pair_arms(steady, moving), Resampler(100, 0))
    assert (result.estimate, result.reason, result.n_clusters) == (
        None, "zero_description_drift", 2)
