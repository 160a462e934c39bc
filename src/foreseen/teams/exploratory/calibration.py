"""Calibration of the forecast intervals over many pilots (exploratory).

For a population (the competent agents of a split, M of them) and a pilot size
k, draw P pilots (k agents without replacement, ``numpy.random.default_rng``
seeded by (seed, k)); for each pilot and forecaster compute the point forecast
and the bootstrap intervals of :mod:`foreseen.teams.exploratory.intervals` at every m of
the grid (the last grid point is M: C(M) = 1 − floor/N, so the interval at M is
the floor's). The calibration of level L at size m is the share of pilots
whose level-L interval holds the true population value C(m) (ends included).
A well-calibrated 80 % interval holds the truth for about 80 % of pilots.

Exploratory: the population is the data the forecasters are judged on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from foreseen.teams.curves import coverage_grid, population_curve
from foreseen.teams.exploratory.intervals import DEFAULT_LEVELS, batched_intervals
from foreseen.teams.forecasters.registry import FORECASTERS

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

EXPLORATORY = "exploratory on data that has been seen"
DEFAULT_PILOTS = 20
DEFAULT_CALIBRATION_REPLICATES = 100


@dataclass(frozen=True)
class SkippedPilotSize:
    """A pilot size that was not run, and why."""

    skipped: str


@dataclass(frozen=True)
class LevelCalibration:
    """Share of pilots whose interval holds C(m), per team size m and over the whole grid."""

    by_size: dict[str, float]
    over_grid: float


@dataclass(frozen=True)
class CalibrationAtK:
    """Calibration of every forecaster for pilots of one size: forecaster → level → shares."""

    grid: tuple[int, ...]
    calibration: dict[str, dict[str, LevelCalibration]]


@dataclass(frozen=True)
class CalibrationReport:
    """Interval calibration of each forecaster for pilots of each size (exploratory)."""

    status: str
    population_agents: int
    pilots: int
    replicates: int
    seed: int
    levels: tuple[str, ...]
    by_k: dict[str, CalibrationAtK | SkippedPilotSize]


@dataclass(frozen=True)
class PilotRun:
    """Forecasts of every forecaster for P pilots of size k of one population."""

    k: int
    grid: list[int]
    truth: FloatArray  # C(m) on the grid
    pilots: IntArray  # agent indices, P × k
    point: dict[str, FloatArray]  # P × G
    lower: dict[str, dict[float, FloatArray]]  # level → P × G
    upper: dict[str, dict[float, FloatArray]]


def draw_pilot_indices(n_agents: int, k: int, pilots: int, seed: int) -> IntArray:
    """P pilots of k distinct agents, from ``default_rng([seed, k])``."""
    if not 1 <= k <= n_agents:
        raise ValueError(f"pilot size {k} must lie in [1, {n_agents}]")
    rng = np.random.default_rng([seed, k])
    drawn = [np.sort(rng.choice(n_agents, size=k, replace=False)) for _ in range(pilots)]
    return np.asarray(drawn, dtype=np.int64).reshape(pilots, k)


def run_pilots(
    solved: BoolArray,
    k: int,
    *,
    pilots: int = DEFAULT_PILOTS,
    forecasters: Sequence[str] | None = None,
    levels: Sequence[float] = DEFAULT_LEVELS,
    replicates: int = DEFAULT_CALIBRATION_REPLICATES,
    seed: int = 0,
) -> PilotRun:
    """Point forecasts and intervals of each forecaster for P seeded pilots of size k."""
    names = list(FORECASTERS) if forecasters is None else list(forecasters)
    n_agents = solved.shape[0]
    grid = coverage_grid(n_agents)
    truth = population_curve(solved, grid)
    indices = draw_pilot_indices(n_agents, k, pilots, seed)
    point = {name: np.empty((pilots, len(grid))) for name in names}
    lower = {name: {level: np.empty((pilots, len(grid))) for level in levels} for name in names}
    upper = {name: {level: np.empty((pilots, len(grid))) for level in levels} for name in names}
    batched = batched_intervals(
        solved[indices], names, grid, [seed * 1_000_003 + p for p in range(pilots)],
        levels=levels, replicates=replicates,
    )
    for name, forecasts in batched.items():
        for p, forecast in enumerate(forecasts):
            point[name][p] = forecast.point
            for level in levels:
                lower[name][level][p] = forecast.lower[level]
                upper[name][level][p] = forecast.upper[level]
    return PilotRun(k, grid, truth, indices, point, lower, upper)


def hit_shares(run: PilotRun, name: str, level: float) -> FloatArray:
    """Share of pilots whose level interval holds C(m), per grid size m."""
    holds = (run.lower[name][level] <= run.truth) & (run.truth <= run.upper[name][level])
    shares: FloatArray = holds.mean(axis=0)
    return shares


def level_key(level: float) -> str:
    """JSON key of an interval level: 0.8 → "80%"."""
    return f"{100.0 * level:g}%"


def calibration_block(
    run: PilotRun, levels: Sequence[float]
) -> dict[str, dict[str, LevelCalibration]]:
    """Per forecaster: for each level, the share at each m and over the whole grid."""
    block: dict[str, dict[str, LevelCalibration]] = {}
    for name in run.point:
        block[name] = {}
        for level in levels:
            shares = hit_shares(run, name, level)
            block[name][level_key(level)] = LevelCalibration(
                by_size={str(m): float(share) for m, share in zip(run.grid, shares, strict=True)},
                over_grid=float(shares.mean()),
            )
    return block


def calibration_report(
    solved: BoolArray,
    ks: Sequence[int],
    *,
    pilots: int = DEFAULT_PILOTS,
    forecasters: Sequence[str] | None = None,
    levels: Sequence[float] = DEFAULT_LEVELS,
    replicates: int = DEFAULT_CALIBRATION_REPLICATES,
    seed: int = 0,
) -> CalibrationReport:
    """Interval calibration of each forecaster for pilots of each size in ``ks`` (< M)."""
    n_agents = solved.shape[0]
    by_k: dict[str, CalibrationAtK | SkippedPilotSize] = {}
    for k in ks:
        if k >= n_agents:
            by_k[str(k)] = SkippedPilotSize(f"pilot size {k} is not below the {n_agents} agents")
            continue
        run = run_pilots(
            solved, k, pilots=pilots, forecasters=forecasters, levels=levels,
            replicates=replicates, seed=seed,
        )
        by_k[str(k)] = CalibrationAtK(grid=tuple(run.grid),
                                      calibration=calibration_block(run, levels))
    return CalibrationReport(
        status=EXPLORATORY,
        population_agents=n_agents,
        pilots=pilots,
        replicates=replicates,
        seed=seed,
        levels=tuple(level_key(level) for level in levels),
        by_k=by_k,
    )
