"""Old and new coverage forecasters side by side (issue 7 acceptance: ``teams compare``).

For one population (the competent agents of a split, M of them; grid G of
spec teams.md §3 ending at M) and each pilot size k < M, P seeded pilots are
drawn (:func:`foreseen.teams.exploratory.calibration.draw_pilot_indices`). Per forecaster:

* curve MAE = mean over pilots and m ∈ G of |f(m) − C(m)| (spec §5 "curve error");
* population-coverage MAE = mean over pilots of |f(M) − C(M)|, and its bias
  (mean signed error); C(M) = 1 − floor/N;
* interval coverage = share of (pilot, m ∈ G) whose 80 % / 95 % bootstrap
  interval (:mod:`foreseen.teams.exploratory.intervals`) holds C(m), and the same share at M.

Rows are tagged ``E046`` (the preregistration's seven forecasters) or
``issue 7`` (maximum-likelihood and zero-inflated beta-binomial, 2PL IRT), and
``conditional_<model>`` rows give the conditional population forecast of
:mod:`foreseen.teams.forecasters.conditional` (the pilot counted as part of the population):
only a population coverage, so its curve MAE and intervals are null with a reason.

Everything here is exploratory on data that has been seen.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from foreseen.teams.exploratory.calibration import (
    DEFAULT_CALIBRATION_REPLICATES,
    DEFAULT_PILOTS,
    EXPLORATORY,
    PilotRun,
    hit_shares,
    level_key,
    run_pilots,
)
from foreseen.teams.exploratory.intervals import DEFAULT_LEVELS
from foreseen.teams.forecasters.models import (
    FORECASTERS,
    ISSUE7_FORECASTERS,
    PREREGISTERED_FORECASTERS,
)
from foreseen.teams.matrix import OutcomeMatrix

FloatArray = npt.NDArray[np.float64]
Report = dict[str, Any]

DEFAULT_KS = (5, 10, 20)
DEFAULT_SEED = 20261009
CONDITIONAL_MODELS = ("beta_binomial", "beta_binomial_ml", "zero_inflated_beta_binomial")
REFERENCE = "beta_binomial"
CONDITIONAL_CURVE_REASON = (
    "the conditional forecast is a forecast of the whole population only, not a curve"
)
CONDITIONAL_INTERVAL_REASON = "the conditional forecast has no bootstrap interval"


def family(name: str) -> str:
    """``E046``, ``issue 7`` or ``conditional``."""
    if name in PREREGISTERED_FORECASTERS:
        return "E046"
    if name in ISSUE7_FORECASTERS:
        return "issue 7"
    return "conditional" if name.startswith("conditional_") else "other"


def forecaster_rows(run: PilotRun, levels: Sequence[float]) -> dict[str, Report]:
    """Curve MAE, population-coverage MAE and bias, and interval coverage per forecaster."""
    rows: dict[str, Report] = {}
    truth = run.truth
    for name, point in run.point.items():
        signed = point[:, -1] - truth[-1]
        rows[name] = {
            "family": family(name),
            "curve_mae": float(np.abs(point - truth).mean()),
            "population_coverage_mae": float(np.abs(signed).mean()),
            "population_coverage_bias": float(signed.mean()),
            "interval_coverage": {
                level_key(level): float(hit_shares(run, name, level).mean()) for level in levels
            },
            "interval_coverage_at_population": {
                level_key(level): float(hit_shares(run, name, level)[-1]) for level in levels
            },
        }
    return rows


def conditional_rows(
    solved: npt.NDArray[np.bool_], run: PilotRun, levels: Sequence[float],
    models: Sequence[str] = CONDITIONAL_MODELS,
) -> dict[str, Report]:
    """Population-coverage rows of the conditional forecast, one per model."""
    from foreseen.teams.forecasters.conditional import conditional_forecast

    population = solved.shape[0]
    truth = float(run.truth[-1])
    rows: dict[str, Report] = {}
    for model in models:
        coverages = np.array(
            [conditional_forecast(solved[agents], population, model).coverage
             for agents in run.pilots],
            dtype=np.float64,
        )
        signed = coverages - truth
        rows[f"conditional_{model}"] = {
            "family": "conditional",
            "curve_mae": None,
            "curve_mae_reason": CONDITIONAL_CURVE_REASON,
            "population_coverage_mae": float(np.abs(signed).mean()),
            "population_coverage_bias": float(signed.mean()),
            "interval_coverage": {level_key(level): None for level in levels},
            "interval_coverage_at_population": {level_key(level): None for level in levels},
            "interval_coverage_reason": CONDITIONAL_INTERVAL_REASON,
        }
    return rows


def best_new_versus_reference(rows: dict[str, Report]) -> Report:
    """The issue 7 forecaster with the lowest population-coverage MAE against beta_binomial."""
    new = [name for name in ISSUE7_FORECASTERS if name in rows]
    if not new or REFERENCE not in rows:
        return {"best_new": None, "reason": "the new forecasters or the reference were not run"}
    best = min(new, key=lambda name: rows[name]["population_coverage_mae"])
    best_mae = rows[best]["population_coverage_mae"]
    reference_mae = rows[REFERENCE]["population_coverage_mae"]
    return {
        "best_new": best,
        "best_new_population_coverage_mae": best_mae,
        "beta_binomial_population_coverage_mae": reference_mae,
        "difference": best_mae - reference_mae,
        "beats_beta_binomial": bool(best_mae < reference_mae),
    }


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
) -> Report:
    """The comparison report of one split (competent agents); see the module docstring."""
    if pilots < 1 or replicates < 1:
        raise ValueError("pilots and replicates must be at least 1")
    names = list(FORECASTERS) if forecasters is None else list(forecasters)
    competent = matrix.competent()
    solved = competent.solved
    n_agents, n_tasks = solved.shape
    by_k: Report = {}
    for k in ks:
        if not 2 <= k < n_agents:
            reason = f"pilot size {k} must be at least 2 and below M = {n_agents}"
            by_k[str(k)] = {"skipped": reason}
            continue
        run = run_pilots(
            solved, k, pilots=pilots, forecasters=names, levels=levels,
            replicates=replicates, seed=seed,
        )
        rows = forecaster_rows(run, levels)
        rows.update(conditional_rows(solved, run, levels, conditional_models))
        by_k[str(k)] = {
            "grid": run.grid,
            "rows": rows,
            "best_new_versus_beta_binomial": best_new_versus_reference(rows),
        }
    grid_truth = run_truth(solved)
    return {
        "status": EXPLORATORY,
        "split": matrix.provenance.split,
        "source": matrix.provenance.source,
        "competent_agents": n_agents,
        "tasks": n_tasks,
        "population_curve": grid_truth,
        "pilots_per_k": pilots,
        "replicates": replicates,
        "levels": [level_key(level) for level in levels],
        "seed": seed,
        "by_k": by_k,
    }


def run_truth(solved: npt.NDArray[np.bool_]) -> dict[str, float]:
    """The exact population curve C(m) on the grid, keyed by m."""
    from foreseen.teams.curves import coverage_grid, population_curve

    grid = coverage_grid(solved.shape[0])
    return {str(m): float(c) for m, c in zip(grid, population_curve(solved, grid), strict=True)}


def compare_splits(
    matrices: Sequence[OutcomeMatrix],
    ks: Sequence[int] = DEFAULT_KS,
    pilots: int = DEFAULT_PILOTS,
    seed: int = DEFAULT_SEED,
    *,
    replicates: int = DEFAULT_CALIBRATION_REPLICATES,
    levels: Sequence[float] = DEFAULT_LEVELS,
) -> Report:
    """:func:`compare_forecasters` for each split, in one exploratory report."""
    return {
        "status": EXPLORATORY,
        "note": (
            "exploratory on data that has been seen: the forecasters are judged on the same "
            "public matrices that motivated them; nothing here is a preregistered test"
        ),
        "ks": list(ks),
        "pilots_per_k": pilots,
        "replicates": replicates,
        "seed": seed,
        "splits": {
            matrix.provenance.split: compare_forecasters(
                matrix, ks, pilots, seed, replicates=replicates, levels=levels
            )
            for matrix in matrices
        },
    }
