"""Seeded cluster bootstrap: task-cluster, stratified and hierarchical resampling, vectorised.

Every scheme here produces a **weight matrix** ``W`` of shape ``(B, n_units)``
whose rows sum to one; replicate ``b`` of a (weighted) mean is then
``W[b] @ values`` and of a ratio of means ``(W[b] @ num) / (W[b] @ den)``, so
all replicates of all statistics are a few matrix products (credit §7:
"seeded task-cluster bootstrap … B = 10,000").

* :func:`cluster_indices` — a ``B × K`` matrix of cluster (task) indices drawn
  with replacement by ``numpy.random.default_rng(seed)``; with ``strata`` each
  stratum keeps its own cluster count in every replicate.
* :func:`cluster_weights` — the same draw as counts / K (equal cluster weights).
* :func:`hierarchical_weights` — nested resampling (e.g. task → budget cell →
  seed): clusters, then children within each drawn cluster, and so on; each
  leaf's weight is the product of 1 / (children drawn) along its path.
* :class:`Resampling` — the one resampling configuration: how many replicates,
  the seed that draws them, and the interval method (:data:`INTERVAL_METHODS`).
* :func:`summarize` — percentile intervals: 95 % two-sided, 90 % two-sided,
  and the one-sided 95 % lower bound = 5th percentile (credit §7), or a
  small-cluster corrected interval (see :func:`summarize`); none at all below
  a declared minimum number of clusters.

Percentiles use ``numpy.quantile(..., method="linear")`` (Hyndman & Fan 1996,
type 7): the q-quantile of sorted replicates ``r_(0..B-1)`` is
``r_(j) + (h - j)(r_(j+1) - r_(j))`` with ``h = (B - 1) q`` and ``j = floor(h)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from foreseen.core.errors import UserInputError

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
Correction = Literal["none", "expand", "student_t", "student_t_expanded"]
CORRECTIONS: tuple[str, ...] = ("none", "expand", "student_t", "student_t_expanded")
#: an interval method's name (what a user writes) → the :func:`summarize` correction it uses
#: (docs/intervals.md): ``percentile`` is the plain percentile interval, the others its
#: small-cluster corrections
INTERVAL_METHODS: dict[str, Correction] = {
    "percentile": "none", "percentile_expanded": "expand", "student_t": "student_t",
    "student_t_expanded": "student_t_expanded",
}


@dataclass(frozen=True, slots=True)
class Resampling:
    """One resampling configuration: ``replicates`` bootstrap draws made by
    ``numpy.random.default_rng(seed)``, summarised by ``interval_method``.

    The three names are the ones a user writes everywhere (docs/glossary.md):
    ``replicates`` (``--replicates``; plans frozen before the rename wrote
    ``bootstrap_b``), the seed (``--seed`` for the teams commands; a credit plan,
    configuration file and ``--bootstrap-seed`` call it ``bootstrap_seed``,
    because ``seed`` there is the plan's own seed) and ``interval_method``
    (``--interval-method``; one of :data:`INTERVAL_METHODS`).
    """

    replicates: int
    seed: int
    interval_method: str = "percentile"

    def __post_init__(self) -> None:
        if isinstance(self.replicates, bool) or not isinstance(self.replicates, int) \
                or self.replicates < 1:
            raise UserInputError(f"replicates must be a whole number >= 1, got "
                                 f"{self.replicates!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise UserInputError(f"the resampling seed must be a whole number >= 0, got "
                                 f"{self.seed!r}")
        if self.interval_method not in INTERVAL_METHODS:
            raise UserInputError(f"interval_method must be one of {', '.join(INTERVAL_METHODS)},"
                                 f" got {self.interval_method!r}")

    @property
    def correction(self) -> Correction:
        """The :func:`summarize` correction of :attr:`interval_method`."""
        return INTERVAL_METHODS[self.interval_method]


#: the reason written when a summary rests on fewer clusters than the declared minimum
TOO_FEW_CLUSTERS = "too_few_clusters"


def cluster_indices(n_clusters: int, b: int, seed: int,
                    strata: Sequence[str] | None = None) -> IntArray:
    """Draw a ``b × n_clusters`` matrix of cluster indices with replacement.

    Without strata every entry is uniform on ``0..K-1``. With ``strata`` (one
    label per cluster) the columns are grouped by stratum (in sorted label
    order) and stratum ``s`` with ``n_s`` clusters fills ``n_s`` columns with
    draws from its own clusters, so every replicate keeps the per-stratum
    counts (stratified bootstrap, Davison & Hinkley 1997 §3.7).
    """
    if n_clusters < 1 or b < 1:
        raise ValueError("cluster_indices needs at least one cluster and one replicate")
    rng = np.random.default_rng(seed)
    if strata is None:
        return rng.integers(0, n_clusters, size=(b, n_clusters), dtype=np.int64)
    if len(strata) != n_clusters:
        raise ValueError("strata must give one label per cluster")
    labels = np.asarray(strata, dtype=object)
    blocks = []
    for label in sorted(set(strata)):
        members = np.flatnonzero(labels == label).astype(np.int64)
        draws = rng.integers(0, members.size, size=(b, members.size), dtype=np.int64)
        blocks.append(members[draws])
    return np.concatenate(blocks, axis=1)


def counts_from_indices(indices: IntArray, n_clusters: int) -> FloatArray:
    """Per-replicate draw counts of each cluster (``B × K``), via one ``bincount``."""
    b = indices.shape[0]
    flat = (np.arange(b, dtype=np.int64)[:, None] * n_clusters + indices).ravel()
    counts = np.bincount(flat, minlength=b * n_clusters)
    return counts.reshape(b, n_clusters).astype(np.float64)


def cluster_weights(n_clusters: int, b: int, seed: int,
                    strata: Sequence[str] | None = None) -> FloatArray:
    """Equal-cluster-weight resampling weights: draw counts / K (rows sum to 1)."""
    indices = cluster_indices(n_clusters, b, seed, strata)
    return counts_from_indices(indices, n_clusters) / float(n_clusters)


def _nested_children(paths: Sequence[tuple[str, ...]]) -> list[list[list[int]]]:
    """For each level, each node's list of child node ids (leaves = unit indices)."""
    depth = len(paths[0])
    node_of: list[dict[tuple[str, ...], int]] = [{} for _ in range(depth)]
    for path in paths:
        for level in range(depth - 1):
            key = path[: level + 1]
            node_of[level].setdefault(key, len(node_of[level]))
    children: list[list[list[int]]] = []
    for level in range(depth - 1):
        kids: list[list[int]] = [[] for _ in node_of[level]]
        if level + 1 < depth - 1:
            for key, child in node_of[level + 1].items():
                kids[node_of[level][key[: level + 1]]].append(child)
        else:
            for unit, path in enumerate(paths):
                kids[node_of[level][path[: level + 1]]].append(unit)
        children.append(kids)
    return children


def nested_mean_weights(paths: Sequence[tuple[str, ...]]) -> FloatArray:
    """Unit weights of the nested equal-weight mean (each level's nodes weighted equally)."""
    children = _nested_children(paths)
    weights = np.zeros(len(paths))
    node_weight = np.full(len(children[0]), 1.0 / len(children[0]))
    for level, kids in enumerate(children):
        nxt = np.zeros(len(paths) if level == len(children) - 1 else
                       sum(len(k) for k in kids))
        for node, members in enumerate(kids):
            nxt[members] = node_weight[node] / len(members)
        node_weight = nxt
    weights[:] = node_weight
    return weights


def hierarchical_weights(paths: Sequence[tuple[str, ...]], b: int, seed: int,
                         strata: Sequence[str] | None = None) -> FloatArray:
    """Nested resampling weights (``B × n_units``), e.g. task → budget cell → seed.

    ``paths[i]`` is unit ``i``'s label path from the top cluster down to a
    label unique to the unit (for example ``(task, cell, state_id)``). Top
    clusters are drawn as in :func:`cluster_indices` (``strata`` one label per
    top cluster, in order of first appearance); within every drawn node its
    ``m`` children are drawn ``m`` times with replacement; a leaf's weight is
    the product over its path of (times drawn) / (siblings drawn). Every draw
    in a level is one vectorised ``rng.integers`` call.
    """
    if not paths or len({len(p) for p in paths}) != 1 or len(paths[0]) < 2:
        raise ValueError("hierarchical paths must be non-empty, of equal length >= 2")
    children = _nested_children(paths)
    n_top = len(children[0])
    rng = np.random.default_rng(seed)
    top = cluster_indices(n_top, b, int(rng.integers(0, 2**63 - 1)), strata)
    node_ids: IntArray = top
    weights: FloatArray = np.full(top.shape, 1.0 / n_top)
    for kids in children:
        n_kids = np.array([len(k) for k in kids], dtype=np.int64)
        width = int(n_kids.max())
        offsets = np.concatenate([[0], np.cumsum(n_kids)[:-1]]).astype(np.int64)
        flat_kids = np.array([c for k in kids for c in k], dtype=np.int64)
        n_here = n_kids[node_ids]  # (B, D)
        uniform = rng.random(size=(*node_ids.shape, width))
        local = np.minimum((uniform * n_here[..., None]).astype(np.int64), n_here[..., None] - 1)
        valid = np.arange(width)[None, None, :] < n_here[..., None]
        child = flat_kids[offsets[node_ids][..., None] + local]
        child_weight = np.where(valid, (weights / n_here)[..., None], 0.0)
        node_ids = np.where(valid, child, 0).reshape(b, -1)
        weights = child_weight.reshape(b, -1)
    n_units = len(paths)
    flat = (np.arange(b, dtype=np.int64)[:, None] * n_units + node_ids).ravel()
    result = np.bincount(flat, weights=weights.ravel(), minlength=b * n_units)
    return np.asarray(result.reshape(b, n_units), dtype=np.float64)


ROUNDING_TOLERANCE = 1e-12


def weighted_means(weights: FloatArray, values: FloatArray) -> FloatArray:
    """Replicates ``weights @ values``, with float round-off around zero snapped to 0.

    A replicate whose exact value is 0 (e.g. a difference of equal fractions)
    can come out as ±1e-18; a gate testing "lower bound > 0" must not pass on
    that, so results within ``1e-12 × max |value|`` of zero are set to 0.
    """
    values = np.asarray(values, dtype=np.float64)
    result = np.asarray(weights @ values, dtype=np.float64)
    scale = float(np.max(np.abs(values))) if values.size else 0.0
    result[np.abs(result) <= ROUNDING_TOLERANCE * scale] = 0.0
    return result


def snapped_mean(values: FloatArray, weights: FloatArray | None = None) -> float:
    """The (weighted) mean of ``values`` with the same round-off snapping as replicates."""
    values = np.asarray(values, dtype=np.float64)
    if weights is None:
        weights = np.full(values.size, 1.0 / values.size)
    return float(weighted_means(weights[None, :], values)[0])


def quantile(replicates: FloatArray, q: float | Sequence[float]) -> FloatArray:
    """Type-7 (linear) quantiles of the replicates along axis 0."""
    return np.asarray(np.quantile(replicates, q, axis=0, method="linear"), dtype=np.float64)


@dataclass(frozen=True)
class BootstrapSummary:
    """A point estimate with its bootstrap intervals.

    ``ci95``/``ci90`` are two-sided; ``lower_bound_one_sided`` is the 5th
    percentile (a one-sided 95 % lower bound). ``None`` intervals carry a
    machine-readable ``reason``.
    """

    estimate: float | None
    ci95: tuple[float, float] | None
    ci90: tuple[float, float] | None
    lower_bound_one_sided: float | None
    n_clusters: int
    b: int
    seed: int
    method: str
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "estimate": self.estimate,
            "ci95": None if self.ci95 is None else list(self.ci95),
            "ci90": None if self.ci90 is None else list(self.ci90),
            "lower_bound_one_sided": self.lower_bound_one_sided,
            "n_clusters": self.n_clusters,
            "b": self.b,
            "seed": self.seed,
            "method": self.method,
            "reason": self.reason,
        }


