"""Coverage forecasters: from a pilot's k × N outcomes, forecast C(m) (spec teams.md §4).

One interface: ``FORECASTERS[name].fit(pilot) → CoverageForecast`` and
``forecast.curve(sizes)``. ``pilot`` is a boolean k × N array, or a stack
P × k × N of pilots: every forecast is vectorised over pilots and team sizes,
and ``curve`` returns an array of shape (P…, len(sizes)).

The closed-form forecasters (all but Rasch) depend on the pilot only through
:class:`PilotStats` — the pilot size k, the (weighted) number of tasks N, the
histogram Q_j of pilot solver counts c_t and the pilot's mean pairwise φ̄ —
so they also accept precomputed statistics via ``fit_stats`` (used for the
task bootstrap, where a task drawn w_t times carries weight w_t).

Formulas (p̄ = Σ c_t / (kN), φ̄ the pilot's mean pairwise φ):

* independence   1 − (1 − p̄)^m
* kish           1 − (1 − p̄)^n, n = m / (1 + (m − 1)·max(0, φ̄))
* shared_shock   w·p̄ + (1 − w)(1 − (1 − p̄)^m), w = min(1, max(0, φ̄))
* beta_binomial  1 − B(α, β + m)/B(α, β) with method-of-moments α, β; no fit → independence
* rasch          (1/N) Σ_t [1 − (1 − q_t)^m], q_t = mean_j σ(a_j − b_t), 25 Newton sweeps
* incidence      Chao et al. (2014) incidence rarefaction (m ≤ k) / extrapolation (m > k)
* pilot_only     rarefaction for m ≤ k, flat at S_obs/N beyond

Adding a model = one class with ``name`` and ``fit`` + one line in ``FORECASTERS``.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt
from scipy.special import betaln

from foreseen.teams.curves import gram_matrix, mean_phi_from_gram

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

RASCH_SWEEPS = 25
RASCH_PRECISION = 0.01
SIGMOID_CUTOFF = -35.0
BETA_BINOMIAL_RHO_CAP = 0.999


def _sizes(sizes: npt.ArrayLike) -> FloatArray:
    array = np.atleast_1d(np.asarray(sizes, dtype=np.float64))
    if array.ndim != 1 or np.any(array < 0):
        raise ValueError("team sizes must be a non-negative 1-D sequence")
    return array


def _as_pilot(pilot: npt.ArrayLike) -> BoolArray:
    array = np.asarray(pilot)
    if array.dtype != np.bool_:
        raise TypeError("a pilot must be a boolean array (k × N or P × k × N)")
    if array.ndim < 2 or array.shape[-1] == 0 or array.shape[-2] == 0:
        raise ValueError("a pilot needs at least one agent and one task")
    return array


@dataclass(frozen=True)
class PilotStats:
    """Sufficient statistics of (a stack of) pilots for the closed-form forecasters.

    ``histogram[..., j]`` = (weighted) number of tasks solved by exactly j of the k
    pilot agents (j = 0..k); ``n_tasks`` = its total; ``mean_phi`` = φ̄ of the pilot.
    """

    k: int
    histogram: FloatArray
    mean_phi: FloatArray

    @property
    def n_tasks(self) -> FloatArray:
        total: FloatArray = self.histogram.sum(axis=-1)
        return total

    @property
    def solves(self) -> FloatArray:
        """Σ_t c_t (weighted)."""
        total: FloatArray = self.histogram @ np.arange(self.k + 1, dtype=np.float64)
        return total

    @property
    def pooled_rate(self) -> FloatArray:
        """p̄ = Σ c_t / (kN)."""
        rate: FloatArray = self.solves / (self.k * self.n_tasks)
        return rate

    @classmethod
    def from_pilot(
        cls, pilot: npt.ArrayLike, weights: npt.ArrayLike | None = None
    ) -> PilotStats:
        """Statistics of a k × N (or P × k × N) pilot; ``weights`` = task multiplicities."""
        outcomes = _as_pilot(pilot)
        k = outcomes.shape[-2]
        counts = outcomes.sum(axis=-2, dtype=np.int64)
        batch = counts.shape[:-1]
        flat = counts.reshape(-1, counts.shape[-1])
        offsets = (np.arange(flat.shape[0], dtype=np.int64) * (k + 1))[:, None]
        if weights is None:
            flat_weights = None
        else:
            flat_weights = np.broadcast_to(
                np.asarray(weights, dtype=np.float64), counts.shape
            ).reshape(flat.shape).ravel()
        histogram = np.bincount(
            (flat + offsets).ravel(), weights=flat_weights, minlength=flat.shape[0] * (k + 1)
        ).astype(np.float64).reshape(*batch, k + 1)
        gram = gram_matrix(outcomes, weights)
        mean_phi = mean_phi_from_gram(gram, histogram.sum(axis=-1))
        return cls(k=k, histogram=histogram, mean_phi=np.asarray(mean_phi, dtype=np.float64))


class CoverageForecast(ABC):
    """A fitted forecast of team coverage C(m) (vectorised over pilots and sizes)."""

    @abstractmethod
    def curve(self, sizes: npt.ArrayLike) -> FloatArray:
        """Forecast C(m) for each m in ``sizes``; shape = pilot batch shape + (len(sizes),)."""


class CoverageForecaster(Protocol):
    """The one interface every coverage model obeys."""

    name: str

    def fit(self, pilot: npt.ArrayLike) -> CoverageForecast:
        """Fit on a boolean k × N pilot (or a P × k × N stack of pilots)."""
        ...


class ClosedFormForecaster(ABC):
    """A forecaster that depends on the pilot only through :class:`PilotStats`."""

    name: str = ""

    def fit(self, pilot: npt.ArrayLike) -> CoverageForecast:
        return self.fit_stats(PilotStats.from_pilot(pilot))

    @abstractmethod
    def fit_stats(self, stats: PilotStats) -> CoverageForecast:
        """Fit from precomputed pilot statistics."""


# --------------------------------------------------------------------------- closed forms


@dataclass(frozen=True)
class IndependenceForecast(CoverageForecast):
    """1 − (1 − p̄)^m."""

    pooled_rate: FloatArray

    def curve(self, sizes: npt.ArrayLike) -> FloatArray:
        m = _sizes(sizes)
        result: FloatArray = 1.0 - (1.0 - self.pooled_rate[..., None]) ** m
        return result


@dataclass(frozen=True)
class KishForecast(CoverageForecast):
    """1 − (1 − p̄)^n with Kish's effective size n = m / (1 + (m − 1)·max(0, φ̄))."""

    pooled_rate: FloatArray
    mean_phi: FloatArray

    def curve(self, sizes: npt.ArrayLike) -> FloatArray:
        m = _sizes(sizes)
        effective = m / (1.0 + (m - 1.0) * np.maximum(0.0, self.mean_phi)[..., None])
        result: FloatArray = 1.0 - (1.0 - self.pooled_rate[..., None]) ** effective
        return result


