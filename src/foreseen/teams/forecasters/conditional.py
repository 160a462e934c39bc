"""Conditional population forecast: the pilot is part of the population (exploratory).

A pilot of k agents has been run on N tasks; the population has M ≥ k agents.
A task the pilot solved (c_t ≥ 1) is covered by the population for certain. A
task no pilot agent solved (c_t = 0) is covered when at least one of the other
R = M − k agents solves it.

Beta-binomial (teams §4, item-difficulty prior p_t ~ Beta(α, β)). After
seeing c_t solves among k agents the posterior of the task's solve rate is
Beta(α + c_t, β + k − c_t), so the probability that none of R further agents
solves it is

    E[(1 − p)^R | c_t] = B(α + c_t, β + k − c_t + R) / B(α + c_t, β + k − c_t),

and the probability that at least one of them does is one minus that. For an
unsolved task (c_t = 0) with R = M − k this is

    P_t = 1 − B(α, β + M) / B(α, β + k).

Where the moments give no beta fit (the forecaster falls back to independence,
p_t ≡ p̄) the same expression is 1 − (1 − p̄)^(M − k).

Any other forecaster. Every forecaster's curve is a mixture over tasks of
"missed by m agents", so 1 − C(m) is the model's probability that a task is
missed by m agents. Treating the pilot-unsolved tasks as exchangeable under
the model, the probability that one of them is solved by the M − k others is

    P_t = 1 − (1 − C(M)) / (1 − C(k)) = (C(M) − C(k)) / (1 − C(k)),

clipped to [0, 1] (1 when the model says C(k) = 1). For the beta-binomial this
is exactly the formula above, since 1 − C(m) = B(α, β + m)/B(α, β).

Outputs: task_probability[t] = 1 if c_t ≥ 1, else P_t (the probability that
task t is ever solved by the population); coverage = mean_t task_probability;
floor = 1 − coverage (the expected share of tasks no agent of the population
solves).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from foreseen.core.errors import ConfigError
from foreseen.teams.forecasters.base import BoolArray, FloatArray
from foreseen.teams.forecasters.closed_form import BetaBinomialForecast
from foreseen.teams.forecasters.registry import get

DEFAULT_MODEL = "beta_binomial"


@dataclass(frozen=True)
class ConditionalForecast:
    """The population's forecast coverage and floor given that the pilot belongs to it."""

    population_size: int
    coverage: float
    floor: float
    task_probability: FloatArray  # P(task ever solved by the population); 1 for pilot-solved


def beta_binomial_unsolved_probability(
    alpha: npt.ArrayLike, beta: npt.ArrayLike, k: int, population_size: int
) -> FloatArray:
    """P_t = 1 − B(α, β + M)/B(α, β + k) for a task no pilot agent solved (c_t = 0)."""
    from scipy.special import betaln

    a = np.asarray(alpha, dtype=np.float64)
    b = np.asarray(beta, dtype=np.float64)
    missed = np.exp(betaln(a, b + population_size) - betaln(a, b + k))
    result: FloatArray = 1.0 - missed
    return result


def posterior_solve_probability(
    alpha: float, beta: float, solves: npt.ArrayLike, trials: int, further: int
) -> FloatArray:
    """General form: P(at least one of ``further`` agents solves | c of ``trials`` solved).

    1 − B(α + c, β + n − c + R)/B(α + c, β + n − c) with n = ``trials``, R = ``further``.
    """
    from scipy.special import betaln

    c = np.asarray(solves, dtype=np.float64)
    a = alpha + c
    b = beta + trials - c
    result: FloatArray = 1.0 - np.exp(betaln(a, b + further) - betaln(a, b))
    return result


def _check_arguments(k: int, population_size: int, model: str) -> None:
    get(model)
    if population_size < k:
        raise ConfigError(
            f"the population ({population_size} agents) cannot be smaller than the pilot ({k})"
        )


def unsolved_probabilities(
    pilots: BoolArray, population_size: int, model: str = DEFAULT_MODEL
) -> FloatArray:
    """P_t for pilot-unsolved tasks, one value per pilot of a P × k × N stack (or a k × N pilot).

    Uses the beta-binomial closed form when the fitted forecast is a beta-binomial,
    else the model-agnostic ratio (C(M) − C(k))/(1 − C(k)) (module docstring).
    """
    k = pilots.shape[-2]
    _check_arguments(k, population_size, model)
    forecast = get(model).fit(pilots)
    if isinstance(forecast, BetaBinomialForecast):
        fitted = forecast.fitted
        alpha = np.where(fitted, forecast.alpha, 1.0)
        beta = np.where(fitted, forecast.beta, 1.0)
        closed = beta_binomial_unsolved_probability(alpha, beta, k, population_size)
        fallback = 1.0 - (1.0 - forecast.pooled_rate) ** (population_size - k)
        result: FloatArray = np.asarray(np.where(fitted, closed, fallback), dtype=np.float64)
        return result
    curve = forecast.curve([k, population_size])
    at_pilot, at_population = curve[..., 0], curve[..., 1]
    remaining = 1.0 - at_pilot
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(remaining > 0.0, (at_population - at_pilot) / remaining, 1.0)
    clipped: FloatArray = np.clip(ratio, 0.0, 1.0).astype(np.float64)
    return clipped


def conditional_coverages(
    pilots: BoolArray, population_size: int, model: str = DEFAULT_MODEL
) -> FloatArray:
    """Conditional population coverage of each pilot in a P × k × N stack (shape P).

    coverage = S_obs/N + (1 − S_obs/N)·P_unsolved, S_obs = tasks the pilot solved.
    """
    observed = pilots.any(axis=-2).mean(axis=-1)
    unsolved = unsolved_probabilities(pilots, population_size, model)
    coverage: FloatArray = observed + (1.0 - observed) * unsolved
    return coverage


def conditional_forecast(
    pilot: BoolArray, population_size: int, model: str = DEFAULT_MODEL
) -> ConditionalForecast:
    """Forecast of a population of ``population_size`` agents that contains the k × N ``pilot``."""
    outcomes = np.asarray(pilot)
    if outcomes.dtype != np.bool_ or outcomes.ndim != 2:
        raise TypeError("a pilot must be a boolean k × N array")
    if outcomes.shape[0] == 0 or outcomes.shape[1] == 0:
        raise ConfigError("a pilot needs at least one agent and one task")
    unsolved = float(unsolved_probabilities(outcomes, population_size, model))
    solved_by_pilot = outcomes.any(axis=0)
    probability = np.where(solved_by_pilot, 1.0, unsolved).astype(np.float64)
    coverage = float(probability.mean())
    return ConditionalForecast(
        population_size=population_size,
        coverage=coverage,
        floor=1.0 - coverage,
        task_probability=probability,
    )
