"""Exact population curve vs brute-force enumeration; the Lite figures of spec §6."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from foreseen.teams.curves import (
    blind_spot_floor,
    coverage_grid,
    mean_pairwise_phi,
    population_curve,
)
from foreseen.teams.matrix import OutcomeMatrix


def brute_force_curve(solved: np.ndarray, m: int) -> float:
    """Mean oracle coverage over every m-subset of rows."""
    n_agents, n_tasks = solved.shape
    total = 0.0
    subsets = list(itertools.combinations(range(n_agents), m))
    for subset in subsets:
        total += solved[list(subset)].any(axis=0).sum() / n_tasks
    return total / len(subsets)


def brute_force_phi(solved: np.ndarray) -> float:
    n_agents, n_tasks = solved.shape
    values = []
    for a in range(n_agents):
        for b in range(a + 1, n_agents):
            pa = sum(solved[a]) / n_tasks
            pb = sum(solved[b]) / n_tasks
            pab = sum(x and y for x, y in zip(solved[a], solved[b], strict=True)) / n_tasks
            denominator = math.sqrt(pa * (1 - pa) * pb * (1 - pb))
            if denominator == 0:
                continue
            values.append((pab - pa * pb) / denominator)
    return sum(values) / len(values) if values else 0.0


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_curve_equals_enumeration_of_all_subsets(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_agents = int(rng.integers(4, 9))
    solved = rng.random((n_agents, 30)) < rng.uniform(0.1, 0.6, size=(n_agents, 1))
    sizes = list(range(1, n_agents + 1))
    curve = population_curve(solved, sizes)
    for m, value in zip(sizes, curve, strict=True):
        assert value == pytest.approx(brute_force_curve(solved, m), abs=1e-12)


def test_weighted_curve_equals_curve_of_duplicated_tasks() -> None:
    rng = np.random.default_rng(11)
    solved = rng.random((7, 20)) < 0.3
    weights = rng.integers(0, 4, size=20)
    duplicated = np.repeat(solved, weights, axis=1)
    sizes = [1, 2, 5, 7]
    weighted = population_curve(solved, sizes, weights)
    assert np.allclose(weighted, population_curve(duplicated, sizes), atol=1e-13)


def test_full_team_covers_everything_but_the_floor() -> None:
    rng = np.random.default_rng(5)
    solved = rng.random((9, 50)) < 0.15
    floor = blind_spot_floor(solved)
    assert floor == sum(1 for t in range(50) if not solved[:, t].any())
    assert population_curve(solved, [9])[0] == 1.0 - floor / 50


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mean_phi_equals_pairwise_loop(seed: int) -> None:
    rng = np.random.default_rng(seed)
    solved = rng.random((6, 25)) < 0.4
    solved[0] = True  # zero denominator: skipped
    solved[1] = False
    assert mean_pairwise_phi(solved) == pytest.approx(brute_force_phi(solved), abs=1e-12)


def test_mean_phi_is_zero_when_no_pair_counts() -> None:
    solved = np.zeros((3, 10), dtype=bool)
    assert mean_pairwise_phi(solved) == 0.0


def test_grid() -> None:
    assert coverage_grid(78) == [2, 5, 10, 20, 40, 78]
    assert coverage_grid(20) == [2, 5, 10, 20]
    assert coverage_grid(40) == [2, 5, 10, 20, 40]


def test_lite_deterministic_figures(lite: OutcomeMatrix) -> None:
    competent = lite.competent()
    assert lite.n_agents == 84 and lite.n_tasks == 300
    assert competent.n_agents == 78
    floor = blind_spot_floor(competent.solved)
    assert floor == 35 and round(floor / 300, 4) == 0.1167
    assert round(mean_pairwise_phi(competent.solved), 4) == 0.4966
    grid = coverage_grid(78)
    curve = [round(float(v), 4) for v in population_curve(competent.solved, grid)]
    assert curve == [0.479, 0.61, 0.6893, 0.7595, 0.823, 0.8833]
