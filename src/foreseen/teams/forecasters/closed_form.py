"""The six closed-form forecasters of the preregistration (teams §4).

Each depends on the pilot only through :class:`~.base.PilotStats` (p̄ = Σ c_t/(kN),
φ̄ the pilot's mean pairwise φ, Q_j the number of tasks j pilot agents solve):

* independence   1 − (1 − p̄)^m
* kish           1 − (1 − p̄)^n, n = m / (1 + (m − 1)·max(0, φ̄))
* shared_shock   w·p̄ + (1 − w)(1 − (1 − p̄)^m), w = min(1, max(0, φ̄))
* beta_binomial  1 − B(α, β + m)/B(α, β) with method-of-moments α, β; no fit → independence
* incidence      Chao et al. (2014) incidence rarefaction (m ≤ k) / extrapolation (m > k)
* pilot_only     rarefaction for m ≤ k, flat at S_obs/N beyond

Chao, A., Gotelli, N. J., Hsieh, T. C., et al. (2014), "Rarefaction and
extrapolation with Hill numbers", Ecological Monographs 84(1), 45–67.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from foreseen.teams.curves import log_beta
from foreseen.teams.forecasters.base import (
    BoolArray,
    ClosedFormForecaster,
    CoverageForecast,
    FloatArray,
    PilotStats,
    check_sizes,
)

BETA_BINOMIAL_RHO_CAP = 0.999


@dataclass(frozen=True)
class IndependenceForecast(CoverageForecast):
    """1 − (1 − p̄)^m."""

    pooled_rate: FloatArray

    def curve(self, sizes: npt.ArrayLike) -> FloatArray:
        m = check_sizes(sizes)
        result: FloatArray = 1.0 - (1.0 - self.pooled_rate[..., None]) ** m
        return result


@dataclass(frozen=True)
class KishForecast(CoverageForecast):
    """1 − (1 − p̄)^n with Kish's effective size n = m / (1 + (m − 1)·max(0, φ̄))."""

    pooled_rate: FloatArray
    mean_phi: FloatArray

    def curve(self, sizes: npt.ArrayLike) -> FloatArray:
        m = check_sizes(sizes)
        effective = m / (1.0 + (m - 1.0) * np.maximum(0.0, self.mean_phi)[..., None])
        result: FloatArray = 1.0 - (1.0 - self.pooled_rate[..., None]) ** effective
        return result


@dataclass(frozen=True)
class SharedShockForecast(CoverageForecast):
    """w·p̄ + (1 − w)(1 − (1 − p̄)^m), w = min(1, max(0, φ̄))."""

    pooled_rate: FloatArray
    mean_phi: FloatArray

    def curve(self, sizes: npt.ArrayLike) -> FloatArray:
        m = check_sizes(sizes)
        rate = self.pooled_rate[..., None]
        shock = np.minimum(1.0, np.maximum(0.0, self.mean_phi))[..., None]
        result: FloatArray = shock * rate + (1.0 - shock) * (1.0 - (1.0 - rate) ** m)
        return result


@dataclass(frozen=True)
class BetaBinomialForecast(CoverageForecast):
    """1 − B(α, β + m)/B(α, β) where ``fitted``; independence 1 − (1 − p̄)^m elsewhere."""

    alpha: FloatArray
    beta: FloatArray
    fitted: BoolArray
    pooled_rate: FloatArray

    def curve(self, sizes: npt.ArrayLike) -> FloatArray:
        return beta_binomial_curve(
            self.alpha, self.beta, self.fitted, self.pooled_rate, check_sizes(sizes)
        )


def beta_binomial_curve(
    alpha: FloatArray,
    beta: FloatArray,
    fitted: BoolArray,
    pooled_rate: FloatArray,
    sizes: FloatArray,
    never_solved: FloatArray | None = None,
) -> FloatArray:
    """(1 − π)(1 − B(α, β + m)/B(α, β)) where ``fitted``, else 1 − (1 − p̄)^m.

    π = ``never_solved`` (0 when ``None``: the plain beta-binomial of teams §4); the
    trailing axis of the result runs over ``sizes``.
    """
    betaln = log_beta
    a = np.where(fitted, alpha, 1.0)[..., None]
    b = np.where(fitted, beta, 1.0)[..., None]
    fitted_curve = 1.0 - np.exp(betaln(a, b + sizes) - betaln(a, b))
    if never_solved is not None:
        fitted_curve = (1.0 - never_solved[..., None]) * fitted_curve
    fallback = 1.0 - (1.0 - pooled_rate[..., None]) ** sizes
    result: FloatArray = np.where(fitted[..., None], fitted_curve, fallback)
    return result


def beta_binomial_moments(stats: PilotStats) -> tuple[FloatArray, FloatArray, BoolArray]:
    """Method-of-moments (α, β) and the fitted mask (teams §4 "Beta-binomial moments").

    μ = p̄; no fit if μ ≤ 0, μ ≥ 1 or k < 2. c̄ = Σc_t/N, v = Σ(c_t − c̄)²/(N − 1),
    ρ = (v/(kμ(1 − μ)) − 1)/(k − 1); no fit if ρ ≤ 0; ρ capped at 0.999;
    s = 1/ρ − 1, α = μs, β = (1 − μ)s.
    """
    k = stats.k
    mu = stats.pooled_rate
    n = stats.n_tasks
    levels = np.arange(k + 1, dtype=np.float64)
    mean_count = stats.solves / n
    deviations = (levels - mean_count[..., None]) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        variance = (stats.histogram * deviations).sum(axis=-1) / (n - 1.0)
        usable = (mu > 0.0) & (mu < 1.0) & (k >= 2) & (n > 1.0)
        rho = np.where(
            usable, (variance / (k * mu * (1.0 - mu)) - 1.0) / max(k - 1, 1), 0.0
        )
    fitted = usable & (rho > 0.0)
    rho = np.where(fitted, np.minimum(rho, BETA_BINOMIAL_RHO_CAP), 1.0)
    scale = 1.0 / rho - 1.0
    alpha = np.where(fitted, mu * scale, 0.0)
    beta = np.where(fitted, (1.0 - mu) * scale, 0.0)
    return alpha, beta, np.asarray(fitted, dtype=np.bool_)


