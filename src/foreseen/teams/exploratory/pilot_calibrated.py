"""The pilot-calibrated coverage forecast: an ensemble with intervals calibrated inside the pilot.

Exploratory (teams §7 "forecasts with intervals and a check that they
are calibrated"). Only the k × N pilot and the population size M are used.

**Point.** The mean of the ensemble members' forecasts f_i(m) (default
members: :data:`DEFAULT_MEMBERS`). At m = M the pilot is part of the
population, so C(M) ≥ S_obs/N (S_obs = tasks some pilot agent solves): the
point and both interval ends at M are raised to at least S_obs/N.

**Scale.** s(m) = the standard deviation (ddof 0) of the members' forecasts at
m (model uncertainty), at least 1/N (one task).

**Within-pilot conformal multiplier, matched to the extrapolation ratio.** The
pilot plays the population: S sub-pilots of j of its agents (every j-subset
when there are at most :data:`DEFAULT_SUBPILOTS`, else that many distinct
subsets drawn with ``numpy.random.default_rng(seed)``) forecast the pilot's own
coverage at m = k, C_pilot(k) = S_obs/N, exactly as the pilot forecasts the
population at M (the same raise to the sub-pilot's observed coverage). For a
target size m, j = round(k²/m) cut to [2, k − 1], so that the within-pilot
ratio k/j is as close as the pilot allows to the ratio m/k it must bridge. Each
sub-pilot gives a studentised score z = |point_sub(k) − S_obs/N| / s_sub(k).
The multiplier at level L is the split-conformal quantile of the S scores: the
⌈(S + 1)L⌉-th smallest, or the largest when ⌈(S + 1)L⌉ > S (Vovk et al. 2005;
Lei et al. 2018, "Distribution-free predictive inference for regression" §2).

**Interval.** point(m) ± q_L(m) · s(m), cut to [0, 1] (and raised at M as
above). The assumption that carries the within-pilot scores to the population
is that the studentised error at ratio k/j is about the one at m/k; when k is
small the ratio cannot be matched (j ≥ 2). ``teams calibrate`` measures whether
it holds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations

import numpy as np
import numpy.typing as npt

from foreseen.teams.exploratory.intervals import IntervalForecast
from foreseen.teams.forecasters.registry import get

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

NAME = "pilot_calibrated"
DEFAULT_MEMBERS = ("beta_binomial", "rasch", "incidence")
DEFAULT_SUBPILOTS = 30
DEFAULT_LEVELS = (0.5, 0.8, 0.95)


def subpilot_size(k: int, m: int) -> int:
    """j = round(k²/m) cut to [2, k − 1]: sub-pilots of j extrapolate to k by about m/k."""
    if k < 3:
        raise ValueError(f"a pilot of {k} agents has no sub-pilot (needs k ≥ 3)")
    return min(k - 1, max(2, round(k * k / m)))


def subpilot_indices(k: int, j: int, count: int, seed: int) -> IntArray:
    """S × j agent indices: every j-subset of k when at most ``count``, else ``count`` distinct."""
    if not 1 <= j < k:
        raise ValueError(f"a pilot of {k} agents has no sub-pilot of {j}")
    if math.comb(k, j) <= count:
        return np.asarray(list(combinations(range(k), j)), dtype=np.int64)
    rng = np.random.default_rng(seed)
    chosen: set[tuple[int, ...]] = set()
    while len(chosen) < count:
        chosen.add(tuple(sorted(int(i) for i in rng.choice(k, size=j, replace=False))))
    return np.asarray(sorted(chosen), dtype=np.int64)


def member_curves(pilots: BoolArray, sizes: Sequence[int],
                  members: Sequence[str] = DEFAULT_MEMBERS) -> FloatArray:
    """Each member's forecast for a P × k × N stack: members × P × sizes."""
    return np.stack([get(name).fit(pilots).curve(list(sizes)) for name in members])


def combine(curves: FloatArray, n_tasks: int) -> tuple[FloatArray, FloatArray]:
    """Mean of the members' curves (axis 0) and their spread (std, at least 1/N)."""
    point: FloatArray = curves.mean(axis=0)
    spread: FloatArray = np.maximum(curves.std(axis=0), 1.0 / n_tasks)
    return point, spread


def observed_coverage(pilots: BoolArray) -> FloatArray:
    """S_obs/N: the share of tasks some agent of each pilot solves (shape: batch)."""
    shares: FloatArray = pilots.any(axis=-2).mean(axis=-1)
    return shares


def conformal_quantile(scores: FloatArray, level: float) -> float:
    """The ⌈(S + 1)L⌉-th smallest of S scores, or the largest when that exceeds S."""
    ordered = np.sort(scores)
    rank = math.ceil((ordered.size + 1) * level - 1e-9)
    return float(ordered[min(rank, ordered.size) - 1])


def within_pilot_scores(pilot: BoolArray, j: int, members: Sequence[str] = DEFAULT_MEMBERS,
                        subpilots: int = DEFAULT_SUBPILOTS, seed: int = 0) -> FloatArray:
    """Studentised scores of sub-pilots of j agents forecasting the pilot (module docstring)."""
    k, n_tasks = pilot.shape
    stack = pilot[subpilot_indices(k, j, subpilots, seed)]
    observed = observed_coverage(stack)
    curves = np.maximum(member_curves(stack, [k], members)[:, :, 0], observed[None, :])
    target = float(observed_coverage(pilot))
    point, spread = combine(curves, n_tasks)
    scores: FloatArray = np.abs(point - target) / spread
    return scores


def pilot_calibrated_forecast(
    pilot: BoolArray,
    population_size: int,
    sizes: Sequence[int],
    *,
    levels: Sequence[float] = DEFAULT_LEVELS,
    members: Sequence[str] = DEFAULT_MEMBERS,
    subpilots: int = DEFAULT_SUBPILOTS,
    seed: int = 0,
) -> IntervalForecast:
    """The ensemble's C(m) with within-pilot conformal intervals (module docstring)."""
    k, n_tasks = pilot.shape
    if any(not 0 < m <= population_size for m in sizes) or k > population_size:
        raise ValueError(f"team sizes and the pilot must lie within the population of "
                         f"{population_size}")
    size_array = np.asarray(sizes, dtype=np.int64)
    scores = {j: within_pilot_scores(pilot, j, members, subpilots, seed)
              for j in sorted({subpilot_size(k, int(m)) for m in sizes})}
    matched = [scores[subpilot_size(k, int(m))] for m in sizes]
    point, spread = combine(member_curves(pilot[None], list(sizes), members)[:, 0], n_tasks)
    floor = np.where(size_array == population_size, float(observed_coverage(pilot)), 0.0)
    centre = np.maximum(point, floor)
    lower: dict[float, FloatArray] = {}
    upper: dict[float, FloatArray] = {}
    for level in levels:
        half = np.array([conformal_quantile(s, level) for s in matched]) * spread
        lower[level] = np.clip(np.maximum(centre - half, floor), 0.0, 1.0)
        upper[level] = np.clip(np.maximum(centre + half, floor), 0.0, 1.0)
    return IntervalForecast(size_array, centre, lower, upper)
