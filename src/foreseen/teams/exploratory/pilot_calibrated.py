"""The pilot-calibrated coverage forecast: two models and a jackknife, from the pilot alone.

Exploratory (teams §7 "forecasts with intervals and a check that they
are calibrated"). Only the k × N pilot and the population size M are used.

**Members.** The beta-binomial forecast f_BB(m) (method of moments,
:mod:`foreseen.teams.forecasters.closed_form`), which lets every task be solved
by a large enough team, and the zero-inflated beta-binomial f_ZI(m) (EM,
:mod:`foreseen.teams.forecasters.item_models`), which lets a share of the tasks
be solved by no agent (a blind-spot floor). At m = M the pilot is part of the
population, so C(M) ≥ S_obs/N (S_obs = tasks some pilot agent solves): every
forecast at M (members, sub-pilots, point and both interval ends) is raised to
at least the observed coverage of the agents it was fitted on.

**Point.** c(m) = (f_BB(m) + f_ZI(m)) / 2.

**Sampling error: a delete-d jackknife over the pilot's agents.** S sub-pilots
of j = max(2, ⌊k/2⌋) of the k agents (every j-subset when there are at most
:data:`DEFAULT_SUBPILOTS`, else that many distinct subsets drawn with
``numpy.random.default_rng(seed)``) each refit the beta-binomial; with
d = k − j, v_J(m) = (j/d) · (1/S) Σ_s (f_s(m) − f̄(m))² (Shao & Wu 1989, "A
general theory for jackknife variance estimation", Ann. Statist. 17(3); Efron
& Tibshirani 1993, *An Introduction to the Bootstrap*, §11.7). The pilot is
drawn without replacement from M agents, so v_J is multiplied by the finite
population correction 1 − k/M = (M − k)/M (Cochran 1977, *Sampling Techniques*,
§2.6, Theorem 2.2: V(ȳ) = (1 − k/M) S²/k with S² on the divisor M − 1; for a
mean, v_J is s²/k, and s² is unbiased for that S²). Tasks are not resampled:
C(m) is defined over the matrix's own N tasks.

**Model error: uniform over the members' reach.** The truth is taken to lie
at a weight w of the two members, C = w·f_BB + (1 − w)·f_ZI, with w uniform on
[−1/2, 3/2] (the members and as far again beyond each): relative to c(m) an error
U ~ Uniform(−a, a), a(m) = |f_BB(m) − f_ZI(m)|. A normal error with the
disagreement as its scale widens the 95 % interval 1.5 times as much as the 80 %
one; a bounded one does not, which is what held-out pilots showed (the truth lies
between the members more often than a normal law allows).

**Interval.** c(m) ± h_L(m), h_L the central level-L half-width of U + N with
N ~ Normal(0, σ²), σ² = v_J(m) · (M − k)/M: the h solving
P(|U + N| ≤ h) = L, where P(U + N ≤ x) = (σ/2a)·[G((x + a)/σ) − G((x − a)/σ)],
G(t) = t·Φ(t) + φ(t) (the convolution of a uniform and a normal law), found by
bisection on [0, a + z_(1+L)/2·σ]; h = z·σ when a = 0 and h = L·a when σ = 0.
Cut to [0, 1] (and raised at M as above).

The members, the reach and the sampling term were chosen on held-out pilots
of a development seed and confirmed with ``teams calibrate`` on another seed
(docs/teams.md gives the measured coverage and where it misses).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from foreseen.teams.exploratory.intervals import IntervalForecast
from foreseen.teams.forecasters.registry import get

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

NAME = "pilot_calibrated"
DEFAULT_MEMBERS = ("beta_binomial", "zero_inflated_beta_binomial")
#: the member refitted on every sub-pilot (cheap and closed-form) for the jackknife
JACKKNIFE_MEMBER = "beta_binomial"
DEFAULT_SUBPILOTS = 20
DEFAULT_LEVELS = (0.5, 0.8, 0.95)
#: the model error is uniform on ± this multiple of the members' disagreement
MODEL_ERROR_REACH = 1.0
#: bisection steps for the uniform-plus-normal half-width (2^-60 of the bracket)
BISECTION_STEPS = 60


def subpilot_size(k: int) -> int:
    """j = max(2, ⌊k/2⌋) agents per jackknife sub-pilot (needs k ≥ 3, so that d = k − j ≥ 1)."""
    if k < 3:
        raise ValueError(f"a pilot of {k} agents has no sub-pilot (needs k ≥ 3)")
    return max(2, k // 2)


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


def observed_coverage(pilots: BoolArray) -> FloatArray:
    """S_obs/N: the share of tasks some agent of each pilot solves (shape: batch)."""
    shares: FloatArray = pilots.any(axis=-2).mean(axis=-1)
    return shares


def raised_curves(pilots: BoolArray, name: str, sizes: IntArray,
                  population_size: int) -> FloatArray:
    """A member's C(m) for a batch of pilots (batch × sizes), at M raised to S_obs/N."""
    curves = np.asarray(get(name).fit(pilots).curve(sizes), dtype=np.float64)
    floor = np.where(sizes == population_size, observed_coverage(pilots)[..., None], 0.0)
    raised: FloatArray = np.maximum(curves, floor)
    return raised


def jackknife_variance(subpilot_curves: FloatArray, k: int, j: int) -> FloatArray:
    """Delete-d jackknife: (j/d) · mean over sub-pilots (axis −2) of (f_s − f̄)², d = k − j."""
    spread: FloatArray = subpilot_curves.var(axis=-2)
    variance: FloatArray = (j / (k - j)) * spread
    return variance