@dataclass(frozen=True)
class SharedShockForecast(CoverageForecast):
    """w·p̄ + (1 − w)(1 − (1 − p̄)^m), w = min(1, max(0, φ̄))."""

    pooled_rate: FloatArray
    mean_phi: FloatArray

    def curve(self, sizes: npt.ArrayLike) -> FloatArray:
        m = _sizes(sizes)
        rate = self.pooled_rate[..., None]
        shock = np.minimum(1.0, np.maximum(0.0, self.mean_phi))[..., None]
        result: FloatArray = shock * rate + (1.0 - shock) * (1.0 - (1.0 - rate) ** m)
        return result


@dataclass(frozen=True)
class BetaBinomialForecast(CoverageForecast):
    """1 − B(α, β + m)/B(α, β) where ``fitted``; independence 1 − (1 − p̄)^m elsewhere."""

    alpha: FloatArray
    beta: FloatArray
    fitted: npt.NDArray[np.bool_]
    pooled_rate: FloatArray

    def curve(self, sizes: npt.ArrayLike) -> FloatArray:
        m = _sizes(sizes)
        alpha = np.where(self.fitted, self.alpha, 1.0)[..., None]
        beta = np.where(self.fitted, self.beta, 1.0)[..., None]
        beta_curve = 1.0 - np.exp(betaln(alpha, beta + m) - betaln(alpha, beta))
        fallback = 1.0 - (1.0 - self.pooled_rate[..., None]) ** m
        result: FloatArray = np.where(self.fitted[..., None], beta_curve, fallback)
        return result