def _student_t(estimate: float, reps: FloatArray, n_clusters: int, expand: bool
               ) -> tuple[tuple[float, float], tuple[float, float], float]:
    """``(ci95, ci90, lower bound)`` of ``θ̂ ± t_{K−1, q}·c·SE*``, ``c = √(K/(K−1))`` or 1."""
    from scipy import stats  # imported here: scipy.stats costs ~1 s at start-up

    se = float(np.std(reps, ddof=1))
    if expand:
        se *= math.sqrt(n_clusters / (n_clusters - 1))
    t975, t95 = (float(stats.t.ppf(p, n_clusters - 1)) for p in (0.975, 0.95))
    return ((estimate - t975 * se, estimate + t975 * se),
            (estimate - t95 * se, estimate + t95 * se), estimate - t95 * se)


def _method_name(method: str, correction: str) -> str:
    """``method`` (percentile), ``method+correction``, or the t interval's own name."""
    if correction == "none":
        return method
    if correction == "student_t_expanded":
        return method.replace("_percentile", "") + "_student_t_expanded"
    return f"{method}+{correction}"


def summarize(estimate: float, replicates: FloatArray, n_clusters: int, *, b: int, seed: int,
              correction: str = "none", method: str = "task_cluster_percentile",
              minimum_clusters: int = 1) -> BootstrapSummary:
    """Intervals of ``replicates`` around ``estimate`` (percentile, or a declared correction).

    Fewer than ``minimum_clusters`` clusters (the plan's minimum for any
    interval-based verdict): every interval is ``None`` with reason
    :data:`TOO_FEW_CLUSTERS` (not estimable), the estimate is kept.

    ``correction`` (the plan's interval method, or a declared sensitivity):

    * ``"none"`` — plain percentiles (Efron & Tibshirani 1993, §13.3);
    * ``"expand"`` — percentiles of ``θ̂ + √(K/(K−1))·(θ*_b − θ̂)``: the bootstrap
      deviations inflated by the usual finite-cluster factor;
    * ``"student_t"`` — ``θ̂ ± t_{K−1, q}·SE*`` with ``SE*`` the bootstrap
      standard deviation (ddof 1); the lower bound uses ``t_{K−1, 0.95}``;
    * ``"student_t_expanded"`` — ``θ̂ ± t_{K−1, q}·√(K/(K−1))·SE*``: for a mean
      of K cluster values this is the classical t interval ``x̄ ± t·s/√K`` (the
      bootstrap variance of a mean is ``(K−1)/K · s²/K``). It is the default
      for plans that declare ``interval_method`` (coverage 0.94–0.95 at K = 6,
      12, 24 for normal cluster effects in ``benchmarks/bootstrap_coverage.py``,
      see docs/intervals.md).

    Non-finite replicates (a zero denominator in some replicate) make every
    interval ``None`` with reason ``non_finite_replicates``.
    """
    if correction not in CORRECTIONS:
        raise ValueError(f"unknown correction {correction!r}; expected one of {CORRECTIONS}")
    name = _method_name(method, correction)
    if not math.isfinite(estimate):
        return BootstrapSummary(None, None, None, None, n_clusters, b, seed, name,
                                "non_finite_estimate")
    reps = np.asarray(replicates, dtype=np.float64)
    if reps.size == 0 or not np.all(np.isfinite(reps)):
        return BootstrapSummary(estimate, None, None, None, n_clusters, b, seed, name,
                                "non_finite_replicates")
    if n_clusters < minimum_clusters or (correction != "none" and n_clusters < 2):
        return BootstrapSummary(estimate, None, None, None, n_clusters, b, seed, name,
                                TOO_FEW_CLUSTERS)
    if correction in ("student_t", "student_t_expanded"):
        ci95, ci90, bound = _student_t(estimate, reps, n_clusters,
                                       correction == "student_t_expanded")
        return BootstrapSummary(estimate, ci95, ci90, bound, n_clusters, b, seed, name)
    if correction == "expand":
        reps = estimate + math.sqrt(n_clusters / (n_clusters - 1)) * (reps - estimate)
    q = quantile(reps, [0.025, 0.975, 0.05, 0.95])
    return BootstrapSummary(
        estimate, (float(q[0]), float(q[1])), (float(q[2]), float(q[3])), float(q[2]),
        n_clusters, b, seed, name)


def equivalent(ci90: tuple[float, float] | None, margin: float) -> bool | None:
    """Equivalence (credit §7): the 90 % interval lies inside ``[−margin, margin]``.

    ``None`` when there is no interval. Two one-sided tests at 5 % each
    (Schuirmann 1987) are this inclusion of the 90 % interval.
    """
    if ci90 is None:
        return None
    return bool(-margin <= ci90[0] and ci90[1] <= margin)


def bootstrap_mean(values: FloatArray, b: int, seed: int, *,
                   strata: Sequence[str] | None = None,
                   correction: str = "none", minimum_clusters: int = 1) -> BootstrapSummary:
    """Cluster bootstrap of the equal-weight mean of per-cluster ``values`` (1-D)."""
    values = np.asarray(values, dtype=np.float64)
    weights = cluster_weights(values.size, b, seed, strata)
    return summarize(snapped_mean(values), weighted_means(weights, values), values.size, b=b,
                     seed=seed, correction=correction, minimum_clusters=minimum_clusters)
