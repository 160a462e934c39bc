"""Every coverage forecaster side by side on seeded pilots (the ``teams compare`` command).

For one population (the competent agents of a split, M of them; grid G of
teams §3 ending at M) and each pilot size k < M, P seeded pilots are
drawn (:func:`foreseen.teams.exploratory.calibration.draw_pilot_indices`). Per forecaster:

* curve MAE = mean over pilots and m ∈ G of |f(m) − C(m)| (teams §5 "curve error");
* population-coverage MAE = mean over pilots of |f(M) − C(M)|, and its bias
  (mean signed error); C(M) = 1 − floor/N;
* interval coverage = share of (pilot, m ∈ G) whose 80 % / 95 % bootstrap
  interval (:mod:`foreseen.teams.exploratory.intervals`) holds C(m), and the same share at M;
* interval coverage beyond the pilot = the same share at each extrapolation
  point m ∈ G with m > k separately (level → m → share): the averaged column
  includes sizes at or below k, where a forecast is not an extrapolation and
  reads kinder. Absent from files written before it existed.

Each row carries its forecaster's ``family`` tag from the registry
(``preregistered``: the seven forecasters of the E046 preregistration;
``exploratory``: maximum-likelihood and zero-inflated beta-binomial, 2PL IRT),
and ``conditional_<model>`` rows (family ``conditional``) give the conditional
population forecast of :mod:`foreseen.teams.forecasters.conditional` (the pilot
counted as part of the population): only a population coverage, so its curve
MAE and intervals are null with a reason.

Every (split, k) is one independent job (a pure function of the split's
competent matrix, k and the settings), so :func:`compare_splits` spreads them
over an :class:`~foreseen.core.parallel.Executor` (one session; the matrices
go to each worker once as its shared context) with the same result on any
executor.

Everything here is exploratory on data that has been seen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from foreseen.core.errors import ConfigError, SourceError
from foreseen.core.memory import check_array_fits
from foreseen.core.parallel import Executor, SerialExecutor, shared_context
from foreseen.core.progress import map_with_progress
from foreseen.core.schema import OPTIONAL
from foreseen.core.seeds import E046_SEED
from foreseen.teams.curves import coverage_grid, population_curve
from foreseen.teams.exploratory.calibration import (
    DEFAULT_CALIBRATION_REPLICATES,
    DEFAULT_PILOTS,
    EXPLORATORY,
    PilotRun,
    SkippedPilotSize,
    hit_shares,
    level_key,
    run_pilots,
)
from foreseen.teams.exploratory.intervals import DEFAULT_LEVELS
from foreseen.teams.forecasters.conditional import conditional_forecast
from foreseen.teams.forecasters.registry import FORECASTERS, get, names
from foreseen.teams.matrix import COMPETENCE_THRESHOLD, OutcomeMatrix

FloatArray = npt.NDArray[np.float64]
RowFamily = Literal["preregistered", "exploratory", "conditional"]

DEFAULT_KS = (5, 10, 20)
DEFAULT_SEED = E046_SEED
CONDITIONAL_MODELS = ("beta_binomial", "beta_binomial_ml", "zero_inflated_beta_binomial")
CONDITIONAL_PREFIX = "conditional_"
REFERENCE = "beta_binomial"
CONDITIONAL_CURVE_REASON = (
    "the conditional forecast is a forecast of the whole population only, not a curve"
)
CONDITIONAL_INTERVAL_REASON = "the conditional forecast has no bootstrap interval"
NOTE = (
    "exploratory on data that has been seen: the forecasters are judged on the same "
    "public matrices that motivated them; nothing here is a preregistered test"
)


@dataclass(frozen=True)
class ForecasterRow:
    """One forecaster's accuracy over the pilots of one size (null fields carry a reason)."""

    family: RowFamily
    curve_mae: float | None
    curve_mae_reason: str | None
    population_coverage_mae: float
    population_coverage_bias: float
    interval_coverage: dict[str, float | None]
    interval_coverage_at_population: dict[str, float | None]
    interval_coverage_reason: str | None
    interval_coverage_beyond_pilot: dict[str, dict[str, float | None]] | None = field(
        default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class BestExploratory:
    """The exploratory forecaster with the lowest population-coverage MAE, against beta_binomial."""

    best: str | None
    reason: str | None
    best_population_coverage_mae: float | None
    beta_binomial_population_coverage_mae: float | None
    difference: float | None
    beats_beta_binomial: bool | None


@dataclass(frozen=True)
class ComparisonAtK:
    """Every forecaster's row for the pilots of one size."""

    grid: tuple[int, ...]
    rows: dict[str, ForecasterRow]
    best_exploratory_versus_beta_binomial: BestExploratory


@dataclass(frozen=True)
class SplitComparison:
    """The comparison on one split's competent agents, by pilot size."""

    status: str
    split: str
    source: str
    competent_agents: int
    tasks: int
    population_curve: dict[str, float]
    pilots_per_k: int
    replicates: int
    levels: tuple[str, ...]
    seed: int
    by_k: dict[str, ComparisonAtK | SkippedPilotSize]


@dataclass(frozen=True)
class Comparison:
    """The ``teams compare`` artefact: every split's comparison, marked exploratory."""

    status: str
    note: str
    ks: tuple[int, ...]
    pilots_per_k: int
    replicates: int
    seed: int
    splits: dict[str, SplitComparison]


def row_family(name: str) -> RowFamily:
    """The family tag of a row: the registered forecaster's, or ``conditional``."""
    if name.startswith(CONDITIONAL_PREFIX):
        return "conditional"
    return get(name).family


def coverage_beyond_pilot(run: PilotRun, name: str, levels: Sequence[float]
                          ) -> dict[str, dict[str, float | None]]:
    """Level → extrapolation point m > k → share of pilots whose interval holds C(m)."""
    beyond: dict[str, dict[str, float | None]] = {}
    for level in levels:
        shares = hit_shares(run, name, level)
        at_sizes: dict[str, float | None] = {
            str(m): float(share) for m, share in zip(run.grid, shares, strict=True) if m > run.k}
        beyond[level_key(level)] = at_sizes
    return beyond


def forecaster_rows(run: PilotRun, levels: Sequence[float]) -> dict[str, ForecasterRow]:
    """Curve MAE, population-coverage MAE and bias, and interval coverage per forecaster."""
    rows: dict[str, ForecasterRow] = {}
    truth = run.truth
    for name, point in run.point.items():
        signed = point[:, -1] - truth[-1]
        rows[name] = ForecasterRow(
            family=row_family(name),
            curve_mae=float(np.abs(point - truth).mean()),
            curve_mae_reason=None,
            population_coverage_mae=float(np.abs(signed).mean()),
            population_coverage_bias=float(signed.mean()),
            interval_coverage={
                level_key(level): float(hit_shares(run, name, level).mean()) for level in levels
            },
            interval_coverage_at_population={
                level_key(level): float(hit_shares(run, name, level)[-1]) for level in levels
            },
            interval_coverage_reason=None,
            interval_coverage_beyond_pilot=coverage_beyond_pilot(run, name, levels),
        )
    return rows


def conditional_rows(
    solved: npt.NDArray[np.bool_], run: PilotRun, levels: Sequence[float],
    models: Sequence[str] = CONDITIONAL_MODELS,
) -> dict[str, ForecasterRow]:
    """Population-coverage rows of the conditional forecast, one per model."""
    population = solved.shape[0]
    truth = float(run.truth[-1])
    rows: dict[str, ForecasterRow] = {}
    for model in models:
        coverages = np.array(
            [conditional_forecast(solved[agents], population, model).coverage
             for agents in run.pilots],
            dtype=np.float64,
        )
        signed = coverages - truth
        rows[f"{CONDITIONAL_PREFIX}{model}"] = ForecasterRow(
            family="conditional",
            curve_mae=None,
            curve_mae_reason=CONDITIONAL_CURVE_REASON,
            population_coverage_mae=float(np.abs(signed).mean()),
            population_coverage_bias=float(signed.mean()),
            interval_coverage={level_key(level): None for level in levels},
            interval_coverage_at_population={level_key(level): None for level in levels},
            interval_coverage_reason=CONDITIONAL_INTERVAL_REASON,
            interval_coverage_beyond_pilot={
                level_key(level): {str(m): None for m in run.grid if m > run.k}
                for level in levels},
        )
    return rows


def best_exploratory_versus_reference(rows: dict[str, ForecasterRow]) -> BestExploratory:
    """The exploratory forecaster with the lowest population-coverage MAE against beta_binomial."""
    candidates = [name for name in names("exploratory") if name in rows]
    if not candidates or REFERENCE not in rows:
        return BestExploratory(
            best=None, reason="no exploratory forecaster or no beta_binomial row was run",
            best_population_coverage_mae=None, beta_binomial_population_coverage_mae=None,
            difference=None, beats_beta_binomial=None,
        )
    best = min(candidates, key=lambda name: rows[name].population_coverage_mae)
    best_mae = rows[best].population_coverage_mae
    reference_mae = rows[REFERENCE].population_coverage_mae
    return BestExploratory(
        best=best,
        reason=None,
        best_population_coverage_mae=best_mae,
        beta_binomial_population_coverage_mae=reference_mae,
        difference=best_mae - reference_mae,
        beats_beta_binomial=bool(best_mae < reference_mae),
    )


def _population_curve(solved: npt.NDArray[np.bool_]) -> dict[str, float]:
    """The exact population curve C(m) on the grid, keyed by m."""
    grid = coverage_grid(solved.shape[0])
    return {str(m): float(c) for m, c in zip(grid, population_curve(solved, grid), strict=True)}


#: the most seeded pilots per pilot size (``--pilots``)
MAX_PILOTS = 10_000
#: the most interval fits one comparison may run: pilots × replicates × pilot sizes
MAX_COMPARE_FITS = 10_000_000


def check_settings(ks: Sequence[int], pilots: int, replicates: int, seed: int) -> None:
    """One-line :class:`ConfigError` for settings no comparison can use, before any work.

    ``1 <= pilots <= MAX_PILOTS``, ``replicates >= 1``, and the work
    ``pilots × replicates × len(ks)`` (bootstrap fits per split) at most
    :data:`MAX_COMPARE_FITS`; the message states the work asked for.
    """
    if pilots < 1 or replicates < 1:
        raise ConfigError("pilots and replicates must be at least 1")
    if pilots > MAX_PILOTS:
        raise ConfigError(f"--pilots {pilots:,} is above the limit of {MAX_PILOTS:,} seeded"
                          f" pilots per pilot size ({pilots * max(len(ks), 1):,} pilots in all)")
    fits = pilots * replicates * max(len(ks), 1)
    if fits > MAX_COMPARE_FITS:
        raise ConfigError(f"--pilots {pilots:,} × --replicates {replicates:,} × {len(ks)} pilot"
                          f" sizes would take {fits:,} bootstrap fits per split; the limit is"
                          f" {MAX_COMPARE_FITS:,}")
    if seed < 0:
        raise ConfigError("the seed must be non-negative")
    if any(k < 2 for k in ks):
        raise ConfigError("every pilot size k must be at least 2")


@dataclass(frozen=True)
class CompareSettings:
    """What every (split, k) job of a comparison shares."""

    pilots: int
    seed: int
    replicates: int
    levels: tuple[float, ...]
    forecasters: tuple[str, ...]
    conditional_models: tuple[str, ...]


def compare_at_k(solved: npt.NDArray[np.bool_], k: int, settings: CompareSettings
                 ) -> ComparisonAtK | SkippedPilotSize:
    """One pilot size of one population (module docstring)."""
    n_agents = solved.shape[0]
    if not 2 <= k < n_agents:
        return SkippedPilotSize(f"pilot size {k} must be at least 2 and below M = {n_agents}")
    run = run_pilots(
        solved, k, pilots=settings.pilots, forecasters=list(settings.forecasters),
        levels=settings.levels, replicates=settings.replicates, seed=settings.seed,
    )
    rows = forecaster_rows(run, settings.levels)
    rows.update(conditional_rows(solved, run, settings.levels, settings.conditional_models))
    return ComparisonAtK(
        grid=tuple(run.grid),
        rows=rows,
        best_exploratory_versus_beta_binomial=best_exploratory_versus_reference(rows),
    )


#: the key of the :class:`CompareContext` in an executor session's shared context
CONTEXT_KEY = "teams_compare"


@dataclass(frozen=True, slots=True)
class CompareContext:
    """What a comparison's executor session shares with its jobs (picklable)."""

    populations: tuple[npt.NDArray[np.bool_], ...]
    settings: CompareSettings


def compare_job(job: tuple[int, int]) -> ComparisonAtK | SkippedPilotSize:
    """Executor job ``(split index, k)`` over the session's populations and settings."""
    shared: CompareContext = shared_context()[CONTEXT_KEY]
    index, k = job
    return compare_at_k(shared.populations[index], k, shared.settings)


def _split_comparison(matrix: OutcomeMatrix, ks: Sequence[int], settings: CompareSettings,
                      results: Sequence[ComparisonAtK | SkippedPilotSize]) -> SplitComparison:
    solved = matrix.competent().solved
    n_agents, n_tasks = solved.shape
    return SplitComparison(
        status=EXPLORATORY,
        split=matrix.provenance.split,
        source=matrix.provenance.source,
        competent_agents=n_agents,
        tasks=n_tasks,
        population_curve=_population_curve(solved),
        pilots_per_k=settings.pilots,
        replicates=settings.replicates,
        levels=tuple(level_key(level) for level in settings.levels),
        seed=settings.seed,
        by_k={str(k): result for k, result in zip(ks, results, strict=True)},
    )


def _settings(pilots: int, seed: int, replicates: int, levels: Sequence[float],
              forecasters: Sequence[str] | None,
              conditional_models: Sequence[str]) -> CompareSettings:
    chosen = list(FORECASTERS) if forecasters is None else list(forecasters)
    return CompareSettings(pilots, seed, replicates, tuple(levels), tuple(chosen),
                           tuple(conditional_models))


def compare_forecasters(
    matrix: OutcomeMatrix,
    ks: Sequence[int] = DEFAULT_KS,
    pilots: int = DEFAULT_PILOTS,
    seed: int = DEFAULT_SEED,
    *,
    replicates: int = DEFAULT_CALIBRATION_REPLICATES,
    levels: Sequence[float] = DEFAULT_LEVELS,
    forecasters: Sequence[str] | None = None,
    conditional_models: Sequence[str] = CONDITIONAL_MODELS,
) -> SplitComparison:
    """The comparison of one split (competent agents); see the module docstring."""
    check_settings(ks, pilots, replicates, seed)
    settings = _settings(pilots, seed, replicates, levels, forecasters, conditional_models)
    solved = matrix.competent().solved
    return _split_comparison(matrix, ks, settings,
                             [compare_at_k(solved, k, settings) for k in ks])


def compare_splits(
    matrices: Sequence[OutcomeMatrix],
    ks: Sequence[int] = DEFAULT_KS,
    pilots: int = DEFAULT_PILOTS,
    seed: int = DEFAULT_SEED,
    *,
    replicates: int = DEFAULT_CALIBRATION_REPLICATES,
    levels: Sequence[float] = DEFAULT_LEVELS,
    executor: Executor | None = None,
) -> Comparison:
    """:func:`compare_forecasters` for each split, in one exploratory report.

    The (split, k) jobs run on ``executor`` (serial by default) in one session;
    on a terminal a progress bar counts them.
    """
    check_settings(ks, pilots, replicates, seed)
    settings = _settings(pilots, seed, replicates, levels, None, CONDITIONAL_MODELS)
    populations = [matrix.competent().solved for matrix in matrices]
    widest = max((population.shape[1] for population in populations), default=0)
    check_array_fits(f"--replicates {replicates}", replicates * widest, 8,
                     f"the bootstrap's resampled task counts ({replicates:,} × {widest:,})")
    for matrix, population in zip(matrices, populations, strict=True):
        if population.shape[0] == 0:
            raise SourceError(
                f"split {matrix.provenance.split}: no competent agent (every agent solves"
                f" fewer than {COMPETENCE_THRESHOLD:.0%} of the tasks); nothing to compare")
    jobs = [(index, k) for index in range(len(matrices)) for k in ks]
    context = {CONTEXT_KEY: CompareContext(tuple(populations), settings)}
    runner = executor or SerialExecutor()
    with runner.session(context) as pool:
        results = map_with_progress(pool, compare_job, jobs, "compare: splits × pilot sizes",
                                    workers=runner.max_workers)
    per_split = [results[i * len(ks):(i + 1) * len(ks)] for i in range(len(matrices))]
    return Comparison(
        status=EXPLORATORY,
        note=NOTE,
        ks=tuple(ks),
        pilots_per_k=pilots,
        replicates=replicates,
        seed=seed,
        splits={
            matrix.provenance.split: _split_comparison(matrix, ks, settings, split_results)
            for matrix, split_results in zip(matrices, per_split, strict=True)
        },
    )
