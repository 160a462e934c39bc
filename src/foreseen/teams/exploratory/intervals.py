"""Bootstrap intervals for any coverage forecaster's C(m) and floor (exploratory).

One replicate = the pilot's tasks resampled with replacement (N draws) × the
pilot's agents resampled with replacement (k draws); with ``agent_clusters``
(e.g. one cluster per model), whole clusters are drawn with replacement and
their agents appended until k agents are reached (the last cluster is cut at
k), so agents that share a model stay together. Every replicate is refitted by
the same forecaster; the interval at level L is the percentile interval of the
R replicate forecasts, the sorted values at ⌊αR⌋ and min(R − 1, ⌊(1 − α)R⌋),
α = (1 − L)/2 (the rule of :func:`foreseen.core.stats.percentile_interval`).
The point forecast is the forecaster fitted on the pilot itself.

The floor forecast (share of tasks nobody in a population of M solves) is
1 − C(M): its interval is [1 − upper, 1 − lower] at the population size.

Forecasters whose hyperparameters are tuned on the pilot (tag ``tuned_on_pilot``,
e.g. ``irt_2pl``) are tuned once on the pilot (:meth:`Forecaster.tuned`) and kept
fixed across replicates, so the interval does not
include the variability of the tuning. Replicates come from
``numpy.random.default_rng(seed)``: the same seed gives identical intervals.

Memory: the replicate pilots are never stacked for a closed-form forecaster.
Its replicate statistics come from the draws directly: with m_r[a] the number
of times agent a was drawn in replicate r, the solver count of task t in the
replicate is c_r(t) = Σ_a m_r[a] y_at (one R × k by k × N product, exact in
float32 while k < 2^24), and the replicate histogram counts c_r over the
drawn tasks. φ̄ (only for forecasters tagged ``uses_phi``) is computed from
replicate pilots built in chunks of at most 256 MB (one chunk for small
pilots; numpy may sum a chunk's pairs in another order than one big batch's,
so chunked φ̄ agrees with the unchunked value to rounding). Only the other forecasters
(fitted by iteration on the pilots themselves) receive the R × k × N stack.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from foreseen.teams.forecasters.base import ClosedFormForecaster, PilotStats
from foreseen.teams.forecasters.registry import get

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

DEFAULT_LEVELS = (0.8, 0.95)
DEFAULT_REPLICATES = 200


@dataclass(frozen=True)
class IntervalForecast:
    """Point forecast and percentile intervals of C(m) per team size, by level."""

    sizes: IntArray
    point: FloatArray
    lower: dict[float, FloatArray]
    upper: dict[float, FloatArray]

    def floor(self, population_size: int) -> tuple[float, dict[float, tuple[float, float]]]:
        """Floor forecast 1 − C(M) and its intervals [1 − upper, 1 − lower] by level."""
        where = np.flatnonzero(self.sizes == population_size)
        if where.size == 0:
            raise ValueError(f"team size {population_size} is not among the forecast sizes")
        g = int(where[0])
        intervals = {
            level: (1.0 - float(self.upper[level][g]), 1.0 - float(self.lower[level][g]))
            for level in self.lower
        }
        return 1.0 - float(self.point[g]), intervals


def _check_levels(levels: Sequence[float]) -> tuple[float, ...]:
    checked = tuple(float(level) for level in levels)
    if not checked or any(not 0.0 < level < 1.0 for level in checked):
        raise ValueError("interval levels must lie strictly between 0 and 1")
    return checked


def resample_agents(
    rng: np.random.Generator, k: int, replicates: int, clusters: IntArray | None
) -> IntArray:
    """Agent indices (replicates × k), drawn with replacement, or by whole clusters."""
    if clusters is None:
        drawn: IntArray = rng.integers(0, k, size=(replicates, k), dtype=np.int64)
        return drawn
    labels = np.asarray(clusters, dtype=np.int64)
    if labels.shape != (k,):
        raise ValueError(f"agent_clusters needs one label per pilot agent ({k})")
    distinct = np.unique(labels)
    members = [np.flatnonzero(labels == label) for label in distinct]
    rows = np.empty((replicates, k), dtype=np.int64)
    for r in range(replicates):
        chosen: list[int] = []
        while len(chosen) < k:
            chosen.extend(members[int(rng.integers(0, distinct.size))].tolist())
        rows[r] = chosen[:k]
    return rows


#: replicate pilots built at once when φ̄ needs them (bytes of the boolean chunk)
CHUNK_BYTES = 256 * 2**20


@dataclass(frozen=True)
class ReplicateDraws:
    """The draws of R replicates: task indices (R × N) and agent indices (R × k)."""

    tasks: IntArray
    agents: IntArray

    @classmethod
    def draw(cls, k: int, n: int, replicates: int, rng: np.random.Generator,
             agent_clusters: IntArray | None = None) -> ReplicateDraws:
        """Tasks first, then agents, from ``rng`` (the order every interval depends on)."""
        tasks = rng.integers(0, n, size=(replicates, n), dtype=np.int64)
        agents = resample_agents(rng, k, replicates, agent_clusters)
        return cls(tasks, agents)

    def pilots(self, pilot: BoolArray, rows: slice = slice(None)) -> BoolArray:
        """The replicate pilots of ``rows`` (rows × k × N)."""
        stack: BoolArray = pilot[self.agents[rows, :, None], self.tasks[rows, None, :]]
        return stack

    def histograms(self, pilot: BoolArray) -> FloatArray:
        """Replicate histograms of solver counts (R × (k + 1)) without the R × k × N stack."""
        k = pilot.shape[0]
        replicates = self.agents.shape[0]
        multiplicity = np.zeros((replicates, k), dtype=np.float32)
        np.add.at(multiplicity, (np.arange(replicates)[:, None], self.agents), 1.0)
        counts = (multiplicity @ pilot.astype(np.float32)).astype(np.int64)  # R × N, exact
        drawn = np.take_along_axis(counts, self.tasks, axis=1)
        offsets = (np.arange(replicates, dtype=np.int64) * (k + 1))[:, None]
        histogram = np.bincount((drawn + offsets).ravel(), minlength=replicates * (k + 1))
        result: FloatArray = histogram.astype(np.float64).reshape(replicates, k + 1)
        return result

    def stats(self, pilot: BoolArray, *, with_phi: bool) -> PilotStats:
        """Replicate :class:`PilotStats` (φ̄ from bounded chunks of replicate pilots)."""
        k = pilot.shape[0]
        histogram = self.histograms(pilot)
        if not with_phi:
            return PilotStats(k=k, histogram=histogram, mean_phi=None)
        replicates = self.agents.shape[0]
        per_replicate = max(1, k * pilot.shape[1])
        step = max(1, CHUNK_BYTES // per_replicate)
        phis = [PilotStats.from_pilot(self.pilots(pilot, slice(start, start + step))).phi()
                for start in range(0, replicates, step)]
        return PilotStats(k=k, histogram=histogram, mean_phi=np.concatenate(phis))


def replicate_pilots(
    pilot: BoolArray,
    replicates: int,
    rng: np.random.Generator,
    agent_clusters: IntArray | None = None,
) -> BoolArray:
    """R bootstrap pilots (R × k × N): tasks × agents resampled (module docstring)."""
    k, n = pilot.shape
    return ReplicateDraws.draw(k, n, replicates, rng, agent_clusters).pilots(pilot)


def percentile_bounds(values: FloatArray, level: float) -> tuple[FloatArray, FloatArray]:
    """Sorted replicate values (axis 0) at ⌊αR⌋ and min(R − 1, ⌊(1 − α)R⌋)."""
    ordered = np.sort(values, axis=0)
    count = ordered.shape[0]
    alpha = (1.0 - level) / 2.0
    low_index = math.floor(alpha * count + 1e-9)
    high_index = min(count - 1, math.floor((1.0 - alpha) * count + 1e-9))
    return ordered[low_index], ordered[high_index]


def batched_intervals(
    pilots: npt.NDArray[np.bool_],
    forecasters: Sequence[str],
    sizes: Sequence[int],
    seeds: Sequence[int],
    *,
    levels: Sequence[float] = DEFAULT_LEVELS,
    replicates: int = DEFAULT_REPLICATES,
    agent_clusters: IntArray | None = None,
) -> dict[str, list[IntervalForecast]]:
    """Intervals for a P × k × N stack of pilots, pilot p bootstrapped with ``seeds[p]``.

    Pilot p's result equals :func:`forecast_with_intervals` on that pilot with
    seed ``seeds[p]``; the replicates of all pilots are fitted as one batch.
    """
    checked = _check_levels(levels)
    outcomes = np.asarray(pilots)
    if outcomes.dtype != np.bool_ or outcomes.ndim != 3 or 0 in outcomes.shape:
        raise ValueError("pilots must be a non-empty boolean P × k × N array")
    if replicates < 1:
        raise ValueError("replicates must be at least 1")
    if len(seeds) != outcomes.shape[0]:
        raise ValueError("one seed per pilot is needed")
    size_array = np.asarray(sizes, dtype=np.int64)
    models = {name: get(name) for name in forecasters}
    k, n = outcomes.shape[1:]
    draws = [ReplicateDraws.draw(k, n, replicates, np.random.default_rng(seed), agent_clusters)
             for seed in seeds]
    stack: BoolArray | None = None
    result: dict[str, list[IntervalForecast]] = {}
    for name, model in models.items():
        fitted_model = model.tuned(outcomes)
        point = np.asarray(fitted_model.fit(outcomes).curve(size_array), dtype=np.float64)
        if isinstance(fitted_model, ClosedFormForecaster):
            per_pilot = [d.stats(pilot, with_phi=fitted_model.uses_phi)
                         for d, pilot in zip(draws, outcomes, strict=True)]
            replicate_stats = PilotStats(
                k=k, histogram=np.stack([s.histogram for s in per_pilot]),
                mean_phi=None if not fitted_model.uses_phi
                else np.stack([s.phi() for s in per_pilot]))
            fitted = fitted_model.fit_stats(replicate_stats)
        else:
            if stack is None:
                stack = np.stack([d.pilots(pilot) for d, pilot in zip(draws, outcomes,
                                                                      strict=True)])
            fitted = fitted_model.fit(stack)  # P × R × k × N
        curves = np.asarray(fitted.curve(size_array), dtype=np.float64)
        forecasts = []
        for p in range(outcomes.shape[0]):
            lower: dict[float, FloatArray] = {}
            upper: dict[float, FloatArray] = {}
            for level in checked:
                lower[level], upper[level] = percentile_bounds(curves[p], level)
            forecasts.append(IntervalForecast(size_array, point[p], lower, upper))
        result[name] = forecasts
    return result


def intervals_for_forecasters(
    pilot: npt.NDArray[np.bool_],
    forecasters: Sequence[str],
    sizes: Sequence[int],
    *,
    levels: Sequence[float] = DEFAULT_LEVELS,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = 0,
    agent_clusters: IntArray | None = None,
) -> dict[str, IntervalForecast]:
    """:func:`forecast_with_intervals` for several forecasters on the same replicates."""
    outcomes = np.asarray(pilot)
    if outcomes.dtype != np.bool_ or outcomes.ndim != 2 or 0 in outcomes.shape:
        raise ValueError("a pilot must be a non-empty boolean k × N array")
    batched = batched_intervals(
        outcomes[None], forecasters, sizes, [seed], levels=levels, replicates=replicates,
        agent_clusters=agent_clusters,
    )
    return {name: forecasts[0] for name, forecasts in batched.items()}


def forecast_with_intervals(
    pilot: npt.NDArray[np.bool_],
    forecaster: str,
    sizes: Sequence[int],
    *,
    levels: Sequence[float] = DEFAULT_LEVELS,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = 0,
    agent_clusters: IntArray | None = None,
) -> IntervalForecast:
    """C(m) forecast of ``forecaster`` on a k × N pilot with seeded bootstrap intervals."""
    return intervals_for_forecasters(
        pilot, [forecaster], sizes, levels=levels, replicates=replicates, seed=seed,
        agent_clusters=agent_clusters,
    )[forecaster]
