"""Baseline forecasts and claim-level metrics of cards (spec credit.md §6).

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
from typing import Any

import numpy as np

from foreseen.credit.analysis.metrics import (
    direction_correct,
    interval_score,
    task_weighted_mean,
)
from foreseen.credit.model import Explanation, State


def _with_reason(value: float | None, reason: str) -> dict[str, Any]:
    return {"value": value} if value is not None else {"value": None, "reason": reason}


def baselines(states: Sequence[State], outcomes: Mapping[str, float],
              scales: Mapping[str, float], alpha: float,
              interval: tuple[float, float] | None) -> dict[str, Any]:
    """The three baselines' task-weighted metrics over the states with outcomes."""
    kept = [s for s in states if s.id in outcomes]
    tasks = [s.task_id for s in kept]
    y = np.array([outcomes[s.id] for s in kept], dtype=np.float64)
    scale = np.array([scales[s.task_id] for s in kept], dtype=np.float64)
    zero = np.zeros_like(y)
    zero_direction = direction_correct(zero, y, np.ones(y.size, dtype=bool))
    constant_zero: dict[str, Any] = {
        "point_mae": task_weighted_mean(np.abs(y), tasks)[0],
        "task_scaled_mae": task_weighted_mean(np.abs(y) / scale, tasks)[0],
        "direction_accuracy": task_weighted_mean(zero_direction.astype(float), tasks)[0],
    }
    if interval is None:
        for name in ("interval_score", "coverage", "width"):
            constant_zero[name] = None
            constant_zero[f"{name}_reason"] = "no_declared_interval"
    else:
        lower, upper = np.full_like(y, interval[0]), np.full_like(y, interval[1])
        constant_zero["declared_interval"] = [interval[0], interval[1]]
        constant_zero["interval_score"] = task_weighted_mean(
            interval_score(lower, upper, y, alpha), tasks)[0]
        constant_zero["coverage"] = task_weighted_mean(
            ((lower <= y) & (y <= upper)).astype(float), tasks)[0]
        constant_zero["width"] = float(interval[1] - interval[0])
    improve = {"direction_accuracy": task_weighted_mean((y > 0).astype(float), tasks)[0]}
    return {
        "constant_zero": constant_zero,
        "constant_improve": improve,
        "task_mean_loco": _task_mean_loco(kept, y, scale, tasks),
        "n_states": len(kept),
        "n_tasks": len(set(tasks)),
    }


def _task_mean_loco(kept: Sequence[State], y: np.ndarray, scale: np.ndarray,
                    tasks: Sequence[str]) -> dict[str, Any]:
    prior = np.full(y.size, np.nan)
    task_arr = np.array(tasks, dtype=object)
    cell_arr = np.array([s.cell for s in kept], dtype=object)
    for i in range(y.size):
        others = (task_arr == task_arr[i]) & (cell_arr != cell_arr[i])
        if others.any():
            prior[i] = y[others].mean()
    has = np.isfinite(prior)
    error = np.where(has, np.abs(prior - y), np.nan)
    correct = direction_correct(np.where(has, prior, 0.0), y, ~has)
    result: dict[str, Any] = {
        "point_mae": task_weighted_mean(error, tasks)[0],
        "task_scaled_mae": task_weighted_mean(error / scale, tasks)[0],
        "direction_accuracy": task_weighted_mean(np.where(has, correct, np.nan), tasks)[0],
        "n_states_without_prior": int((~has).sum()),
    }
    if not has.any():
        for name in ("point_mae", "task_scaled_mae", "direction_accuracy"):
            result[f"{name}_reason"] = "no_task_with_two_cells"
    return result


def claim_metrics(explanations: Mapping[str, Explanation], states: Sequence[State],
                  outcomes: Mapping[str, float]) -> dict[str, Any]:
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
    direction = {
        "n_claims": len(claim_correct),
        "n_correct": int(sum(claim_correct)),
        "n_no_change_claims": n_no_change,
        "accuracy": _with_reason(task_weighted_mean(np.array(claim_correct), claim_tasks)[0],
                                 "no_direction_claims"),
        "always_improve_accuracy": _with_reason(
            task_weighted_mean(np.array(claim_improve), claim_tasks)[0], "no_direction_claims"),
    }
    coverage = {
        "n_cards_with_interval": len(cover_rate),
        "n_intervals": n_intervals,
        "n_covered": n_covered,
        "coverage": _with_reason(task_weighted_mean(np.array(cover_rate), cover_tasks)[0],
                                 "no_card_intervals"),
        "always_improve_coverage": _with_reason(
            task_weighted_mean(np.array(cover_improve), cover_tasks)[0], "no_card_intervals"),
    }
    return {"direction": direction, "interval": coverage}
