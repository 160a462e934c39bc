"""The sizing advisor: how big a team, which agents, what it buys (exploratory).

Exploratory on data that has been seen: the matrix's agents are both the pool
the team is chosen from and the evidence the forecasts are fitted to. Only the
``held_out_check`` scores a team on tasks it was not chosen on.

Report blocks (M competent agents, N tasks, c_t = agents solving task t; the
types are in :mod:`foreseen.teams.exploratory.advice`):

* ``dependence``: p̄ = Σ_t c_t/(MN); φ̄ = mean pairwise φ (teams §3);
  the beta-binomial intra-task correlation ρ by moments (teams §4, the whole
  matrix as a pilot of k = M); Kish's effective number of independent agents
  n_eff = M / (1 + (M − 1)·max(0, φ̄)) (and the same with ρ in place of φ̄).
* ``curve``: the exact population curve C(m) (teams §3) with task-bootstrap
  percentile intervals (tasks resampled with replacement, seeded), and the
  chosen forecaster's curve with intervals from
  :func:`foreseen.teams.exploratory.intervals.forecast_with_intervals` (fitted on all M
  agents as the pilot, so sizes beyond M are extrapolations).
* ``path`` / ``recommendation``: cost-aware greedy on the measured matrix. Each
  step adds, among affordable agents with a known cost, the one with the largest
  (newly covered tasks / cost); ties: more newly covered tasks, more solves, then
  the E046 name preference. With unit costs this is exactly E046 greedy. Steps
  stop when no agent adds a task or none is affordable. The stop point is the
  first step after the first whose gain per unit cost, in percentage points of
  N, is below the threshold (default :data:`DEFAULT_THRESHOLD_PER_USD` pp per
  USD with costs, :data:`DEFAULT_THRESHOLD_PER_AGENT` pp per agent without). The
  recommended team is the path up to the stop point; with ``target_coverage`` it
  is instead the shortest prefix reaching the target (threshold ignored); with
  ``budget`` the path only takes affordable agents and the stop point applies.
  The first agent is always recommended. Its coverage on the matrix is
  in-sample (optimistic).
* ``marginal_value``: the next greedy agent's gain after the recommended team
  (measured); a uniformly random extra agent of the pool, exact C(n + 1) − C(n);
  one new agent from the same population beyond the M measured, from the
  conditional forecast (:mod:`foreseen.teams.forecasters.conditional`, population M + 1).
* ``held_out_check``: the advisor's rule run on the E046 calibration tasks,
  truncated to the recommended size n, against top-k, greedy, one-per-organisation
  and the exact maximum-coverage team of the same size on the held-out tasks,
  with exact McNemar and seeded re-splits (:mod:`foreseen.teams.exploratory.pilot_selection`;
  the exact team is not re-chosen on re-splits, to keep the advisor fast — one
  integer programme per re-split; ``pilot_selection.compare_selection`` does it).
* ``blind_spots``: tasks no agent solves (with the conditional probability that a
  further M agents from the same population solve one of them), and the tasks the
  recommended team misses, fewest solvers first, with the beta-binomial posterior
  mean solve rate of a new agent (α + c_t)/(α + β + M) (c_t/M when the moments
  give no fit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from foreseen.core.errors import ConfigError
from foreseen.teams.curves import (
    blind_spot_floor,
    coverage_grid,
    curve_from_histogram,
    mean_pairwise_phi,
    population_curve,
    solver_counts,
)
from foreseen.teams.e046.selection import name_preference
from foreseen.teams.exploratory.advice import (
    Advice,
    AdviceSettings,
    AdvisorVersusTopK,
    BlindSpots,
    CostedStrategy,
    CurveBlock,
    DependenceShape,
    ForecastCurve,
    HeldOutCheck,
    IntervalBounds,
    MarginalValue,
    MeasuredCurve,
    MissedTask,
    NextAgent,
    PathRow,
    Recommendation,
)
from foreseen.teams.exploratory.intervals import forecast_with_intervals
from foreseen.teams.exploratory.max_coverage import MaxCoverageTeam, max_coverage
from foreseen.teams.exploratory.pilot_selection import compare_selection, default_strategies
from foreseen.teams.forecasters.base import PilotStats
from foreseen.teams.forecasters.closed_form import beta_binomial_moments
from foreseen.teams.forecasters.conditional import conditional_forecast
from foreseen.teams.forecasters.registry import get
from foreseen.teams.matrix import OutcomeMatrix
from foreseen.teams.provenance.costs import CostTable, unit_costs

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]

EXPLORATORY = (
    "exploratory: analysis on data that has been seen (the team is chosen and scored on the "
    "same tasks except in held_out_check); not a preregistered test"
)
DEFAULT_THRESHOLD_PER_USD = 0.1  # percentage points of the tasks per USD
DEFAULT_THRESHOLD_PER_AGENT = 0.5  # percentage points of the tasks per agent
DEFAULT_FORECASTER = "beta_binomial"
#: the exact max-coverage team of the held-out check: HiGHS's own limit and the hard
#: wall-clock cap after which the greedy team stands in (``max_coverage_proven_optimal``)
MILP_SECONDS = 20.0
MILP_WALL_SECONDS = 25.0
LEVELS = (0.8, 0.95)
DEFAULT_REPLICATES = 200
DEFAULT_RESPLITS = 20
BLIND_SPOT_LISTED = 25
FORECAST_NOTE = "fitted on all measured agents as the pilot; sizes beyond M are extrapolated"


@dataclass(frozen=True)
class PathStep:
    """One step of the cost-aware greedy path."""

    agent: int
    gain: int  # newly covered tasks
    cost: float
    covered: int  # tasks covered after this step

    def gain_per_cost_pp(self, n_tasks: int) -> float:
        """Gain in percentage points of the N tasks per unit cost."""
        return 100.0 * self.gain / n_tasks / self.cost


def cost_aware_greedy(
    solved: BoolArray,
    names: Sequence[str],
    costs: Sequence[float | None],
    *,
    budget: float | None = None,
    max_steps: int | None = None,
) -> list[PathStep]:
    """Greedy path by newly covered tasks per unit cost (module docstring for tie-breaks).

    Agents whose cost is None are never chosen.
    """
    n_agents = solved.shape[0]
    cost = np.array([np.nan if c is None else c for c in costs], dtype=np.float64)
    available = ~np.isnan(cost)
    rows = solved.astype(np.int64)
    solves = rows.sum(axis=1)
    preference = name_preference(names)
    uncovered = np.ones(solved.shape[1], dtype=np.int64)
    spent = 0.0
    covered = 0
    path: list[PathStep] = []
    limit = n_agents if max_steps is None else max_steps
    while len(path) < limit:
        affordable = available.copy()
        if budget is not None:
            affordable &= np.where(available, cost, np.inf) <= budget - spent + 1e-9
        if not affordable.any():
            break
        gain = rows @ uncovered
        candidates = affordable & (gain > 0)
        if not candidates.any():
            break
        ratio = np.where(candidates, gain / np.where(candidates, cost, 1.0), -np.inf)
        best = candidates & (ratio == ratio.max())
        for key in (gain, solves, preference):
            keyed = np.where(best, key, np.iinfo(np.int64).min)
            best &= keyed == keyed.max()
        pick = int(np.flatnonzero(best)[0])
        covered += int(gain[pick])
        spent += float(cost[pick])
        path.append(PathStep(pick, int(gain[pick]), float(cost[pick]), covered))
        available[pick] = False
        uncovered &= 1 - rows[pick]
    return path


def dependence_shape(solved: BoolArray) -> DependenceShape:
    """p̄, φ̄, beta-binomial ρ and Kish's n_eff of the agents (rows) of ``solved``."""
    n_agents = solved.shape[0]
    stats = PilotStats.from_pilot(solved, with_phi=False)
    alpha, beta, fitted = beta_binomial_moments(stats)
    phi = mean_pairwise_phi(solved)
    rho: float | None = float(1.0 / (alpha + beta + 1.0)) if bool(fitted) else None

    def kish(correlation: float) -> float:
        return float(n_agents / (1.0 + (n_agents - 1) * max(0.0, correlation)))

    return DependenceShape(
        agents=n_agents,
        tasks=solved.shape[1],
        mean_solve_rate=float(stats.pooled_rate),
        mean_pairwise_phi=phi,
        beta_binomial_rho=rho,
        beta_binomial_rho_reason=None if rho is not None else "moments give no beta fit",
        beta_binomial_alpha=float(alpha) if bool(fitted) else None,
        beta_binomial_beta=float(beta) if bool(fitted) else None,
        effective_independent_agents_phi=kish(phi),
        effective_independent_agents_rho=kish(rho) if rho is not None else None,
        formula="n_eff = M / (1 + (M - 1) * max(0, r)), r = phi-bar or rho (Kish)",
    )


