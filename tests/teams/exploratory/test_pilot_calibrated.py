"""The pilot-calibrated forecast: conformal rank, sub-pilots, the floor at M, and its intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from foreseen.teams.exploratory.pilot_calibrated import (
    combine,
    conformal_quantile,
    observed_coverage,
    pilot_calibrated_forecast,
    subpilot_indices,
    subpilot_size,
    within_pilot_scores,
)
from foreseen.teams.forecasters.registry import get

from support.teams_matrices import synthetic_matrix


def test_conformal_quantile_takes_the_rank_ceil_s_plus_1_times_level() -> None:
    scores = np.arange(1.0, 11.0)  # S = 10
    assert conformal_quantile(scores, 0.5) == 6.0  # ⌈11 · 0.5⌉ = 6
    assert conformal_quantile(scores, 0.8) == 9.0  # ⌈8.8⌉ = 9
    assert conformal_quantile(scores, 9 / 11) == 9.0  # ⌈9⌉ = 9 exactly, not 10
    assert conformal_quantile(scores, 0.95) == 10.0  # ⌈10.45⌉ = 11 > S: the largest


def test_subpilot_size_matches_the_ratio_within_two_and_k_minus_1() -> None:
    assert subpilot_size(20, 40) == 10  # k/j = 2 = m/k
    assert subpilot_size(20, 80) == 5  # 4
    assert subpilot_size(20, 78) == 5  # 400/78 = 5.13
    assert subpilot_size(10, 129) == 2  # 0.78 → at least 2
    assert subpilot_size(5, 6) == 4  # 25/6 = 4.17 → 4 = k − 1
    assert subpilot_size(5, 5) == 4  # 5 → at most k − 1
    assert subpilot_size(3, 100) == 2
    with pytest.raises(ValueError, match="no sub-pilot"):
        subpilot_size(2, 10)


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


def test_combine_is_the_mean_and_the_spread_has_a_one_task_floor() -> None:
    curves = np.array([[0.2, 0.5], [0.4, 0.5]])
    point, spread = combine(curves, n_tasks=100)
    assert point.tolist() == pytest.approx([0.3, 0.5])
    assert spread.tolist() == pytest.approx([0.1, 0.01])  # members agree → 1/N


def test_scores_compare_the_subpilot_forecast_with_the_pilot_coverage() -> None:
    pilot = synthetic_matrix(6, 80, seed=2).solved
    scores = within_pilot_scores(pilot, 3, subpilots=100, seed=0)
    subsets = subpilot_indices(6, 3, 100, seed=0)
    stack = pilot[subsets]
    curves = np.stack([get(n).fit(stack).curve([6])[:, 0]
                       for n in ("beta_binomial", "rasch", "incidence")])
    curves = np.maximum(curves, observed_coverage(stack)[None, :])
    expected = np.abs(curves.mean(axis=0) - observed_coverage(pilot)) / np.maximum(
        curves.std(axis=0), 1 / 80)
    assert scores == pytest.approx(expected)


def test_interval_is_point_plus_minus_quantile_times_spread_and_at_m_holds_the_pilot() -> None:
    solved = synthetic_matrix(40, 150, seed=5).solved
    pilot = solved[:5]
    forecast = pilot_calibrated_forecast(pilot, 40, [6, 40], levels=(0.5, 0.8, 0.95), seed=1)
    scores = {j: within_pilot_scores(pilot, j, seed=1) for j in (2, 4)}
    assert [subpilot_size(5, m) for m in (6, 40)] == [4, 2]
    assert not np.allclose(np.sort(scores[2])[-1], np.sort(scores[4])[-1])
    curves = np.stack([get(n).fit(pilot).curve([6, 40])
                       for n in ("beta_binomial", "rasch", "incidence")])
    point, spread = combine(curves, 150)
    observed = float(observed_coverage(pilot))
    assert forecast.point[0] == pytest.approx(point[0])
    assert forecast.point[1] == pytest.approx(max(point[1], observed))
    for level in (0.5, 0.8, 0.95):
        half = conformal_quantile(scores[4], level) * spread[0]  # m = 6: sub-pilots of 4
        assert forecast.lower[level][0] == pytest.approx(max(0.0, point[0] - half))
        assert forecast.upper[level][0] == pytest.approx(min(1.0, point[0] + half))
        half_m = conformal_quantile(scores[2], level) * spread[1]  # m = M = 40: of 2
        assert forecast.upper[level][1] == pytest.approx(
            min(1.0, max(point[1], observed) + half_m))
        assert forecast.lower[level][1] >= observed  # the pilot is part of the population
    assert np.all(forecast.upper[0.95] - forecast.lower[0.95]
                  >= forecast.upper[0.5] - forecast.lower[0.5])


def test_a_pilot_that_covers_more_than_the_ensemble_raises_the_forecast_at_m() -> None:
    # every task solved by exactly one of the 5 pilot agents: observed coverage 1 at M.
    pilot = np.zeros((5, 50), dtype=np.bool_)
    pilot[np.arange(50) % 5, np.arange(50)] = True
    forecast = pilot_calibrated_forecast(pilot, 30, [30], seed=0)
    assert forecast.point[0] == 1.0
    assert all(forecast.lower[level][0] == 1.0 for level in forecast.lower)


def test_sizes_outside_the_population_are_refused() -> None:
    pilot = synthetic_matrix(5, 40, seed=1).solved
    with pytest.raises(ValueError, match="population"):
        pilot_calibrated_forecast(pilot, 30, [31])
    with pytest.raises(ValueError, match="population"):
        pilot_calibrated_forecast(pilot, 4, [4])
    assert math.isfinite(float(pilot_calibrated_forecast(pilot, 30, [30]).point[0]))
