"""Exploratory item-difficulty forecasters fitted to a pilot by maximum likelihood.

Three models of how hard each task is, each giving a forecast of team coverage
C(m) (teams §7 names them as what the preregistration lacks). All fits
are vectorised over a stack of pilots (leading batch axes). They are tagged
``family = "exploratory"``: they were added after the data had been seen.

**Maximum-likelihood beta-binomial.** Task t's solve rate p_t ~ Beta(α, β), and
the pilot's solver count c_t ~ Binomial(k, p_t), so
P(c_t = j) = binom(k, j)·B(j + α, k − j + β)/B(α, β). (α, β) maximise
Σ_j Q_j log P(c = j) (Q_j = weighted number of tasks with c_t = j), found by
Levenberg–Marquardt steps on (log α, log β) with the exact gradient and Hessian
(digamma/trigamma), started at the method-of-moments fit. The forecast is
C(m) = 1 − B(α, β + m)/B(α, β) (teams §4 with ML in place of moments).
No fit when p̄ ∈ {0, 1} or k < 2 (then independence, as the moments model);
log α and log β are kept in [−10, 15], so an under-dispersed pilot ends near the
binomial limit (C(m) ≈ 1 − (1 − p̄)^m).

**Zero-inflated beta-binomial.** With probability π a task can never be solved
(p_t = 0); otherwise p_t ~ Beta(α, β):
P(c = 0) = π + (1 − π)·B(α, β + k)/B(α, β), P(c = j > 0) = (1 − π)·BB(j; k, α, β).
Fitted by EM (the latent label "structural zero" of the c_t = 0 tasks): E-step
τ = π/(π + (1 − π)·BB(0)), M-step π = Q_0·τ/N and a few Levenberg–Marquardt
steps for (α, β) on the histogram with Q_0 replaced by Q_0(1 − τ).
C(m) = (1 − π)(1 − B(α, β + m)/B(α, β)).

**2PL IRT.** P(y_jt = 1) = σ(a_t(θ_j − b_t)), a_t = exp(u_t), with Gaussian
priors θ_j ~ N(0, 1), u_t ~ N(0, 1) and b_t ~ N(μ_b, 1/λ) (μ_b a free
parameter). Fitted by penalised (joint MAP) maximum likelihood: alternating
vectorised Fisher-scoring sweeps over all items, then all abilities, then μ_b.
The prior precision λ is chosen from :data:`IRT_PRECISIONS` by leave-agents-out
cross-validation *inside the pilot*: the agents are split round-robin into
min(k, 5) folds; for each fold and λ the items are fitted on the other agents
and each held-out agent's whole outcome vector is scored by its marginal
likelihood, ∫ Π_t P(y_jt | θ) dN(θ; θ̄, s_θ²) (the ability distribution below).
The population is never used.

Coverage of the 2PL: team members are independent draws from the ability
distribution, so a task is missed by m of them with probability (1 − q_t)^m,
q_t = E_θ σ(a_t(θ − b_t)), and C(m) = (1/N) Σ_t [1 − (1 − q_t)^m]. **Choice:**
the ability distribution is the normal N(θ̄, s_θ²) fitted (by moments) to the
pilot's MAP abilities, integrated with 21-node Gauss–Hermite quadrature, so a
larger team can contain agents abler than the pilot's best.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from foreseen.teams.forecasters.base import (
    BoolArray,
    ClosedFormForecaster,
    CoverageForecast,
    FloatArray,
    Forecaster,
    PilotStats,
    as_pilot,
    check_sizes,
)
from foreseen.teams.forecasters.closed_form import (
    BetaBinomialForecast,
    beta_binomial_curve,
    beta_binomial_moments,
)
from foreseen.teams.forecasters.rasch import sigmoid

LOG_PARAMETER_BOUNDS = (-10.0, 15.0)
ML_ITERATIONS = 120
ZI_EM_ITERATIONS = 150
ZI_INNER_STEPS = 3
IRT_PRECISIONS = (0.05, 0.2, 1.0, 5.0)
IRT_SWEEPS = 30
IRT_MAX_FOLDS = 5
IRT_QUADRATURE_NODES = 21
IRT_STEP_LIMIT = 1.0
PROBABILITY_FLOOR = 1e-12
CHUNK = 64


# --------------------------------------------------------------------------- beta-binomial


def beta_binomial_log_pmf(k: int, alpha: FloatArray, beta: FloatArray) -> FloatArray:
    """log P(c = j), j = 0..k, for Beta(α, β) rates and k trials; shape (…, k + 1)."""
    from scipy.special import betaln, gammaln

    j = np.arange(k + 1, dtype=np.float64)
    a = np.asarray(alpha, dtype=np.float64)[..., None]
    b = np.asarray(beta, dtype=np.float64)[..., None]
    log_comb = gammaln(k + 1.0) - gammaln(j + 1.0) - gammaln(k - j + 1.0)
    result: FloatArray = log_comb + betaln(j + a, k - j + b) - betaln(a, b)
    return result


def beta_binomial_log_likelihood(
    histogram: FloatArray, alpha: FloatArray, beta: FloatArray
) -> FloatArray:
    """Σ_j Q_j log P(c = j) for a (weighted) histogram Q of pilot solver counts."""
    k = histogram.shape[-1] - 1
    result: FloatArray = (histogram * beta_binomial_log_pmf(k, alpha, beta)).sum(axis=-1)
    return result


def _gradient_hessian(
    histogram: FloatArray, log_alpha: FloatArray, log_beta: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """Gradient (g1, g2) and Hessian (h11, h12, h22) of the log-likelihood in (log α, log β)."""
    from scipy.special import digamma, polygamma

    k = histogram.shape[-1] - 1
    j = np.arange(k + 1, dtype=np.float64)
    alpha, beta = np.exp(log_alpha), np.exp(log_beta)
    n = histogram.sum(axis=-1)
    a, b = alpha[..., None], beta[..., None]
    total = digamma(k + alpha + beta) - digamma(alpha + beta)
    total2 = polygamma(1, k + alpha + beta) - polygamma(1, alpha + beta)
    d_alpha = (histogram * (digamma(j + a) - digamma(a))).sum(axis=-1) - n * total
    d_beta = (histogram * (digamma(k - j + b) - digamma(b))).sum(axis=-1) - n * total
    dd_alpha = (histogram * (polygamma(1, j + a) - polygamma(1, a))).sum(axis=-1) - n * total2
    dd_beta = (histogram * (polygamma(1, k - j + b) - polygamma(1, b))).sum(axis=-1) - n * total2
    dd_cross = -n * total2
    g1, g2 = alpha * d_alpha, beta * d_beta
    h11 = alpha**2 * dd_alpha + g1
    h22 = beta**2 * dd_beta + g2
    h12 = alpha * beta * dd_cross
    return g1, g2, h11, h12, h22


def _levenberg_marquardt(
    histogram: FloatArray,
    log_alpha: FloatArray,
    log_beta: FloatArray,
    iterations: int,
    damping: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Damped Newton ascent on (log α, log β); a step is kept only if the likelihood rises."""
    low, high = LOG_PARAMETER_BOUNDS
    lam = np.full(log_alpha.shape, 1e-3) if damping is None else damping
    current = beta_binomial_log_likelihood(histogram, np.exp(log_alpha), np.exp(log_beta))
    for _ in range(iterations):
        g1, g2, h11, h12, h22 = _gradient_hessian(histogram, log_alpha, log_beta)
        scale = np.maximum(np.abs(h11) + np.abs(h22), 1e-12)
        a11, a22, a12 = -h11 + lam * scale, -h22 + lam * scale, -h12
        det = a11 * a22 - a12 * a12
        positive = (a11 > 0) & (det > 0)
        safe_det = np.where(positive, det, 1.0)
        step1 = np.where(positive, (a22 * g1 - a12 * g2) / safe_det, 0.0)
        step2 = np.where(positive, (a11 * g2 - a12 * g1) / safe_det, 0.0)
        new_alpha = np.clip(log_alpha + step1, low, high)
        new_beta = np.clip(log_beta + step2, low, high)
        proposed = beta_binomial_log_likelihood(histogram, np.exp(new_alpha), np.exp(new_beta))
        better = positive & (proposed >= current)
        log_alpha = np.where(better, new_alpha, log_alpha)
        log_beta = np.where(better, new_beta, log_beta)
        current = np.where(better, proposed, current)
        lam = np.where(better, np.maximum(lam / 10.0, 1e-9), np.minimum(lam * 10.0, 1e9))
    return log_alpha, log_beta, lam