def _quantiles(values: FloatArray, level: float) -> tuple[FloatArray, FloatArray]:
    """Percentile interval per column: sorted values at ⌊αR⌋ and min(R − 1, ⌊(1 − α)R⌋)."""
    ordered = np.sort(values, axis=0)
    count = ordered.shape[0]
    tail = (1.0 - level) / 2.0
    low = ordered[int(np.floor(tail * count))]
    high = ordered[min(count - 1, int(np.floor((1.0 - tail) * count)))]
    return low, high


def _floats(values: npt.ArrayLike) -> tuple[float, ...]:
    return tuple(float(value) for value in np.asarray(values, dtype=np.float64))


def measured_curve(
    solved: BoolArray, sizes: Sequence[int], replicates: int, seed: int
) -> MeasuredCurve:
    """Exact C(m) with task-bootstrap percentile intervals (seeded multinomial task weights)."""
    n_agents, n_tasks = solved.shape
    counts = solver_counts(solved)
    point = population_curve(solved, sizes)
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(n_tasks, np.full(n_tasks, 1.0 / n_tasks), size=replicates)
    histograms = np.stack(
        [np.bincount(counts, weights=w, minlength=n_agents + 1) for w in weights]
    )
    curves = curve_from_histogram(histograms, n_agents, sizes)
    intervals: dict[str, IntervalBounds] = {}
    for level in LEVELS:
        low, high = _quantiles(curves, level)
        intervals[str(level)] = IntervalBounds(lower=_floats(low), upper=_floats(high))
    return MeasuredCurve(sizes=tuple(int(m) for m in sizes), point=_floats(point),
                         intervals=intervals)


