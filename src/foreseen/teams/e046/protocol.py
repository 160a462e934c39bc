"""The E046 protocol of spec teams.md §5: per-split analysis and the cross-split decision.

For each feasible split one ``random.Random(seed)`` stream is consumed in
exactly the spec's order (agents are drawn as indices into the sorted
competent list and tasks as indices into the sorted task list; ``sample``,
``choice`` and ``shuffle`` consume the stream identically for a list of
indices and a list of names):

1. primary: 200 × ``rng.sample(agents, 10)``;
2. H1 bootstrap: 200 × (N × ``rng.choice(tasks)``, then 40 × ``rng.sample(agents, 10)``);
3. sensitivity: k = 5, then k = 20 (only when k < M), 50 × ``rng.sample(agents, k)`` each;
4. H3, for k = 3, 5, 10: 200 × ``rng.sample(agents, k)``, then 200 ×
   ``rng.shuffle(copy of tasks)``.

All values returned here are unrounded; :mod:`foreseen.teams.e046.record` rounds.
Thresholds (H1 interval ends, the 0.03 tolerance, "beats pilot_only") compare
the unrounded values.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from foreseen.core.stats import mcnemar_exact_p, percentile_interval
from foreseen.teams.curves import (
    blind_spot_floor,
    coverage_grid,
    curve_from_histogram,
    mean_pairwise_phi,
    solver_counts,
)
from foreseen.teams.e046.selection import PackedOutcomes, hash_split, pack_rows, popcount
from foreseen.teams.forecasters.models import (
    CLOSED_FORM,
    FORECASTERS,
    PREREGISTERED_FORECASTERS,
    PilotStats,
)
from foreseen.teams.matrix import OutcomeMatrix

FloatArray = npt.NDArray[np.float64]
Report = dict[str, Any]

SEED = 20261009
EXPERIMENT = "E046"
MIN_COMPETENT_AGENTS = 20
MIN_TASKS = 100
PILOT_SIZE = 10
PRIMARY_PILOTS = 200
RASCH_PILOTS = 100
BOOTSTRAP_REPLICATES = 200
BOOTSTRAP_PILOTS = 40
SENSITIVITY_SIZES = (5, 20)
SENSITIVITY_PILOTS = 50
SELECTION_SIZES = (3, 5, 10)
PRIMARY_SELECTION_SIZE = 5
RANDOM_TEAMS = 200
RESPLITS = 200
H1_COMPARATORS = ("kish", "shared_shock")
H1_REFERENCE = "beta_binomial"
H2_FORECASTERS = ("beta_binomial", "rasch", "incidence")
H2_BASELINE = "pilot_only"
H2_TOLERANCE = 0.03
SIGNIFICANCE = 0.05
NEVER_COUNTS = frozenset({"verified"})


def upstream_block(matrix: OutcomeMatrix) -> Report:
    """The record's ``upstream`` block: commit, files read, files_sha256."""
    provenance = matrix.provenance
    return {
        "commit": provenance.commit,
        "files_read": provenance.files_read,
        "files_sha256": provenance.files_sha256,
    }


def infeasibility_reason(competent_agents: int, tasks: int) -> str | None:
    """Why a split cannot be analysed (M < 20 or N < 100), or None when it can."""
    problems = []
    if competent_agents < MIN_COMPETENT_AGENTS:
        problems.append(
            f"{competent_agents} competent agents (at least {MIN_COMPETENT_AGENTS} needed)"
        )
    if tasks < MIN_TASKS:
        problems.append(f"{tasks} tasks (at least {MIN_TASKS} needed)")
    return "; ".join(problems) if problems else None


def draw_pilots(rng: random.Random, n_agents: int, k: int, count: int) -> npt.NDArray[np.int64]:
    """``count`` pilots, each ``rng.sample(agents, k)``, as agent indices (count × k)."""
    agents = range(n_agents)
    return np.array([rng.sample(agents, k) for _ in range(count)], dtype=np.int64).reshape(
        count, k
    )


def draw_task_weights(rng: random.Random, n_tasks: int) -> npt.NDArray[np.float64]:
    """N × ``rng.choice(tasks)``; returns how often each task was drawn."""
    tasks = range(n_tasks)
    choice = rng.choice
    draws = [choice(tasks) for _ in range(n_tasks)]
    return np.bincount(np.asarray(draws, dtype=np.int64), minlength=n_tasks).astype(np.float64)


