"""Forecasters against hand-derived values, direct formulas and independent optimisers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import beta as beta_function

from foreseen.teams.forecasters.base import PilotStats
from foreseen.teams.forecasters.closed_form import beta_binomial_moments
from foreseen.teams.forecasters.rasch import Rasch, rasch_sweeps
from foreseen.teams.forecasters.registry import FORECASTERS, closed_forms, names


def _pilot(columns: list[list[int]]) -> np.ndarray:
    """k × N pilot from a list of task columns."""
    return np.array(columns, dtype=bool).T


# k = 3, N = 10: solver counts c_t = 0,0,0,1,1,1,1,2,2,3 → Q1 = 4, Q2 = 2, Q3 = 1, S_obs = 7
HAND_PILOT = _pilot(
    [[0, 0, 0], [0, 0, 0], [0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0],
     [1, 1, 0], [0, 1, 1], [1, 1, 1]]
)


def test_pilot_stats_by_hand() -> None:
    stats = PilotStats.from_pilot(HAND_PILOT)
    assert stats.k == 3
    assert stats.histogram.tolist() == [3.0, 4.0, 2.0, 1.0]
    assert stats.pooled_rate == pytest.approx(11 / 30)


def test_incidence_by_hand() -> None:
    curve = FORECASTERS["incidence"].fit(HAND_PILOT).curve([1, 2, 3, 5])
    q0 = (2 / 3) * 4**2 / (2 * 2)  # 8/3
    extrapolated = (7 + q0 * (1 - (1 - 4 / (3 * q0 + 4)) ** 2)) / 10  # (7 + 40/27)/10
    assert curve == pytest.approx([11 / 30, (17 / 3) / 10, 0.7, extrapolated], abs=1e-14)
    assert extrapolated == pytest.approx((7 + 40 / 27) / 10)


def test_pilot_only_is_rarefaction_then_flat() -> None:
    curve = FORECASTERS["pilot_only"].fit(HAND_PILOT).curve([2, 3, 5, 40])
    assert curve == pytest.approx([(17 / 3) / 10, 0.7, 0.7, 0.7], abs=1e-14)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_incidence_at_k_reproduces_observed_pilot_coverage(seed: int) -> None:
    rng = np.random.default_rng(seed)
    pilot = rng.random((10, 200)) < 0.2
    observed = pilot.any(axis=0).mean()
    for name in ("incidence", "pilot_only"):
        assert FORECASTERS[name].fit(pilot).curve([10])[0] == pytest.approx(observed, abs=1e-14)


def test_incidence_without_doubletons_uses_the_bias_corrected_chao2() -> None:
    # k = 4; c_t = 1, 1, 1, 0 → Q1 = 3, Q2 = 0 → Q̂0 = (3/4)·3·2/2 = 2.25
    pilot = _pilot([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0]])
    q0 = 0.75 * 3 * 2 / 2
    expected = min(4.0, 3 + q0 * (1 - (1 - 3 / (4 * q0 + 3)) ** 6)) / 4
    assert FORECASTERS["incidence"].fit(pilot).curve([10])[0] == pytest.approx(expected)


def test_independence_formula() -> None:
    curve = FORECASTERS["independence"].fit(HAND_PILOT).curve([1, 2, 7])
    p = 11 / 30
    assert curve == pytest.approx([p, 1 - (1 - p) ** 2, 1 - (1 - p) ** 7])


def test_kish_and_shared_shock_equal_independence_at_zero_phi() -> None:
    # two agents with φ = 0 exactly: p_a = p_b = 1/2, p_ab = 1/4
    pilot = _pilot([[1, 1], [1, 0], [0, 1], [0, 0]])
    stats = PilotStats.from_pilot(pilot)
    assert stats.mean_phi == 0.0
    sizes = [2, 5, 10, 40]
    independence = FORECASTERS["independence"].fit(pilot).curve(sizes)
    for name in ("kish", "shared_shock"):
        assert FORECASTERS[name].fit(pilot).curve(sizes) == pytest.approx(independence, abs=1e-15)


def test_negative_phi_is_clipped_to_independence() -> None:
    pilot = _pilot([[1, 0], [0, 1], [1, 0], [0, 1], [1, 1]])
    assert PilotStats.from_pilot(pilot).mean_phi < 0
    independence = FORECASTERS["independence"].fit(pilot).curve([3, 9])
    for name in ("kish", "shared_shock"):
        assert FORECASTERS[name].fit(pilot).curve([3, 9]) == pytest.approx(independence)


def test_kish_and_shared_shock_by_hand() -> None:
    stats = PilotStats.from_pilot(HAND_PILOT)
    phi = float(stats.mean_phi)
    p = 11 / 30
    m = 6
    n_eff = m / (1 + (m - 1) * max(0.0, phi))
    w = min(1.0, max(0.0, phi))
    assert FORECASTERS["kish"].fit(HAND_PILOT).curve([m])[0] == pytest.approx(1 - (1 - p) ** n_eff)
    assert FORECASTERS["shared_shock"].fit(HAND_PILOT).curve([m])[0] == pytest.approx(
        w * p + (1 - w) * (1 - (1 - p) ** m)
    )


def test_beta_binomial_without_overdispersion_falls_back_to_independence() -> None:
    # every task solved by exactly one of two agents: v = 0 → ρ = −1 ≤ 0 → no fit
    pilot = _pilot([[1, 0], [0, 1]] * 10)
    _, _, fitted = beta_binomial_moments(PilotStats.from_pilot(pilot))
    assert not bool(fitted)
    sizes = [2, 5, 20]
    assert FORECASTERS["beta_binomial"].fit(pilot).curve(sizes) == pytest.approx(
        FORECASTERS["independence"].fit(pilot).curve(sizes), abs=1e-15
    )


def test_beta_binomial_edge_rates_fall_back() -> None:
    for pilot in (np.zeros((3, 8), dtype=bool), np.ones((3, 8), dtype=bool)):
        _, _, fitted = beta_binomial_moments(PilotStats.from_pilot(pilot))
        assert not bool(fitted)


def test_beta_binomial_moments_and_curve_by_hand() -> None:
    rng = np.random.default_rng(3)
    pilot = rng.random((10, 60)) < rng.uniform(0.0, 0.8, size=(1, 60))
    counts = pilot.sum(axis=0).astype(float)
    k, n = 10, 60
    mu = counts.sum() / (k * n)
    variance = float(np.var(counts, ddof=1))
    rho = min(0.999, (variance / (k * mu * (1 - mu)) - 1) / (k - 1))
    assert rho > 0
    s = 1 / rho - 1
    a, b = mu * s, (1 - mu) * s
    alpha, beta, fitted = beta_binomial_moments(PilotStats.from_pilot(pilot))
    assert bool(fitted) and alpha == pytest.approx(a) and beta == pytest.approx(b)
    sizes = [1, 2, 5, 20]
    expected = [1 - beta_function(a, b + m) / beta_function(a, b) for m in sizes]
    curve = FORECASTERS["beta_binomial"].fit(pilot).curve(sizes)
    assert curve == pytest.approx(expected, rel=1e-10)
    assert curve[0] == pytest.approx(mu)


def test_weighted_stats_equal_duplicated_tasks() -> None:
    rng = np.random.default_rng(4)
    pilot = rng.random((10, 40)) < 0.3
    weights = rng.integers(0, 4, size=40)
    weighted = PilotStats.from_pilot(pilot, weights=weights)
    duplicated = PilotStats.from_pilot(np.repeat(pilot, weights, axis=1))
    assert np.allclose(weighted.histogram, duplicated.histogram)
    assert weighted.mean_phi == pytest.approx(duplicated.mean_phi, abs=1e-13)
    for model in closed_forms("preregistered").values():
        assert np.allclose(
            model.fit_stats(weighted).curve([2, 5, 40]),
            model.fit_stats(duplicated).curve([2, 5, 40]),
            atol=1e-13,
        )


def test_batched_fit_equals_one_pilot_at_a_time() -> None:
    rng = np.random.default_rng(5)
    pilots = rng.random((6, 10, 80)) < 0.25
    sizes = [2, 5, 10, 20, 33]
    for model in (FORECASTERS[name] for name in names("preregistered")):
        batch = model.fit(pilots).curve(sizes)
        assert batch.shape == (6, 5)
        for index in range(6):
            assert batch[index] == pytest.approx(model.fit(pilots[index]).curve(sizes), abs=1e-13)


# ------------------------------------------------------------------ Rasch


def _sigma(x: float) -> float:
    return 0.0 if x <= -35 else 1.0 / (1.0 + math.exp(-x))


def rasch_loop(pilot: np.ndarray, sweeps: int) -> tuple[list[float], list[float]]:
    """Spec §4's sweep, one task and one agent at a time (no grouping, no arrays)."""
    y = pilot.astype(int).tolist()
    k, n = len(y), len(y[0])
    a = [0.0] * k
    b = [0.0] * n
    for _ in range(sweeps):
        for t in range(n):
            gradient, curvature = -0.01 * b[t], 0.01
            for j in range(k):
                s = _sigma(a[j] - b[t])
                gradient += s - y[j][t]
                curvature += s * (1 - s)
            b[t] += gradient / curvature
        for j in range(k):
            gradient, curvature = -0.01 * a[j], 0.01
            for t in range(n):
                s = _sigma(a[j] - b[t])
                gradient += y[j][t] - s
                curvature += s * (1 - s)
            a[j] += gradient / curvature
    return a, b


