"""Pilot statistics from agent indices, without building the P × k × N pilot stack.

``pilot_stats(solved, pilots, weights)`` equals
``PilotStats.from_pilot(solved[pilots], weights)`` (teams §4 "pilot
statistics") for integer task weights, value for value: the protocol draws
hundreds of pilots of a matrix with up to hundreds of thousands of tasks, and
the stack (and its float32 copy for the Gram matrix) would take gigabytes.

* Histogram Q_pj = Σ_t w_t [c_pt = j] with c_pt = Σ_{a ∈ pilot p} y_at: the counts
  are summed in 16-bit integers straight from the matrix rows, one pilot at a
  time, and counted with ``bincount``.
* Joint solve counts J_p[a, b] = Σ_t w_t y_at y_bt (φ̄ needs them): without
  weights they are entries of the whole matrix's J = Y Yᵀ, computed once; with
  weights and k ≤ :data:`PATTERN_MAX_K`, each task's pilot column is coded as
  one 16-bit integer ``code_pt = Σ_i 2^i y_{p_i t}``, the weights are summed per code,
  W_pc = Σ_t w_t [code_pt = c], and J_p[i, l] = Σ_c W_pc bit_i(c) bit_l(c);
  otherwise the stack is built a few pilots at a time.

Memory: one N-vector per pilot at a time, instead of the P × k × N stack.

With no weights, or non-negative integer weights totalling less than 2^24
(bootstrap multiplicities), every entry is an integer that both these routes
and the stack's float32 products hold exactly, so each route gives the same
float64 values as :meth:`PilotStats.from_pilot`, whatever the order of
summation; φ̄ then comes from the same :func:`mean_phi_from_gram` over the whole
batch of pilots. Small inputs (at most :data:`STACK_CELLS` cells in the
stack) take their histograms from the stack, and with such weights their joint
counts from the whole matrix's J = Y diag(w) Yᵀ when that is the cheaper product
(:func:`_whole_gram_is_cheaper`). Everything else takes the stack route (a few
pilots at a time, the same arithmetic as there): other small inputs, other
weights, pilots of more than :data:`MAX_COUNTED_K` agents, and weighted φ̄ when
2^k exceeds the number of tasks or k exceeds :data:`PATTERN_MAX_K`.
"""

from __future__ import annotations

import functools

import numpy as np
import numpy.typing as npt

from foreseen.teams.curves import gram_matrix, mean_phi_from_gram
from foreseen.teams.forecasters.base import BoolArray, FloatArray, PilotStats

IntArray = npt.NDArray[np.int64]

PATTERN_MAX_K = 12
CELLS_PER_CHUNK = 8_000_000
#: a pilot stack of at most this many cells is simply built (cheapest when small)
STACK_CELLS = 4_000_000
#: resamples whose pilot stacks are built together hold at most this many cells (the
#: stack's counts and weights take 16 bytes a cell)
RESAMPLED_STACK_CELLS = 500_000
#: pilot sizes whose solver counts fit the 16-bit counters
MAX_COUNTED_K = 65_535
#: the whole matrix's weighted J is computed when M² ≤ this × P·k² (one product beats P small)
WHOLE_GRAM_FACTOR = 2
#: products of at most this many multiply-adds run on one thread in OpenBLAS (its threshold
#: is 2^16 × 4): the whole matrix's weighted J is computed in blocks of rows that small, as
#: waking the thread pool for each of the bootstrap's products costs more CPU than it saves
SINGLE_THREAD_PRODUCT = 1 << 18


