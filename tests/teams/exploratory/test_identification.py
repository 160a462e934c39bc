"""The identified range of C(m): checked against vertex enumeration, a hand-worked pair of
populations, and the cases where the pilots pin C(m) down (m ≤ k, k = M).

References here are independent of the module: binomial coefficients from ``math.comb``,
the population curve of teams §3, and the optimum of each linear programme found by
trying every basic solution (an optimum of a bounded linear programme lies at a vertex).
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest

from foreseen.teams.curves import population_curve
from foreseen.teams.exploratory.identification import (
    SOLVER_TOLERANCE,
    IdentifiedRange,
    checked_range,
    hypergeometric_kernel,
    identified_ranges,
    population_identified_ranges,
    solver_count_shares,
)


def _kernel_by_hand(population: int, k: int) -> np.ndarray:
    return np.array([[math.comb(c, j) * math.comb(population - c, k - j)
                      / math.comb(population, k) for c in range(population + 1)]
                     for j in range(k + 1)])


def _coverage_by_hand(population: int, m: int) -> np.ndarray:
    return np.array([1 - math.comb(population - c, m) / math.comb(population, m)
                     for c in range(population + 1)])


def _range_by_vertices(shares: np.ndarray, k: int, m: int) -> tuple[float, float]:
    """Smallest and largest C(m) over the vertices {G ≥ 0 : H G = H shares}."""
    population = shares.shape[0] - 1
    kernel = _kernel_by_hand(population, k)
    expected = kernel @ shares
    weights = _coverage_by_hand(population, m)
    values = []
    for support in combinations(range(population + 1), k + 1):
        columns = kernel[:, support]
        if abs(np.linalg.det(columns)) < 1e-12:
            continue
        solution = np.linalg.solve(columns, expected)
        if solution.min() < -1e-12:
            continue
        values.append(float(weights[list(support)] @ solution))
    return min(values), max(values)


def test_the_kernel_is_the_hypergeometric_law() -> None:
    kernel = hypergeometric_kernel(7, 3)
    assert kernel == pytest.approx(_kernel_by_hand(7, 3), abs=1e-12)
    assert kernel.sum(axis=0) == pytest.approx(np.ones(8))
    with pytest.raises(ValueError, match="population"):
        hypergeometric_kernel(4, 5)
    with pytest.raises(ValueError, match="population"):
        hypergeometric_kernel(4, 0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_range_is_the_optimum_over_every_vertex(seed: int) -> None:
    rng = np.random.default_rng(seed)
    population, k = 7, 2
    shares = rng.dirichlet(np.ones(population + 1))
    sizes = [1, 2, 4, 7]
    ranges = identified_ranges(shares, k, sizes)
    for m in sizes:
        lower, upper = _range_by_vertices(shares, k, m)
        assert ranges[m].lower == pytest.approx(lower, abs=1e-8)
        assert ranges[m].upper == pytest.approx(upper, abs=1e-8)
        truth = float(shares @ _coverage_by_hand(population, m))  # to rounding (1e-15)
        assert ranges[m].lower - 1e-12 <= truth <= ranges[m].upper + 1e-12
        if m > k:  # beyond k the pilots leave the answer open; at or below it they do not
            assert ranges[m].width > 0.01
        else:
            assert upper - lower < 1e-9


def test_two_populations_with_the_same_expected_pilot_counts() -> None:
    # M = 4, pilots of one agent: half the tasks solved by nobody and half by two agents,
    # or every task solved by exactly one agent. A one-agent pilot solves a quarter of the
    # tasks on average in both, yet the whole population covers half the tasks in the first
    # and all of them in the second. Over every law with that expected count the share
    # solved by someone runs from 1/4 (a quarter of the tasks solved by all four agents) to 1.
    first = np.array([0.5, 0.0, 0.5, 0.0, 0.0])
    second = np.array([0.0, 1.0, 0.0, 0.0, 0.0])
    kernel = hypergeometric_kernel(4, 1)
    assert kernel @ first == pytest.approx(kernel @ second)
    for shares in (first, second):
        (bounds,) = identified_ranges(shares, 1, [4]).values()
        assert bounds.lower == pytest.approx(0.25, abs=1e-9)
        assert bounds.upper == pytest.approx(1.0, abs=1e-9)
        assert bounds.width == pytest.approx(0.75, abs=1e-9)


def test_at_or_below_the_pilot_size_the_pilots_pin_the_curve_down() -> None:
    # Σ_j H(j; M, c, k)·[1 − C(k − j, m)/C(k, m)] = f_m(c) for m ≤ k: the identity that
    # makes the pilot's own rarefaction unbiased, with every coefficient from math.comb.
    population, k = 9, 4
    kernel = _kernel_by_hand(population, k)
    for m in range(1, k + 1):
        rarefied = np.array([1 - math.comb(k - j, m) / math.comb(k, m) for j in range(k + 1)])
        assert rarefied @ kernel == pytest.approx(_coverage_by_hand(population, m), abs=1e-12)
    rng = np.random.default_rng(5)
    solved = rng.random((population, 40)) < rng.uniform(0.05, 0.6, size=40)
    sizes = [1, 2, k]
    ranges = population_identified_ranges(solved, k, sizes)
    truth = population_curve(solved, sizes)
    for m, value in zip(sizes, truth, strict=True):
        assert ranges[m].lower == pytest.approx(value, abs=1e-7)
        assert ranges[m].upper == pytest.approx(value, abs=1e-7)
    assert ranges[k].width < 1e-7


def test_a_pilot_of_everyone_identifies_every_size() -> None:
    rng = np.random.default_rng(3)
    solved = rng.random((6, 30)) < 0.3
    ranges = population_identified_ranges(solved, 6, [2, 4, 6])
    truth = population_curve(solved, [2, 4, 6])
    for m, value in zip((2, 4, 6), truth, strict=True):
        assert ranges[m].width < 1e-7
        assert ranges[m].lower == pytest.approx(value, abs=1e-7)


def test_shares_are_the_solver_count_law_and_ends_stay_in_the_unit_interval() -> None:
    solved = np.array([[1, 0, 0, 1], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=bool)
    assert solver_count_shares(solved) == pytest.approx([0.25, 0.5, 0.0, 0.25])
    (bounds,) = population_identified_ranges(solved, 1, [3]).values()
    assert 0.0 <= bounds.lower <= bounds.upper <= 1.0
    assert IdentifiedRange(0.2, 0.5).width == pytest.approx(0.3)


def test_an_optimum_that_misses_the_populations_own_value_is_a_fault() -> None:
    # the population's own law is feasible, so each end must lie on its side of the truth;
    # within the solver's tolerance an end is moved onto it, beyond it the range is refused
    truth = 0.6
    assert checked_range(truth + SOLVER_TOLERANCE, 0.9, truth, 10).lower == truth
    assert checked_range(0.2, truth - SOLVER_TOLERANCE, truth, 10).upper == truth
    with pytest.raises(RuntimeError, match="misses the population's own C"):
        checked_range(truth + 2 * SOLVER_TOLERANCE, 0.9, truth, 10)
    with pytest.raises(RuntimeError, match="misses the population's own C"):
        checked_range(0.2, truth - 2 * SOLVER_TOLERANCE, truth, 10)
    assert checked_range(-1e-10, 1.0 + 1e-10, 0.5, 10) == IdentifiedRange(0.0, 1.0)


def test_a_programme_without_a_solution_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import scipy.optimize

    class Failed:
        status = 2
        message = "infeasible"
        fun = 0.0

    monkeypatch.setattr(scipy.optimize, "linprog", lambda *args, **kwargs: Failed())
    with pytest.raises(RuntimeError, match="no solution"):
        identified_ranges(np.array([0.5, 0.5, 0.0]), 1, [2])
