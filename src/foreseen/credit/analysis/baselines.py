"""Baseline forecasts and claim-level metrics of cards (credit §6).

Baselines, scored with the same task-weighted aggregation as the forecasts:

* **constant zero** — ``ŷ = 0``: point MAE, task-scaled MAE, and direction
  (a no call, hence always wrong); interval metrics only at a declared
  interval, else ``null`` with reason ``no_declared_interval``;
* **constant "improve"** — direction only: correct iff ``y > 0``;
* **task-mean prior, leave-one-cell-out** — ``ŷ_s`` = mean of ``y`` over the
  other cells' states of the same task (``null`` for a task with one cell).

Claim-level metrics read the card's own claims: direction accuracy
conditional on a claim (``improve``/``worsen`` correct iff it matches
``sign(y)``; ``no_change`` is a no call, always wrong, and is counted), and
coverage of the card's own target intervals (each state scores the share of
its intervals that cover ``y``), each beside the "always improve" claim
(direction: ``y > 0``; interval: ``(0, ∞)``, i.e. ``y > 0``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from foreseen.credit.analysis.metrics import (
    FloatArray,
    direction_correct,
    interval_score,
    task_weighted_mean,
)
from foreseen.credit.analysis.record import OPTIONAL, Interval, Record
from foreseen.credit.model import Explanation, State


@dataclass(frozen=True, kw_only=True)
class ConstantZeroBaseline(Record):
    """The constant-zero forecast ``ŷ = 0`` scored like the forecasts (task-weighted).

    Its direction is a no call (always wrong). Interval metrics are scored at the
    declared interval (``declared_interval``); without one they are null with
    reason ``no_declared_interval``.
    """

    point_mae: float | None
    task_scaled_mae: float | None
    direction_accuracy: float | None
    declared_interval: Interval | None = field(default=None, metadata=OPTIONAL)
    interval_score: float | None
    interval_score_reason: str | None = field(default=None, metadata=OPTIONAL)
    coverage: float | None
    coverage_reason: str | None = field(default=None, metadata=OPTIONAL)
    width: float | None
    width_reason: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class ConstantImproveBaseline(Record):
    """The constant "improve" claim: direction correct iff ``y > 0`` (task-weighted)."""

    direction_accuracy: float | None


@dataclass(frozen=True, kw_only=True)
class TaskMeanBaseline(Record):
    """Task-mean prior, leave one cell out: ``ŷ_s`` = mean ``y`` of the task's other cells.

    States of a task with one cell have no prior (counted); when no task has
    two cells every metric is null with reason ``no_task_with_two_cells``.
    """

    point_mae: float | None
    task_scaled_mae: float | None
    direction_accuracy: float | None
    n_states_without_prior: int
    point_mae_reason: str | None = field(default=None, metadata=OPTIONAL)
    task_scaled_mae_reason: str | None = field(default=None, metadata=OPTIONAL)
    direction_accuracy_reason: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class Baselines(Record):
    """The three baselines over the states with outcomes (credit §6)."""

    constant_zero: ConstantZeroBaseline
    constant_improve: ConstantImproveBaseline
    task_mean_loco: TaskMeanBaseline
    n_states: int
    n_tasks: int


@dataclass(frozen=True, kw_only=True)
class ClaimRate(Record):
    """A task-weighted rate over claims; null with a reason when there is no claim."""

    value: float | None
    reason: str | None = field(default=None, metadata=OPTIONAL)


def _rate(value: float | None, reason: str) -> ClaimRate:
    return ClaimRate(value=value, reason=reason if value is None else None)


@dataclass(frozen=True, kw_only=True)
class DirectionClaims(Record):
    """Accuracy of the cards' direction claims, beside the "always improve" claim.

    ``improve``/``worsen`` is correct iff it matches ``sign(y)``; ``no_change``
    is a no call, always wrong, and is counted.
    """

    n_claims: int
    n_correct: int
    n_no_change_claims: int
    accuracy: ClaimRate
    always_improve_accuracy: ClaimRate


@dataclass(frozen=True, kw_only=True)
class IntervalClaims(Record):
    """Coverage of the cards' own target intervals, beside "always improve" (``y > 0``).

    Each state scores the share of its card's intervals that cover ``y``.
    """

    n_cards_with_interval: int
    n_intervals: int
    n_covered: int
    coverage: ClaimRate
    always_improve_coverage: ClaimRate


@dataclass(frozen=True, kw_only=True)
class ClaimMetrics(Record):
    """Claim-level metrics of one explainer's cards (credit §6)."""

    direction: DirectionClaims
    interval: IntervalClaims


def baselines(states: Sequence[State], outcomes: Mapping[str, float],
              scales: Mapping[str, float], alpha: float,
              interval: Interval | None) -> Baselines:
    """The three baselines' task-weighted metrics over the states with outcomes."""
    kept = [s for s in states if s.id in outcomes]
    tasks = [s.task_id for s in kept]
    y = np.array([outcomes[s.id] for s in kept], dtype=np.float64)
    scale = np.array([scales[s.task_id] for s in kept], dtype=np.float64)
    zero = np.zeros_like(y)
    zero_direction = direction_correct(zero, y, np.ones(y.size, dtype=bool))
    point_mae = task_weighted_mean(np.abs(y), tasks)[0]
    task_scaled_mae = task_weighted_mean(np.abs(y) / scale, tasks)[0]
    direction_accuracy = task_weighted_mean(zero_direction.astype(float), tasks)[0]
    if interval is None:
        missing = "no_declared_interval"
        constant_zero = ConstantZeroBaseline(
            point_mae=point_mae, task_scaled_mae=task_scaled_mae,
            direction_accuracy=direction_accuracy,
            interval_score=None, interval_score_reason=missing,
            coverage=None, coverage_reason=missing, width=None, width_reason=missing)
    else:
        lower, upper = np.full_like(y, interval[0]), np.full_like(y, interval[1])
        constant_zero = ConstantZeroBaseline(
            point_mae=point_mae, task_scaled_mae=task_scaled_mae,
            direction_accuracy=direction_accuracy,
            declared_interval=(interval[0], interval[1]),
            interval_score=task_weighted_mean(interval_score(lower, upper, y, alpha), tasks)[0],
            coverage=task_weighted_mean(((lower <= y) & (y <= upper)).astype(float), tasks)[0],
            width=float(interval[1] - interval[0]))
    improve = ConstantImproveBaseline(
        direction_accuracy=task_weighted_mean((y > 0).astype(float), tasks)[0])
    return Baselines(
        constant_zero=constant_zero,
        constant_improve=improve,
        task_mean_loco=_task_mean_loco(kept, y, scale, tasks),
        n_states=len(kept),
        n_tasks=len(set(tasks)),
    )


