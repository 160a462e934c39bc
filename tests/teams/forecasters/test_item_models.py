"""ML beta-binomial, zero-inflated beta-binomial and 2PL IRT against independent references."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, optimize, stats
from scipy.special import beta as beta_function
from scipy.special import expit

from foreseen.teams.forecasters.base import PilotStats
from foreseen.teams.forecasters.item_models import (
    IRT_PRECISIONS,
    IrtFit,
    _fold_masks,
    beta_binomial_log_likelihood,
    beta_binomial_log_pmf,
    choose_irt_precision,
    compress_columns,
    fit_beta_binomial_ml,
    fit_irt_2pl,
    fit_zero_inflated,
    irt_sweeps,
    irt_task_rates,
    zero_inflated_log_likelihood,
)
from foreseen.teams.forecasters.registry import FORECASTERS


def simulated_pilot(k: int, n: int, seed: int, never: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rates = rng.beta(0.6, 1.4, n) * (rng.random(n) >= never)
    return rng.random((k, n)) < rates


def test_log_pmf_matches_scipy() -> None:
    mine = beta_binomial_log_pmf(7, np.array(0.8), np.array(2.5))
    assert mine == pytest.approx(stats.betabinom.logpmf(np.arange(8), 7, 0.8, 2.5), abs=1e-12)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ml_beta_binomial_matches_scipy_optimiser_and_grid(seed: int) -> None:
    pilot = simulated_pilot(10, 400, seed)
    stats_ = PilotStats.from_pilot(pilot)
    fit = fit_beta_binomial_ml(stats_)
    counts = pilot.sum(axis=0)

    def negative(params: np.ndarray) -> float:
        a, b = np.exp(params)
        return -float(stats.betabinom.logpmf(counts, 10, a, b).sum())

    reference = optimize.minimize(negative, x0=np.zeros(2), method="Nelder-Mead",
                                  options={"xatol": 1e-9, "fatol": 1e-10, "maxiter": 5000})
    mine = -negative(np.log([fit.alpha, fit.beta]))
    assert mine >= -reference.fun - 1e-6
    assert np.log([fit.alpha, fit.beta]) == pytest.approx(reference.x, abs=1e-3)
    grid = np.linspace(-3, 3, 121)
    la, lb = np.meshgrid(grid, grid, indexing="ij")
    values = beta_binomial_log_likelihood(stats_.histogram, np.exp(la), np.exp(lb))
    assert mine >= values.max() - 1e-9


def test_ml_is_vectorised_and_falls_back_without_solves() -> None:
    pilots = np.stack([simulated_pilot(8, 200, s) for s in range(4)])
    pilots[3] = False
    batch = fit_beta_binomial_ml(PilotStats.from_pilot(pilots))
    for p in range(3):
        one = fit_beta_binomial_ml(PilotStats.from_pilot(pilots[p]))
        assert batch.alpha[p] == pytest.approx(float(one.alpha), rel=1e-9)
    assert not batch.fitted[3]
    assert batch.curve([5, 40])[3] == pytest.approx([0.0, 0.0])


def test_zero_inflated_likelihood_and_curve_by_hand() -> None:
    hist = np.array([30.0, 5.0, 3.0, 2.0])
    pi, a, b = 0.2, 0.7, 1.9
    pmf = stats.betabinom.pmf(np.arange(4), 3, a, b)
    mixture = (1 - pi) * pmf
    mixture[0] += pi
    expected = float((hist * np.log(mixture)).sum())
    assert zero_inflated_log_likelihood(hist, np.array(pi), np.array(a), np.array(b)) == (
        pytest.approx(expected, rel=1e-12)
    )
    fit = fit_zero_inflated(PilotStats.from_pilot(simulated_pilot(6, 300, 4, never=0.3)))
    m = np.array([3.0, 50.0])
    by_hand = (1 - fit.never_solved) * (
        1 - beta_function(fit.alpha, fit.beta + m) / beta_function(fit.alpha, fit.beta)
    )
    assert fit.curve(m) == pytest.approx(by_hand, rel=1e-10)


def test_zero_inflated_fits_at_least_as_well_and_recovers_the_point_mass() -> None:
    pilot = simulated_pilot(15, 6000, 5, never=0.3)
    stats_ = PilotStats.from_pilot(pilot)
    zi = fit_zero_inflated(stats_)
    ml = fit_beta_binomial_ml(stats_)
    hist = stats_.histogram
    zi_ll = zero_inflated_log_likelihood(hist, zi.never_solved, zi.alpha, zi.beta)
    assert zi_ll >= beta_binomial_log_likelihood(hist, ml.alpha, ml.beta) - 1e-8
    assert float(zi.never_solved) == pytest.approx(0.3, abs=0.06)

    def negative(params: np.ndarray) -> float:
        pi = expit(params[0])
        a, b = np.exp(params[1:])
        return -float(zero_inflated_log_likelihood(hist, np.array(pi), np.array(a), np.array(b)))

    reference = optimize.minimize(negative, x0=np.array([-1.0, 0.0, 0.0]), method="Nelder-Mead",
                                  options={"xatol": 1e-8, "fatol": 1e-9, "maxiter": 8000})
    assert zi_ll >= -reference.fun - 0.05


def test_irt_sweeps_reach_the_penalised_optimum() -> None:
    rng = np.random.default_rng(11)
    y = (rng.random((4, 6)) < 0.5).astype(np.float64)
    lam = 0.7
    fit = irt_sweeps(y, np.ones(4), np.ones(6), np.array(lam), sweeps=400)

    def negative(params: np.ndarray) -> float:
        theta, u, b, mu = params[:4], params[4:10], params[10:16], params[16]
        z = np.exp(u)[None, :] * (theta[:, None] - b[None, :])
        loglik = (y * z - np.logaddexp(0.0, z)).sum()
        prior = 0.5 * (theta**2).sum() + 0.5 * (u**2).sum() + 0.5 * lam * ((b - mu) ** 2).sum()
        return float(-(loglik - prior))

    start = np.zeros(17)
    reference = optimize.minimize(negative, start, method="L-BFGS-B", options={"maxiter": 5000})
    mine = np.concatenate([fit.abilities, fit.log_discrimination, fit.difficulty,
                           [float(fit.difficulty_mean)]])
    assert negative(mine) <= reference.fun + 1e-5


def test_irt_task_rates_match_numerical_integration() -> None:
    fit = IrtFit(np.array([-0.5, 0.3, 1.1]), np.array([0.2, -0.4]), np.array([0.5, 2.0]),
                 np.array(0.0))
    rates = irt_task_rates(fit)
    mean, sd = fit.abilities.mean(), fit.abilities.std()
    for t in range(2):
        a, b = np.exp(fit.log_discrimination[t]), fit.difficulty[t]
        value, _ = integrate.quad(
            lambda x, a=a, b=b: expit(a * (x - b)) * stats.norm.pdf(x, mean, sd), -np.inf, np.inf
        )
        assert rates[t] == pytest.approx(value, abs=1e-6)


def test_compression_changes_nothing() -> None:
    pilot = simulated_pilot(6, 150, 8)
    compressed = fit_irt_2pl(pilot, 1.0)
    values = pilot.astype(np.float64)
    fit = irt_sweeps(values, np.ones(6), np.ones(150), np.array(1.0))
    direct = (1 - (1 - irt_task_rates(fit))[:, None] ** np.array([2.0, 30.0])).mean(axis=0)
    assert compressed.curve([2, 30]) == pytest.approx(direct, abs=1e-9)
    _, counts = compress_columns(pilot[None])
    assert counts.sum() == 150
    assert len({tuple(col) for col in pilot.T}) == np.count_nonzero(counts)


def test_cross_validation_uses_only_the_pilot_and_every_agent_is_held_out_once() -> None:
    masks = _fold_masks(10)
    assert masks.shape == (5, 10)
    assert ((1 - masks).sum(axis=0) == 1).all()
    pilots = np.stack([simulated_pilot(10, 200, s) for s in range(3)])
    chosen = choose_irt_precision(pilots)
    assert chosen.shape == (3,)
    assert set(chosen.tolist()) <= set(IRT_PRECISIONS)
    assert choose_irt_precision(pilots[1]) == chosen[1]
    forecast = FORECASTERS["irt_2pl"].fit(pilots)
    assert forecast.curve([1, 5]).shape == (3, 2)


def test_exploratory_forecasters_batched_equal_one_pilot_at_a_time() -> None:
    pilots = np.random.default_rng(5).random((6, 10, 80)) < 0.25
    sizes = [2, 5, 10, 20, 33]
    # the zero-inflated likelihood has a flat ridge (π against a small α): EM stops within 1e-5
    for name, tolerance in (("beta_binomial_ml", 1e-10), ("irt_2pl", 1e-10),
                            ("zero_inflated_beta_binomial", 1e-5)):
        batch = FORECASTERS[name].fit(pilots).curve(sizes)
        for index in range(6):
            single = FORECASTERS[name].fit(pilots[index]).curve(sizes)
            assert batch[index] == pytest.approx(single, abs=tolerance)
