"""Paired contrasts with task-cluster bootstrap intervals (credit §7).

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

Drift reduction (credit §6) is a ratio computed inside every replicate:
``1 − (W[b] @ m)/(W[b] @ d)`` with ``m``, ``d`` the task means of matched and
description drift over paired states.

**Exact zeros** (credit §12, "a quantity that is zero by construction is reported
as 0 with its reason"). Two per-state losses computed from the same numbers in a
different order can differ by float round-off (``1e-18`` where the losses are
``1e-2``); a bootstrap of such differences gives a lower bound of ``5e-20`` and a
gate could pass on it. So each paired per-state difference ``d_s = a_s − c_s``
with ``|d_s| ≤ 1e-12 · max(|a_s|, |c_s|)`` is set to exactly 0
(:func:`paired_differences`, relative to the operands, not to the differences).
When every paired difference is then 0 — the arms give identical losses on every
state, e.g. a contrast of an arm with itself, or the drift of the offline card
reader, whose jitter does not depend on the context — the contrast is **zero by
construction**: estimate 0, reason ``zero_by_construction``, no interval, and no
gate condition passes on it (:mod:`foreseen.credit.analysis.gates`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import numpy as np
from numpy.typing import NDArray

from foreseen.core.bootstrap import (
    TOO_FEW_CLUSTERS,
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
from foreseen.credit.analysis.record import OPTIONAL, Interval, Record, written_with

FloatArray = NDArray[np.float64]
#: relative round-off below which a paired per-state difference is exactly 0
ROUND_OFF = 1e-12
ZERO_BY_CONSTRUCTION = "zero_by_construction"
ContrastKind = Literal["delta_desc", "delta_donor", "drift_reduction"]
Variant = Literal["itt", "valid_only", "delivered"]


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
    interval: str = "none"
    minimum_clusters: int = 1
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

    def summary(self, estimate: float, replicates: FloatArray, n_clusters: int, *,
                correction: str | None = None,
                method: str = "task_cluster_percentile") -> BootstrapSummary:
        """The plan's interval (``interval``, or ``correction`` for a sensitivity) of replicates.

        Below ``minimum_clusters`` clusters every interval is null with reason
        ``too_few_clusters`` (:func:`foreseen.core.bootstrap.summarize`).
        """
        return summarize(estimate, replicates, n_clusters, b=self.b, seed=self.seed,
                         correction=self.interval if correction is None else correction,
                         method=method, minimum_clusters=self.minimum_clusters)

    def mean_summary(self, tasks: tuple[str, ...], task_values: FloatArray,
                     correction: str | None = None) -> BootstrapSummary:
        """The task-cluster summary of the equal-weight mean of per-task values."""
        weights = self.task_weights(tasks)
        return self.summary(snapped_mean(task_values), weighted_means(weights, task_values),
                            len(tasks), correction=correction)


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


@dataclass(frozen=True, kw_only=True)
class BootstrapResult(Record):
    """A point estimate with its task-cluster bootstrap intervals (credit §7).

    ``ci95``/``ci90`` are two-sided percentile intervals; ``lower_bound_one_sided``
    is the 5th percentile. ``reason`` is written when the intervals are null.
    """

    estimate: float | None
    ci95: Interval | None
    ci90: Interval | None
    lower_bound_one_sided: float | None
    n_clusters: int
    b: int
    seed: int
    method: str
    reason: str | None = field(default=None, metadata=OPTIONAL)

    @classmethod
    def of(cls, summary: BootstrapSummary) -> BootstrapResult:
        return cls(estimate=summary.estimate, ci95=summary.ci95, ci90=summary.ci90,
                   lower_bound_one_sided=summary.lower_bound_one_sided,
                   n_clusters=summary.n_clusters, b=summary.b, seed=summary.seed,
                   method=summary.method, reason=summary.reason)


@dataclass(frozen=True, kw_only=True)
class Equivalence(Record):
    """Equivalence of a contrast: its 90 % interval inside ``[−margin, margin]`` (credit §7)."""

    margin: float | None
    equivalent: bool | None
    reason: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class TaskRatio(Record):
    """One task's loss ratio ``L_arm(k) / L_comparator(k)`` (null when the denominator is 0)."""

    task: str
    ratio: float | None
    reason: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class TaskwiseRatios(Record):
    """Per-task loss ratios and their geometric mean ``exp(mean log r_k)``.

    The geometric mean is null with a reason when a denominator is 0, there is
    no task, or a ratio is not positive; otherwise the median, minimum and
    maximum ratio are written beside it.
    """

    per_task: tuple[TaskRatio, ...]
    geometric_mean: float | None
    geometric_mean_reason: str | None = field(default=None, metadata=OPTIONAL)
    median: float | None = field(default=None, metadata=OPTIONAL)
    minimum: float | None = field(default=None, metadata={**OPTIONAL, "json_name": "min"})
    maximum: float | None = field(default=None, metadata={**OPTIONAL, "json_name": "max"})