def draw_resplit(rng: random.Random, n_tasks: int) -> npt.NDArray[np.bool_]:
    """``rng.shuffle`` of a fresh task list; calibration mask = its first ⌊N/2⌋ tasks."""
    order = list(range(n_tasks))
    rng.shuffle(order)
    calibration = np.zeros(n_tasks, dtype=np.bool_)
    calibration[np.asarray(order[: n_tasks // 2], dtype=np.int64)] = True
    return calibration


def curve_errors(forecast: FloatArray, truth: FloatArray) -> FloatArray:
    """Per-pilot curve error: mean over the grid of |f(m) − C(m)|."""
    errors: FloatArray = np.abs(forecast - truth).mean(axis=-1)
    return errors


def closed_form_curves(stats: PilotStats, grid: Sequence[int]) -> dict[str, FloatArray]:
    """Every closed-form forecaster's curve for every pilot (pilots × grid)."""
    return {name: model.fit_stats(stats).curve(grid) for name, model in CLOSED_FORM.items()}


def _primary(
    solved: npt.NDArray[np.bool_], rng: random.Random, grid: list[int], truth: FloatArray
) -> Report:
    pilots = draw_pilots(rng, solved.shape[0], PILOT_SIZE, PRIMARY_PILOTS)
    outcomes = solved[pilots]
    curves = closed_form_curves(PilotStats.from_pilot(outcomes), grid)
    curves["rasch"] = FORECASTERS["rasch"].fit(outcomes[:RASCH_PILOTS]).curve(grid)
    curve_mae: dict[str, float] = {}
    bias: dict[str, float] = {}
    population_mae: dict[str, float] = {}
    for name in PREREGISTERED_FORECASTERS:
        forecast = curves[name]
        signed = forecast[:, -1] - truth[-1]
        curve_mae[name] = float(curve_errors(forecast, truth).mean())
        bias[name] = float(signed.mean())
        population_mae[name] = float(np.abs(signed).mean())
    return {
        "grid": grid,
        "population_curve": {str(m): float(c) for m, c in zip(grid, truth, strict=True)},
        "curve_mae": curve_mae,
        "population_coverage_bias": bias,
        "population_coverage_mae": population_mae,
    }


def _h1_bootstrap(
    solved: npt.NDArray[np.bool_], rng: random.Random, grid: list[int]
) -> Report:
    n_agents, n_tasks = solved.shape
    counts = solver_counts(solved)
    differences: dict[str, list[float]] = {name: [] for name in H1_COMPARATORS}
    models = [*H1_COMPARATORS, H1_REFERENCE]
    for _ in range(BOOTSTRAP_REPLICATES):
        weights = draw_task_weights(rng, n_tasks)
        histogram = np.bincount(counts, weights=weights, minlength=n_agents + 1)
        truth = curve_from_histogram(histogram, n_agents, grid)
        pilots = draw_pilots(rng, n_agents, PILOT_SIZE, BOOTSTRAP_PILOTS)
        stats = PilotStats.from_pilot(solved[pilots], weights=weights)
        error = {
            name: float(curve_errors(CLOSED_FORM[name].fit_stats(stats).curve(grid), truth).mean())
            for name in models
        }
        for name in H1_COMPARATORS:
            differences[name].append(error[name] - error[H1_REFERENCE])
    result: Report = {}
    for name, values in differences.items():
        low, high = percentile_interval(values)
        result[name] = {"mean": float(np.mean(values)), "ci95": [low, high]}
    return result


def h1_verdict(bootstrap: Mapping[str, Mapping[str, Any]]) -> str:
    """supported if every interval's lower end > 0; falsified if any upper end < 0."""
    intervals = [bootstrap[name]["ci95"] for name in H1_COMPARATORS]
    if all(low > 0 for low, _ in intervals):
        return "supported"
    if any(high < 0 for _, high in intervals):
        return "falsified"
    return "unresolved"


def h2_block(population_mae: Mapping[str, float]) -> Report:
    """Tolerance (≤ 0.03) and "strictly below pilot_only" for the three item-level forecasters."""
    meets = {name: bool(population_mae[name] <= H2_TOLERANCE) for name in H2_FORECASTERS}
    beats = {
        name: bool(population_mae[name] < population_mae[H2_BASELINE]) for name in H2_FORECASTERS
    }
    verdict = "supported" if any(meets.values()) else "falsified"
    return {"meets_tolerance": meets, "beats_pilot_only": beats, "verdict": verdict}


def _sensitivity(
    solved: npt.NDArray[np.bool_], rng: random.Random, grid: list[int], truth: FloatArray
) -> Report:
    n_agents = solved.shape[0]
    result: Report = {}
    for k in SENSITIVITY_SIZES:
        if k >= n_agents:
            continue
        pilots = draw_pilots(rng, n_agents, k, SENSITIVITY_PILOTS)
        curves = closed_form_curves(PilotStats.from_pilot(solved[pilots]), grid)
        result[str(k)] = {
            name: float(curve_errors(curve, truth).mean()) for name, curve in curves.items()
        }
    return result


def _h3(matrix: OutcomeMatrix, rng: random.Random) -> Report:
    solved = matrix.solved
    n_agents, n_tasks = solved.shape
    packed = PackedOutcomes(solved, matrix.agents)
    calibration = hash_split(matrix.tasks)
    calibration_words = pack_rows(calibration)
    held_out_words = pack_rows(~calibration)
    n_held_out = int(np.count_nonzero(~calibration))
    by_k: Report = {}
    for k in SELECTION_SIZES:
        greedy_union = packed.team_union(packed.greedy(k, calibration_words)) & held_out_words
        top_union = packed.team_union(packed.top_k(k, calibration_words)) & held_out_words
        greedy_only = int(popcount(greedy_union & ~top_union))
        top_only = int(popcount(top_union & ~greedy_union))
        random_coverage = [
            packed.team_coverage(team, held_out_words) / n_held_out
            for team in draw_pilots(rng, n_agents, k, RANDOM_TEAMS).tolist()
        ]
        differences = []
        for _ in range(RESPLITS):
            resplit = draw_resplit(rng, n_tasks)
            cal_words = pack_rows(resplit)
            held_words = pack_rows(~resplit)
            held = n_tasks - n_tasks // 2
            greedy_cov = packed.team_coverage(packed.greedy(k, cal_words), held_words)
            top_cov = packed.team_coverage(packed.top_k(k, cal_words), held_words)
            differences.append(greedy_cov / held - top_cov / held)
        by_k[str(k)] = {
            "greedy_held_out_coverage": int(popcount(greedy_union)) / n_held_out,
            "top_k_held_out_coverage": int(popcount(top_union)) / n_held_out,
            "random_held_out_coverage": float(np.mean(random_coverage)),
            "greedy_only_tasks": greedy_only,
            "top_k_only_tasks": top_only,
            "mcnemar_p": mcnemar_exact_p(greedy_only, top_only),
            "resplit_mean_difference": float(np.mean(differences)),
            "resplit_greedy_not_worse_fraction": float(
                np.mean([difference >= 0 for difference in differences])
            ),
        }
    primary = by_k[str(PRIMARY_SELECTION_SIZE)]
    b, c, p = primary["greedy_only_tasks"], primary["top_k_only_tasks"], primary["mcnemar_p"]
    if b > c and p < SIGNIFICANCE:
        verdict = "supported"
    elif c > b and p < SIGNIFICANCE:
        verdict = "falsified"
    else:
        verdict = "unresolved"
    return {
        "calibration_tasks": n_tasks - n_held_out,
        "held_out_tasks": n_held_out,
        "by_k": by_k,
        "verdict": verdict,
    }


def analyze_split(matrix: OutcomeMatrix, seed: int = SEED) -> Report:
    """The unrounded §5.1 report of one split (all agents with results in ``matrix``)."""
    competent = matrix.competent()
    n_agents, n_tasks = competent.n_agents, competent.n_tasks
    report: Report = {
        "tasks": n_tasks,
        "agents_with_results": matrix.n_agents,
        "competent_agents": n_agents,
    }
    reason = infeasibility_reason(n_agents, n_tasks)
    if reason is not None:
        report["feasible"] = False
        report["reason"] = reason
        report["upstream"] = upstream_block(matrix)
        return report
    solved = competent.solved
    floor = blind_spot_floor(solved)
    grid = coverage_grid(n_agents)
    truth = curve_from_histogram(
        np.bincount(solver_counts(solved), minlength=n_agents + 1), n_agents, grid
    )
    rng = random.Random(seed)
    primary = _primary(solved, rng, grid, truth)
    bootstrap = _h1_bootstrap(solved, rng, grid)
    sensitivity = _sensitivity(solved, rng, grid, truth)
    h3 = _h3(competent, rng)
    report.update(
        {
            "feasible": True,
            "blind_spot_floor": {"unsolved_by_every_agent": floor, "fraction": floor / n_tasks},
            "mean_pairwise_phi": mean_pairwise_phi(solved),
            "primary": primary,
            "h1_bootstrap": bootstrap,
            "h1_verdict": h1_verdict(bootstrap),
            "h2": h2_block(primary["population_coverage_mae"]),
            "sensitivity": sensitivity,
            "h3": h3,
            "upstream": upstream_block(matrix),
        }
    )
    return report


def _tally(verdicts: Sequence[str]) -> str:
    supported = sum(v == "supported" for v in verdicts)
    falsified = sum(v == "falsified" for v in verdicts)
    if 2 * supported > len(verdicts) and falsified == 0:
        return "supported"
    if 2 * falsified > len(verdicts):
        return "falsified"
    return "unresolved"


def decide(reports: Mapping[str, Report]) -> Report:
    """Cross-split decision (§5 step 6) over feasible splits other than verified."""
    counted = [
        name for name, report in reports.items() if report["feasible"] and name not in NEVER_COUNTS
    ]
    if not counted:
        return {
            "feasible_splits": [],
            "H1": "infeasible",
            "H2": "infeasible",
            "H2_estimators_meeting_tolerance_on_every_split": [],
            "H3": "infeasible",
        }
    every_split = [
        name
        for name in H2_FORECASTERS
        if all(reports[split]["h2"]["meets_tolerance"][name] for split in counted)
    ]
    return {
        "feasible_splits": counted,
        "H1": _tally([reports[split]["h1_verdict"] for split in counted]),
        "H2": "supported" if every_split else "falsified",
        "H2_estimators_meeting_tolerance_on_every_split": every_split,
        "H3": _tally([reports[split]["h3"]["verdict"] for split in counted]),
    }