def _pilots_per_chunk(n_tasks: int, per_pilot: int = 1) -> int:
    return max(1, CELLS_PER_CHUNK // max(1, n_tasks * per_pilot))


def _counted(values: npt.NDArray[np.uint16], bins: int, weights: FloatArray | None) -> FloatArray:
    """(Weighted) number of tasks with each value 0 … bins − 1."""
    counted: FloatArray = np.bincount(values, weights=weights, minlength=bins).astype(np.float64)
    return counted


def _histograms(rows: npt.NDArray[np.uint8], pilots: IntArray,
                weights: FloatArray | None) -> FloatArray:
    """Q_pj for every pilot (P × (k + 1)), from c_pt summed over the pilot's rows."""
    k = pilots.shape[1]
    histogram = np.empty((pilots.shape[0], k + 1), dtype=np.float64)
    for index, members in enumerate(pilots.tolist()):
        counts = np.zeros(rows.shape[1], dtype=np.uint16)
        for member in members:
            counts += rows[member]
        histogram[index] = _counted(counts, k + 1, weights)
    return histogram


@functools.lru_cache(maxsize=PATTERN_MAX_K + 1)
def _pattern_tables(k: int) -> tuple[FloatArray, FloatArray]:
    """For every code c < 2^k: one-hot of its number of set bits (2^k × (k + 1)) and its
    bit products bit_i(c)·bit_l(c) (2^k × k²); read-only."""
    codes = np.arange(1 << k, dtype=np.int64)
    bits = ((codes[:, None] >> np.arange(k, dtype=np.int64)) & 1).astype(np.float64)
    by_count = np.zeros((1 << k, k + 1), dtype=np.float64)
    by_count[codes, bits.sum(axis=1).astype(np.int64)] = 1.0
    pairs = (bits[:, :, None] * bits[:, None, :]).reshape(1 << k, k * k)
    by_count.setflags(write=False)
    pairs.setflags(write=False)
    return by_count, pairs


def _weighted_by_pattern(rows: npt.NDArray[np.uint8], pilots: IntArray,
                         weights: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Histograms and joint counts of weighted pilots from their column codes."""
    k = pilots.shape[1]
    by_count, pairs = _pattern_tables(k)
    per_code = np.empty((pilots.shape[0], 1 << k), dtype=np.float64)
    for index, members in enumerate(pilots.tolist()):
        code = np.zeros(rows.shape[1], dtype=np.uint16)
        for member in reversed(members):  # Horner: code = 2·code + y, last member first
            code += code
            code += rows[member]
        per_code[index] = _counted(code, 1 << k, weights)
    histogram: FloatArray = per_code @ by_count
    gram: FloatArray = (per_code @ pairs).reshape(pilots.shape[0], k, k)
    return histogram, gram


def _exact_in_float32(weights: FloatArray) -> bool:
    """Non-negative integer weights whose total stays below 2^24: then the stack's float32
    joint counts (:func:`gram_matrix`) are exact, and so equal the integer routes'."""
    return bool(np.all(np.isfinite(weights)) and np.all(weights >= 0)
                and np.all(weights == np.round(weights)) and float(np.sum(weights)) < 2.0**24)


def pilot_stats(solved: BoolArray, pilots: npt.ArrayLike,
                weights: npt.ArrayLike | None = None, *, with_phi: bool = True,
                joint: FloatArray | None = None) -> PilotStats:
    """``PilotStats.from_pilot(solved[pilots], weights)`` from the P × k agent indices.

    ``joint``: the whole matrix's unweighted joint counts J = Y Yᵀ when the
    caller has them (used only without weights).
    """
    index = np.asarray(pilots, dtype=np.int64)
    if index.ndim != 2 or index.shape[1] == 0 or solved.ndim != 2 or solved.shape[1] == 0:
        raise ValueError("pilots must be a P × k index array into an agents × tasks matrix")
    task_weights = None if weights is None else np.asarray(weights, dtype=np.float64)
    if task_weights is not None and task_weights.shape != (solved.shape[1],):
        raise ValueError("weights must give one multiplicity per task")
    k = index.shape[1]
    n_tasks = solved.shape[1]
    weighted = task_weights is not None
    exact = task_weights is None or _exact_in_float32(task_weights)
    small = index.size * n_tasks <= STACK_CELLS
    if small and with_phi and exact and _whole_gram_is_cheaper(solved, index, joint, weighted):
        return _stacked_histograms_whole_gram(solved, index, task_weights, joint)
    if (small  # small: the stack is cheapest
            or k > MAX_COUNTED_K  # 16-bit counts would wrap
            or not exact
            or (weighted and with_phi and (k > PATTERN_MAX_K or (1 << k) > n_tasks))):
        return _stacked(solved, index, task_weights, with_phi)
    rows = solved.view(np.uint8)
    if task_weights is not None and with_phi:
        histogram, gram = _weighted_by_pattern(rows, index, task_weights)
    else:
        histogram = _histograms(rows, index, task_weights)
        if not with_phi:
            return PilotStats(k=k, histogram=histogram, mean_phi=None)
        whole = gram_matrix(solved) if joint is None else joint
        gram = whole[index[:, :, None], index[:, None, :]]
    mean_phi = mean_phi_from_gram(gram, histogram.sum(axis=-1))
    return PilotStats(k=k, histogram=histogram, mean_phi=np.asarray(mean_phi, dtype=np.float64))


def _whole_gram_is_cheaper(solved: BoolArray, pilots: IntArray, joint: FloatArray | None,
                           weighted: bool) -> bool:
    """Reading the pilots' joint counts from the whole matrix's beats the stack's products:
    always when the caller has the unweighted J, else when M² ≤ 2·P·k² (M agents, P pilots)."""
    if joint is not None and not weighted:
        return True
    agents = int(solved.shape[0])
    return agents * agents <= WHOLE_GRAM_FACTOR * int(pilots.size) * int(pilots.shape[1])


def _weighted_joint_counts(solved: BoolArray, weights: FloatArray) -> FloatArray:
    """J = Y diag(w) Yᵀ of the whole matrix in float32 (exact: integer weights totalling
    below 2^24), a block of rows at a time so that each product stays within
    :data:`SINGLE_THREAD_PRODUCT` multiply-adds."""
    agents, tasks = solved.shape
    rows = solved.astype(np.float32)
    weighted = rows * weights.astype(np.float32)
    joint = np.empty((agents, agents), dtype=np.float32)
    step = max(1, SINGLE_THREAD_PRODUCT // max(1, agents * tasks))
    for start in range(0, agents, step):
        np.matmul(weighted[start:start + step], rows.T, out=joint[start:start + step])
    counts: FloatArray = joint.astype(np.float64)
    return counts


def _stacked_histograms_whole_gram(solved: BoolArray, pilots: IntArray,
                                   weights: FloatArray | None,
                                   joint: FloatArray | None) -> PilotStats:
    """Histograms from the (small) pilot stack, joint counts J_p from the whole matrix's
    J = Y diag(w) Yᵀ (exact integers, so equal to the stack's)."""
    k = pilots.shape[1]
    histogram = PilotStats.from_pilot(solved[pilots], weights, with_phi=False).histogram
    if weights is None:
        whole = gram_matrix(solved) if joint is None else joint
    else:
        whole = _weighted_joint_counts(solved, weights)
    gram = whole[pilots[:, :, None], pilots[:, None, :]]
    mean_phi = mean_phi_from_gram(gram, histogram.sum(axis=-1))
    return PilotStats(k=k, histogram=histogram, mean_phi=np.asarray(mean_phi, dtype=np.float64))


def resampled_pilot_stats(solved: BoolArray, pilots: npt.ArrayLike,
                          weights: npt.ArrayLike) -> PilotStats:
    """``pilot_stats(solved, pilots[r], weights[r])`` for every resample r, stacked
    (R × P × …): R resamples of task multiplicities (R × N), P pilots of each (R × P × k).

    With non-negative integer multiplicities totalling below 2^24 (a bootstrap's),
    a few resamples at a time (at most :data:`RESAMPLED_STACK_CELLS` stack cells; a
    resample's stack no larger than :data:`STACK_CELLS`): histograms
    from their pilot stacks, joint counts from each resample's whole-matrix J or
    from the stack (:func:`_whole_gram_is_cheaper`) — integers either way, so the
    values are those of :func:`pilot_stats`; φ̄ and every later value computed
    element by element (or along the last axis) are unchanged by the extra axis.
    Otherwise resample by resample.
    """
    index = np.asarray(pilots, dtype=np.int64)
    task_weights = np.asarray(weights, dtype=np.float64)
    if (index.ndim != 3 or task_weights.ndim != 2 or index.shape[0] != task_weights.shape[0]
            or task_weights.shape[1] != solved.shape[1]):
        raise ValueError("pilots must be R × P × k and weights R × N, one row per resample")
    k = index.shape[2]
    per_resample = index.shape[1] * k * solved.shape[1]
    if (index.shape[0] == 0 or per_resample == 0 or per_resample > STACK_CELLS
            or not all(_exact_in_float32(row) for row in task_weights)):
        singles = [pilot_stats(solved, one, row) for one, row in zip(index, task_weights,
                                                                       strict=True)]
        return PilotStats(k=k, histogram=_stacked_field([one.histogram for one in singles],
                                                        (*index.shape[:2], k + 1)),
                          mean_phi=_stacked_field([one.phi() for one in singles],
                                                  index.shape[:2]))
    step = max(1, RESAMPLED_STACK_CELLS // per_resample)
    histograms, phis = [], []
    for start in range(0, index.shape[0], step):
        chunk, chunk_weights = index[start:start + step], task_weights[start:start + step]
        stack = solved[chunk]
        histogram = PilotStats.from_pilot(stack, chunk_weights[:, None, :],
                                          with_phi=False).histogram
        if _whole_gram_is_cheaper(solved, chunk[0], None, weighted=True):
            gram = np.stack([_weighted_joint_counts(solved, row)[one[:, :, None], one[:, None, :]]
                             for one, row in zip(chunk, chunk_weights, strict=True)])
        else:
            gram = gram_matrix(stack, chunk_weights[:, None, :])
        histograms.append(histogram)
        phis.append(np.asarray(mean_phi_from_gram(gram, histogram.sum(axis=-1)),
                               dtype=np.float64))
    return PilotStats(k=k, histogram=np.concatenate(histograms),
                      mean_phi=np.concatenate(phis))


def _stacked_field(values: list[FloatArray], shape: tuple[int, ...]) -> FloatArray:
    stacked: FloatArray = np.stack(values) if values else np.empty(shape, dtype=np.float64)
    return stacked


def _stacked(solved: BoolArray, pilots: IntArray, weights: FloatArray | None,
             with_phi: bool) -> PilotStats:
    """:meth:`PilotStats.from_pilot` on the pilot stack, built a few pilots at a time.

    φ̄ is computed once over all pilots' joint counts: numpy may order a
    reduction differently for another batch shape, and the values must be
    those of the whole stack.
    """
    step = _pilots_per_chunk(solved.shape[1], pilots.shape[1])
    chunks = [pilots[start:start + step] for start in range(0, pilots.shape[0], step)] or [pilots]
    histogram = np.concatenate([
        PilotStats.from_pilot(solved[chunk], weights, with_phi=False).histogram
        for chunk in chunks])
    if not with_phi:
        return PilotStats(k=pilots.shape[1], histogram=histogram, mean_phi=None)
    gram = np.concatenate([gram_matrix(solved[chunk], weights) for chunk in chunks])
    mean_phi = mean_phi_from_gram(gram, histogram.sum(axis=-1))
    return PilotStats(k=pilots.shape[1], histogram=histogram,
                      mean_phi=np.asarray(mean_phi, dtype=np.float64))