@dataclass(frozen=True, kw_only=True)
class LeaveOneTaskOut(Record):
    """The contrast without task ``k``: ``(Kθ̂ − m_k)/(K − 1)``; influence ``θ̂ − θ̂_(−k)``."""

    task: str
    estimate_without: float
    influence: float


@dataclass(frozen=True, kw_only=True)
class Sensitivity(Record):
    """Declared sensitivities of a contrast: small-cluster correction, hierarchical resampling."""

    small_cluster: BootstrapResult | None = field(default=None, metadata=OPTIONAL)
    hierarchical: BootstrapResult | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class ContrastEstimate(Record):
    """One contrast's estimate with its bootstrap summary and diagnostics (credit §7).

    A loss contrast ``Δ(L) = L(comparator) − L(arm)`` writes ``n_states``,
    ``arm_mean``, ``comparator_mean`` and ``equivalence`` (and, for the ITT
    variant, taskwise ratios, leave-one-task-out and declared sensitivities);
    a drift reduction ``1 − drift(arm)/drift(comparator)`` writes ``arm_drift``,
    ``comparator_drift`` and ``n_states``. When nothing could be estimated, the
    estimate is null with a ``reason`` and no bootstrap fields are written.
    """

    estimate: float | None
    ci95: Interval | None = field(default=None, metadata=written_with("method"))
    ci90: Interval | None = field(default=None, metadata=written_with("method"))
    lower_bound_one_sided: float | None = field(default=None, metadata=written_with("method"))
    n_clusters: int
    b: int | None = field(default=None, metadata=OPTIONAL)
    seed: int | None = field(default=None, metadata=OPTIONAL)
    method: str | None = field(default=None, metadata=OPTIONAL)
    reason: str | None = field(default=None, metadata=OPTIONAL)
    arm_drift: float | None = field(default=None, metadata=OPTIONAL)
    comparator_drift: float | None = field(default=None, metadata=OPTIONAL)
    n_states: int | None = field(default=None, metadata=OPTIONAL)
    arm_mean: float | None = field(default=None, metadata=OPTIONAL)
    comparator_mean: float | None = field(default=None, metadata=OPTIONAL)
    equivalence: Equivalence | None = field(default=None, metadata=OPTIONAL)
    taskwise_ratios: TaskwiseRatios | None = field(default=None, metadata=OPTIONAL)
    leave_one_task_out: tuple[LeaveOneTaskOut, ...] | None = field(default=None, metadata=OPTIONAL)
    sensitivity: Sensitivity | None = field(default=None, metadata=OPTIONAL)


def _from_summary(summary: BootstrapSummary, **extra: Any) -> ContrastEstimate:
    return ContrastEstimate(
        estimate=summary.estimate, ci95=summary.ci95, ci90=summary.ci90,
        lower_bound_one_sided=summary.lower_bound_one_sided, n_clusters=summary.n_clusters,
        b=summary.b, seed=summary.seed, method=summary.method, reason=summary.reason, **extra)


@dataclass(frozen=True, kw_only=True)
class ContrastKey(Record):
    """Which contrast a row is: kind, explainer, context, the two arms compared, loss, variant.

    ``comparator`` and ``arm`` are context ids: for Δ_desc the comparator is
    ``description`` and the arm is ``context``; for Δ_donor the comparator is the
    donor context and the arm its matched counterpart.
    """

    kind: ContrastKind
    explainer: str
    context: str
    comparator: str
    arm: str
    loss: str
    variant: Variant


