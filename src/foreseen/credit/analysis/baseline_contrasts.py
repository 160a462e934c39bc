"""Paired contrasts of every arm against the constant baselines (credit §6, §8 check 3).

The baselines of :mod:`foreseen.credit.analysis.baselines` are scored per
state, so each arm can be compared with them state by state, like Δ_desc:
``d_s = L_baseline(s) − L_arm(s)`` after the arm's repeats are averaged, then
task-weighted, with the same task-cluster bootstrap (positive favours the
arm: the forecaster does better than the simple prior). Intention to treat.

==================  =================================================================
baseline            per-state losses
==================  =================================================================
``constant_zero``   point MAE ``|y|``; task-scaled MAE ``|y|/scale_k``; interval score
                    at the declared baseline interval (only when one is declared)
``constant_improve`` direction error ``1{y ≤ 0}`` (the call "improve" is right iff y > 0)
``task_mean_loco``  point MAE ``|p_s − y|`` and direction error of ``sign(p_s)`` with
                    ``p_s`` the mean y of the task's other cells (null where a task has
                    one cell)
==================  =================================================================

The paper: "Constant-zero and constant-direction forecasts make the benefit of
model inference visible against simple task priors."
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from foreseen.credit.analysis.baselines import task_mean_loco_prior
from foreseen.credit.analysis.contrasts import (
    ContrastEstimate,
    Paired,
    Resampler,
    keyed_row,
    loss_contrast,
)
from foreseen.credit.analysis.metrics import (
    ArmStates,
    FloatArray,
    direction_correct,
    interval_score,
)
from foreseen.credit.analysis.record import Interval, Record
from foreseen.credit.model import State

BASELINE_LOSSES: tuple[tuple[str, str], ...] = (
    ("constant_zero", "point_mae"), ("constant_zero", "task_scaled_mae"),
    ("constant_zero", "interval_score"), ("constant_improve", "direction_error"),
    ("task_mean_loco", "point_mae"), ("task_mean_loco", "direction_error"),
)


@dataclass(frozen=True, kw_only=True)
class BaselineKey(Record):
    """Which baseline contrast a row is: the arm (``<explainer>|<context>``), baseline, loss."""

    arm: str
    baseline: str
    loss: str


@dataclass(frozen=True, kw_only=True)
class BaselineContrastRow(ContrastEstimate, BaselineKey):
    """``L(baseline) − L(arm)``, task-weighted, with its bootstrap (positive favours the arm)."""

    @classmethod
    def of(cls, key: BaselineKey, estimate: ContrastEstimate) -> BaselineContrastRow:
        return keyed_row(cls, key, estimate)


def baseline_state_losses(states: Sequence[State], outcomes: Mapping[str, float],
                          scales: Mapping[str, float], alpha: float,
                          interval: Interval | None) -> dict[tuple[str, str], dict[str, float]]:
    """(baseline, loss) → state id → the baseline's loss on that state (table above)."""
    kept = [s for s in states if s.id in outcomes]
    y = np.array([outcomes[s.id] for s in kept], dtype=np.float64)
    scale = np.array([scales[s.task_id] for s in kept], dtype=np.float64)
    prior = task_mean_loco_prior(y, [s.task_id for s in kept], [s.cell for s in kept])
    has = np.isfinite(prior)
    loco_correct = direction_correct(np.where(has, prior, 0.0), y, ~has)
    columns: dict[tuple[str, str], FloatArray] = {
        ("constant_zero", "point_mae"): np.abs(y),
        ("constant_zero", "task_scaled_mae"): np.abs(y) / scale,
        ("constant_improve", "direction_error"): (y <= 0).astype(np.float64),
        ("task_mean_loco", "point_mae"): np.where(has, np.abs(prior - y), np.nan),
        ("task_mean_loco", "direction_error"): np.where(
            has, 1.0 - loco_correct.astype(np.float64), np.nan),
    }
    if interval is not None:
        low, high = np.full_like(y, interval[0]), np.full_like(y, interval[1])
        columns[("constant_zero", "interval_score")] = interval_score(low, high, y, alpha)
    return {key: {s.id: float(v) for s, v in zip(kept, values, strict=True)}
            for key, values in columns.items()}


def baseline_contrasts(arms: Mapping[str, ArmStates],
                       losses: Mapping[tuple[str, str], Mapping[str, float]],
                       resampler: Resampler) -> tuple[BaselineContrastRow, ...]:
    """Every arm (ITT states) against every baseline loss it can be paired on."""
    rows = []
    for label, arm in sorted(arms.items()):
        for baseline, loss in BASELINE_LOSSES:
            values = losses.get((baseline, loss))
            if values is None:
                continue
            keep = [i for i, sid in enumerate(arm.state_ids) if sid in values]
            paired = Paired(
                state_ids=tuple(arm.state_ids[i] for i in keep),
                task_ids=tuple(arm.task_ids[i] for i in keep),
                comparator={loss: np.array([values[arm.state_ids[i]] for i in keep],
                                           dtype=np.float64)},
                arm={loss: np.asarray(arm.losses[loss], dtype=np.float64)[keep]})
            estimate = loss_contrast(paired, loss, resampler, None, details=False)
            rows.append(BaselineContrastRow.of(
                BaselineKey(arm=label, baseline=baseline, loss=loss), estimate))
    return tuple(rows)
