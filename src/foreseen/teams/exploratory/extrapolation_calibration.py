"""Accuracy and interval calibration at each extrapolation point (``teams calibrate``).

For one population (the competent agents of a matrix, M of them) and each
pilot size k with 3 ≤ k ≤ M − 2 (a pilot leaves at least two agents out;
other sizes are skipped with the reason), P held-out pilots of k agents are
drawn (:func:`foreseen.teams.exploratory.calibration.draw_pilot_indices`,
seeded by (seed, k)); when C(M, k) ≤ P, every one of the C(M, k) pilots is
used once instead (``exhaustive``), so the shares carry no pilot-sampling error
(the forecasts' own seeded draws, sub-pilots and bootstrap replicates, still
move them: another ``--seed`` gives slightly different shares).
The extrapolation points are m = 2k and m = 4k when below M, and
m = M (sizes at or below k are not extrapolation and are not scored). For
each forecaster and each point m separately:

* error = mean over pilots of |f(m) − C(m)|, bias = mean of f(m) − C(m);
* coverage at level L = share of pilots whose level-L interval holds C(m)
  (ends included), for L in 50 / 80 / 95 %;
* width = mean over pilots of upper − lower;
* Monte Carlo standard error of a coverage at level L = √(L(1 − L)/P), the
  pilot-sampling error of the share over P independent pilots if the interval
  were calibrated (0 when the pilots are exhaustive; the forecasts' own
  random draws are not counted in it).

C(m) is the exact population curve (teams §3). Beside it each point records
its identified range (:mod:`foreseen.teams.exploratory.identification`): the
smallest and largest C(m) of every population whose pilots of k have the same
expected counts, the part of the extrapolation the pilots cannot tell.
The forecasters are
the default :mod:`pilot-calibrated forecast <foreseen.teams.exploratory.pilot_calibrated>`
and, for reference, registered forecasters with their task × agent bootstrap
percentile intervals (:mod:`foreseen.teams.exploratory.intervals`).

Exploratory: on the public matrices the forecasters are judged on data that
has been seen; seeded synthetic matrices (:mod:`foreseen.teams.exploratory.synthetic_matrices`)
have a structure fixed before the run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import numpy.typing as npt

from foreseen.core.errors import ConfigError
from foreseen.core.schema import OPTIONAL
from foreseen.core.seeds import E046_SEED
from foreseen.teams.curves import population_curve
from foreseen.teams.exploratory.calibration import (
    EXPLORATORY,
    SkippedPilotSize,
    draw_pilot_indices,
    level_key,
)
from foreseen.teams.exploratory.identification import (
    IdentifiedRange,
    population_identified_ranges,
)
from foreseen.teams.exploratory.intervals import IntervalForecast, batched_intervals
from foreseen.teams.exploratory.pilot_calibrated import (
    DEFAULT_LEVELS,
    NAME,
    pilot_calibrated_forecasts,
)
from foreseen.teams.forecasters.registry import get

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]

#: a pilot of k agents is scored only when it leaves at least this many of the M agents out
MIN_HELD_OUT = 2
DEFAULT_KS = (5, 10, 20)
DEFAULT_PILOTS = 60
DEFAULT_REPLICATES = 100
DEFAULT_SEED = E046_SEED
DEFAULT_REFERENCES = ("beta_binomial", "incidence", "kish")


@dataclass(frozen=True)
class PointMetrics:
    """One forecaster at one extrapolation point: error, bias, coverage and width by level."""

    mae: float
    bias: float
    coverage: dict[str, float]
    width: dict[str, float]


@dataclass(frozen=True)
class PilotSizeCalibration:
    """Every forecaster's metrics at each extrapolation point, for pilots of one size.

    ``pilots``: pilots scored; ``exhaustive``: every k-subset of the M agents
    once; ``coverage_se``: level → Monte Carlo standard error of a coverage
    share; ``identified``: team size → the identified range of C(m). All four
    are absent (None) in files written before they were recorded, whose pilots
    are the matrix's ``pilots``.
    """

    sizes: tuple[int, ...]
    truth: dict[str, float]
    forecasters: dict[str, dict[str, PointMetrics]]
    pilots: int | None = field(default=None, metadata=OPTIONAL)
    exhaustive: bool | None = field(default=None, metadata=OPTIONAL)
    coverage_se: dict[str, float] | None = field(default=None, metadata=OPTIONAL)
    identified: dict[str, IdentifiedRange] | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class MatrixCalibration:
    """The calibration of one matrix's competent agents, by pilot size."""

    status: str
    name: str
    competent_agents: int
    tasks: int
    pilots: int
    replicates: int
    seed: int
    levels: tuple[str, ...]
    default_forecaster: str
    by_k: dict[str, PilotSizeCalibration | SkippedPilotSize]


@dataclass(frozen=True)
class CalibrationStudy:
    """The ``teams calibrate`` artefact: one block per matrix."""

    status: str
    ks: tuple[int, ...]
    levels: tuple[str, ...]
    matrices: dict[str, MatrixCalibration]


def extrapolation_sizes(k: int, population: int) -> tuple[int, ...]:
    """m = 2k and 4k when below M, then M (spec: sizes at or below k are not scored)."""
    return (*(m for m in (2 * k, 4 * k) if m < population), population)


