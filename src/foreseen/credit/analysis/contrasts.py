"""Paired contrasts with task-cluster bootstrap intervals (spec credit.md §7).

For an arm ``c`` against a comparator arm ``a`` and a loss ``L`` (lower is
better), the paired per-state difference after averaging repeats is
``d_s = L_a(s) − L_c(s)`` over the states both arms scored; tasks are the
clusters: ``θ̂ = (1/K) Σ_k mean_{s ∈ k} d_s``. So
``Δ_desc(L) = L(description) − L(c)`` and ``Δ_donor(L) = L(donor) − L(matched)``
— positive favours the explanation (the matched card).

Intervals come from one ``B × K`` weight matrix per task set
(:class:`Resampler`, cached): replicate ``b`` is ``W[b] @ task_means``. Each
contrast also reports: equivalence (90 % interval inside ``±δ``), taskwise
ratios ``L_c(k)/L_a(k)`` with their geometric mean (``null`` with a reason
when a denominator or a ratio is 0), leave-one-task-out estimates
``(Kθ̂ − m_k)/(K − 1)`` with influence ``θ̂ − θ̂_(−k)``, and the declared
sensitivities (hierarchical resampling, small-cluster correction).

Drift reduction (spec §6) is a ratio computed inside every replicate:
``1 − (W[b] @ m)/(W[b] @ d)`` with ``m``, ``d`` the task means of matched and
description drift over paired states.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from foreseen.core.bootstrap import (
    BootstrapSummary,
    cluster_weights,
    equivalent,
    hierarchical_weights,
    nested_mean_weights,
    snapped_mean,
    summarize,
    weighted_means,
)
from foreseen.credit.analysis.metrics import LOSSES, ArmStates

FloatArray = NDArray[np.float64]


@dataclass
class Resampler:
    """Cached bootstrap weight matrices for task sets and state sets.

    ``strata`` maps task id → stratum (task kind) when stratification is
    declared; ``paths`` maps state id → its hierarchical label path.
    """

    b: int
    seed: int
    strata: Mapping[str, str] | None = None
    paths: Mapping[str, tuple[str, ...]] | None = None
    correction: str = "none"
    _task_cache: dict[tuple[str, ...], FloatArray] = field(default_factory=dict)
    _state_cache: dict[tuple[str, ...], tuple[FloatArray, FloatArray]] = field(
        default_factory=dict)

    def task_weights(self, tasks: tuple[str, ...]) -> FloatArray:
        """``B × K`` weights for the (sorted) task tuple; same seed for every set."""
        if tasks not in self._task_cache:
            strata = None if self.strata is None else [self.strata[t] for t in tasks]
            self._task_cache[tasks] = cluster_weights(len(tasks), self.b, self.seed, strata)
        return self._task_cache[tasks]

    def state_weights(self, states: tuple[str, ...]) -> tuple[FloatArray, FloatArray]:
        """Hierarchical ``(point weights, B × n weights)`` for the state tuple."""
        if self.paths is None:
            raise ValueError("no hierarchical paths declared")
        if states not in self._state_cache:
            paths = [self.paths[s] for s in states]
            tops: dict[str, str] = {}
            if self.strata is not None:
                for path in paths:
                    tops.setdefault(path[0], self.strata[path[0]])
            strata = None if self.strata is None else list(tops.values())
            self._state_cache[states] = (
                nested_mean_weights(paths),
                hierarchical_weights(paths, self.b, self.seed, strata),
            )
        return self._state_cache[states]

    def mean_summary(self, tasks: tuple[str, ...], task_values: FloatArray,
                     correction: str = "none") -> BootstrapSummary:
        weights = self.task_weights(tasks)
        return summarize(snapped_mean(task_values), weighted_means(weights, task_values),
                         len(tasks),
                         b=self.b, seed=self.seed, correction=correction)


def task_means(values: FloatArray, task_ids: Sequence[str]) -> tuple[tuple[str, ...], FloatArray]:
    """Per-task means of the finite per-state values, tasks in sorted order."""
    values = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(values)
    labels, index = np.unique(np.asarray(task_ids, dtype=object)[finite], return_inverse=True)
    sums = np.bincount(index, weights=values[finite], minlength=labels.size)
    counts = np.bincount(index, minlength=labels.size)
    return tuple(str(t) for t in labels), sums / np.maximum(counts, 1)


@dataclass(frozen=True)
class Paired:
    """Two arms aligned on their common states (comparator ``a``, arm ``c``)."""

    state_ids: tuple[str, ...]
    task_ids: tuple[str, ...]
    comparator: Mapping[str, FloatArray]
    arm: Mapping[str, FloatArray]


def pair_arms(comparator: ArmStates, arm: ArmStates, *, delivered_only: bool = False,
              comparator_must_deliver: bool = False) -> Paired:
    """Align two arms on the states both scored (optionally the delivered subset)."""
    index_a, index_c = comparator.index(), arm.index()
    common = []
    for state_id in arm.state_ids:
        if state_id not in index_a:
            continue
        if delivered_only and not arm.delivered[index_c[state_id]]:
            continue
        if comparator_must_deliver and not comparator.delivered[index_a[state_id]]:
            continue
        common.append(state_id)
    rows_a = np.array([index_a[s] for s in common], dtype=np.int64)
    rows_c = np.array([index_c[s] for s in common], dtype=np.int64)
    return Paired(
        state_ids=tuple(common),
        task_ids=tuple(arm.task_ids[i] for i in rows_c),
        comparator={name: comparator.losses[name][rows_a] for name in LOSSES},
        arm={name: arm.losses[name][rows_c] for name in LOSSES},
    )


def _taskwise_ratios(tasks: tuple[str, ...], arm_means: FloatArray,
                     comparator_means: FloatArray) -> dict[str, Any]:
    ratios: list[dict[str, Any]] = []
    usable = True
    for task, num, den in zip(tasks, arm_means, comparator_means, strict=True):
        if den == 0:
            ratios.append({"task": task, "ratio": None, "reason": "zero_denominator"})
            usable = False
        else:
            ratios.append({"task": task, "ratio": float(num / den)})
    values = np.array([r["ratio"] for r in ratios if r["ratio"] is not None], dtype=np.float64)
    result: dict[str, Any] = {"per_task": ratios}
    if not usable:
        result.update(geometric_mean=None, geometric_mean_reason="zero_denominator")
    elif values.size == 0:
        result.update(geometric_mean=None, geometric_mean_reason="no_tasks")
    elif np.any(values <= 0):
        result.update(geometric_mean=None, geometric_mean_reason="non_positive_ratio")
    else:
        result.update(geometric_mean=float(np.exp(np.mean(np.log(values)))),
                      median=float(np.median(values)), min=float(values.min()),
                      max=float(values.max()))
    return result


def _leave_one_task_out(tasks: tuple[str, ...], means: FloatArray) -> list[dict[str, Any]]:
    k = len(tasks)
    if k < 2:
        return []
    full = float(means.mean())
    without = (means.sum() - means) / (k - 1)
    return [{"task": task, "estimate_without": float(w), "influence": full - float(w)}
            for task, w in zip(tasks, without, strict=True)]


def _summary_json(summary: BootstrapSummary) -> dict[str, Any]:
    data = summary.to_json()
    if data["reason"] is None:
        del data["reason"]
    return data


def loss_contrast(paired: Paired, loss: str, resampler: Resampler,
                  margin: float | None, *, details: bool = True) -> dict[str, Any]:
    """One Δ(L) = L(comparator) − L(arm) with its bootstrap summary and diagnostics."""
    diff = paired.comparator[loss] - paired.arm[loss]
    tasks, means = task_means(diff, paired.task_ids)
    n_states = int(np.isfinite(diff).sum())
    if not tasks:
        return {"estimate": None, "reason": "no_paired_states", "n_clusters": 0,
                "n_states": 0}
    summary = resampler.mean_summary(tasks, means)
    result = _summary_json(summary)
    result["n_states"] = n_states
    finite = np.isfinite(diff)
    result["arm_mean"] = float(task_means(np.where(finite, paired.arm[loss], np.nan),
                                          paired.task_ids)[1].mean())
    result["comparator_mean"] = float(task_means(
        np.where(finite, paired.comparator[loss], np.nan), paired.task_ids)[1].mean())
    if margin is None:
        result["equivalence"] = {"margin": None, "equivalent": None,
                                 "reason": "no_margin_declared"}
    else:
        result["equivalence"] = {"margin": margin,
                                 "equivalent": equivalent(summary.ci90, margin)}
    if not details:
        return result
    _, arm_means = task_means(np.where(finite, paired.arm[loss], np.nan), paired.task_ids)
    _, comp_means = task_means(np.where(finite, paired.comparator[loss], np.nan),
                               paired.task_ids)
    result["taskwise_ratios"] = _taskwise_ratios(tasks, arm_means, comp_means)
    result["leave_one_task_out"] = _leave_one_task_out(tasks, means)
    sensitivity: dict[str, Any] = {}
    if resampler.correction != "none":
        sensitivity["small_cluster"] = _summary_json(
            resampler.mean_summary(tasks, means, resampler.correction))
    if resampler.paths is not None:
        states = tuple(s for s, ok in zip(paired.state_ids, finite, strict=True) if ok)
        point, weights = resampler.state_weights(states)
        values = diff[finite]
        hier = summarize(snapped_mean(values, point), weighted_means(weights, values),
                         len(tasks), b=resampler.b,
                         seed=resampler.seed, method="hierarchical_percentile")
        sensitivity["hierarchical"] = _summary_json(hier)
    if sensitivity:
        result["sensitivity"] = sensitivity
    return result


def drift_reduction(paired: Paired, resampler: Resampler) -> dict[str, Any]:
    """``1 − mean(drift arm)/mean(drift comparator)``, the ratio taken inside each replicate."""
    arm, comp = paired.arm["drift"], paired.comparator["drift"]
    both = np.isfinite(arm) & np.isfinite(comp)
    if not both.any():
        return {"estimate": None, "reason": "fewer_than_two_repeats", "n_clusters": 0}
    task_ids = [t for t, ok in zip(paired.task_ids, both, strict=True) if ok]
    tasks, arm_means = task_means(arm[both], task_ids)
    _, comp_means = task_means(comp[both], task_ids)
    denominator = float(comp_means.mean())
    if denominator == 0:
        return {"estimate": None, "reason": "zero_description_drift",
                "n_clusters": len(tasks)}
    weights = resampler.task_weights(tasks)
    with np.errstate(divide="ignore", invalid="ignore"):
        replicates = 1.0 - (weights @ arm_means) / (weights @ comp_means)
    summary = summarize(1.0 - float(arm_means.mean()) / denominator, replicates, len(tasks),
                        b=resampler.b, seed=resampler.seed, method="task_cluster_percentile")
    result = _summary_json(summary)
    result["arm_drift"] = float(arm_means.mean())
    result["comparator_drift"] = denominator
    result["n_states"] = int(both.sum())
    if not math.isfinite(result["estimate"]):
        result["estimate"] = None
    return result