def _starting_point(stats: PilotStats) -> tuple[FloatArray, FloatArray]:
    """Method-of-moments (α, β) where it fits, else mean p̄ with α + β = 10; in log space."""
    alpha, beta, fitted = beta_binomial_moments(stats)
    mean = np.clip(stats.pooled_rate, 1e-3, 1.0 - 1e-3)
    alpha = np.where(fitted, alpha, 10.0 * mean)
    beta = np.where(fitted, beta, 10.0 * (1.0 - mean))
    low, high = LOG_PARAMETER_BOUNDS
    return np.clip(np.log(alpha), low, high), np.clip(np.log(beta), low, high)


def _fittable(stats: PilotStats) -> BoolArray:
    rate = stats.pooled_rate
    mask: BoolArray = np.asarray((rate > 0.0) & (rate < 1.0) & (stats.k >= 2), dtype=np.bool_)
    return mask


def fit_beta_binomial_ml(stats: PilotStats) -> BetaBinomialForecast:
    """Maximum-likelihood (α, β) of the beta-binomial for every pilot in ``stats``."""
    log_alpha, log_beta = _starting_point(stats)
    log_alpha, log_beta, _ = _levenberg_marquardt(
        stats.histogram, log_alpha, log_beta, ML_ITERATIONS
    )
    fitted = _fittable(stats)
    return BetaBinomialForecast(
        np.where(fitted, np.exp(log_alpha), 0.0),
        np.where(fitted, np.exp(log_beta), 0.0),
        fitted,
        stats.pooled_rate,
    )