def point_metrics(forecasts: Sequence[IntervalForecast], truth: FloatArray, column: int,
                  levels: Sequence[float]) -> PointMetrics:
    """Error, bias, coverage and width at one size over the pilots' forecasts."""
    target = float(truth[column])
    signed = np.array([f.point[column] for f in forecasts]) - target
    coverage: dict[str, float] = {}
    width: dict[str, float] = {}
    for level in levels:
        low = np.array([f.lower[level][column] for f in forecasts])
        high = np.array([f.upper[level][column] for f in forecasts])
        coverage[level_key(level)] = float(((low <= target) & (target <= high)).mean())
        width[level_key(level)] = float((high - low).mean())
    return PointMetrics(float(np.abs(signed).mean()), float(signed.mean()), coverage, width)


def held_out_pilots(population: int, k: int, pilots: int, seed: int) -> IntArray:
    """Every k-subset of the M agents when there are at most P of them, else P seeded draws."""
    if math.comb(population, k) <= pilots:
        return np.asarray(list(combinations(range(population), k)), dtype=np.int64)
    return draw_pilot_indices(population, k, pilots, seed)


def coverage_standard_errors(levels: Sequence[float], pilots: int, exhaustive: bool
                             ) -> dict[str, float]:
    """Level → √(L(1 − L)/P), the pilot-sampling error, or 0 for exhaustive pilots (module
    docstring)."""
    return {level_key(level): 0.0 if exhaustive else math.sqrt(level * (1.0 - level) / pilots)
            for level in levels}


def forecasts_at_k(solved: BoolArray, indices: IntArray, sizes: Sequence[int], *,
                   replicates: int, seed: int, levels: Sequence[float],
                   references: Sequence[str]) -> dict[str, list[IntervalForecast]]:
    """Each forecaster's interval forecasts for the pilots ``indices`` (P × k)."""
    population = solved.shape[0]
    pilots = indices.shape[0]
    stack = solved[indices]
    forecasts: dict[str, list[IntervalForecast]] = {
        NAME: pilot_calibrated_forecasts(stack, population, sizes,
                                         [seed * 1_000_003 + p for p in range(pilots)],
                                         levels=levels)}
    if references:
        forecasts.update(batched_intervals(
            stack, references, sizes, [seed * 1_000_003 + p for p in range(pilots)],
            levels=levels, replicates=replicates))
    return forecasts


def calibrate_at_k(solved: BoolArray, k: int, *, pilots: int, replicates: int, seed: int,
                   levels: Sequence[float], references: Sequence[str]
                   ) -> PilotSizeCalibration | SkippedPilotSize:
    """Metrics at each extrapolation point for pilots of size k (module docstring)."""
    population = solved.shape[0]
    if not 3 <= k <= population - MIN_HELD_OUT:
        return SkippedPilotSize(f"pilot size {k} must be at least 3 and leave at least "
                                f"{MIN_HELD_OUT} of the M = {population} agents out")
    sizes = extrapolation_sizes(k, population)
    truth = population_curve(solved, list(sizes))
    indices = held_out_pilots(population, k, pilots, seed)
    exhaustive = math.comb(population, k) <= pilots
    forecasts = forecasts_at_k(solved, indices, sizes, replicates=replicates,
                               seed=seed, levels=levels, references=references)
    return PilotSizeCalibration(
        sizes=sizes,
        truth={str(m): float(value) for m, value in zip(sizes, truth, strict=True)},
        forecasters={name: {str(m): point_metrics(runs, truth, column, levels)
                            for column, m in enumerate(sizes)}
                     for name, runs in forecasts.items()},
        pilots=int(indices.shape[0]),
        exhaustive=exhaustive,
        coverage_se=coverage_standard_errors(levels, int(indices.shape[0]), exhaustive),
        identified={str(m): bounds
                    for m, bounds in population_identified_ranges(solved, k, sizes).items()},
    )


def check_calibration_settings(ks: Sequence[int], pilots: int, replicates: int,
                               references: Sequence[str]) -> None:
    """One-line :class:`ConfigError` for settings no calibration can use."""
    if pilots < 2 or replicates < 1:
        raise ConfigError("calibration needs at least 2 pilots and 1 replicate")
    if any(k < 3 for k in ks):
        raise ConfigError("every pilot size k must be at least 3 (a sub-pilot needs 2 agents)")
    for name in references:
        get(name)


def calibrate_matrix(name: str, solved: BoolArray, ks: Sequence[int] = DEFAULT_KS, *,
                     pilots: int = DEFAULT_PILOTS, replicates: int = DEFAULT_REPLICATES,
                     seed: int = DEFAULT_SEED, levels: Sequence[float] = DEFAULT_LEVELS,
                     references: Sequence[str] = DEFAULT_REFERENCES) -> MatrixCalibration:
    """The calibration of one population (its competent agents' matrix) at each k."""
    check_calibration_settings(ks, pilots, replicates, references)
    return MatrixCalibration(
        status=EXPLORATORY,
        name=name,
        competent_agents=solved.shape[0],
        tasks=solved.shape[1],
        pilots=pilots,
        replicates=replicates,
        seed=seed,
        levels=tuple(level_key(level) for level in levels),
        default_forecaster=NAME,
        by_k={str(k): calibrate_at_k(solved, k, pilots=pilots, replicates=replicates,
                                     seed=seed, levels=levels, references=references)
              for k in ks},
    )