def forecast_curve(
    solved: BoolArray,
    forecaster: str,
    sizes: Sequence[int],
    replicates: int,
    seed: int,
    agent_clusters: npt.NDArray[np.int64] | None,
) -> ForecastCurve:
    """The forecaster's curve with bootstrap intervals
    (:func:`foreseen.teams.exploratory.intervals.forecast_with_intervals`)."""
    result = forecast_with_intervals(
        solved, forecaster, sizes, levels=LEVELS, replicates=replicates, seed=seed,
        agent_clusters=agent_clusters,
    )
    return ForecastCurve(
        forecaster=forecaster,
        sizes=tuple(int(m) for m in result.sizes),
        point=_floats(result.point),
        intervals={
            str(level): IntervalBounds(lower=_floats(result.lower[level]),
                                       upper=_floats(result.upper[level]))
            for level in LEVELS
        },
        note=FORECAST_NOTE,
    )


def _stop_index(path: Sequence[PathStep], n_tasks: int, threshold: float) -> int:
    """Number of recommended steps: up to (excluding) the first later step below threshold."""
    for index, step in enumerate(path):
        if index > 0 and step.gain_per_cost_pp(n_tasks) < threshold:
            return index
    return len(path)


def _recommended_size(
    path: Sequence[PathStep], n_tasks: int, threshold: float, target: float | None
) -> tuple[int, str]:
    if target is not None:
        for index, step in enumerate(path):
            if step.covered / n_tasks >= target:
                return index + 1, "target coverage reached"
        return len(path), "target coverage not reachable with these agents"
    return max(1, _stop_index(path, n_tasks, threshold)), "stop point"


def _path_rows(path: Sequence[PathStep], names: Sequence[str], n_tasks: int) -> tuple[PathRow, ...]:
    rows = []
    spent = 0.0
    for index, step in enumerate(path):
        spent += step.cost
        rows.append(PathRow(
            step=index + 1,
            agent=names[step.agent],
            cost=step.cost,
            cumulative_cost=spent,
            new_tasks=step.gain,
            coverage=step.covered / n_tasks,
            gain_pp_per_cost=step.gain_per_cost_pp(n_tasks),
        ))
    return tuple(rows)