@dataclass(frozen=True)
class ZeroInflatedForecast(CoverageForecast):
    """C(m) = (1 − π)(1 − B(α, β + m)/B(α, β)); independence 1 − (1 − p̄)^m where not fitted."""

    never_solved: FloatArray  # π
    alpha: FloatArray
    beta: FloatArray
    fitted: BoolArray
    pooled_rate: FloatArray

    def curve(self, sizes: npt.ArrayLike) -> FloatArray:
        return beta_binomial_curve(
            self.alpha,
            self.beta,
            self.fitted,
            self.pooled_rate,
            check_sizes(sizes),
            never_solved=self.never_solved,
        )


def zero_inflated_log_likelihood(
    histogram: FloatArray, never_solved: FloatArray, alpha: FloatArray, beta: FloatArray
) -> FloatArray:
    """Σ_j Q_j log P(c = j) under the zero-inflated beta-binomial."""
    k = histogram.shape[-1] - 1
    log_pmf = beta_binomial_log_pmf(k, alpha, beta)
    pi = np.asarray(never_solved, dtype=np.float64)[..., None]
    with np.errstate(divide="ignore"):
        mixed = np.log1p(-pi) + log_pmf
        zero = np.logaddexp(np.log(pi[..., 0]), mixed[..., 0])
    terms = np.concatenate([zero[..., None], mixed[..., 1:]], axis=-1)
    weighted = np.where(histogram > 0, histogram * terms, 0.0)
    result: FloatArray = weighted.sum(axis=-1)
    return result


