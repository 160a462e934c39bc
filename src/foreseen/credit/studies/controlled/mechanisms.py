"""Synthetic generating mechanisms of the controlled-learning study (credit §9).

Each mechanism is a binary-classification data distribution. ``make(rng)``
draws the task's fixed parameters (coefficients, noise rate, shift) once per
task; the returned :data:`Sampler` then draws ``n`` labelled rows from that
distribution with any generator. ``held_out=True`` asks for the evaluation
distribution, which differs from the training distribution only for
``covariate_shift``.

The mechanism of a task is private: only the ``mechanism`` explainer (the
positive control, credit §10) is told it; the public study shows a neutral task
id and family.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
Sampler = Callable[[np.random.Generator, int, bool], tuple[FloatArray, IntArray]]


def _sigmoid(z: FloatArray) -> FloatArray:
    result: FloatArray = 1.0 / (1.0 + np.exp(-z))
    return result


def _bernoulli(rng: np.random.Generator, logit: FloatArray) -> IntArray:
    draws: IntArray = (rng.random(logit.shape[0]) < _sigmoid(logit)).astype(np.int64)
    return draws


def _signed_weights(rng: np.random.Generator, k: int, low: float, high: float) -> FloatArray:
    signs = rng.choice(np.array([-1.0, 1.0]), size=k)
    weights: FloatArray = signs * rng.uniform(low, high, size=k)
    return weights


def _sparse_linear(rng: np.random.Generator) -> Sampler:
    d = 20
    beta = np.zeros(d)
    beta[:3] = _signed_weights(rng, 3, 1.0, 2.0)

    def sample(g: np.random.Generator, n: int, held_out: bool) -> tuple[FloatArray, IntArray]:
        x = g.standard_normal((n, d))
        return x, _bernoulli(g, x @ beta)

    return sample


def _xor_interaction(rng: np.random.Generator) -> Sampler:
    d = 6
    strength = float(rng.uniform(2.5, 4.0))
    linear = float(rng.uniform(0.3, 0.7))

    def sample(g: np.random.Generator, n: int, held_out: bool) -> tuple[FloatArray, IntArray]:
        x = g.standard_normal((n, d))
        return x, _bernoulli(g, strength * x[:, 0] * x[:, 1] + linear * x[:, 2])

    return sample


def _nonlinear_additive(rng: np.random.Generator) -> Sampler:
    d = 5
    a, b, c = rng.uniform(1.5, 2.5), rng.uniform(0.8, 1.2), rng.uniform(0.5, 1.0)

    def sample(g: np.random.Generator, n: int, held_out: bool) -> tuple[FloatArray, IntArray]:
        x = g.standard_normal((n, d))
        logit = a * np.sin(2.0 * x[:, 0]) + b * (x[:, 1] ** 2 - 1.0) + c * x[:, 2]
        return x, _bernoulli(g, logit)

    return sample


def _label_noise(rng: np.random.Generator) -> Sampler:
    d = 10
    beta = np.zeros(d)
    beta[:4] = _signed_weights(rng, 4, 1.0, 2.0)
    flip = float(rng.uniform(0.25, 0.35))

    def sample(g: np.random.Generator, n: int, held_out: bool) -> tuple[FloatArray, IntArray]:
        x = g.standard_normal((n, d))
        clean = _bernoulli(g, x @ beta)
        flips = (g.random(n) < flip).astype(np.int64)
        return x, np.bitwise_xor(clean, flips)

    return sample


def _class_imbalance(rng: np.random.Generator) -> Sampler:
    d = 8
    beta = np.zeros(d)
    beta[:3] = _signed_weights(rng, 3, 1.0, 2.0)
    intercept = float(rng.uniform(-3.6, -3.0))

    def sample(g: np.random.Generator, n: int, held_out: bool) -> tuple[FloatArray, IntArray]:
        x = g.standard_normal((n, d))
        return x, _bernoulli(g, intercept + x @ beta)

    return sample


def _redundant_features(rng: np.random.Generator) -> Sampler:
    d, latent = 24, 3
    beta = _signed_weights(rng, latent, 1.0, 2.0)
    loadings = rng.uniform(0.6, 1.4, size=d)

    def sample(g: np.random.Generator, n: int, held_out: bool) -> tuple[FloatArray, IntArray]:
        z = g.standard_normal((n, latent))
        x = z[:, np.arange(d) % latent] * loadings + 0.5 * g.standard_normal((n, d))
        return x, _bernoulli(g, z @ beta)

    return sample


def _covariate_shift(rng: np.random.Generator) -> Sampler:
    d = 6
    w0, w1 = _signed_weights(rng, 2, 1.0, 2.0)
    curvature = float(rng.uniform(0.6, 1.0))
    shift = np.zeros(d)
    shift[:2] = rng.uniform(0.8, 1.2, size=2)

    def sample(g: np.random.Generator, n: int, held_out: bool) -> tuple[FloatArray, IntArray]:
        x = g.standard_normal((n, d)) + (shift if held_out else 0.0)
        logit = w0 * x[:, 0] + w1 * x[:, 1] - curvature * (x[:, 0] ** 2 - 1.0)
        return x, _bernoulli(g, logit)

    return sample


def _unscaled_features(rng: np.random.Generator) -> Sampler:
    d = 8
    beta = np.zeros(d)
    beta[:4] = _signed_weights(rng, 4, 1.0, 2.0)
    scales = 10.0 ** rng.uniform(-2.0, 2.5, size=d)

    def sample(g: np.random.Generator, n: int, held_out: bool) -> tuple[FloatArray, IntArray]:
        z = g.standard_normal((n, d))
        return z * scales, _bernoulli(g, z @ beta)

    return sample


@dataclass(frozen=True)
class Mechanism:
    """A named generating mechanism; ``make(rng)`` fixes a task's parameters."""

    name: str
    description: str
    regime: str
    make: Callable[[np.random.Generator], Sampler]


MECHANISMS: tuple[Mechanism, ...] = (
    Mechanism("sparse_linear",
              "a logistic model on 3 of 20 Gaussian features; the other 17 are pure noise",
              "small training sets, where noise features let the parent overfit",
              _sparse_linear),
    Mechanism("xor_interaction",
              "the label follows the sign of the product of two features (an XOR pattern)",
              "any budget: a linear parent cannot represent the interaction",
              _xor_interaction),
    Mechanism("nonlinear_additive",
              "a sum of a sine, a square and a linear effect of three of five features",
              "larger budgets, where smooth nonlinear terms can be estimated",
              _nonlinear_additive),
    Mechanism("label_noise",
              "a logistic model on 4 of 10 features with about 30 % of labels flipped",
              "small training sets, where flipped labels dominate the fit",
              _label_noise),
    Mechanism("class_imbalance",
              "a logistic model with a strongly negative intercept (a rare positive class)",
              "few positives, so probability calibration matters more than ranking",
              _class_imbalance),
    Mechanism("redundant_features",
              "24 noisy copies of 3 latent factors; the label depends on the factors",
              "highly correlated inputs, where the parent spreads weight over copies",
              _redundant_features),
    Mechanism("covariate_shift",
              "a curved logistic model whose evaluation inputs are shifted away from training",
              "extrapolation beyond the training input range",
              _covariate_shift),
    Mechanism("unscaled_features",
              "a logistic model on 8 features whose scales span four orders of magnitude",
              "badly scaled inputs, where the optimiser and the penalty act unevenly",
              _unscaled_features),
)

MECHANISM_BY_NAME: dict[str, Mechanism] = {m.name: m for m in MECHANISMS}
