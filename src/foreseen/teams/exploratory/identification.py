"""How much of C(m) a pilot of k agents can tell: the identified range of each extrapolation.

Exploratory (teams §7, a diagnostic of ``teams calibrate``). Write G(c) for the
share of the N tasks solved by exactly c of the M agents (c = 0..M). The
population curve is linear in G (teams §3):

    C(m) = Σ_c G(c) · f_m(c),   f_m(c) = 1 − binom(M − c, m)/binom(M, m).

A pilot of k agents drawn without replacement sees a task solved by c of the M
in s ~ Hypergeometric(M, c, k) of its agents, so the expected pilot histogram
(the share of tasks solved by exactly j pilot agents, j = 0..k) is also linear
in G:

    h_j = Σ_c G(c) · H(j; M, c, k),   H(j; M, c, k) = binom(c, j) binom(M − c, k − j)/binom(M, k).

Every law G' ≥ 0 with Σ_c G'(c) = 1 and H G' = h gives pilots the same expected
histogram as G. The *identified range* of C(m) is the smallest and largest
Σ_c G'(c) f_m(c) over those laws: two linear programmes in the M + 1 shares
(solved with HiGHS through :func:`scipy.optimize.linprog`). Its width W says
how far apart two populations can be at m while their pilots' expected counts
agree exactly.

* For m ≤ k the range is the single point C(m): f_m is itself a combination of
  the kernel rows, Σ_j H(j; M, c, k)·[1 − binom(k − j, m)/binom(k, m)] = f_m(c)
  (the pilot's own rarefaction is unbiased for C(m)).
* For k = M the kernel is the identity (s = c), so G and every C(m) are known.
* Beyond k the range opens: a task no pilot agent solves may be solved by one
  of the other M − k agents or by none, and the expected counts weigh those two
  cases almost alike when k is small against M.

Why it matters for calibration: Pratt's identity (1961, "Length of confidence
intervals", JASA 56(295)) says the expected length of an interval is the
integral over values t of its probability of covering t. If a pilot's data
depended on the population only through its expected counts (as when each
task's solvers are a uniformly random c of the M agents, independently across
tasks), every law in the identified set would give pilots the same data, and an
interval whose coverage is at least L − δ for all of them would be on average
at least (L − δ)·W wide: the identified values of C(m) fill [lower, upper] (the
set of laws is convex and C(m) is linear). On a real matrix a pilot's counts
carry more than their expectation (which agents were drawn moves them all at
once), so W is a guide to what the counts can settle, not a proven bound. The
range is computed from the population (the calibration harness knows it), not
from a pilot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from foreseen.teams.curves import miss_probabilities, solver_counts

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

#: how far (in coverage) a linear-programme optimum may stray past the feasible law's own C(m)
#: before it is a fault rather than the solver's rounding (observed: about 1e-9)
SOLVER_TOLERANCE = 1e-6


@dataclass(frozen=True)
class IdentifiedRange:
    """The smallest and largest C(m) of the laws with the pilot's expected histogram."""

    lower: float
    upper: float

    @property
    def width(self) -> float:
        """W = upper − lower (0 when the pilot's expected counts pin C(m) down)."""
        return self.upper - self.lower


def hypergeometric_kernel(n_agents: int, k: int) -> FloatArray:
    """H[j, c] = binom(c, j) binom(M − c, k − j)/binom(M, k) (M = ``n_agents``): the chance
    that a task solved by c of the M agents is solved by exactly j of k agents drawn without
    replacement."""
    if not 1 <= k <= n_agents:
        raise ValueError(f"a pilot of {k} agents must lie within the population of "
                         f"{n_agents}")
    from scipy.stats import hypergeom

    solvers = np.arange(n_agents + 1)
    kernel: FloatArray = np.stack([hypergeom.pmf(j, n_agents, solvers, k)
                                   for j in range(k + 1)])
    return kernel


def solver_count_shares(solved: BoolArray) -> FloatArray:
    """G(c), c = 0..M: the share of tasks solved by exactly c of the M agents."""
    n_agents = solved.shape[0]
    counts = np.bincount(solver_counts(solved), minlength=n_agents + 1)
    shares: FloatArray = counts / counts.sum()
    return shares


def coverage_weights(n_agents: int, sizes: Sequence[int]) -> FloatArray:
    """f_m(c) = 1 − binom(M − c, m)/binom(M, m) (M = ``n_agents``) as a (M + 1) × sizes
    array."""
    weights: FloatArray = 1.0 - miss_probabilities(n_agents, np.asarray(sizes))
    return weights


def identified_ranges(shares: FloatArray, k: int, sizes: Sequence[int]
                      ) -> dict[int, IdentifiedRange]:
    """Team size → the identified range of C(m) for pilots of k drawn from a population whose
    solver-count law is ``shares`` (G(c), c = 0..M; module docstring). A RuntimeError if a
    programme fails or its optimum misses the law's own C(m) (:func:`checked_range`)."""
    from scipy.optimize import linprog

    n_agents = shares.shape[0] - 1
    kernel = hypergeometric_kernel(n_agents, k)
    expected = kernel @ shares
    # Σ_c G'(c) = 1 follows from H G' = h (each column of H sums to 1); it is stated anyway
    # so that the programme reads as written in the module docstring
    constraints = np.vstack([kernel, np.ones(n_agents + 1)])
    bounds = np.append(expected, 1.0)
    weights = coverage_weights(n_agents, sizes)
    ranges: dict[int, IdentifiedRange] = {}
    for column, m in enumerate(sizes):
        ends = []
        for sign in (1.0, -1.0):
            result = linprog(sign * weights[:, column], A_eq=constraints, b_eq=bounds,
                             bounds=(0, None), method="highs")
            if result.status != 0:
                raise RuntimeError(f"the identified range at m = {m} has no solution "
                                   f"({result.message})")
            ends.append(sign * float(result.fun))
        ranges[int(m)] = checked_range(ends[0], ends[1], float(shares @ weights[:, column]), m)
    return ranges


def checked_range(lower: float, upper: float, truth: float, m: int) -> IdentifiedRange:
    """The range from the two optima, which must hold the law's own C(m) (it is feasible).

    An optimum beyond the truth by more than :data:`SOLVER_TOLERANCE` is a fault (a
    RuntimeError), not rounding; within it, each end is moved onto the truth, and both are
    kept in [0, 1], where every C(m) lies.
    """
    if lower > truth + SOLVER_TOLERANCE or upper < truth - SOLVER_TOLERANCE:
        raise RuntimeError(f"the identified range at m = {m}, [{lower:.9f}, {upper:.9f}], "
                           f"misses the population's own C(m) = {truth:.9f}")
    return IdentifiedRange(max(min(lower, truth), 0.0), min(max(upper, truth), 1.0))


def population_identified_ranges(solved: BoolArray, k: int, sizes: Sequence[int]
                                 ) -> dict[int, IdentifiedRange]:
    """The identified range of C(m) at each size for pilots of k from the matrix ``solved``."""
    return identified_ranges(solver_count_shares(solved), k, sizes)