def task_mean_loco_prior(y: FloatArray, tasks: Sequence[str],
                         cells: Sequence[str]) -> FloatArray:
    """``prior[s]`` = mean of ``y`` over the states of ``s``'s task in other cells (NaN if none).

    Every state of a cell shares its prior, so each (task, cell) is computed
    once, as ``y[others].mean()`` over the task's other states **in their
    original order** — the same elements in the same order as a per-state
    mask over all states, hence the same floating-point result to the last
    digit, in O(Σ_task cells × states of the task) instead of O(S²): linear
    in the number of states for a bounded number of cells per task.
    """
    prior = np.full(len(tasks), np.nan)
    by_task: dict[str, list[int]] = {}
    for index, task in enumerate(tasks):
        by_task.setdefault(task, []).append(index)
    for members in by_task.values():
        idx = np.asarray(members, dtype=np.intp)
        task_cells = [cells[i] for i in members]
        by_cell: dict[str, list[int]] = {}
        for position, cell in enumerate(task_cells):
            by_cell.setdefault(cell, []).append(position)
        if len(by_cell) < 2:
            continue
        for positions in by_cell.values():
            inside = np.zeros(idx.size, dtype=bool)
            inside[positions] = True
            prior[idx[inside]] = y[idx[~inside]].mean()
    return prior


def _task_mean_loco(kept: Sequence[State], y: FloatArray, scale: FloatArray,
                    tasks: Sequence[str]) -> TaskMeanBaseline:
    prior = task_mean_loco_prior(y, tasks, [s.cell for s in kept])
    has = np.isfinite(prior)
    error = np.where(has, np.abs(prior - y), np.nan)
    correct = direction_correct(np.where(has, prior, 0.0), y, ~has)
    missing = None if has.any() else "no_task_with_two_cells"
    return TaskMeanBaseline(
        point_mae=task_weighted_mean(error, tasks)[0],
        task_scaled_mae=task_weighted_mean(error / scale, tasks)[0],
        direction_accuracy=task_weighted_mean(np.where(has, correct, np.nan), tasks)[0],
        n_states_without_prior=int((~has).sum()),
        point_mae_reason=missing, task_scaled_mae_reason=missing,
        direction_accuracy_reason=missing,
    )


def claim_metrics(explanations: Mapping[str, Explanation], states: Sequence[State],
                  outcomes: Mapping[str, float]) -> ClaimMetrics:
    """Direction accuracy and interval coverage of the cards' own claims, beside "improve"."""
    claim_tasks: list[str] = []
    claim_correct: list[float] = []
    claim_improve: list[float] = []
    n_no_change = 0
    cover_tasks: list[str] = []
    cover_rate: list[float] = []
    cover_improve: list[float] = []
    n_intervals = n_covered = 0
    for state in states:
        explanation = explanations.get(state.id)
        if explanation is None or explanation.card is None or state.id not in outcomes:
            continue
        card, y = explanation.card, outcomes[state.id]
        if card.direction is not None:
            sign = {"improve": 1.0, "worsen": -1.0, "no_change": 0.0}[card.direction]
            n_no_change += card.direction == "no_change"
            correct = direction_correct(np.array([sign]), np.array([y]),
                                        np.array([sign == 0.0]))
            claim_tasks.append(state.task_id)
            claim_correct.append(float(correct[0]))
            claim_improve.append(float(y > 0))
        if card.target is not None and card.target.intervals:
            hits = [low <= y <= high for low, high in card.target.intervals]
            n_intervals += len(hits)
            n_covered += sum(hits)
            cover_tasks.append(state.task_id)
            cover_rate.append(float(np.mean(hits)))
            cover_improve.append(float(y > 0))
    direction = DirectionClaims(
        n_claims=len(claim_correct),
        n_correct=int(sum(claim_correct)),
        n_no_change_claims=n_no_change,
        accuracy=_rate(task_weighted_mean(np.array(claim_correct), claim_tasks)[0],
                       "no_direction_claims"),
        always_improve_accuracy=_rate(
            task_weighted_mean(np.array(claim_improve), claim_tasks)[0], "no_direction_claims"),
    )
    coverage = IntervalClaims(
        n_cards_with_interval=len(cover_rate),
        n_intervals=n_intervals,
        n_covered=n_covered,
        coverage=_rate(task_weighted_mean(np.array(cover_rate), cover_tasks)[0],
                       "no_card_intervals"),
        always_improve_coverage=_rate(
            task_weighted_mean(np.array(cover_improve), cover_tasks)[0], "no_card_intervals"),
    )
    return ClaimMetrics(direction=direction, interval=coverage)