def finite_population_correction(k: int, population_size: int) -> float:
    """1 − k/M = (M − k)/M: the share of a jackknife variance (an estimate of S²/k) left
    when the k pilot agents are drawn without replacement from the M (Cochran §2.6)."""
    if not 1 <= k <= population_size:
        raise ValueError(f"a pilot of {k} agents must lie within the population of "
                         f"{population_size}")
    return (population_size - k) / population_size


def normal_quantile(level: float) -> float:
    """z_(1+L)/2, the two-sided standard normal quantile of a central level-L interval."""
    return NormalDist().inv_cdf(0.5 + level / 2.0)


def _integrated_normal_cdf(t: FloatArray) -> FloatArray:
    """G(t) = t·Φ(t) + φ(t), the antiderivative of the standard normal CDF Φ."""
    from scipy.special import ndtr

    density = np.exp(-0.5 * t * t) / math.sqrt(2.0 * math.pi)
    value: FloatArray = t * ndtr(t) + density
    return value


def uniform_normal_coverage(half: FloatArray, reach: FloatArray,
                            sigma: FloatArray) -> FloatArray:
    """P(|U + N| ≤ h) for U ~ Uniform(−a, a) and N ~ Normal(0, σ²), a > 0 and σ > 0:
    F(h) − F(−h) with F(x) = (σ/2a)·[G((x + a)/σ) − G((x − a)/σ)] (module docstring)."""
    def cdf(x: FloatArray) -> FloatArray:
        upper = _integrated_normal_cdf((x + reach) / sigma)
        lower = _integrated_normal_cdf((x - reach) / sigma)
        share: FloatArray = sigma / (2.0 * reach) * (upper - lower)
        return share
    covered: FloatArray = cdf(half) - cdf(-half)
    return covered


def uniform_normal_halfwidth(level: float, reach: FloatArray, sigma: FloatArray) -> FloatArray:
    """The h with P(|U + N| ≤ h) = L (U ~ Uniform(−a, a), N ~ Normal(0, σ²)), elementwise:
    z_(1+L)/2·σ when a = 0, L·a when σ = 0, else bisection on [0, a + z·σ], an interval
    whose upper end covers at least L because |U| ≤ a."""
    reach = np.asarray(reach, dtype=np.float64)
    sigma = np.asarray(sigma, dtype=np.float64)
    z = normal_quantile(level)
    both = (reach > 0) & (sigma > 0)
    safe_reach = np.where(both, reach, 1.0)
    safe_sigma = np.where(both, sigma, 1.0)
    low = np.zeros_like(safe_reach)
    high = safe_reach + z * safe_sigma
    for _ in range(BISECTION_STEPS):
        middle = (low + high) / 2.0
        enough = uniform_normal_coverage(middle, safe_reach, safe_sigma) >= level
        high = np.where(enough, middle, high)
        low = np.where(enough, low, middle)
    half: FloatArray = np.where(both, high, np.where(reach > 0, level * reach, z * sigma))
    return half


def pilot_calibrated_forecasts(
    pilots: BoolArray,
    population_size: int,
    sizes: Sequence[int],
    seeds: Sequence[int],
    *,
    levels: Sequence[float] = DEFAULT_LEVELS,
    subpilots: int = DEFAULT_SUBPILOTS,
) -> list[IntervalForecast]:
    """The forecast (module docstring) of each pilot of a P × k × N stack, pilot p seeded by
    ``seeds[p]``; the members and sub-pilots of all pilots are fitted as one batch."""
    count, k, _ = pilots.shape
    if any(not 0 < m <= population_size for m in sizes) or k > population_size:
        raise ValueError(f"team sizes and the pilot must lie within the population of "
                         f"{population_size}")
    if len(seeds) != count:
        raise ValueError("one seed per pilot is needed")
    size_array = np.asarray(sizes, dtype=np.int64)
    members = np.stack([raised_curves(pilots, name, size_array, population_size)
                        for name in DEFAULT_MEMBERS])  # members × P × sizes
    j = subpilot_size(k)
    chosen = np.stack([subpilot_indices(k, j, subpilots, seed) for seed in seeds])  # P × S × j
    stack = pilots[np.arange(count)[:, None, None], chosen]  # P × S × j × N
    jackknife = raised_curves(stack, JACKKNIFE_MEMBER, size_array, population_size)
    sigma = np.sqrt(jackknife_variance(jackknife, k, j)
                    * finite_population_correction(k, population_size))
    reach = MODEL_ERROR_REACH * (members.max(axis=0) - members.min(axis=0))
    halves = {level: uniform_normal_halfwidth(level, reach, sigma) for level in levels}
    centre = members.mean(axis=0)
    floor = np.where(size_array == population_size, observed_coverage(pilots)[:, None], 0.0)
    forecasts = []
    for p in range(count):
        lower: dict[float, FloatArray] = {}
        upper: dict[float, FloatArray] = {}
        for level in levels:
            half = halves[level][p]
            lower[level] = np.clip(np.maximum(centre[p] - half, floor[p]), 0.0, 1.0)
            upper[level] = np.clip(np.maximum(centre[p] + half, floor[p]), 0.0, 1.0)
        forecasts.append(IntervalForecast(size_array, centre[p], lower, upper))
    return forecasts


def pilot_calibrated_forecast(
    pilot: BoolArray,
    population_size: int,
    sizes: Sequence[int],
    *,
    levels: Sequence[float] = DEFAULT_LEVELS,
    subpilots: int = DEFAULT_SUBPILOTS,
    seed: int = 0,
) -> IntervalForecast:
    """The forecast of one k × N pilot (module docstring)."""
    return pilot_calibrated_forecasts(pilot[None], population_size, sizes, [seed],
                                      levels=levels, subpilots=subpilots)[0]