def fit_zero_inflated(stats: PilotStats) -> ZeroInflatedForecast:
    """EM fit of (π, α, β) for every pilot in ``stats`` (started at the ML beta-binomial)."""
    from scipy.special import betaln

    histogram = stats.histogram
    k = stats.k
    n = stats.n_tasks
    log_alpha, log_beta = _starting_point(stats)
    log_alpha, log_beta, lam = _levenberg_marquardt(histogram, log_alpha, log_beta, 40)
    zero_share = histogram[..., 0] / n
    pi = 0.5 * zero_share
    for _ in range(ZI_EM_ITERATIONS):
        alpha, beta = np.exp(log_alpha), np.exp(log_beta)
        zero_probability = np.exp(betaln(alpha, beta + k) - betaln(alpha, beta))
        denominator = pi + (1.0 - pi) * zero_probability
        tau = np.where(denominator > 0, pi / np.maximum(denominator, 1e-300), 0.0)
        pi = histogram[..., 0] * tau / n
        reduced = histogram.copy()
        reduced[..., 0] = histogram[..., 0] * (1.0 - tau)
        log_alpha, log_beta, lam = _levenberg_marquardt(
            reduced, log_alpha, log_beta, ZI_INNER_STEPS, lam
        )
    fitted = _fittable(stats)
    return ZeroInflatedForecast(
        np.where(fitted, pi, 0.0),
        np.where(fitted, np.exp(log_alpha), 0.0),
        np.where(fitted, np.exp(log_beta), 0.0),
        fitted,
        stats.pooled_rate,
    )


# --------------------------------------------------------------------------- 2PL IRT


@dataclass(frozen=True)
class IrtFit:
    """Penalised 2PL estimates for a batch of pilots (batch axes first)."""

    abilities: FloatArray  # (…, k)
    log_discrimination: FloatArray  # (…, N)
    difficulty: FloatArray  # (…, N)
    difficulty_mean: FloatArray  # (…)


