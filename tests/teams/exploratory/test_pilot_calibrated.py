"""The pilot-calibrated forecast: sub-pilots, the jackknife, the floor at M, and its intervals.

References used here are independent of the module: a brute-force loop over every
sub-pilot, the textbook variance of a mean, and coverage counted over seeded draws
of a matrix whose structure the two members can represent.
"""

from __future__ import annotations

import math
from itertools import combinations
from statistics import NormalDist

import numpy as np
import pytest

from foreseen.teams.curves import population_curve
from foreseen.teams.exploratory.pilot_calibrated import (
    DEFAULT_MEMBERS,
    finite_population_correction,
    jackknife_variance,
    observed_coverage,
    pilot_calibrated_forecast,
    pilot_calibrated_forecasts,
    subpilot_indices,
    subpilot_size,
    uniform_normal_coverage,
    uniform_normal_halfwidth,
)
from foreseen.teams.forecasters.registry import get

from support.teams_matrices import synthetic_matrix


def test_subpilot_size_is_half_the_pilot_and_at_least_two() -> None:
    assert subpilot_size(3) == 2  # d = 1
    assert subpilot_size(4) == 2
    assert subpilot_size(5) == 2
    assert subpilot_size(10) == 5
    assert subpilot_size(21) == 10
    with pytest.raises(ValueError, match="no sub-pilot"):
        subpilot_size(2)


def test_every_subset_when_few_else_distinct_seeded_ones() -> None:
    every = subpilot_indices(5, 2, 10, seed=0)  # C(5, 2) = 10 ≤ 10: all of them
    assert every.shape == (10, 2)
    assert len({tuple(row) for row in every.tolist()}) == 10
    drawn = subpilot_indices(10, 5, 30, seed=3)  # C(10, 5) = 252 > 30: 30 distinct
    assert drawn.shape == (30, 5)
    assert len({tuple(row) for row in drawn.tolist()}) == 30
    assert np.array_equal(drawn, subpilot_indices(10, 5, 30, seed=3))
    with pytest.raises(ValueError, match="no sub-pilot"):
        subpilot_indices(4, 4, 10, seed=0)


def test_the_jackknife_over_every_subset_is_the_variance_of_a_mean() -> None:
    # Delete-d jackknife over all C(k, j) subsets is exact for a sample mean: s²/k.
    values = np.random.default_rng(7).normal(size=7)
    for j in (2, 3, 5):
        means = np.array([values[list(s)].mean() for s in combinations(range(7), j)])
        assert jackknife_variance(means[:, None], 7, j)[0] == pytest.approx(
            values.var(ddof=1) / 7)
    assert jackknife_variance(np.full((6, 1), 0.4), 4, 2)[0] == pytest.approx(0.0, abs=1e-20)


def test_the_finite_population_correction_vanishes_when_the_pilot_is_everyone() -> None:
    assert finite_population_correction(10, 12) == pytest.approx(2 / 12)
    assert finite_population_correction(12, 12) == 0.0
    assert finite_population_correction(1, 100) == pytest.approx(0.99)
    with pytest.raises(ValueError, match="population"):
        finite_population_correction(5, 4)


def test_the_corrected_jackknife_is_unbiased_for_the_variance_of_a_pilot_mean() -> None:
    # Independent reference: a finite population of M agents' values, every pilot of k drawn
    # without replacement. The exact variance of the pilot mean over all C(M, k) pilots is
    # (1 - k/M) S²/k (Cochran 1977, Thm 2.2); the delete-d jackknife of a pilot estimates
    # s²/k, so the corrected estimate must average to that variance over the pilots.
    population, k, j = 8, 4, 2
    values = np.random.default_rng(1).normal(size=population)
    pilot_means, estimates = [], []
    for pilot in combinations(range(population), k):
        sample = values[list(pilot)]
        pilot_means.append(sample.mean())
        means = np.array([sample[list(s)].mean() for s in combinations(range(k), j)])
        estimates.append(float(jackknife_variance(means[:, None], k, j)[0]))
    exact = float(np.var(pilot_means))  # every pilot once: the variance itself
    corrected = float(np.mean(estimates)) * finite_population_correction(k, population)
    assert corrected == pytest.approx(exact, rel=1e-9)