def beta_binomial_moments(
    stats: PilotStats,
) -> tuple[FloatArray, FloatArray, npt.NDArray[np.bool_]]:
    """Method-of-moments (α, β) and the fitted mask (spec §4 "Beta-binomial moments").

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
        m = _sizes(sizes)
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
    name = "independence"

    def fit_stats(self, stats: PilotStats) -> CoverageForecast:
        return IndependenceForecast(stats.pooled_rate)


class Kish(ClosedFormForecaster):
    name = "kish"

    def fit_stats(self, stats: PilotStats) -> CoverageForecast:
        return KishForecast(stats.pooled_rate, stats.mean_phi)


class SharedShock(ClosedFormForecaster):
    name = "shared_shock"

    def fit_stats(self, stats: PilotStats) -> CoverageForecast:
        return SharedShockForecast(stats.pooled_rate, stats.mean_phi)


class BetaBinomial(ClosedFormForecaster):
    name = "beta_binomial"

    def fit_stats(self, stats: PilotStats) -> CoverageForecast:
        alpha, beta, fitted = beta_binomial_moments(stats)
        return BetaBinomialForecast(alpha, beta, fitted, stats.pooled_rate)


class Incidence(ClosedFormForecaster):
    name = "incidence"

    def fit_stats(self, stats: PilotStats) -> CoverageForecast:
        return IncidenceForecast(stats.k, stats.histogram, extrapolate=True)


class PilotOnly(ClosedFormForecaster):
    name = "pilot_only"

    def fit_stats(self, stats: PilotStats) -> CoverageForecast:
        return IncidenceForecast(stats.k, stats.histogram, extrapolate=False)


# --------------------------------------------------------------------------- Rasch


def sigmoid(x: FloatArray) -> FloatArray:
    """σ(x) = 1/(1 + e^(−x)), exactly 0 for x ≤ −35 (spec §4)."""
    safe = np.maximum(x, SIGMOID_CUTOFF)
    result: FloatArray = np.where(x <= SIGMOID_CUTOFF, 0.0, 1.0 / (1.0 + np.exp(-safe)))
    return result


def column_patterns(pilot: BoolArray) -> tuple[FloatArray, FloatArray]:
    """Distinct task columns of a k × N pilot and their multiplicities (k × U, U)."""
    patterns, counts = np.unique(pilot.T, axis=0, return_counts=True)
    return patterns.T.astype(np.float64), counts.astype(np.float64)


@dataclass(frozen=True)
class RaschForecast(CoverageForecast):
    """(1/N) Σ_t [1 − (1 − q_t)^m], tasks grouped into column patterns with weights."""

    task_rates: FloatArray  # q per pattern, shape (P…, U)
    pattern_weights: FloatArray  # multiplicity per pattern (0 = padding), shape (P…, U)

    def curve(self, sizes: npt.ArrayLike) -> FloatArray:
        m = _sizes(sizes)
        miss = (1.0 - self.task_rates[..., :, None]) ** m
        covered = (self.pattern_weights[..., :, None] * (1.0 - miss)).sum(axis=-2)
        result: FloatArray = covered / self.pattern_weights.sum(axis=-1)[..., None]
        return result


def rasch_sweeps(
    outcomes: FloatArray, weights: FloatArray, sweeps: int = RASCH_SWEEPS
) -> tuple[FloatArray, FloatArray]:
    """Alternating Newton sweeps of spec §4 on (P…, k, U) outcomes with task weights (P…, U).

    Each sweep: for every b_t, gradient −λb_t + Σ_j(σ(a_j − b_t) − y_jt), curvature
    λ + Σ_j σ(1 − σ), b_t += gradient/curvature; then for every a_j with the new b,
    gradient −0.01·a_j + Σ_t(y_jt − σ(a_j − b_t)), curvature 0.01 + Σ_t σ(1 − σ),
    a_j += gradient/curvature (λ = 0.01). Tasks sharing a column pattern have
    identical difficulties, so each pattern enters the ability step with its weight.
    Returns abilities (P…, k) and difficulties (P…, U).
    """
    abilities = np.zeros(outcomes.shape[:-1], dtype=np.float64)
    difficulties = np.zeros(outcomes.shape[:-2] + outcomes.shape[-1:], dtype=np.float64)
    task_weights = weights[..., None, :]
    for _ in range(sweeps):
        prob = sigmoid(abilities[..., :, None] - difficulties[..., None, :])
        gradient = -RASCH_PRECISION * difficulties + (prob - outcomes).sum(axis=-2)
        curvature = RASCH_PRECISION + (prob * (1.0 - prob)).sum(axis=-2)
        difficulties = difficulties + gradient / curvature
        prob = sigmoid(abilities[..., :, None] - difficulties[..., None, :])
        gradient = -RASCH_PRECISION * abilities + (task_weights * (outcomes - prob)).sum(axis=-1)
        curvature = RASCH_PRECISION + (task_weights * prob * (1.0 - prob)).sum(axis=-1)
        abilities = abilities + gradient / curvature
    return abilities, difficulties


class Rasch:
    """Rasch model: abilities a_j, difficulties b_t (ridge precision 0.01), 25 Newton sweeps."""

    name = "rasch"

    def __init__(self, sweeps: int = RASCH_SWEEPS) -> None:
        self.sweeps = sweeps

    def fit(self, pilot: npt.ArrayLike) -> CoverageForecast:
        outcomes = _as_pilot(pilot)
        batch = outcomes.shape[:-2]
        k = outcomes.shape[-2]
        stack = outcomes.reshape(-1, k, outcomes.shape[-1])
        grouped = [column_patterns(one) for one in stack]
        width = max(weights.size for _, weights in grouped)
        patterns = np.zeros((len(grouped), k, width), dtype=np.float64)
        weights = np.zeros((len(grouped), width), dtype=np.float64)
        for index, (pattern, weight) in enumerate(grouped):
            patterns[index, :, : weight.size] = pattern
            weights[index, : weight.size] = weight
        abilities, difficulties = rasch_sweeps(patterns, weights, self.sweeps)
        rates = sigmoid(abilities[:, :, None] - difficulties[:, None, :]).mean(axis=1)
        return RaschForecast(rates.reshape(*batch, width), weights.reshape(*batch, width))


# --------------------------------------------------------------------------- issue 7 models
# Fitted in :mod:`foreseen.teams.forecasters.item_models` (imported when fitting: that module
# builds on the classes above).


class BetaBinomialML(ClosedFormForecaster):
    """1 − B(α, β + m)/B(α, β) with maximum-likelihood (α, β); no fit → independence."""

    name = "beta_binomial_ml"

    def fit_stats(self, stats: PilotStats) -> CoverageForecast:
        from foreseen.teams.forecasters.item_models import fit_beta_binomial_ml

        return fit_beta_binomial_ml(stats)


class ZeroInflatedBetaBinomial(ClosedFormForecaster):
    """(1 − π)(1 − B(α, β + m)/B(α, β)): a point mass π of never-solvable tasks, EM fit."""

    name = "zero_inflated_beta_binomial"

    def fit_stats(self, stats: PilotStats) -> CoverageForecast:
        from foreseen.teams.forecasters.item_models import fit_zero_inflated

        return fit_zero_inflated(stats)


class Irt2PL:
    """2PL IRT, penalised ML; prior precision λ by leave-agents-out CV inside the pilot.

    ``precision`` fixes λ instead (used by the bootstrap, which tunes once per pilot).
    """

    name = "irt_2pl"

    def __init__(self, precision: float | FloatArray | None = None) -> None:
        self.precision = precision

    def fit(self, pilot: npt.ArrayLike) -> CoverageForecast:
        from foreseen.teams.forecasters.item_models import fit_irt_2pl

        return fit_irt_2pl(pilot, self.precision)

    def tuned(self, pilot: npt.ArrayLike) -> Irt2PL:
        """This model with λ fixed at what cross-validation picks on each pilot of ``pilot``."""
        from foreseen.teams.forecasters.item_models import choose_irt_precision

        return Irt2PL(choose_irt_precision(pilot))


FORECASTERS: dict[str, CoverageForecaster] = {
    "independence": Independence(),
    "kish": Kish(),
    "shared_shock": SharedShock(),
    "beta_binomial": BetaBinomial(),
    "rasch": Rasch(),
    "incidence": Incidence(),
    "pilot_only": PilotOnly(),
    "beta_binomial_ml": BetaBinomialML(),
    "zero_inflated_beta_binomial": ZeroInflatedBetaBinomial(),
    "irt_2pl": Irt2PL(),
}

# The seven forecasters of the preregistration (E046); the protocol uses only these.
PREREGISTERED_FORECASTERS = (
    "independence", "kish", "shared_shock", "beta_binomial", "rasch", "incidence", "pilot_only"
)
# Models added by issue 7 (exploratory, on data that has been seen).
ISSUE7_FORECASTERS = ("beta_binomial_ml", "zero_inflated_beta_binomial", "irt_2pl")

CLOSED_FORM: dict[str, ClosedFormForecaster] = {
    name: forecaster
    for name, forecaster in FORECASTERS.items()
    if isinstance(forecaster, ClosedFormForecaster) and name in PREREGISTERED_FORECASTERS
}
