"""The Rasch forecaster of the preregistration (teams §4 "Rasch").

P(agent j solves task t) = σ(a_j − b_t), σ(x) = 1/(1 + e^(−x)) and exactly 0 for
x ≤ −35. Abilities a_j and difficulties b_t start at 0 and take 25 alternating
Newton sweeps with ridge precision λ = 0.01 (chosen on verified, as the
preregistration discloses). The forecast is

    C(m) = (1/N) Σ_t [1 − (1 − q_t)^m],   q_t = mean_j σ(a_j − b_t).

Tasks with identical pilot columns get identical difficulties, so they are
fitted once as a column pattern with a multiplicity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from foreseen.teams.forecasters.base import (
    BoolArray,
    CoverageForecast,
    FloatArray,
    Forecaster,
    as_pilot,
    check_sizes,
)

RASCH_SWEEPS = 25
RASCH_PRECISION = 0.01
SIGMOID_CUTOFF = -35.0


def sigmoid(x: FloatArray) -> FloatArray:
    """σ(x) = 1/(1 + e^(−x)), exactly 0 for x ≤ −35 (teams §4)."""
    values = np.asarray(x)
    return sigmoid_in_place(values.astype(np.result_type(values, SIGMOID_CUTOFF), copy=True))


def sigmoid_in_place(x: FloatArray) -> FloatArray:
    """:func:`sigmoid` written over ``x`` (a floating array) and returned: the same
    operations element by element (max with −35, negate, exp, 1 + ·, 1/·, 0 at the
    cut-off), so the same values, without a temporary array per operation."""
    cut = x <= SIGMOID_CUTOFF
    np.maximum(x, SIGMOID_CUTOFF, out=x)
    np.negative(x, out=x)
    np.exp(x, out=x)
    np.add(1.0, x, out=x)
    np.divide(1.0, x, out=x)
    x[cut] = 0.0
    return x


def column_patterns(pilot: BoolArray) -> tuple[FloatArray, FloatArray]:
    """Distinct task columns of a k × N pilot and their multiplicities (k × U, U).

    The columns come in lexicographic order (row 0 first, False < True), the
    order of ``np.unique(pilot.T, axis=0)``. For k ≤ 64 each column is packed
    into one big-endian integer key (row 0 the most significant bit), whose
    numeric order is that lexicographic order, and the keys are sorted as
    integers — the same patterns and counts as the row-wise ``np.unique``,
    without its sort of k-byte records (the cost of large matrices).
    """
    k = pilot.shape[0]
    if k > 64 or pilot.shape[1] == 0:
        patterns, counts = np.unique(pilot.T, axis=0, return_counts=True)
        return patterns.T.astype(np.float64), counts.astype(np.float64)
    packed = np.packbits(pilot, axis=0, bitorder="big")  # ceil(k/8) × N bytes
    wide = np.zeros((8, pilot.shape[1]), dtype=np.uint8)
    wide[8 - packed.shape[0]:] = packed  # right-aligned: leading zero bytes
    keys = np.ascontiguousarray(wide.T).view(">u8").ravel()
    _, first, counts = np.unique(keys, return_index=True, return_counts=True)
    return pilot[:, first].astype(np.float64), counts.astype(np.float64)


@dataclass(frozen=True)
class RaschForecast(CoverageForecast):
    """(1/N) Σ_t [1 − (1 − q_t)^m], tasks grouped into column patterns with weights."""

    task_rates: FloatArray  # q per pattern, shape (P…, U)
    pattern_weights: FloatArray  # multiplicity per pattern (0 = padding), shape (P…, U)

    def curve(self, sizes: npt.ArrayLike) -> FloatArray:
        m = check_sizes(sizes)
        miss = (1.0 - self.task_rates[..., :, None]) ** m
        covered = (self.pattern_weights[..., :, None] * (1.0 - miss)).sum(axis=-2)
        result: FloatArray = covered / self.pattern_weights.sum(axis=-1)[..., None]
        return result


def rasch_sweeps(
    outcomes: FloatArray, weights: FloatArray, sweeps: int = RASCH_SWEEPS
) -> tuple[FloatArray, FloatArray]:
    """Alternating Newton sweeps of teams §4 on (P…, k, U) outcomes with task weights (P…, U).

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
    prob = np.empty(outcomes.shape, dtype=np.float64)  # σ(a_j − b_t), rewritten in place
    term = np.empty(outcomes.shape, dtype=np.float64)  # the summands, rewritten in place
    for _ in range(sweeps):
        sigmoid_in_place(np.subtract(abilities[..., :, None], difficulties[..., None, :],
                                     out=prob))
        gradient = -RASCH_PRECISION * difficulties + np.subtract(prob, outcomes,
                                                                 out=term).sum(axis=-2)
        np.subtract(1.0, prob, out=term)
        curvature = RASCH_PRECISION + np.multiply(prob, term, out=term).sum(axis=-2)
        difficulties = difficulties + gradient / curvature
        sigmoid_in_place(np.subtract(abilities[..., :, None], difficulties[..., None, :],
                                     out=prob))
        np.subtract(outcomes, prob, out=term)
        gradient = -RASCH_PRECISION * abilities + np.multiply(task_weights, term,
                                                              out=term).sum(axis=-1)
        np.multiply(task_weights, prob, out=term)  # (w·σ)·(1 − σ), in this order
        curvature = RASCH_PRECISION + np.multiply(term, np.subtract(1.0, prob, out=prob),
                                                  out=term).sum(axis=-1)
        abilities = abilities + gradient / curvature
    return abilities, difficulties


class Rasch(Forecaster):
    """Rasch model: abilities a_j, difficulties b_t (ridge precision 0.01), 25 Newton sweeps."""

    name = "rasch"
    family = "preregistered"

    def __init__(self, sweeps: int = RASCH_SWEEPS) -> None:
        self.sweeps = sweeps

    def fit(self, pilot: npt.ArrayLike) -> CoverageForecast:
        outcomes = as_pilot(pilot)
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