def _quadrature_halfwidth(level: float, reach: float, sigma: float) -> float:
    """h with P(|U + N| ≤ h) = L by numerical integration over U ~ Uniform(−a, a) and a
    root finder (independent of the closed form the module uses)."""
    from scipy.integrate import quad
    from scipy.optimize import brentq

    normal = NormalDist(0.0, sigma)

    def covered(half: float) -> float:
        inside = quad(lambda u: normal.cdf(half - u) - normal.cdf(-half - u), -reach, reach)
        return float(inside[0]) / (2 * reach) - level

    return float(brentq(covered, 0.0, reach + 6 * sigma, xtol=1e-12))


def test_uniform_plus_normal_halfwidth_matches_its_limits_and_a_seeded_draw() -> None:
    reach = np.array([0.05, 0.0, 0.05, 0.0])
    sigma = np.array([0.02, 0.03, 0.0, 0.0])
    rng = np.random.default_rng(0)
    draws = 0.05 * rng.uniform(-1, 1, 400_000) + 0.02 * rng.normal(size=400_000)
    for level in (0.5, 0.8, 0.95):
        half = uniform_normal_halfwidth(level, reach, sigma)
        assert np.mean(np.abs(draws) <= half[0]) == pytest.approx(level, abs=0.003)
        assert half[0] == pytest.approx(_quadrature_halfwidth(level, 0.05, 0.02), abs=1e-9)
        assert half[1] == pytest.approx(NormalDist().inv_cdf(0.5 + level / 2) * 0.03)
        assert half[2] == pytest.approx(level * 0.05)  # uniform alone: L · a
        assert half[3] == 0.0
    # the solution sits at the boundary: just below it covers less than L, at it at least L
    found = uniform_normal_halfwidth(0.8, reach[:1], sigma[:1])
    assert uniform_normal_coverage(found, reach[:1], sigma[:1])[0] >= 0.8
    assert uniform_normal_coverage(found - 1e-9, reach[:1], sigma[:1])[0] < 0.8
    # a bounded model error widens 95 % less than a normal one of the same spread would
    ratio = uniform_normal_halfwidth(0.95, reach[2:3], sigma[2:3]) / uniform_normal_halfwidth(
        0.8, reach[2:3], sigma[2:3])
    assert ratio[0] < NormalDist().inv_cdf(0.975) / NormalDist().inv_cdf(0.9)


