"""The sizing advisor's result (the ``teams advise`` artefact) as typed values.

:mod:`foreseen.teams.exploratory.advisor` computes it; its module docstring
gives every formula. Field order is the JSON key order. Interval levels are
keyed ``"0.8"`` and ``"0.95"``; fields that can be undefined are null with a
``…_reason`` field beside them.
"""

from __future__ import annotations

from dataclasses import dataclass

from foreseen.teams.exploratory.pilot_selection import StrategyResult
from foreseen.teams.provenance.costs import CostSummary


@dataclass(frozen=True)
class AdviceSettings:
    """The settings the advice was computed with."""

    target_coverage: float | None
    budget: float | None
    threshold_pp_per_cost: float
    forecaster: str
    replicates: int
    resplits: int
    seed: int


@dataclass(frozen=True)
class DependenceShape:
    """p̄, φ̄, the beta-binomial ρ and Kish's effective number of independent agents."""

    agents: int
    tasks: int
    mean_solve_rate: float
    mean_pairwise_phi: float
    beta_binomial_rho: float | None
    beta_binomial_rho_reason: str | None
    beta_binomial_alpha: float | None
    beta_binomial_beta: float | None
    effective_independent_agents_phi: float
    effective_independent_agents_rho: float | None
    formula: str


@dataclass(frozen=True)
class IntervalBounds:
    """Lower and upper ends of a percentile interval, one per team size."""

    lower: tuple[float, ...]
    upper: tuple[float, ...]


@dataclass(frozen=True)
class MeasuredCurve:
    """The exact population curve C(m) with task-bootstrap intervals."""

    sizes: tuple[int, ...]
    point: tuple[float, ...]
    intervals: dict[str, IntervalBounds]


@dataclass(frozen=True)
class ForecastCurve:
    """The chosen forecaster's curve (all measured agents as the pilot) with intervals."""

    forecaster: str
    sizes: tuple[int, ...]
    point: tuple[float, ...]
    intervals: dict[str, IntervalBounds]
    note: str


@dataclass(frozen=True)
class CurveBlock:
    """Measured and forecast coverage curves."""

    measured: MeasuredCurve
    forecast: ForecastCurve


@dataclass(frozen=True)
class PathRow:
    """One step of the cost-aware greedy path."""

    step: int
    agent: str
    cost: float
    cumulative_cost: float
    new_tasks: int
    coverage: float
    gain_pp_per_cost: float


@dataclass(frozen=True)
class Recommendation:
    """The recommended team: its size, why, its members, cost and in-sample coverage."""

    size: int
    reason: str
    team: tuple[str, ...]
    cost: float
    coverage_in_sample: float
    stop_point_size: int
    target_reached: bool | None


@dataclass(frozen=True)
class NextAgent:
    """The next agent of the greedy path after the recommended team."""

    agent: str
    new_tasks: int
    coverage_gain: float
    gain_pp_per_cost: float


@dataclass(frozen=True)
class MarginalValue:
    """What one more agent buys: the best next, a random one of the pool, a new one."""

    best_next_agent: NextAgent | None
    best_next_agent_reason: str | None
    random_pool_agent_gain: float | None
    random_pool_agent_gain_reason: str | None
    new_population_agent_gain: float
    new_population_agent_rule: str


@dataclass(frozen=True)
class CostedStrategy(StrategyResult):
    """A strategy's held-out result with the cost of its team."""

    team_cost: float


@dataclass(frozen=True)
class AdvisorVersusTopK:
    """The advisor's team against top-k on held-out tasks (b, c, exact McNemar p)."""

    advisor_only: int
    top_k_only: int
    mcnemar_p: float


@dataclass(frozen=True)
class HeldOutCheck:
    """The advisor's rule chosen on calibration tasks and scored on held-out tasks."""

    size: int
    split: str
    calibration_tasks: int
    held_out_tasks: int
    resplits: int
    random_team_held_out_coverage: float
    strategies: dict[str, CostedStrategy]
    advisor_held_out_coverage: float
    advisor_vs_top_k: AdvisorVersusTopK
    #: how the max_coverage strategy's team was found; False when the integer programme
    #: hit its wall-clock cap and the greedy team stands in for it
    max_coverage_method: str
    max_coverage_proven_optimal: bool


@dataclass(frozen=True)
class MissedTask:
    """A task the recommended team misses, with how many agents solve it."""

    task: str
    agents_solving: int
    new_agent_solve_probability: float


@dataclass(frozen=True)
class BlindSpots:
    """Tasks no agent solves, and the tasks the recommended team misses (fewest solvers first)."""

    floor: int
    never_solved: tuple[str, ...]
    never_solved_count: int
    probability_a_further_M_agents_solve_a_never_solved_task: float | None
    missed_by_recommended_team_count: int
    missed_by_recommended_team: tuple[MissedTask, ...]
    new_agent_solve_probability_rule: str
    listed: int


@dataclass(frozen=True)
class Advice:
    """The sizing advisor's report (exploratory on data that has been seen)."""

    label: str
    split: str
    source: str
    agents_with_results: int
    pool: str
    settings: AdviceSettings
    costs: CostSummary
    dependence: DependenceShape
    curve: CurveBlock
    path: tuple[PathRow, ...]
    recommendation: Recommendation
    marginal_value: MarginalValue
    held_out_check: HeldOutCheck
    blind_spots: BlindSpots
