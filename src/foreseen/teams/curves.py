"""Exact population coverage curves, the blind-spot floor and mean pairwise φ.

Spec teams.md §3. With c_t the number of the M competent agents solving task
t, a uniformly random m-subset misses task t with probability
binom(M − c_t, m) / binom(M, m) (0 when M − c_t < m), so the exact mean oracle
coverage is

    C(m) = 1 − (1/N) Σ_t binom(M − c_t, m) / binom(M, m),

evaluated with log-gamma. Tasks enter only through the histogram of c_t, so a
bootstrap resample (task t drawn w_t times) is the same histogram weighted by
w_t. The grid is G = {2, 5, 10, 20, 40} ∩ {m < M} plus M; C(M) = 1 − floor/N.

Pairwise φ of agents a, b (solve rates p_a, p_b, joint rate p_ab):
φ = (p_ab − p_a p_b) / √(p_a(1 − p_a) p_b(1 − p_b)); pairs with a zero
denominator are skipped and φ̄ is the mean over the rest (0 if none). The
joint counts come from one matrix product (the Gram matrix).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

GRID_SIZES = (2, 5, 10, 20, 40)


def log_gamma(values: npt.ArrayLike) -> FloatArray:
    """ln Γ(x) element-wise for x > 0 (the C library's ``lgamma`` through :func:`math.lgamma`).

    Used instead of ``scipy.special.gammaln`` so that a teams command does not
    import ``scipy.special`` (about 0.3 s); the arrays here are small.
    """
    array = np.asarray(values, dtype=np.float64)
    flat = np.fromiter(map(math.lgamma, array.ravel().tolist()), dtype=np.float64,
                       count=array.size)
    result: FloatArray = flat.reshape(array.shape)
    return result


def log_beta(a: npt.ArrayLike, b: npt.ArrayLike) -> FloatArray:
    """ln B(a, b) = ln Γ(a) + ln Γ(b) − ln Γ(a + b), broadcast, for a, b > 0."""
    first, second = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    # ln Γ of each operand at its own shape (a column of α is not expanded), then broadcast
    result: FloatArray = log_gamma(first) + log_gamma(second) - log_gamma(first + second)
    return result


def coverage_grid(n_agents: int) -> list[int]:
    """G = {2, 5, 10, 20, 40} ∩ {m < M}, plus M itself."""
    if n_agents < 1:
        raise ValueError("the population needs at least one agent")
    return [m for m in GRID_SIZES if m < n_agents] + [n_agents]


def solver_counts(solved: BoolArray) -> IntArray:
    """c_t: number of agents (rows) solving each task (column)."""
    counts: IntArray = solved.sum(axis=0, dtype=np.int64)
    return counts


def blind_spot_floor(solved: BoolArray) -> int:
    """Number of tasks no agent solves: #{t : c_t = 0}."""
    return int(np.count_nonzero(~solved.any(axis=0)))


def miss_probabilities(n_agents: int, sizes: npt.ArrayLike) -> FloatArray:
    """P[c, g] = binom(M − c, m_g)/binom(M, m_g) for c = 0..M (log-gamma; 0 if M − c < m).

    The table depends on M and the sizes only, so it is computed once per (M, sizes)
    (a bootstrap asks for it once a replicate) and a copy is returned.
    """
    m = np.asarray(sizes, dtype=np.float64)
    if np.any(m < 0) or np.any(m > n_agents):
        raise ValueError(f"team sizes must lie in [0, {n_agents}]")
    return _miss_table(n_agents, tuple(m.tolist())).copy()


@functools.lru_cache(maxsize=32)
def _miss_table(n_agents: int, sizes: tuple[float, ...]) -> FloatArray:
    gammaln = log_gamma
    m = np.asarray(sizes, dtype=np.float64)
    free = (n_agents - np.arange(n_agents + 1, dtype=np.float64))[:, None]
    possible = free >= m[None, :]
    log_ratio = (
        gammaln(free + 1.0)
        - gammaln(np.where(possible, free - m[None, :], 0.0) + 1.0)
        - gammaln(n_agents + 1.0)
        + gammaln(n_agents - m[None, :] + 1.0)
    )
    table: FloatArray = np.where(possible, np.exp(np.where(possible, log_ratio, 0.0)), 0.0)
    return table


def curve_from_histogram(
    histogram: npt.ArrayLike, n_agents: int, sizes: npt.ArrayLike
) -> FloatArray:
    """C(m) from the (possibly weighted) histogram H[..., c] of solver counts c = 0..M.

    C(m) = 1 − Σ_c H[c] · binom(M − c, m)/binom(M, m) / Σ_c H[c].
    """
    hist = np.asarray(histogram, dtype=np.float64)
    if hist.shape[-1] != n_agents + 1:
        raise ValueError(f"histogram must have {n_agents + 1} bins, got {hist.shape[-1]}")
    total = hist.sum(axis=-1, keepdims=True)
    missed = hist @ miss_probabilities(n_agents, sizes)
    curve: FloatArray = 1.0 - missed / total
    return curve


def population_curve(
    solved: BoolArray, sizes: npt.ArrayLike, weights: npt.ArrayLike | None = None
) -> FloatArray:
    """Exact C(m) of the agents × tasks matrix ``solved`` at each team size in ``sizes``.

    ``weights`` (one per task) counts how often each task was drawn in a resample.
    """
    n_agents = solved.shape[0]
    histogram = np.bincount(
        solver_counts(solved),
        weights=None if weights is None else np.asarray(weights, dtype=np.float64),
        minlength=n_agents + 1,
    )
    return curve_from_histogram(histogram, n_agents, sizes)


def gram_matrix(solved: BoolArray, weights: npt.ArrayLike | None = None) -> FloatArray:
    """Joint solve counts J[..., a, b] = Σ_t w_t y_at y_bt over the last axis (batched).

    float32 products of 0/1 values are exact while the counts stay below 2^24.
    """
    rows = solved.astype(np.float32)
    if weights is None:
        weighted = rows
    else:
        weighted = rows * np.asarray(weights, dtype=np.float32)[..., None, :]
    exact_limit = float(2**24)
    total = solved.shape[-1] if weights is None else float(np.max(np.sum(weights, axis=-1)))
    if total >= exact_limit:
        rows = rows.astype(np.float64)
        weighted = weighted.astype(np.float64)
    gram: FloatArray = (weighted @ np.swapaxes(rows, -1, -2)).astype(np.float64)
    return gram


def phi_from_gram(gram: FloatArray, n_tasks: npt.ArrayLike) -> FloatArray:
    """Pairwise φ from joint counts (diagonal = solve counts); NaN where the denominator is 0."""
    n = np.asarray(n_tasks, dtype=np.float64)[..., None, None]
    rates = np.diagonal(gram, axis1=-2, axis2=-1) / n[..., 0]
    joint = gram / n
    spread = rates * (1.0 - rates)
    denominator = np.sqrt(spread[..., :, None] * spread[..., None, :])
    numerator = joint - rates[..., :, None] * rates[..., None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        phi: FloatArray = np.where(denominator > 0.0, numerator / denominator, np.nan)
    return phi


def mean_phi_from_gram(gram: FloatArray, n_tasks: npt.ArrayLike) -> FloatArray:
    """φ̄ over unordered pairs with a non-zero denominator (0 when there are none), batched."""
    phi = phi_from_gram(gram, n_tasks)
    size = phi.shape[-1]
    upper_rows, upper_cols = np.triu_indices(size, k=1)
    pairs = phi[..., upper_rows, upper_cols]
    valid = ~np.isnan(pairs)
    count = valid.sum(axis=-1)
    total = np.where(valid, pairs, 0.0).sum(axis=-1)
    mean: FloatArray = np.where(count > 0, total / np.maximum(count, 1), 0.0)
    return mean


def mean_pairwise_phi(solved: BoolArray) -> float:
    """φ̄ of the agents (rows) of ``solved`` over all its tasks."""
    return float(mean_phi_from_gram(gram_matrix(solved), solved.shape[1]))
