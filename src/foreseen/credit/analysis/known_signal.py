"""Check 5, known signal: does the forecaster take up a signal it is handed? (spec §8).

From the post-outcome calibration child plan, per signal context:

* the task-weighted OLS slope of ŷ on the signal,
  ``(E[xy] − E[x]E[y]) / (E[x²] − E[x]²)`` with ``E`` the equal-task-weight
  mean of per-task slot means, bootstrapped by task inside each replicate;
* the point-error change versus description, Δ_desc(point MAE) =
  MAE(description) − MAE(signal), for intention to treat and the delivered subset.

The description arm is the calibration plan's own when it has one, else the
main plan's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from foreseen.core.bootstrap import summarize
from foreseen.credit.analysis.contrasts import (
    ContrastEstimate,
    Resampler,
    loss_contrast,
    pair_arms,
    task_means,
)
from foreseen.credit.analysis.metrics import ArmStates, FloatArray
from foreseen.credit.analysis.record import OPTIONAL, Interval, Record
from foreseen.credit.model import SlotRecord

ERROR_CHANGE_DEFINITION = "delta_desc point_mae = MAE(description) − MAE(signal)"


@dataclass(frozen=True, kw_only=True)
class Unavailable(Record):
    """A result that could not be computed, with its machine-readable reason."""

    value: None = None
    reason: str


@dataclass(frozen=True, kw_only=True)
class SignalSlope(Record):
    """The task-weighted OLS slope of ŷ on the signal with its task-cluster bootstrap."""

    estimate: float | None
    ci95: Interval | None
    ci90: Interval | None
    lower_bound_one_sided: float | None
    n_clusters: int
    b: int
    seed: int
    method: str
    reason: str | None
    n_slots: int


@dataclass(frozen=True, kw_only=True)
class SlopeCheck(Record):
    """The slope, or null with ``signal_has_no_variance``."""

    value: SignalSlope | None
    reason: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class ErrorChangeValue(Record):
    """Δ_desc(point MAE) of a signal arm, ITT and delivered subset."""

    definition: str
    itt: ContrastEstimate
    delivered: ContrastEstimate | Unavailable


@dataclass(frozen=True, kw_only=True)
class ErrorChange(Record):
    """The error change, or null with ``no_description_arm``."""

    value: ErrorChangeValue | None
    reason: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class SignalUptake(Record):
    """Uptake of one signal context (computed after the outcomes: ``post_outcome``)."""

    slope: SlopeCheck
    post_outcome: bool
    error_change: ErrorChange


@dataclass(frozen=True, kw_only=True)
class KnownSignalValue(Record):
    """Uptake per signal context (null with ``no_signal_values`` for a context without any)."""

    post_outcome: bool
    by_signal: Mapping[str, SignalUptake | Unavailable]


@dataclass(frozen=True, kw_only=True)
class KnownSignalCheck(Record):
    """Check 5; null with ``no_calibration_plan`` without a calibration child plan."""

    value: KnownSignalValue | None
    reason: str | None = field(default=None, metadata=OPTIONAL)


def _slope(points: FloatArray, signals: FloatArray, task_ids: Sequence[str],
           resampler: Resampler) -> SlopeCheck:
    moments = np.column_stack([signals, points, signals * signals, signals * points])
    tasks = tuple(sorted(set(task_ids)))
    means = np.column_stack([task_means(moments[:, j], task_ids)[1] for j in range(4)])

    def slope(m: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray((m[..., 3] - m[..., 0] * m[..., 1]) / (m[..., 2] - m[..., 0] ** 2))

    estimate = float(slope(means.mean(axis=0)))
    if not np.isfinite(estimate):
        return SlopeCheck(value=None, reason="signal_has_no_variance")
    replicates = slope(resampler.task_weights(tasks) @ means)
    summary = summarize(estimate, replicates, len(tasks), b=resampler.b, seed=resampler.seed)
    return SlopeCheck(value=SignalSlope(
        estimate=summary.estimate, ci95=summary.ci95, ci90=summary.ci90,
        lower_bound_one_sided=summary.lower_bound_one_sided, n_clusters=summary.n_clusters,
        b=summary.b, seed=summary.seed, method=summary.method, reason=summary.reason,
        n_slots=int(points.size)))


def _error_change(description: ArmStates | None, arm: ArmStates, resampler: Resampler,
                  margins: Mapping[str, float]) -> ErrorChange:
    if description is None:
        return ErrorChange(value=None, reason="no_description_arm")
    margin = margins.get("point_mae")
    itt = loss_contrast(pair_arms(description, arm), "point_mae", resampler, margin,
                        details=False)
    delivered_pair = pair_arms(description, arm, delivered_only=True)
    delivered: ContrastEstimate | Unavailable = (
        loss_contrast(delivered_pair, "point_mae", resampler, margin, details=False)
        if delivered_pair.state_ids else Unavailable(reason="no_delivered_states"))
    return ErrorChange(value=ErrorChangeValue(definition=ERROR_CHANGE_DEFINITION, itt=itt,
                                              delivered=delivered))


def known_signal(calibration: Sequence[SlotRecord],
                 build_arm: Callable[[Sequence[SlotRecord]], ArmStates],
                 description: ArmStates | None, task_of_state: Mapping[str, str],
                 resampler: Resampler, margins: Mapping[str, float]) -> KnownSignalCheck:
    """Uptake of a known signal: slope of ŷ on the signal and Δ_desc(point MAE), per signal arm."""
    if not calibration:
        return KnownSignalCheck(value=None, reason="no_calibration_plan")
    by_context: dict[str, list[SlotRecord]] = {}
    for slot in calibration:
        by_context.setdefault(slot.context_id, []).append(slot)
    calibration_description = by_context.pop("description", None)
    if calibration_description:
        description = build_arm(calibration_description)
    per_signal: dict[str, SignalUptake | Unavailable] = {}
    for context, slots in sorted(by_context.items()):
        with_signal = [s for s in slots if s.signal is not None and s.state_id in task_of_state]
        if not with_signal:
            per_signal[context] = Unavailable(reason="no_signal_values")
            continue
        points = np.array([s.forecast.point for s in with_signal], dtype=np.float64)
        signals = np.array([s.signal for s in with_signal], dtype=np.float64)
        tasks = [task_of_state[s.state_id] for s in with_signal]
        per_signal[context] = SignalUptake(
            slope=_slope(points, signals, tasks, resampler), post_outcome=True,
            error_change=_error_change(description, build_arm(slots), resampler, margins))
    return KnownSignalCheck(value=KnownSignalValue(post_outcome=True, by_signal=per_signal))