def _brute_force(pilot: np.ndarray, population: int, sizes: list[int], level: float
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Point and interval by a loop over every 2-subset of a 4-agent pilot."""
    observed = pilot.any(axis=0).mean()
    members = []
    for name in DEFAULT_MEMBERS:
        curve = get(name).fit(pilot).curve(sizes)
        members.append([max(c, observed) if m == population else c
                        for c, m in zip(curve, sizes, strict=True)])
    members_array = np.array(members)
    subsets = []
    for chosen in combinations(range(4), 2):
        sub = pilot[list(chosen)]
        curve = get("beta_binomial").fit(sub).curve(sizes)
        sub_observed = sub.any(axis=0).mean()
        subsets.append([max(c, sub_observed) if m == population else c
                        for c, m in zip(curve, sizes, strict=True)])
    spread = np.array(subsets).var(axis=0) * 2 / (4 - 2) * (1 - 4 / population)
    reach = members_array.max(axis=0) - members_array.min(axis=0)
    half = np.array([_quadrature_halfwidth(level, float(a), float(math.sqrt(v)))
                     for a, v in zip(reach, spread, strict=True)])
    point = members_array.mean(axis=0)
    floor = np.array([observed if m == population else 0.0 for m in sizes])
    return (point, np.clip(np.maximum(point - half, floor), 0, 1),
            np.clip(np.maximum(point + half, floor), 0, 1))


def test_interval_matches_a_brute_force_loop_over_every_subpilot() -> None:
    pilot = synthetic_matrix(4, 90, seed=5).solved
    sizes = [8, 16, 40]
    forecast = pilot_calibrated_forecast(pilot, 40, sizes, levels=(0.5, 0.8, 0.95), seed=3)
    for level in (0.5, 0.8, 0.95):
        point, low, high = _brute_force(pilot, 40, sizes, level)
        assert forecast.point == pytest.approx(point)
        assert forecast.lower[level] == pytest.approx(low)
        assert forecast.upper[level] == pytest.approx(high)
    assert np.all(forecast.upper[0.95] - forecast.lower[0.95]
                  > forecast.upper[0.5] - forecast.lower[0.5])


def test_a_stack_of_pilots_gives_each_pilot_its_own_forecast() -> None:
    solved = synthetic_matrix(30, 120, seed=2).solved
    stack = np.stack([solved[:6], solved[6:12], solved[12:18]])
    batched = pilot_calibrated_forecasts(stack, 30, [12, 30], [4, 5, 6])
    for p, forecast in enumerate(batched):
        alone = pilot_calibrated_forecast(stack[p], 30, [12, 30], seed=4 + p)
        assert forecast.point == pytest.approx(alone.point)
        for level in alone.lower:
            assert forecast.lower[level] == pytest.approx(alone.lower[level])
            assert forecast.upper[level] == pytest.approx(alone.upper[level])
    with pytest.raises(ValueError, match="one seed per pilot"):
        pilot_calibrated_forecasts(stack, 30, [12], [1, 2])


def test_a_pilot_that_covers_more_than_the_models_raises_the_forecast_at_m() -> None:
    # every task solved by exactly one of the 5 pilot agents: observed coverage 1 at M.
    pilot = np.zeros((5, 50), dtype=np.bool_)
    pilot[np.arange(50) % 5, np.arange(50)] = True
    forecast = pilot_calibrated_forecast(pilot, 30, [30], seed=0)
    assert float(observed_coverage(pilot)) == 1.0
    assert forecast.point[0] == 1.0
    assert all(forecast.lower[level][0] == 1.0 for level in forecast.lower)


def test_sizes_outside_the_population_are_refused() -> None:
    pilot = synthetic_matrix(5, 40, seed=1).solved
    with pytest.raises(ValueError, match="population"):
        pilot_calibrated_forecast(pilot, 30, [31])
    with pytest.raises(ValueError, match="population"):
        pilot_calibrated_forecast(pilot, 4, [4])
    assert math.isfinite(float(pilot_calibrated_forecast(pilot, 30, [30]).point[0]))


def _exchangeable_population(seed: int) -> np.ndarray:
    """60 exchangeable agents; task t solved with probability p_t ~ Beta(0.4, 1.2)."""
    rng = np.random.default_rng(seed)
    rates = rng.beta(0.4, 1.2, size=200)
    solved: np.ndarray = rng.random((60, 200)) < rates[None, :]
    return solved


def test_intervals_hold_the_truth_about_as_often_as_they_say_on_a_beta_binomial_world() -> None:
    # Agents are exchangeable and task difficulty is beta: the model both members extend.
    # Three seeded populations × 100 pilots of 8, at m = 16 and M = 60: the pooled share of
    # intervals holding C(m) is within 6 points of 80 % and 8 points of 50 %.
    held: dict[float, list[float]] = {0.5: [], 0.8: []}
    for world in (11, 12, 13):
        solved = _exchangeable_population(world)
        truth = population_curve(solved, [16, 60])
        rng = np.random.default_rng(world + 100)
        indices = np.stack([np.sort(rng.choice(60, 8, replace=False)) for _ in range(100)])
        forecasts = pilot_calibrated_forecasts(solved[indices], 60, [16, 60],
                                               list(range(100)), levels=(0.5, 0.8))
        for level, shares in held.items():
            low = np.stack([f.lower[level] for f in forecasts])
            high = np.stack([f.upper[level] for f in forecasts])
            shares.extend(((low <= truth) & (truth <= high)).mean(axis=0).tolist())
    assert abs(np.mean(held[0.8]) - 0.8) <= 0.06, held
    assert abs(np.mean(held[0.5]) - 0.5) <= 0.08, held
