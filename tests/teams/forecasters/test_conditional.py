"""Conditional population forecast against enumeration, integration and Monte Carlo."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import beta as beta_function

from foreseen.core.errors import ConfigError
from foreseen.teams.forecasters.base import PilotStats
from foreseen.teams.forecasters.closed_form import beta_binomial_moments
from foreseen.teams.forecasters.conditional import (
    beta_binomial_unsolved_probability,
    conditional_coverages,
    conditional_forecast,
    posterior_solve_probability,
    unsolved_probabilities,
)
from foreseen.teams.forecasters.registry import FORECASTERS
from foreseen.teams.matrix import OutcomeMatrix


def enumerated_probability(alpha: float, beta: float, k: int, m: int, c: int) -> float:
    """P(some agent k+1..M solves | c of the first k solved), summing over all 2^M outcomes.

    Under the beta-binomial one outcome vector with s solves has probability
    B(α + s, β + M − s)/B(α, β).
    """
    numerator = denominator = 0.0
    for outcome in itertools.product((0, 1), repeat=m):
        if sum(outcome[:k]) != c:
            continue
        s = sum(outcome)
        weight = beta_function(alpha + s, beta + m - s) / beta_function(alpha, beta)
        denominator += weight
        if any(outcome[k:]):
            numerator += weight
    return numerator / denominator


@pytest.mark.parametrize(("alpha", "beta", "k", "m"), [(0.4, 0.7, 2, 6), (1.3, 2.1, 3, 7),
                                                       (0.2, 5.0, 1, 4), (2.0, 0.5, 4, 4)])
def test_unsolved_probability_matches_enumeration(
    alpha: float, beta: float, k: int, m: int
) -> None:
    expected = enumerated_probability(alpha, beta, k, m, 0)
    assert float(beta_binomial_unsolved_probability(alpha, beta, k, m)) == pytest.approx(
        expected, rel=1e-10, abs=1e-14
    )


@pytest.mark.parametrize("c", [0, 1, 2, 3])
def test_general_posterior_formula_matches_enumeration_and_integration(c: int) -> None:
    alpha, beta, k, m = 0.6, 1.4, 3, 7
    formula = float(posterior_solve_probability(alpha, beta, c, k, m - k))
    assert formula == pytest.approx(enumerated_probability(alpha, beta, k, m, c), rel=1e-10)
    posterior = stats.beta(alpha + c, beta + k - c)
    integral, _ = integrate.quad(lambda p: (1 - (1 - p) ** (m - k)) * posterior.pdf(p), 0, 1)
    assert formula == pytest.approx(integral, rel=1e-7)


def _pilot(seed: int, k: int = 6, n: int = 400) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rates = rng.beta(0.5, 0.9, n)
    return rng.random((k, n)) < rates[None, :]


def test_beta_binomial_forecast_uses_the_fitted_moments() -> None:
    pilot = _pilot(1)
    k = pilot.shape[0]
    alpha, beta, fitted = beta_binomial_moments(PilotStats.from_pilot(pilot))
    assert bool(fitted)
    forecast = conditional_forecast(pilot, 40)
    expected = 1.0 - beta_function(alpha, beta + 40) / beta_function(alpha, beta + k)
    solved_by_pilot = pilot.any(axis=0)
    assert np.all(forecast.task_probability[solved_by_pilot] == 1.0)
    assert forecast.task_probability[~solved_by_pilot] == pytest.approx(expected, rel=1e-10)
    observed = solved_by_pilot.mean()
    assert forecast.coverage == pytest.approx(observed + (1 - observed) * expected, rel=1e-12)
    assert forecast.floor == pytest.approx(1.0 - forecast.coverage, abs=1e-15)
    assert forecast.population_size == 40


def test_beta_binomial_forecast_agrees_with_monte_carlo_from_the_fitted_model() -> None:
    pilot = _pilot(2)
    k, population = pilot.shape[0], 30
    alpha, beta, _ = beta_binomial_moments(PilotStats.from_pilot(pilot))
    rng = np.random.default_rng(3)
    draws = 400_000
    rates = rng.beta(float(alpha), float(beta), draws)
    pilot_solves = rng.binomial(k, rates)
    rest_solves = rng.binomial(population - k, rates)
    unsolved = pilot_solves == 0
    estimate = float(np.mean(rest_solves[unsolved] > 0))
    standard_error = math.sqrt(estimate * (1 - estimate) / unsolved.sum())
    formula = float(unsolved_probabilities(pilot, population))
    assert abs(estimate - formula) < 4 * standard_error


def test_model_agnostic_ratio_equals_the_closed_form_for_the_beta_binomial() -> None:
    pilot = _pilot(4)
    k, population = pilot.shape[0], 25
    curve = FORECASTERS["beta_binomial"].fit(pilot).curve([k, population])
    ratio = (curve[1] - curve[0]) / (1 - curve[0])
    assert float(unsolved_probabilities(pilot, population)) == pytest.approx(ratio, rel=1e-9)


def test_independence_conditional_is_one_minus_miss_power() -> None:
    pilot = _pilot(5)
    rate = pilot.mean()
    probability = float(unsolved_probabilities(pilot, 20, "independence"))
    assert probability == pytest.approx(1 - (1 - rate) ** (20 - pilot.shape[0]), rel=1e-10)


def test_population_equal_to_pilot_is_the_observed_coverage() -> None:
    pilot = _pilot(6)
    for model in ("beta_binomial", "independence", "incidence"):
        forecast = conditional_forecast(pilot, pilot.shape[0], model)
        assert forecast.coverage == pytest.approx(pilot.any(axis=0).mean(), abs=1e-12)


def test_stack_of_pilots_matches_one_at_a_time() -> None:
    stack = np.stack([_pilot(seed) for seed in range(7, 12)])
    for model in ("beta_binomial", "kish", "incidence"):
        together = conditional_coverages(stack, 50, model)
        one_by_one = [conditional_forecast(p, 50, model).coverage for p in stack]
        assert together == pytest.approx(one_by_one, rel=1e-12)


def test_bad_arguments_are_configuration_errors() -> None:
    pilot = _pilot(13)
    with pytest.raises(ConfigError, match="smaller than the pilot"):
        conditional_forecast(pilot, pilot.shape[0] - 1)
    with pytest.raises(ConfigError, match="unknown forecaster"):
        conditional_forecast(pilot, 20, "no_such_model")


def test_every_registered_model_gives_a_coverage_between_observed_and_one(
    lite: OutcomeMatrix,
) -> None:
    competent = lite.competent()
    rng = np.random.default_rng(14)
    pilot = competent.solved[rng.choice(competent.n_agents, 10, replace=False)]
    observed = pilot.any(axis=0).mean()
    for model in FORECASTERS:
        forecast = conditional_forecast(pilot, competent.n_agents, model)
        assert observed - 1e-12 <= forecast.coverage <= 1.0 + 1e-12, model
        assert np.all((forecast.task_probability >= 0) & (forecast.task_probability <= 1)), model


def test_conditional_beta_binomial_tracks_the_real_lite_population(lite: OutcomeMatrix) -> None:
    """On Lite, 10-agent pilots: conditional forecasts are within a few points of C(M)."""
    competent = lite.competent()
    truth = competent.solved.any(axis=0).mean()
    rng = np.random.default_rng(15)
    pilots = np.stack(
        [competent.solved[rng.choice(competent.n_agents, 10, replace=False)] for _ in range(50)]
    )
    coverage = conditional_coverages(pilots, competent.n_agents)
    observed = pilots.any(axis=1).mean(axis=1)
    assert np.all(coverage >= observed)
    # the pilot-only floor misses the truth by far more than the conditional forecast
    assert np.abs(coverage - truth).mean() < np.abs(observed - truth).mean()