@pytest.mark.parametrize("seed", [0, 1])
def test_rasch_25_sweeps_match_the_pure_python_loop(seed: int) -> None:
    rng = np.random.default_rng(seed)
    pilot = rng.random((10, 60)) < rng.uniform(0.0, 0.7, size=(1, 60))
    a, b = rasch_loop(pilot, 25)
    sizes = [2, 5, 10, 20, 40, 78]
    q = [sum(_sigma(a[j] - b[t]) for j in range(10)) / 10 for t in range(60)]
    expected = [sum(1 - (1 - qt) ** m for qt in q) / 60 for m in sizes]
    assert Rasch().fit(pilot).curve(sizes) == pytest.approx(expected, abs=1e-12)


def test_rasch_sweeps_converge_to_the_penalised_maximum() -> None:
    rng = np.random.default_rng(9)
    pilot = rng.random((4, 12)) < rng.uniform(0.1, 0.9, size=(1, 12))
    y = pilot.astype(float)
    k, n = y.shape

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        a, b = theta[:k], theta[k:]
        x = a[:, None] - b[None, :]
        loglik = (y * x - np.logaddexp(0.0, x)).sum()
        value = -loglik + 0.005 * (a @ a) + 0.005 * (b @ b)
        residual = y - 1.0 / (1.0 + np.exp(-x))
        grad_a = -residual.sum(axis=1) + 0.01 * a
        grad_b = residual.sum(axis=0) + 0.01 * b
        return float(value), np.concatenate([grad_a, grad_b])

    optimum = minimize(objective, np.zeros(k + n), jac=True, method="BFGS",
                       options={"gtol": 1e-10, "maxiter": 10_000})
    abilities, difficulties = rasch_sweeps(y, np.ones(n), sweeps=3000)
    assert abilities == pytest.approx(optimum.x[:k], abs=1e-5)
    assert difficulties == pytest.approx(optimum.x[k:], abs=1e-5)