def _rarefaction_table(k: int, sizes: FloatArray) -> FloatArray:
    """R[j, g] = 1 − binom(k − j, m_g)/binom(k, m_g) for m_g ≤ k (1 when k − j < m_g)."""
    table = np.zeros((k + 1, sizes.size), dtype=np.float64)
    for g, size in enumerate(sizes):
        if size > k or size != int(size):
            continue
        m = int(size)
        for j in range(k + 1):
            table[j, g] = 1.0 if k - j < m else 1.0 - math.comb(k - j, m) / math.comb(k, m)
    return table


@dataclass(frozen=True)
class IncidenceForecast(CoverageForecast):
    """Chao et al. (2014) incidence rarefaction/extrapolation, or flat beyond k (pilot_only).

    Q_j = #{t : c_t = j}, S_obs = Σ_{j≥1} Q_j,
    Q̂0 = ((k − 1)/k)·Q1²/(2Q2) if Q2 > 0 else ((k − 1)/k)·Q1(Q1 − 1)/2.
    m ≤ k: Σ_j Q_j [1 − binom(k − j, m)/binom(k, m)] / N.
    m > k: S_obs/N if Q̂0 ≤ 0, else min(N, S_obs + Q̂0[1 − (1 − Q1/(kQ̂0 + Q1))^(m − k)])/N;
    with ``extrapolate=False`` (pilot_only) the value beyond k is S_obs/N.
    """

    k: int
    histogram: FloatArray
    extrapolate: bool

    def curve(self, sizes: npt.ArrayLike) -> FloatArray:
        m = check_sizes(sizes)
        k = self.k
        hist = self.histogram
        n = hist.sum(axis=-1)[..., None]
        if np.any((m <= k) & (m != np.floor(m))):
            raise ValueError("rarefaction needs whole team sizes")
        rarefied = (hist @ _rarefaction_table(k, m)) / n
        observed = hist[..., 1:].sum(axis=-1)[..., None]
        flat = observed / n
        if self.extrapolate:
            q1 = hist[..., 1][..., None] if k >= 1 else np.zeros_like(n)
            q2 = hist[..., 2][..., None] if k >= 2 else np.zeros_like(n)
            factor = (k - 1) / k
            with np.errstate(divide="ignore", invalid="ignore"):
                q0 = np.where(q2 > 0, factor * q1**2 / (2.0 * q2), factor * q1 * (q1 - 1.0) / 2.0)
                ratio = np.where(q0 > 0, q1 / (k * q0 + q1), 0.0)
            steps = np.maximum(m - k, 0.0)
            extended = np.minimum(n, observed + q0 * (1.0 - (1.0 - ratio) ** steps)) / n
            beyond = np.where(q0 <= 0, flat, extended)
        else:
            beyond = np.broadcast_to(flat, rarefied.shape)
        result: FloatArray = np.where(m <= k, rarefied, beyond)
        return result


class Independence(ClosedFormForecaster):
    """1 − (1 − p̄)^m: agents solve tasks independently at the pooled rate."""

    name = "independence"
    family = "preregistered"

    def fit_stats(self, stats: PilotStats) -> CoverageForecast:
        return IndependenceForecast(stats.pooled_rate)


class Kish(ClosedFormForecaster):
    """Independence at Kish's effective team size m / (1 + (m − 1)·max(0, φ̄))."""

    name = "kish"
    family = "preregistered"
    uses_phi = True

    def fit_stats(self, stats: PilotStats) -> CoverageForecast:
        return KishForecast(stats.pooled_rate, stats.phi())


class SharedShock(ClosedFormForecaster):
    """A shared shock of weight w = clip(φ̄, 0, 1) mixed with independence."""

    name = "shared_shock"
    family = "preregistered"
    uses_phi = True

    def fit_stats(self, stats: PilotStats) -> CoverageForecast:
        return SharedShockForecast(stats.pooled_rate, stats.phi())


class BetaBinomial(ClosedFormForecaster):
    """Per-task solve rates p_t ~ Beta(α, β) fitted by moments."""

    name = "beta_binomial"
    family = "preregistered"

    def fit_stats(self, stats: PilotStats) -> CoverageForecast:
        alpha, beta, fitted = beta_binomial_moments(stats)
        return BetaBinomialForecast(alpha, beta, fitted, stats.pooled_rate)


class Incidence(ClosedFormForecaster):
    """Chao et al. (2014) incidence rarefaction and extrapolation."""

    name = "incidence"
    family = "preregistered"

    def fit_stats(self, stats: PilotStats) -> CoverageForecast:
        return IncidenceForecast(stats.k, stats.histogram, extrapolate=True)


class PilotOnly(ClosedFormForecaster):
    """Rarefaction within the pilot, flat at the pilot's coverage beyond it (the baseline)."""

    name = "pilot_only"
    family = "preregistered"

    def fit_stats(self, stats: PilotStats) -> CoverageForecast:
        return IncidenceForecast(stats.k, stats.histogram, extrapolate=False)