@dataclass(frozen=True, kw_only=True)
class ContrastRow(ContrastEstimate, ContrastKey):
    """One row of the contrast table: its key, then its estimate (written as one object)."""

    @classmethod
    def of(cls, key: ContrastKey, estimate: ContrastEstimate) -> ContrastRow:
        return keyed_row(cls, key, estimate)


if TYPE_CHECKING:
    from _typeshed import DataclassInstance

RowT = TypeVar("RowT")


def keyed_row(
    row_type: type[RowT], key: DataclassInstance, estimate: ContrastEstimate
) -> RowT:
    """A row type that subclasses both its key and :class:`ContrastEstimate`, from the two."""
    values = {f.name: getattr(key, f.name) for f in fields(key)}
    values.update({f.name: getattr(estimate, f.name) for f in fields(ContrastEstimate)})
    return row_type(**values)


def _taskwise_ratios(tasks: tuple[str, ...], arm_means: FloatArray,
                     comparator_means: FloatArray) -> TaskwiseRatios:
    ratios: list[TaskRatio] = []
    usable = True
    for task, num, den in zip(tasks, arm_means, comparator_means, strict=True):
        if den == 0:
            ratios.append(TaskRatio(task=task, ratio=None, reason="zero_denominator"))
            usable = False
        else:
            ratios.append(TaskRatio(task=task, ratio=float(num / den)))
    values = np.array([r.ratio for r in ratios if r.ratio is not None], dtype=np.float64)
    per_task = tuple(ratios)
    if not usable:
        return TaskwiseRatios(per_task=per_task, geometric_mean=None,
                              geometric_mean_reason="zero_denominator")
    if values.size == 0:
        return TaskwiseRatios(per_task=per_task, geometric_mean=None,
                              geometric_mean_reason="no_tasks")
    if np.any(values <= 0):
        return TaskwiseRatios(per_task=per_task, geometric_mean=None,
                              geometric_mean_reason="non_positive_ratio")
    return TaskwiseRatios(per_task=per_task, geometric_mean=float(np.exp(np.mean(np.log(values)))),
                          median=float(np.median(values)), minimum=float(values.min()),
                          maximum=float(values.max()))


def _leave_one_task_out(tasks: tuple[str, ...], means: FloatArray
                        ) -> tuple[LeaveOneTaskOut, ...]:
    k = len(tasks)
    if k < 2:
        return ()
    full = float(means.mean())
    without = (means.sum() - means) / (k - 1)
    return tuple(LeaveOneTaskOut(task=task, estimate_without=float(w), influence=full - float(w))
                 for task, w in zip(tasks, without, strict=True))


def paired_differences(comparator: FloatArray, arm: FloatArray) -> FloatArray:
    """``comparator − arm`` per state, with float round-off relative to the operands set to 0.

    ``d = a − c`` is set to exactly 0 where ``|d| ≤ ROUND_OFF · max(|a|, |c|)``
    (NaN stays NaN): two losses computed from the same numbers in another order
    differ by a few units in the last place of the *losses*, never by more.
    """
    a = np.asarray(comparator, dtype=np.float64)
    c = np.asarray(arm, dtype=np.float64)
    diff = a - c
    with np.errstate(invalid="ignore"):
        rounding = np.abs(diff) <= ROUND_OFF * np.maximum(np.abs(a), np.abs(c))
    return np.where(rounding, 0.0, diff)


def zero_by_construction(diff: FloatArray) -> bool:
    """True when there are paired states and every finite paired difference is exactly 0."""
    finite = diff[np.isfinite(diff)]
    return bool(finite.size) and bool(np.all(finite == 0.0))


