"""Losses and per-state metrics of forecasts (credit §6).

Aggregation order (credit §6): the calls (repeats) of a state are averaged
first, then the states of a task, then tasks with equal weight
(:func:`task_weighted_mean`).

Per call, with outcome ``y``, point ``ŷ`` and central interval ``[l, u]`` at
level ``1 − α``:

* point error ``|ŷ − y|``; task-scaled error ``|ŷ − y| / max(mean_task |y|, 0.01)``;
* coverage ``1{l ≤ y ≤ u}``; width ``u − l``;
* interval score (Gneiting & Raftery 2007, eq. 43, unweighted):
  ``IS = (u − l) + (2/α)(l − y)·1{y < l} + (2/α)(y − u)·1{y > u}``.

Per state:

* direction: the call is ``sign(mean ŷ over repeats)``; it is correct iff it
  equals ``sign(y)``; a *no call* (mean exactly 0, or every repeat a
  fallback) is always wrong, so a state with ``y = 0`` is never correct;
* repeat drift: mean absolute pairwise difference of ``ŷ`` over the state's
  repeats, ``2/(R(R−1)) Σ_{i<j} |ŷ_i − ŷ_j|`` (undefined for one repeat); its
  10 % trimmed mean is task-weighted like every other estimate
  (:func:`weighted_trimmed_mean` with weight ``1/(K·n_k)`` for a state of task
  ``k`` with ``n_k`` states);
* **ensemble** losses (a sensitivity reported beside the primary analysis; the
  paper's OpenML ensemble sensitivity "averages forecasts before scoring"): the
  repeats' forecasts are averaged first — ``ŷ̄``, ``l̄``, ``ū`` — and scored
  once: ``|ŷ̄ − y|`` (``ensemble_point_mae``) and ``IS(l̄, ū; y)``
  (``ensemble_interval_score``). A plan has one forecaster, so the ensemble is
  over repeats only.

Undefined per-state values are ``NaN`` inside arrays only; reports turn
them into ``null`` with a reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from foreseen.credit.analysis.record import OPTIONAL, Record
from foreseen.credit.model import SlotRecord

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

LOSSES: tuple[str, ...] = (
    "point_mae", "task_scaled_mae", "interval_score", "direction_error", "drift",
    "ensemble_point_mae", "ensemble_interval_score",
)
"""Losses (lower is better) that contrasts are computed for."""

MINIMUM_TASK_SCALE = 0.01


def interval_score(lower: FloatArray, upper: FloatArray, y: FloatArray,
                   alpha: float) -> FloatArray:
    """Gneiting & Raftery (2007) interval score of central ``(1 − α)`` intervals."""
    lower, upper, y = (np.asarray(a, dtype=np.float64) for a in (lower, upper, y))
    below = np.where(y < lower, lower - y, 0.0)
    above = np.where(y > upper, y - upper, 0.0)
    return np.asarray((upper - lower) + (2.0 / alpha) * (below + above), dtype=np.float64)


def repeat_drift(points: FloatArray) -> float:
    """Mean absolute pairwise difference of repeated point forecasts (NaN for < 2)."""
    values = np.asarray(points, dtype=np.float64)
    if values.size < 2:
        return float("nan")
    diffs = np.abs(values[:, None] - values[None, :])
    pairs = values.size * (values.size - 1)
    return float(diffs.sum() / pairs)


def direction_correct(mean_point: FloatArray, y: FloatArray, no_call: BoolArray) -> BoolArray:
    """Per-state direction correctness: ``sign(mean ŷ) == sign(y)`` and a call was made."""
    mean_point = np.asarray(mean_point, dtype=np.float64)
    call = np.sign(mean_point)
    made = (call != 0) & ~np.asarray(no_call, dtype=bool)
    return np.asarray(made & (call == np.sign(np.asarray(y, dtype=np.float64))), dtype=bool)


def task_scales(y_by_state: Mapping[str, float],
                task_of_state: Mapping[str, str]) -> dict[str, float]:
    """Per-task scale ``max(mean |y| over the task's states, 0.01)`` keyed by task id."""
    sums: dict[str, list[float]] = {}
    for state_id, y in y_by_state.items():
        sums.setdefault(task_of_state[state_id], []).append(abs(y))
    return {task: max(float(np.mean(v)), MINIMUM_TASK_SCALE) for task, v in sums.items()}


def task_weighted_mean(values: FloatArray, task_ids: Sequence[str]) -> tuple[float | None, int]:
    """Equal-task-weight mean of per-state values (NaN states skipped).

    Returns ``(mean of per-task means, number of tasks with a finite value)``;
    the mean is ``None`` when no task has one.
    """
    values = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(values)
    if not finite.any():
        return None, 0
    labels, index = np.unique(np.asarray(task_ids, dtype=object)[finite], return_inverse=True)
    sums = np.bincount(index, weights=values[finite], minlength=labels.size)
    counts = np.bincount(index, minlength=labels.size)
    return float(np.mean(sums / counts)), int(labels.size)


def task_weights(task_ids: Sequence[str], finite: BoolArray) -> FloatArray:
    """Per-state weights of the equal-task-weight mean: ``1/(K·n_k)`` (0 where not finite)."""
    labels = np.asarray(task_ids, dtype=object)
    weights = np.zeros(len(task_ids))
    tasks = sorted(set(labels[finite]))
    for task in tasks:
        members = finite & (labels == task)
        weights[members] = 1.0 / (len(tasks) * int(members.sum()))
    return weights


def weighted_trimmed_mean(values: FloatArray, weights: FloatArray,
                          proportion: float = 0.1) -> float | None:
    """Trimmed mean of a weighted sample: the mean of its quantile function on ``[p, 1 − p]``.

    Sort the values ``x_(1) ≤ … ≤ x_(n)`` with weights ``w`` (normalised to sum
    to 1) and cumulative weights ``W_i``; the result is
    ``Σ_i x_(i) · |[W_{i−1}, W_i] ∩ [p, 1 − p]| / (1 − 2p)`` — each tail loses
    weight ``p``, the value on a boundary is cut in part. With equal weights and
    ``p·n`` an integer this is ``scipy.stats.trim_mean(x, p)``. None when no
    value has weight.
    """
    x = np.asarray(values, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    keep = np.isfinite(x) & (w > 0)
    if not keep.any():
        return None
    order = np.argsort(x[keep], kind="stable")
    x, w = x[keep][order], w[keep][order]
    cumulative = np.cumsum(w) / w.sum()
    previous = np.concatenate([[0.0], cumulative[:-1]])
    inside = np.clip(np.minimum(cumulative, 1.0 - proportion)
                     - np.maximum(previous, proportion), 0.0, None)
    return float(np.sum(x * inside) / (1.0 - 2.0 * proportion))


def trimmed_mean(values: FloatArray, task_ids: Sequence[str],
                 proportion: float = 0.1) -> float | None:
    """Task-weighted trimmed mean of the finite per-state values (None when there are none)."""
    x = np.asarray(values, dtype=np.float64)
    return weighted_trimmed_mean(x, task_weights(task_ids, np.isfinite(x)), proportion)


@dataclass(frozen=True)
class ArmStates:
    """Per-state values of one arm (an explainer × context) after averaging repeats.

    Arrays are aligned with ``state_ids``; ``losses`` maps every name in
    :data:`LOSSES` to per-state values (NaN where undefined). ``delivered`` is
    True when every repeat of the state was delivered (description: False).
    """

    state_ids: tuple[str, ...]
    task_ids: tuple[str, ...]
    y: FloatArray
    losses: Mapping[str, FloatArray]
    coverage: FloatArray
    width: FloatArray
    mean_point: FloatArray
    no_call: BoolArray
    delivered: BoolArray
    n_slots: int
    n_fallback: int
    n_invalid: int

    def index(self) -> dict[str, int]:
        return {state_id: i for i, state_id in enumerate(self.state_ids)}


def arm_states(slots: Sequence[SlotRecord], outcomes: Mapping[str, float],
               task_of_state: Mapping[str, str], scales: Mapping[str, float], alpha: float,
               *, valid_only: bool = False) -> ArmStates:
    """Average an arm's calls per state and compute the per-state losses.

    Intention to treat (default) keeps every slot, fallbacks included with
    their fallback values; ``valid_only`` keeps slots whose forecast is valid
    and not a fallback (a state with none is dropped). Slots of states without
    an outcome are ignored.
    """
    by_state: dict[str, list[SlotRecord]] = {}
    for slot in slots:
        if slot.state_id not in outcomes:
            continue
        if valid_only and (slot.fallback or not slot.forecast.valid):
            continue
        by_state.setdefault(slot.state_id, []).append(slot)
    state_ids = tuple(sorted(by_state))
    n = len(state_ids)
    columns = {name: np.full(n, np.nan) for name in LOSSES}
    coverage, width, mean_point = np.zeros(n), np.zeros(n), np.zeros(n)
    no_call = np.zeros(n, dtype=bool)
    delivered = np.zeros(n, dtype=bool)
    y = np.array([outcomes[s] for s in state_ids], dtype=np.float64)
    for i, state_id in enumerate(state_ids):
        group = sorted(by_state[state_id], key=lambda s: s.repeat)
        points = np.array([s.forecast.point for s in group])
        lower = np.array([s.forecast.lower for s in group])
        upper = np.array([s.forecast.upper for s in group])
        errors = np.abs(points - y[i])
        scale = scales[task_of_state[state_id]]
        columns["point_mae"][i] = errors.mean()
        columns["task_scaled_mae"][i] = errors.mean() / scale
        columns["interval_score"][i] = interval_score(lower, upper, np.full_like(points, y[i]),
                                                      alpha).mean()
        columns["drift"][i] = repeat_drift(points)
        columns["ensemble_point_mae"][i] = abs(points.mean() - y[i])
        columns["ensemble_interval_score"][i] = interval_score(
            np.array([lower.mean()]), np.array([upper.mean()]), y[i:i + 1], alpha)[0]
        coverage[i] = np.mean((lower <= y[i]) & (y[i] <= upper))
        width[i] = np.mean(upper - lower)
        mean_point[i] = points.mean()
        no_call[i] = all(s.fallback for s in group)
        delivered[i] = all(s.delivered is True for s in group)
    correct = direction_correct(mean_point, y, no_call)
    columns["direction_error"] = 1.0 - correct.astype(np.float64)
    kept = [s for group in by_state.values() for s in group]
    return ArmStates(
        state_ids=state_ids,
        task_ids=tuple(task_of_state[s] for s in state_ids),
        y=y, losses=columns, coverage=coverage, width=width, mean_point=mean_point,
        no_call=no_call, delivered=delivered, n_slots=len(kept),
        n_fallback=sum(s.fallback for s in kept),
        n_invalid=sum(not s.forecast.valid for s in kept),
    )


@dataclass(frozen=True, kw_only=True)
class SweepPoint(Record):
    """Direction accuracy over the states that moved: ``|y| > threshold`` (task-weighted)."""

    threshold: float
    accuracy: float | None
    n_states: int
    n_tasks: int
    accuracy_reason: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class DirectionSummary(Record):
    """Direction accuracy of an arm: task-weighted, every state in the denominator (credit §6).

    ``n_no_call`` counts states whose mean forecast is exactly 0 or whose every
    repeat is a fallback; ``sweep`` is the accuracy per movement threshold.
    """

    accuracy: float | None
    n_states: int
    n_tasks: int
    n_no_call: int
    n_y_zero: int
    sweep: tuple[SweepPoint, ...]


@dataclass(frozen=True, kw_only=True)
class ArmMetrics(Record):
    """Task-weighted metrics of one arm and variant (credit §6), with its slot counts.

    Losses and coverage/width are equal-task-weight means of per-state values
    (repeats averaged first); ``drift`` is the mean absolute pairwise
    difference of repeated points, null with ``drift_reason`` when no state
    has two repeats, and its 10 % trimmed mean is task-weighted too;
    ``ensemble_*`` score the repeats' averaged forecast (a sensitivity);
    ``reason`` is written when the arm has no scored state.
    """

    point_mae: float | None
    task_scaled_mae: float | None
    interval_score: float | None
    coverage: float | None
    width: float | None
    drift: float | None
    drift_trimmed_mean_10pct: float | None
    ensemble_point_mae: float | None = field(default=None, metadata=OPTIONAL)
    ensemble_interval_score: float | None = field(default=None, metadata=OPTIONAL)
    drift_reason: str | None = field(default=None, metadata=OPTIONAL)
    drift_trimmed_mean_10pct_reason: str | None = field(default=None, metadata=OPTIONAL)
    direction: DirectionSummary
    n_states: int
    n_tasks: int
    n_slots: int
    n_fallback: int
    n_invalid: int
    width_includes_fallbacks: bool
    reason: str | None = field(default=None, metadata=OPTIONAL)


def direction_summary(arm: ArmStates, thresholds: Sequence[float]) -> DirectionSummary:
    """Direction accuracy (task-weighted, every state in the denominator) and its sweep.

    ``sweep`` gives, per movement threshold ``t``, the accuracy over states
    with ``|y| > t`` (task-weighted), with the number of states and tasks.
    """
    correct = 1.0 - arm.losses["direction_error"]
    accuracy, n_tasks = task_weighted_mean(correct, arm.task_ids)
    sweep = []
    for threshold in thresholds:
        moved = np.abs(arm.y) > threshold
        values = np.where(moved, correct, np.nan)
        rate, tasks = task_weighted_mean(values, arm.task_ids)
        sweep.append(SweepPoint(
            threshold=float(threshold), accuracy=rate, n_states=int(moved.sum()), n_tasks=tasks,
            accuracy_reason="no_state_above_threshold" if rate is None else None))
    return DirectionSummary(
        accuracy=accuracy,
        n_states=len(arm.state_ids),
        n_tasks=n_tasks,
        n_no_call=int(arm.no_call.sum() + np.sum((arm.mean_point == 0) & ~arm.no_call)),
        n_y_zero=int(np.sum(arm.y == 0)),
        sweep=tuple(sweep),
    )


def arm_summary(arm: ArmStates, thresholds: Sequence[float]) -> ArmMetrics:
    """Task-weighted metrics of one arm, with slot, fallback and invalid counts."""
    def weighted(values: FloatArray) -> float | None:
        return task_weighted_mean(values, arm.task_ids)[0]

    drift = weighted(arm.losses["drift"])
    no_drift = "fewer_than_two_repeats" if drift is None else None
    return ArmMetrics(
        point_mae=weighted(arm.losses["point_mae"]),
        task_scaled_mae=weighted(arm.losses["task_scaled_mae"]),
        interval_score=weighted(arm.losses["interval_score"]),
        coverage=weighted(arm.coverage),
        width=weighted(arm.width),
        drift=drift,
        drift_trimmed_mean_10pct=trimmed_mean(arm.losses["drift"], arm.task_ids),
        ensemble_point_mae=weighted(arm.losses["ensemble_point_mae"]),
        ensemble_interval_score=weighted(arm.losses["ensemble_interval_score"]),
        drift_reason=no_drift,
        drift_trimmed_mean_10pct_reason=no_drift,
        direction=direction_summary(arm, thresholds),
        n_states=len(arm.state_ids),
        n_tasks=len(set(arm.task_ids)),
        n_slots=arm.n_slots,
        n_fallback=arm.n_fallback,
        n_invalid=arm.n_invalid,
        width_includes_fallbacks=arm.n_fallback > 0,
        reason=None if arm.state_ids else "no_states",
    )
