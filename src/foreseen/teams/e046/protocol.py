"""The E046 protocol of teams §5: per-split analysis and the cross-split decision.

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

The draws read the stream in bulk, exactly as ``random``'s own methods do
(:class:`foreseen.teams.e046.draws.RandomStream`), a batch at a time (200
pilots, one replicate's task weights, 200 re-splits); the pilots' statistics are computed from
agent indices without building the P × k × N pilot stack
(:mod:`foreseen.teams.forecasters.indexed_pilots`), with the same values.

All values returned here are unrounded; :mod:`foreseen.teams.e046.record` rounds.
Thresholds (H1 interval ends, the 0.03 tolerance, "beats pilot_only") compare
the unrounded values (:mod:`foreseen.teams.e046.verdicts`).

Arithmetic of the means. Every mean over draws (pilots, bootstrap replicates,
random teams, re-splits) is the preregistered script's: the values in draw
order, summed left to right in Python floats, divided by their number
(:func:`mean_in_draw_order`). A re-split's difference is the held-out count
difference divided once, (greedy − top-k)/held. Where the exact mean lies on a
rounding boundary of the record (e.g. −53/4000 at 4 decimals) this decides the
printed digit, so no other summation order (numpy's pairwise sum) is used.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from foreseen.core.seeds import E046_SEED
from foreseen.core.stats import mcnemar_exact_p, percentile_interval
from foreseen.teams.curves import (
    blind_spot_floor,
    coverage_grid,
    curve_from_histogram,
    gram_matrix,
    mean_phi_from_gram,
    solver_counts,
)
from foreseen.teams.e046.draws import RandomStream
from foreseen.teams.e046.results import (
    BlindSpotFloor,
    BootstrapDifference,
    FeasibleSplit,
    H3Result,
    InfeasibleSplit,
    PrimaryResult,
    SelectionAtK,
    SplitReport,
    Upstream,
)
from foreseen.teams.e046.selection import PackedOutcomes, hash_split, pack_rows, popcount
from foreseen.teams.e046.verdicts import (
    H1_COMPARATORS,
    H1_REFERENCE,
    h1_verdict,
    h2_result,
    h3_verdict,
)
from foreseen.teams.forecasters.base import PilotStats
from foreseen.teams.forecasters.indexed_pilots import pilot_stats, resampled_pilot_stats
from foreseen.teams.forecasters.registry import closed_forms, get, names
from foreseen.teams.matrix import OutcomeMatrix

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

SEED = E046_SEED
EXPERIMENT = "E046"
MIN_COMPETENT_AGENTS = 20
MIN_TASKS = 100
PILOT_SIZE = 10
PRIMARY_PILOTS = 200
RASCH_PILOTS = 100
BOOTSTRAP_REPLICATES = 200
BOOTSTRAP_PILOTS = 40
#: bootstrap replicates are drawn and computed in batches of at most this many task weights
REPLICATE_CELLS = 4_000_000
SENSITIVITY_SIZES = (5, 20)
SENSITIVITY_PILOTS = 50
SELECTION_SIZES = (3, 5, 10)
PRIMARY_SELECTION_SIZE = 5
RANDOM_TEAMS = 200
RESPLITS = 200
#: H3 re-splits are drawn and selected in batches of at most this many task cells
RESPLIT_CELLS = 1_000_000


def mean_in_draw_order(values: Iterable[float]) -> float:
    """(v_1 + v_2 + … + v_n)/n, summed left to right in Python floats (module docstring)."""
    total = 0.0
    count = 0
    for value in values:
        total += float(value)
        count += 1
    if count == 0:
        raise ValueError("a mean needs at least one value")
    return total / count


def upstream_block(matrix: OutcomeMatrix) -> Upstream:
    """The record's ``upstream`` block: commit, files read, files_sha256."""
    provenance = matrix.provenance
    return Upstream(
        commit=provenance.commit,
        files_read=provenance.files_read,
        files_sha256=provenance.files_sha256,
    )


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


def curve_errors(forecast: FloatArray, truth: FloatArray) -> FloatArray:
    """Per-pilot curve error: mean over the grid of |f(m) − C(m)|."""
    errors: FloatArray = np.abs(forecast - truth).mean(axis=-1)
    return errors


def closed_form_curves(stats: PilotStats, grid: Sequence[int]) -> dict[str, FloatArray]:
    """Every preregistered closed-form forecaster's curve for every pilot (pilots × grid)."""
    return {
        name: model.fit_stats(stats).curve(grid)
        for name, model in closed_forms("preregistered").items()
    }