def loss_contrast(paired: Paired, loss: str, resampler: Resampler,
                  margin: float | None, *, details: bool = True) -> ContrastEstimate:
    """One Δ(L) = L(comparator) − L(arm) with its bootstrap summary and diagnostics.

    Zero by construction (module docstring): estimate 0 with reason
    ``zero_by_construction``, no interval and no equivalence statement.
    """
    diff = paired_differences(paired.comparator[loss], paired.arm[loss])
    tasks, means = task_means(diff, paired.task_ids)
    n_states = int(np.isfinite(diff).sum())
    if not tasks:
        return ContrastEstimate(estimate=None, reason="no_paired_states", n_clusters=0,
                                n_states=0)
    finite = np.isfinite(diff)
    _, arm_means = task_means(np.where(finite, paired.arm[loss], np.nan), paired.task_ids)
    _, comp_means = task_means(np.where(finite, paired.comparator[loss], np.nan),
                               paired.task_ids)
    if zero_by_construction(diff):
        return ContrastEstimate(
            estimate=0.0, reason=ZERO_BY_CONSTRUCTION, n_clusters=len(tasks),
            n_states=n_states, arm_mean=float(arm_means.mean()),
            comparator_mean=float(comp_means.mean()),
            equivalence=Equivalence(margin=margin, equivalent=None,
                                    reason=ZERO_BY_CONSTRUCTION))
    summary = resampler.mean_summary(tasks, means)
    if margin is None:
        equivalence = Equivalence(margin=None, equivalent=None, reason="no_margin_declared")
    else:
        equivalence = Equivalence(
            margin=margin, equivalent=equivalent(summary.ci90, margin),
            reason=TOO_FEW_CLUSTERS if summary.reason == TOO_FEW_CLUSTERS else None)
    common: dict[str, Any] = {"n_states": n_states, "arm_mean": float(arm_means.mean()),
                              "comparator_mean": float(comp_means.mean()),
                              "equivalence": equivalence}
    if not details:
        return _from_summary(summary, **common)
    small_cluster = hierarchical = None
    if resampler.correction != "none":
        small_cluster = BootstrapResult.of(
            resampler.mean_summary(tasks, means, resampler.correction))
    if resampler.paths is not None:
        states = tuple(s for s, ok in zip(paired.state_ids, finite, strict=True) if ok)
        point, weights = resampler.state_weights(states)
        values = diff[finite]
        hierarchical = BootstrapResult.of(resampler.summary(
            snapped_mean(values, point), weighted_means(weights, values), len(tasks),
            correction="none", method="hierarchical_percentile"))
    declared = small_cluster is not None or hierarchical is not None
    return _from_summary(
        summary, **common,
        taskwise_ratios=_taskwise_ratios(tasks, arm_means, comp_means),
        leave_one_task_out=_leave_one_task_out(tasks, means),
        sensitivity=Sensitivity(small_cluster=small_cluster, hierarchical=hierarchical)
        if declared else None)


def drift_reduction(paired: Paired, resampler: Resampler) -> ContrastEstimate:
    """``1 − mean(drift arm)/mean(drift comparator)``, the ratio taken inside each replicate.

    Zero by construction when every paired state's two drifts are equal (up to
    round-off relative to the drifts): estimate 0, reason ``zero_by_construction``,
    no interval.
    """
    arm, comp = paired.arm["drift"], paired.comparator["drift"]
    both = np.isfinite(arm) & np.isfinite(comp)
    if not both.any():
        return ContrastEstimate(estimate=None, reason="fewer_than_two_repeats", n_clusters=0)
    task_ids = [t for t, ok in zip(paired.task_ids, both, strict=True) if ok]
    tasks, arm_means = task_means(arm[both], task_ids)
    _, comp_means = task_means(comp[both], task_ids)
    denominator = float(comp_means.mean())
    if denominator == 0:
        return ContrastEstimate(estimate=None, reason="zero_description_drift",
                                n_clusters=len(tasks))
    if zero_by_construction(paired_differences(comp[both], arm[both])):
        return ContrastEstimate(estimate=0.0, reason=ZERO_BY_CONSTRUCTION,
                                n_clusters=len(tasks), arm_drift=float(arm_means.mean()),
                                comparator_drift=denominator, n_states=int(both.sum()))
    weights = resampler.task_weights(tasks)
    with np.errstate(divide="ignore", invalid="ignore"):
        replicates = 1.0 - (weights @ arm_means) / (weights @ comp_means)
    summary = resampler.summary(1.0 - float(arm_means.mean()) / denominator, replicates,
                                len(tasks))
    return _from_summary(summary, arm_drift=float(arm_means.mean()),
                         comparator_drift=denominator, n_states=int(both.sum()))