def _blind_spots(
    matrix: OutcomeMatrix, team: Sequence[int], dependence: DependenceShape, listed: int
) -> BlindSpots:
    solved = matrix.solved
    counts = solver_counts(solved)
    n_agents = solved.shape[0]
    never = tuple(matrix.tasks[t] for t in np.flatnonzero(counts == 0))
    further = conditional_forecast(solved, 2 * n_agents, "beta_binomial")
    unsolved_probability = (
        float(further.task_probability[counts == 0][0]) if never else None
    )
    alpha, beta = dependence.beta_binomial_alpha, dependence.beta_binomial_beta
    if alpha is not None and beta is not None:
        rate = (alpha + counts) / (alpha + beta + n_agents)
        rule = "(alpha + c_t) / (alpha + beta + M)"
    else:
        rate = counts / n_agents
        rule = "c_t / M"
    missed = np.flatnonzero(~solved[list(team)].any(axis=0))
    order = missed[np.lexsort((np.arange(missed.size), counts[missed]))]
    return BlindSpots(
        floor=blind_spot_floor(solved),
        never_solved=never,
        never_solved_count=len(never),
        probability_a_further_M_agents_solve_a_never_solved_task=unsolved_probability,
        missed_by_recommended_team_count=int(missed.size),
        missed_by_recommended_team=tuple(
            MissedTask(
                task=matrix.tasks[t],
                agents_solving=int(counts[t]),
                new_agent_solve_probability=float(rate[t]),
            )
            for t in order[:listed]
        ),
        new_agent_solve_probability_rule=rule,
        listed=min(listed, int(missed.size)),
    )


def _check_request(
    target_coverage: float | None, budget: float | None, forecaster: str
) -> None:
    if target_coverage is not None and budget is not None:
        raise ConfigError("give either a target coverage or a budget, not both")
    if target_coverage is not None and not 0.0 < target_coverage <= 1.0:
        raise ConfigError(f"target coverage {target_coverage} must lie in (0, 1]")
    if budget is not None and not budget > 0.0:
        raise ConfigError(f"budget {budget} must be > 0")
    get(forecaster)


def advise(
    matrix: OutcomeMatrix,
    *,
    costs: CostTable | None = None,
    target_coverage: float | None = None,
    budget: float | None = None,
    min_gain_pp_per_cost: float | None = None,
    forecaster: str = DEFAULT_FORECASTER,
    orgs: Mapping[str, str] | None = None,
    agent_clusters: Mapping[str, int] | None = None,
    replicates: int = DEFAULT_REPLICATES,
    resplits: int = DEFAULT_RESPLITS,
    seed: int = 0,
    competent_only: bool = True,
) -> Advice:
    """The sizing advisor's report (module docstring) for the agents × tasks ``matrix``."""
    _check_request(target_coverage, budget, forecaster)
    if replicates < 1 or resplits < 0:
        raise ConfigError("replicates must be at least 1 and resplits at least 0")
    pool = matrix.competent() if competent_only else matrix
    if pool.n_agents < 2:
        raise ConfigError(
            f"split {matrix.provenance.split!r} has {pool.n_agents} competent agent(s); "
            "the advisor needs at least 2"
        )
    names, solved, n_agents, n_tasks = pool.agents, pool.solved, pool.n_agents, pool.n_tasks
    table = costs if costs is not None else unit_costs(names)
    cost_list = [table.costs.get(name) for name in names]
    if not any(c is not None for c in cost_list):
        raise ConfigError(
            f"no agent of split {matrix.provenance.split!r} has a known cost ({table.source})"
        )
    threshold = (
        min_gain_pp_per_cost if min_gain_pp_per_cost is not None
        else DEFAULT_THRESHOLD_PER_AGENT if table.unit == "agent"
        else DEFAULT_THRESHOLD_PER_USD
    )
    dependence = dependence_shape(solved)
    path = cost_aware_greedy(solved, names, cost_list, budget=budget)
    if not path:
        raise ConfigError(f"no agent with a known cost fits within the budget {budget}")
    size, reason = _recommended_size(path, n_tasks, threshold, target_coverage)
    team = [step.agent for step in path[:size]]
    stop = max(1, _stop_index(path, n_tasks, threshold))
    team_coverage = path[size - 1].covered / n_tasks
    sizes = sorted({1, *coverage_grid(n_agents), size, 2 * n_agents})
    measured_sizes = [m for m in sizes if m <= n_agents]
    clusters = (
        None if agent_clusters is None
        else np.array([agent_clusters[name] for name in names], dtype=np.int64)
    )
    random_gain = (
        population_curve(solved, [size, size + 1]) if size < n_agents else None
    )
    observed = float(solved.any(axis=0).mean())
    beyond = conditional_forecast(solved, n_agents + 1, "beta_binomial").coverage
    next_step = path[size] if size < len(path) else None
    eligible = [name for name, c in zip(names, cost_list, strict=True) if c is not None]
    return Advice(
        label=EXPLORATORY,
        split=matrix.provenance.split,
        source=matrix.provenance.source,
        agents_with_results=matrix.n_agents,
        pool="competent agents (solve rate >= 0.05)" if competent_only else "all agents",
        settings=AdviceSettings(
            target_coverage=target_coverage,
            budget=budget,
            threshold_pp_per_cost=threshold,
            forecaster=forecaster,
            replicates=replicates,
            resplits=resplits,
            seed=seed,
        ),
        costs=table.summary(),
        dependence=dependence,
        curve=CurveBlock(
            measured=measured_curve(solved, measured_sizes, replicates, seed),
            forecast=forecast_curve(solved, forecaster, sizes, replicates, seed, clusters),
        ),
        path=_path_rows(path, names, n_tasks),
        recommendation=Recommendation(
            size=size,
            reason=reason,
            team=tuple(names[i] for i in team),
            cost=float(sum(step.cost for step in path[:size])),
            coverage_in_sample=team_coverage,
            stop_point_size=stop,
            target_reached=(
                None if target_coverage is None else team_coverage >= target_coverage
            ),
        ),
        marginal_value=MarginalValue(
            best_next_agent=None if next_step is None else NextAgent(
                agent=names[next_step.agent],
                new_tasks=next_step.gain,
                coverage_gain=next_step.gain / n_tasks,
                gain_pp_per_cost=next_step.gain_per_cost_pp(n_tasks),
            ),
            best_next_agent_reason=None if next_step is not None else
            "no further affordable agent adds a task",
            random_pool_agent_gain=None if random_gain is None
            else float(random_gain[1] - random_gain[0]),
            random_pool_agent_gain_reason=None if random_gain is not None else
            "the team already holds every agent",
            new_population_agent_gain=beyond - observed,
            new_population_agent_rule="conditional beta-binomial forecast at M + 1 minus "
            "measured coverage at M",
        ),
        held_out_check=_held_out_check(pool, eligible, table, size, budget, orgs, resplits,
                                       seed),
        blind_spots=_blind_spots(pool, team, dependence, BLIND_SPOT_LISTED),
    )