def _quadrature() -> tuple[FloatArray, FloatArray]:
    """Nodes z and weights w with Σ w f(z) ≈ E f(Z), Z ~ N(0, 1)."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(IRT_QUADRATURE_NODES)
    return nodes.astype(np.float64), (weights / weights.sum()).astype(np.float64)


def irt_sweeps(
    outcomes: FloatArray,
    agent_weights: FloatArray,
    task_weights: FloatArray,
    precision: FloatArray,
    sweeps: int = IRT_SWEEPS,
) -> IrtFit:
    """Alternating Fisher-scoring sweeps for the penalised 2PL on (…, k, N) outcomes.

    Objective: Σ_jt v_j w_t ℓ(y_jt; σ(a_t(θ_j − b_t))) − ½Σ_j θ_j² −
    Σ_t w_t[½u_t² + ½λ(b_t − μ_b)²], with agent weights v_j (0 = held out) and task
    weights w_t (bootstrap multiplicities). Item step (per task, 2 × 2 Fisher scoring
    on (u_t, b_t)), ability step (1-D), then μ_b = Σ w_t b_t / Σ w_t. Steps are
    clipped to ±1 for stability.
    """
    shape = outcomes.shape
    abilities = np.zeros(shape[:-1], dtype=np.float64)
    log_a = np.zeros(shape[:-2] + shape[-1:], dtype=np.float64)
    difficulty = np.zeros_like(log_a)
    lam = np.asarray(precision, dtype=np.float64)
    lam_items = lam[..., None]
    mean_b = np.zeros(shape[:-2], dtype=np.float64)
    v = agent_weights[..., :, None]
    w = task_weights[..., None, :]
    limit = IRT_STEP_LIMIT
    for _ in range(sweeps):
        a = np.exp(log_a)
        spread = abilities[..., :, None] - difficulty[..., None, :]
        z = a[..., None, :] * spread
        p = sigmoid(z)
        residual = v * (outcomes - p)
        info = v * p * (1.0 - p)
        g_u = (residual * z).sum(axis=-2) - log_a
        g_b = -a * residual.sum(axis=-2) - lam_items * (difficulty - mean_b[..., None])
        i_uu = (info * z * z).sum(axis=-2) + 1.0
        i_bb = a * a * info.sum(axis=-2) + lam_items
        i_ub = -a * (info * z).sum(axis=-2)
        det = i_uu * i_bb - i_ub * i_ub
        log_a = log_a + np.clip((i_bb * g_u - i_ub * g_b) / det, -limit, limit)
        difficulty = difficulty + np.clip((i_uu * g_b - i_ub * g_u) / det, -limit, limit)
        a = np.exp(log_a)
        z = a[..., None, :] * (abilities[..., :, None] - difficulty[..., None, :])
        p = sigmoid(z)
        g_theta = (w * a[..., None, :] * (outcomes - p)).sum(axis=-1) - abilities
        i_theta = (w * (a * a)[..., None, :] * p * (1.0 - p)).sum(axis=-1) + 1.0
        abilities = abilities + np.clip(g_theta / i_theta, -limit, limit)
        mean_b = (task_weights * difficulty).sum(axis=-1) / task_weights.sum(axis=-1)
    return IrtFit(abilities, log_a, difficulty, mean_b)


def irt_task_rates(fit: IrtFit, agent_weights: FloatArray | None = None) -> FloatArray:
    """q_t = E_θ σ(a_t(θ − b_t)), θ ~ N(θ̄, s_θ²) of the (weighted) fitted abilities."""
    nodes, weights = _quadrature()
    theta = fit.abilities
    v = np.ones_like(theta) if agent_weights is None else agent_weights
    mean = (v * theta).sum(axis=-1) / v.sum(axis=-1)
    sd = np.sqrt((v * (theta - mean[..., None]) ** 2).sum(axis=-1) / v.sum(axis=-1))
    grid = mean[..., None] + sd[..., None] * nodes  # (…, Q)
    a = np.exp(fit.log_discrimination)
    z = a[..., :, None] * (grid[..., None, :] - fit.difficulty[..., :, None])  # (…, N, Q)
    rates: FloatArray = sigmoid(z) @ weights
    return rates


def held_out_log_likelihood(
    fit: IrtFit, outcomes: FloatArray, agent_weights: FloatArray, task_weights: FloatArray
) -> FloatArray:
    """log ∫ Π_t p_t(θ)^(w_t y_jt) (1 − p_t(θ))^(w_t(1 − y_jt)) dN(θ; θ̄, s_θ²) per agent j.

    The marginal likelihood of each agent's whole outcome vector under the items
    fitted without it (θ̄, s_θ from the agents with weight 1), by Gauss–Hermite
    quadrature; shape (…, k).
    """
    from scipy.special import logsumexp

    nodes, weights = _quadrature()
    theta = fit.abilities
    v = agent_weights
    mean = (v * theta).sum(axis=-1) / v.sum(axis=-1)
    sd = np.sqrt((v * (theta - mean[..., None]) ** 2).sum(axis=-1) / v.sum(axis=-1))
    grid = mean[..., None] + sd[..., None] * nodes
    a = np.exp(fit.log_discrimination)
    z = a[..., :, None] * (grid[..., None, :] - fit.difficulty[..., :, None])  # (…, U, Q)
    p = np.clip(sigmoid(z), PROBABILITY_FLOOR, 1.0 - PROBABILITY_FLOOR)
    w = task_weights[..., :, None]
    log_lik = outcomes @ (w * np.log(p)) + (1.0 - outcomes) @ (w * np.log1p(-p))  # (…, k, Q)
    result: FloatArray = logsumexp(log_lik + np.log(weights), axis=-1)
    return result


@dataclass(frozen=True)
class IrtForecast(CoverageForecast):
    """C(m) = Σ_t w_t [1 − (1 − q_t)^m] / Σ_t w_t."""

    task_rates: FloatArray  # (…, N)
    task_weights: FloatArray  # (…, N)
    precision: FloatArray  # λ chosen for each pilot

    def curve(self, sizes: npt.ArrayLike) -> FloatArray:
        m = check_sizes(sizes)
        miss = (1.0 - self.task_rates[..., :, None]) ** m
        covered = (self.task_weights[..., :, None] * (1.0 - miss)).sum(axis=-2)
        result: FloatArray = covered / self.task_weights.sum(axis=-1)[..., None]
        return result


def _fold_masks(k: int) -> FloatArray:
    """Agent weights per fold: fold f holds out agents j with j mod F = f (F = min(k, 5))."""
    folds = min(k, IRT_MAX_FOLDS)
    held_out = (np.arange(k)[None, :] % folds) == np.arange(folds)[:, None]
    masks: FloatArray = (~held_out).astype(np.float64)
    return masks


def choose_irt_precision(
    pilot: npt.ArrayLike, precisions: Sequence[float] = IRT_PRECISIONS
) -> FloatArray:
    """λ per pilot by leave-agents-out cross-validation inside the pilot (module docstring).

    Score of λ = Σ over folds f and held-out agents j of the marginal log-likelihood
    of j's outcomes under the items fitted without fold f
    (:func:`held_out_log_likelihood`).
    Ties go to the first (smallest) λ. A one-agent pilot cannot be split: it gets
    the middle of the grid.
    """
    outcomes = as_pilot(pilot)
    k = outcomes.shape[-2]
    batch = outcomes.shape[:-2]
    grid = np.asarray(precisions, dtype=np.float64)
    if k < 2:
        return np.full(batch, grid[len(grid) // 2])
    patterns, counts = compress_columns(outcomes.reshape(-1, k, outcomes.shape[-1]))
    chosen = np.concatenate(
        [
            _cross_validate(patterns[start:start + CHUNK], counts[start:start + CHUNK], grid)
            for start in range(0, patterns.shape[0], CHUNK)
        ]
    )
    result: FloatArray = chosen.reshape(batch)
    return result


def _cross_validate(patterns: FloatArray, counts: FloatArray, grid: FloatArray) -> FloatArray:
    """Chosen λ for each of B compressed pilots (B, k, U) with column counts (B, U)."""
    batch, k, width = patterns.shape
    masks = _fold_masks(k)  # (F, k)
    n_folds = masks.shape[0]
    shape = (batch, n_folds, grid.size)
    stacked = np.broadcast_to(patterns[:, None, None, :, :], (*shape, k, width))
    agent_weights = np.broadcast_to(masks[None, :, None, :], (*shape, k))
    precision = np.broadcast_to(grid[None, None, :], shape)
    task_weights = np.broadcast_to(counts[:, None, None, :], (*shape, width))
    fit = irt_sweeps(stacked, agent_weights, task_weights, precision)
    per_agent = held_out_log_likelihood(fit, stacked, agent_weights, task_weights)
    score = ((1.0 - agent_weights) * per_agent).sum(axis=-1)
    total = score.sum(axis=1)  # sum over folds → (B, L)
    chosen: FloatArray = grid[np.argmax(total, axis=-1)]
    return chosen


def compress_columns(
    pilots: BoolArray, weights: FloatArray | None = None
) -> tuple[FloatArray, FloatArray]:
    """Distinct task columns of each B × k × N pilot and their (weighted) multiplicities.

    Tasks with identical columns have identical 2PL estimates, so each pattern enters
    once with the summed weight. Returns patterns (B, k, U) and weights (B, U),
    zero-padded to the widest pilot (padding has weight 0 and does not count).
    """
    batch, k, n = pilots.shape
    codes = np.zeros((batch, n), dtype=np.int64) if k <= 62 else None
    grouped: list[tuple[FloatArray, FloatArray]] = []
    for index in range(batch):
        one = pilots[index]
        if codes is not None:
            key = (one.astype(np.int64) << np.arange(k, dtype=np.int64)[:, None]).sum(axis=0)
            _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        else:
            _, first, inverse = np.unique(one.T, axis=0, return_index=True, return_inverse=True)
        task_weight = np.ones(n) if weights is None else weights[index]
        summed = np.bincount(inverse.ravel(), weights=task_weight, minlength=first.size)
        grouped.append((one[:, first].astype(np.float64), summed.astype(np.float64)))
    width = max(weight.size for _, weight in grouped)
    patterns = np.zeros((batch, k, width), dtype=np.float64)
    counts = np.zeros((batch, width), dtype=np.float64)
    for index, (pattern, weight) in enumerate(grouped):
        patterns[index, :, : weight.size] = pattern
        counts[index, : weight.size] = weight
    return patterns, counts


def fit_irt_2pl(
    pilot: npt.ArrayLike,
    precision: float | FloatArray | None = None,
    task_weights: FloatArray | None = None,
) -> IrtForecast:
    """2PL coverage forecast; λ by in-pilot cross-validation unless ``precision`` is given.

    ``precision`` (a number or an array over the leading batch axes, e.g. one λ per
    pilot for a pilots × replicates stack) fixes λ.
    """
    outcomes = as_pilot(pilot)
    batch = outcomes.shape[:-2]
    if precision is None:
        lam = choose_irt_precision(outcomes)
    else:
        given = np.asarray(precision, dtype=np.float64)
        leading = given.reshape(given.shape + (1,) * (len(batch) - given.ndim))
        lam = np.broadcast_to(leading, batch).copy()
    k, n = outcomes.shape[-2], outcomes.shape[-1]
    flat_weights = (
        None
        if task_weights is None
        else np.broadcast_to(task_weights, (*batch, n)).reshape(-1, n).astype(np.float64)
    )
    patterns, counts = compress_columns(outcomes.reshape(-1, k, n), flat_weights)
    flat_lam = lam.reshape(-1)
    rates = np.zeros_like(counts)
    for start in range(0, patterns.shape[0], CHUNK):
        part = slice(start, start + CHUNK)
        agents = np.ones(patterns[part].shape[:-1], dtype=np.float64)
        fit = irt_sweeps(patterns[part], agents, counts[part], flat_lam[part])
        rates[part] = irt_task_rates(fit)
    width = counts.shape[-1]
    return IrtForecast(
        rates.reshape(*batch, width), counts.reshape(*batch, width), np.asarray(lam)
    )


# --------------------------------------------------------------------------- forecasters


class BetaBinomialML(ClosedFormForecaster):
    """1 − B(α, β + m)/B(α, β) with maximum-likelihood (α, β); no fit → independence."""

    name = "beta_binomial_ml"
    family = "exploratory"

    def fit_stats(self, stats: PilotStats) -> CoverageForecast:
        return fit_beta_binomial_ml(stats)


class ZeroInflatedBetaBinomial(ClosedFormForecaster):
    """(1 − π)(1 − B(α, β + m)/B(α, β)): a point mass π of never-solvable tasks, EM fit."""

    name = "zero_inflated_beta_binomial"
    family = "exploratory"

    def fit_stats(self, stats: PilotStats) -> CoverageForecast:
        return fit_zero_inflated(stats)


class Irt2PL(Forecaster):
    """2PL IRT, penalised ML; prior precision λ by leave-agents-out CV inside the pilot.

    ``precision`` fixes λ instead (used by the bootstrap, which tunes once per pilot).
    """

    name = "irt_2pl"
    family = "exploratory"
    tuned_on_pilot = True

    def __init__(self, precision: float | FloatArray | None = None) -> None:
        self.precision = precision

    def fit(self, pilot: npt.ArrayLike) -> CoverageForecast:
        return fit_irt_2pl(pilot, self.precision)

    def tuned(self, pilot: npt.ArrayLike) -> Irt2PL:
        """This model with λ fixed at what cross-validation picks on each pilot of ``pilot``."""
        return Irt2PL(choose_irt_precision(pilot))
