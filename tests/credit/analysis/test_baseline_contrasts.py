"""Every arm paired against the constant baselines, by hand (credit.analysis.baseline_contrasts)."""

from __future__ import annotations

import numpy as np
import pytest

from foreseen.credit.analysis.baseline_contrasts import (
    baseline_contrasts,
    baseline_state_losses,
)
from foreseen.credit.analysis.contrasts import ZERO_BY_CONSTRUCTION, Resampler
from foreseen.credit.analysis.metrics import arm_states, task_scales
from foreseen.credit.model import Intervention, State, Study, Task

from support.analysis_fixtures import slot

RESAMPLER = Resampler(400, 5)


def _study() -> Study:
    """Task a has two cells (a LOCO prior), task b one cell (no prior)."""
    states = [State(id=f"{t}{c}{s}", task_id=t, cell=f"{t}/{c}", seed=s, budget=1.0,
                    budget_index=0, intervention_id="i", condition="elicited")
              for t, cells in (("a", "xy"), ("b", "x")) for c in cells for s in (0, 1)]
    return Study("s", "1", "m", True, (Task("a", "k", "f"), Task("b", "k", "g")),
                 (Intervention("i", "i", "i"),), tuple(states))


Y = {"ax0": 0.02, "ax1": -0.01, "ay0": 0.04, "ay1": 0.0, "bx0": -0.03, "bx1": 0.01}
POINTS = {"ax0": 0.01, "ax1": 0.01, "ay0": 0.03, "ay1": 0.02, "bx0": -0.01, "bx1": -0.01}


def _rows(interval: tuple[float, float] | None = None) -> dict[tuple[str, str], object]:
    study = _study()
    tasks = {s.id: s.task_id for s in study.states}
    scales = task_scales(Y, tasks)
    arm = arm_states([slot(sid, "matched_card", 1, p) for sid, p in POINTS.items()], Y,
                     tasks, scales, 0.2)
    losses = baseline_state_losses(study.states, Y, scales, 0.2, interval)
    rows = baseline_contrasts({"probe|matched_card": arm}, losses, RESAMPLER)
    return {(r.baseline, r.loss): r for r in rows}


def test_point_mae_against_zero_and_the_loco_prior_by_hand() -> None:
    rows = _rows()
    error = {s: abs(POINTS[s] - Y[s]) for s in Y}
    zero = {s: abs(Y[s]) - error[s] for s in Y}
    expected = (np.mean([zero[s] for s in Y if s[0] == "a"])
                + np.mean([zero[s] for s in Y if s[0] == "b"])) / 2
    row = rows[("constant_zero", "point_mae")]
    assert row.estimate == pytest.approx(expected)  # type: ignore[attr-defined]
    assert row.n_clusters == 2 and row.ci95 is not None  # type: ignore[attr-defined]
    # LOCO prior of task a: cell x gets mean y of cell y and vice versa; task b has none
    prior = {"ax0": 0.02, "ax1": 0.02, "ay0": 0.005, "ay1": 0.005}
    loco = [abs(prior[s] - Y[s]) - error[s] for s in prior]
    row = rows[("task_mean_loco", "point_mae")]
    assert row.estimate == pytest.approx(np.mean(loco))  # type: ignore[attr-defined]
    assert row.n_clusters == 1 and row.n_states == 4  # type: ignore[attr-defined]


def test_direction_against_always_improve_and_interval_only_when_declared() -> None:
    rows = _rows()
    assert ("constant_zero", "interval_score") not in rows
    # arm calls: sign of the point; "improve" is right iff y > 0
    wrong_arm = {s: float(np.sign(POINTS[s]) != np.sign(Y[s]) or Y[s] == 0) for s in Y}
    wrong_improve = {s: float(Y[s] <= 0) for s in Y}
    diff = {s: wrong_improve[s] - wrong_arm[s] for s in Y}
    expected = (np.mean([diff[s] for s in Y if s[0] == "a"])
                + np.mean([diff[s] for s in Y if s[0] == "b"])) / 2
    row = rows[("constant_improve", "direction_error")]
    assert row.estimate == pytest.approx(expected)  # type: ignore[attr-defined]
    declared = _rows((-0.02, 0.02))
    assert ("constant_zero", "interval_score") in declared


def test_an_arm_that_is_the_zero_forecast_is_zero_by_construction() -> None:
    study = _study()
    tasks = {s.id: s.task_id for s in study.states}
    scales = task_scales(Y, tasks)
    zero_arm = arm_states([slot(sid, "description", 1, 0.0, half=0.0) for sid in Y], Y, tasks,
                          scales, 0.2)
    losses = baseline_state_losses(study.states, Y, scales, 0.2, None)
    rows = {(r.baseline, r.loss): r for r in baseline_contrasts(
        {"-|description": zero_arm}, losses, RESAMPLER)}
    assert rows[("constant_zero", "point_mae")].reason == ZERO_BY_CONSTRUCTION
    assert rows[("constant_zero", "point_mae")].ci95 is None