def _primary(
    solved: BoolArray, stream: RandomStream, grid: list[int], truth: FloatArray,
    joint: FloatArray,
) -> PrimaryResult:
    pilots = stream.samples(solved.shape[0], PILOT_SIZE, PRIMARY_PILOTS)
    curves = closed_form_curves(pilot_stats(solved, pilots, joint=joint), grid)
    curves["rasch"] = get("rasch").fit(solved[pilots[:RASCH_PILOTS]]).curve(grid)
    curve_mae: dict[str, float] = {}
    bias: dict[str, float] = {}
    population_mae: dict[str, float] = {}
    for name in names("preregistered"):
        forecast = curves[name]
        signed = (forecast[:, -1] - truth[-1]).tolist()
        curve_mae[name] = mean_in_draw_order(curve_errors(forecast, truth).tolist())
        bias[name] = mean_in_draw_order(signed)
        population_mae[name] = mean_in_draw_order(abs(value) for value in signed)
    return PrimaryResult(
        grid=tuple(grid),
        population_curve={str(m): float(c) for m, c in zip(grid, truth, strict=True)},
        curve_mae=curve_mae,
        population_coverage_bias=bias,
        population_coverage_mae=population_mae,
    )


def _h1_bootstrap(
    solved: BoolArray, stream: RandomStream, grid: list[int]
) -> dict[str, BootstrapDifference]:
    """Each replicate draws its task multiplicities, then its 40 pilots; the replicates are
    drawn and computed a batch at a time (at most :data:`REPLICATE_CELLS` multiplicities)."""
    n_agents, n_tasks = solved.shape
    differences: dict[str, list[float]] = {name: [] for name in H1_COMPARATORS}
    batch = max(1, REPLICATE_CELLS // n_tasks)
    for start in range(0, BOOTSTRAP_REPLICATES, batch):
        weights, pilots = [], []
        for _ in range(min(batch, BOOTSTRAP_REPLICATES - start)):
            weights.append(stream.task_weights(n_tasks))
            pilots.append(stream.samples(n_agents, PILOT_SIZE, BOOTSTRAP_PILOTS))
        for name, values in _replicate_differences(solved, np.stack(weights),
                                                   np.stack(pilots), grid).items():
            differences[name].extend(values)
    return {
        name: BootstrapDifference(
            mean=mean_in_draw_order(values), ci95=percentile_interval(values)
        )
        for name, values in differences.items()
    }


def _replicate_differences(solved: BoolArray, weights: FloatArray, pilots: npt.NDArray[np.int64],
                           grid: list[int]) -> dict[str, list[float]]:
    """Per replicate (rows of ``weights`` and ``pilots``), in draw order: each comparator's
    mean curve error over the replicate's pilots minus the reference forecaster's."""
    n_agents = solved.shape[0]
    counts = solver_counts(solved)
    models = closed_forms("preregistered")
    stats = resampled_pilot_stats(solved, pilots, weights)
    truth = np.stack([
        curve_from_histogram(np.bincount(counts, weights=row, minlength=n_agents + 1),
                             n_agents, grid)
        for row in weights])
    errors = {name: curve_errors(models[name].fit_stats(stats).curve(grid), truth[:, None, :])
              for name in (*H1_COMPARATORS, H1_REFERENCE)}
    differences: dict[str, list[float]] = {name: [] for name in H1_COMPARATORS}
    for replicate in range(weights.shape[0]):
        error = {name: mean_in_draw_order(errors[name][replicate].tolist()) for name in errors}
        for name in H1_COMPARATORS:
            differences[name].append(error[name] - error[H1_REFERENCE])
    return differences


def _sensitivity(
    solved: BoolArray, stream: RandomStream, grid: list[int], truth: FloatArray,
    joint: FloatArray,
) -> dict[str, dict[str, float]]:
    n_agents = solved.shape[0]
    result: dict[str, dict[str, float]] = {}
    for k in SENSITIVITY_SIZES:
        if k >= n_agents:
            continue
        pilots = stream.samples(n_agents, k, SENSITIVITY_PILOTS)
        curves = closed_form_curves(pilot_stats(solved, pilots, joint=joint), grid)
        result[str(k)] = {
            name: mean_in_draw_order(curve_errors(curve, truth).tolist())
            for name, curve in curves.items()
        }
    return result


def _h3(matrix: OutcomeMatrix, stream: RandomStream) -> H3Result:
    solved = matrix.solved
    n_agents, n_tasks = solved.shape
    packed = PackedOutcomes(solved, matrix.agents)
    calibration = hash_split(matrix.tasks)
    calibration_words = pack_rows(calibration)
    held_out_words = pack_rows(~calibration)
    n_held_out = int(np.count_nonzero(~calibration))
    by_k: dict[str, SelectionAtK] = {}
    for k in SELECTION_SIZES:
        greedy_union = packed.team_union(packed.greedy(k, calibration_words)) & held_out_words
        top_union = packed.team_union(packed.top_k(k, calibration_words)) & held_out_words
        greedy_only = int(popcount(greedy_union & ~top_union))
        top_only = int(popcount(top_union & ~greedy_union))
        random_coverage = [
            packed.team_coverage(team, held_out_words) / n_held_out
            for team in stream.samples(n_agents, k, RANDOM_TEAMS).tolist()
        ]
        held = n_tasks - n_tasks // 2
        differences = []
        batch = max(1, RESPLIT_CELLS // n_tasks)
        for start in range(0, RESPLITS, batch):  # drawn and selected a batch at a time
            resplits = stream.resplits(n_tasks, min(batch, RESPLITS - start))
            greedy_cover, top_cover = packed.resplit_coverages(k, pack_rows(resplits),
                                                               pack_rows(~resplits))
            differences += [(greedy_cov - top_cov) / held for greedy_cov, top_cov
                            in zip(greedy_cover.tolist(), top_cover.tolist(), strict=True)]
        by_k[str(k)] = SelectionAtK(
            greedy_held_out_coverage=int(popcount(greedy_union)) / n_held_out,
            top_k_held_out_coverage=int(popcount(top_union)) / n_held_out,
            random_held_out_coverage=mean_in_draw_order(random_coverage),
            greedy_only_tasks=greedy_only,
            top_k_only_tasks=top_only,
            mcnemar_p=mcnemar_exact_p(greedy_only, top_only),
            resplit_mean_difference=mean_in_draw_order(differences),
            resplit_greedy_not_worse_fraction=(
                sum(1 for difference in differences if difference >= 0) / len(differences)
            ),
        )
    primary = by_k[str(PRIMARY_SELECTION_SIZE)]
    return H3Result(
        calibration_tasks=n_tasks - n_held_out,
        held_out_tasks=n_held_out,
        by_k=by_k,
        verdict=h3_verdict(primary.greedy_only_tasks, primary.top_k_only_tasks,
                           primary.mcnemar_p),
    )


def analyze_split(matrix: OutcomeMatrix, seed: int = SEED) -> SplitReport:
    """The unrounded §5.1 report of one split (all agents with results in ``matrix``)."""
    competent = matrix.competent()
    n_agents, n_tasks = competent.n_agents, competent.n_tasks
    reason = infeasibility_reason(n_agents, n_tasks)
    if reason is not None:
        return InfeasibleSplit(
            tasks=n_tasks,
            agents_with_results=matrix.n_agents,
            competent_agents=n_agents,
            feasible=False,
            reason=reason,
            upstream=upstream_block(matrix),
        )
    solved = competent.solved
    floor = blind_spot_floor(solved)
    grid = coverage_grid(n_agents)
    truth = curve_from_histogram(
        np.bincount(solver_counts(solved), minlength=n_agents + 1), n_agents, grid
    )
    stream = RandomStream(random.Random(seed))
    joint = gram_matrix(solved)
    primary = _primary(solved, stream, grid, truth, joint)
    bootstrap = _h1_bootstrap(solved, stream, grid)
    sensitivity = _sensitivity(solved, stream, grid, truth, joint)
    h3 = _h3(competent, stream)
    return FeasibleSplit(
        tasks=n_tasks,
        agents_with_results=matrix.n_agents,
        competent_agents=n_agents,
        feasible=True,
        blind_spot_floor=BlindSpotFloor(unsolved_by_every_agent=floor, fraction=floor / n_tasks),
        mean_pairwise_phi=float(mean_phi_from_gram(joint, n_tasks)),
        primary=primary,
        h1_bootstrap=bootstrap,
        h1_verdict=h1_verdict(bootstrap),
        h2=h2_result(primary.population_coverage_mae),
        sensitivity=sensitivity,
        h3=h3,
        upstream=upstream_block(matrix),
    )