def _held_out_check(
    pool: OutcomeMatrix,
    eligible: Sequence[str],
    table: CostTable,
    size: int,
    budget: float | None,
    orgs: Mapping[str, str] | None,
    resplits: int,
    seed: int,
) -> HeldOutCheck:
    """The advisor rule on calibration tasks vs other strategies at size n on held-out tasks."""

    def advisor_strategy(solved: BoolArray, names: Sequence[str], n: int) -> list[int]:
        steps = cost_aware_greedy(
            solved, names, [table.costs.get(name) for name in names], budget=budget, max_steps=n
        )
        chosen = [step.agent for step in steps]
        if len(chosen) < n:  # fill (agents adding no calibration task) in top-k order
            ranked = np.lexsort((np.arange(len(names)), -solved.sum(axis=1)))
            chosen += [int(i) for i in ranked if int(i) not in chosen][: n - len(chosen)]
        return chosen

    exact: list[MaxCoverageTeam] = []

    def max_coverage_strategy(solved: BoolArray, names: Sequence[str], n: int) -> list[int]:
        del names
        exact.append(max_coverage(solved, n, time_limit=MILP_SECONDS,
                                  wall_limit=MILP_WALL_SECONDS))
        return list(exact[-1].team)

    strategies = {**default_strategies(orgs), "max_coverage": max_coverage_strategy,
                  "advisor": advisor_strategy}
    size = min(size, len(eligible))
    comparison = compare_selection(
        pool, [size], strategies=strategies, pool=eligible, orgs=orgs, resplits=resplits,
        seed=seed, resplit_strategies=[name for name in strategies if name != "max_coverage"],
    )
    block = comparison.by_size[str(size)]
    costed = {
        name: CostedStrategy(
            **{field: getattr(entry, field) for field in entry.__dataclass_fields__},
            team_cost=float(sum(table.costs[agent] for agent in entry.team)),
        )
        for name, entry in block.strategies.items()
    }
    advisor = costed["advisor"]
    return HeldOutCheck(
        size=size,
        split=comparison.split,
        calibration_tasks=comparison.calibration_tasks,
        held_out_tasks=comparison.held_out_tasks,
        resplits=resplits,
        random_team_held_out_coverage=block.random_team_held_out_coverage,
        strategies=costed,
        advisor_held_out_coverage=advisor.held_out_coverage,
        advisor_vs_top_k=AdvisorVersusTopK(
            advisor_only=advisor.only_this_team,
            top_k_only=advisor.only_top_k,
            mcnemar_p=advisor.mcnemar_p,
        ),
        max_coverage_method=exact[-1].method if exact else "not run",
        max_coverage_proven_optimal=all(team.proven_optimal for team in exact),
    )
