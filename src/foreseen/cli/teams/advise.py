"""``foreseen teams advise SOURCE``: the sizing advisor as JSON and as readable tables.

    foreseen teams advise SOURCE [--split NAME] [--format wide|long]
        [--cost-column NAME | --costs FILE] [--target-coverage X | --budget Y]
        [--min-gain PP] [--forecaster NAME] [--seed N] [--out FILE]

SOURCE is any agents × tasks matrix :func:`foreseen.teams.sources.dispatch.load_source`
reads (CSV or parquet, wide or long, an experiments tree, a split directory);
the words ``lite`` and ``verified`` name the built-in SWE-bench matrices when no
such path exists. Organisations (for the one-per-organisation team) and model
clusters (for the forecast's agent bootstrap) come from
:func:`foreseen.teams.provenance.submissions.load_provenance`. Report content:
:mod:`foreseen.teams.exploratory.advisor`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from foreseen.cli import options
from foreseen.cli.output import write_report
from foreseen.cli.report import NoHtml, page_line, require_page_extra
from foreseen.cli.teams.inputs import load_one
from foreseen.core.errors import ConfigError
from foreseen.core.memory import check_array_fits
from foreseen.teams.exploratory.advice import Advice, IntervalBounds
from foreseen.teams.exploratory.advisor import (
    DEFAULT_FORECASTER,
    DEFAULT_REPLICATES,
    DEFAULT_RESPLITS,
    advise,
)
from foreseen.teams.matrix import OutcomeMatrix
from foreseen.teams.provenance.costs import CostTable, costs_from_provenance, read_cost_file
from foreseen.teams.provenance.populations import model_clusters
from foreseen.teams.provenance.submissions import load_provenance

LEVEL_KEYS = ("0.8", "0.95")


@dataclass(frozen=True, slots=True)
class AgentProvenance:
    """What the provenance says of each agent (keyed by agent name).

    ``orgs``: the agent's organisations joined by ``|`` (agents with none are absent);
    ``clusters``: its model cluster; ``costs_usd``: its cost in USD (None: unknown).
    """

    orgs: dict[str, str]
    clusters: dict[str, int]
    costs_usd: dict[str, float | None]


def agent_provenance(
    matrix: OutcomeMatrix, split_dir: Path | None, leaderboard: Path | None
) -> AgentProvenance:
    """Organisation key, model cluster and cost_usd of each agent."""
    info = load_provenance(
        matrix.agents, leaderboard=leaderboard, experiments_split_dir=split_dir,
        split=matrix.provenance.split,
    )
    orgs = {agent: "|".join(sorted(entry.orgs)) for agent, entry in info.items() if entry.orgs}
    clusters = model_clusters(matrix.agents, info)
    cluster_map = {agent: int(c) for agent, c in zip(matrix.agents, clusters, strict=True)}
    costs = {agent: entry.cost_usd for agent, entry in info.items()}
    return AgentProvenance(orgs, cluster_map, costs)


def _pct(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{100.0 * value:.{digits}f}%"


def _interval(bounds: IntervalBounds, at: int) -> str:
    return f"{_pct(bounds.lower[at])}–{_pct(bounds.upper[at])}"


def curve_table(report: Advice) -> Table:
    """Measured and forecast C(m) with their 80 % and 95 % intervals."""
    table = Table(title="coverage curve C(m) (80% / 95% intervals)")
    for column in ("m", "measured", "80%", "95%", "forecast", "80% ", "95% "):
        table.add_column(column, justify="right")
    measured, forecast = report.curve.measured, report.curve.forecast
    measured_at = {m: i for i, m in enumerate(measured.sizes)}
    for position, size in enumerate(forecast.sizes):
        cells = [str(size)]
        index = measured_at.get(size)
        if index is None:
            cells += ["—", "—", "—"]
        else:
            cells.append(_pct(measured.point[index]))
            cells += [_interval(measured.intervals[level], index) for level in LEVEL_KEYS]
        cells.append(_pct(forecast.point[position]))
        cells += [_interval(forecast.intervals[level], position) for level in LEVEL_KEYS]
        table.add_row(*cells)
    return table


def render(report: Advice, console: Console) -> None:
    """Readable tables of an advisor report."""
    console.print(f"[bold]{report.label}[/bold]")
    shape = report.dependence
    rho = shape.beta_binomial_rho
    console.print(
        f"split {report.split}: {shape.agents} agents × {shape.tasks} tasks; "
        f"p̄ {shape.mean_solve_rate:.3f}, φ̄ {shape.mean_pairwise_phi:.3f}, "
        f"ρ {'—' if rho is None else f'{rho:.3f}'}, "
        f"n_eff {shape.effective_independent_agents_phi:.2f} (Kish, φ̄)"
    )
    costs = report.costs
    if costs.agents_without_cost:
        console.print(
            f"{len(costs.agents_without_cost)} agents without a cost are excluded "
            f"(source: {costs.source})"
        )
    console.print(curve_table(report))
    path = Table(title=f"greedy path (gain per {costs.unit})")
    for column in ("step", "agent", "cost", "new tasks", "coverage", "pp per cost"):
        path.add_column(column, justify="right" if column != "agent" else "left")
    recommendation = report.recommendation
    for row in report.path[: recommendation.size + 3]:
        marker = " ◀" if row.step == recommendation.size else ""
        path.add_row(
            str(row.step), row.agent + marker, f"{row.cost:g}", str(row.new_tasks),
            _pct(row.coverage), f"{row.gain_pp_per_cost:.3f}",
        )
    console.print(path)
    console.print(
        f"recommended: {recommendation.size} agents ({recommendation.reason}), cost "
        f"{recommendation.cost:g}, coverage {_pct(recommendation.coverage_in_sample)} "
        f"on these tasks (in-sample); stop point at {recommendation.stop_point_size}"
    )
    marginal = report.marginal_value
    best = marginal.best_next_agent
    console.print(
        "next agent: best "
        + ("—" if best is None else f"{best.agent} +{_pct(best.coverage_gain, 2)}")
        + f"; random pool agent +{_pct(marginal.random_pool_agent_gain, 2)}"
        + f"; new agent beyond the pool +{_pct(marginal.new_population_agent_gain, 2)}"
    )
    check = report.held_out_check
    held = Table(
        title=f"held-out check: size {check.size}, chosen on {check.calibration_tasks} "
        f"calibration tasks, scored on {check.held_out_tasks} held-out"
    )
    for column in ("strategy", "held-out", "only this", "only top-k", "McNemar p", "cost"):
        held.add_column(column, justify="right" if column != "strategy" else "left")
    for name, entry in check.strategies.items():
        held.add_row(
            name, _pct(entry.held_out_coverage), str(entry.only_this_team),
            str(entry.only_top_k), f"{entry.mcnemar_p:.4f}", f"{entry.team_cost:g}",
        )
    held.add_row("random team", _pct(check.random_team_held_out_coverage), "", "", "", "")
    console.print(held)
    spots = report.blind_spots
    console.print(
        f"blind spots: {spots.never_solved_count} tasks no agent solves; the recommended "
        f"team misses {spots.missed_by_recommended_team_count} tasks"
    )
    listed = spots.missed_by_recommended_team[:10]
    if listed:
        table = Table(title="send to a person first (fewest solvers)")
        for column in ("task", "agents solving", "P(new agent solves)"):
            table.add_column(column)
        for task in listed:
            table.add_row(task.task, str(task.agents_solving),
                          f"{task.new_agent_solve_probability:.3f}")
        console.print(table)
    console.print(f"[bold]{report.label}[/bold]")


def advise_command(
    source: Annotated[Path, typer.Argument(help="Matrix file, experiments tree, split "
                                           "directory, or 'lite' / 'verified'.")],
    split: options.Split = None,
    file_format: options.MatrixFormat = None,
    cost_column: Annotated[
        str | None, typer.Option(help="Provenance cost column (cost_usd).")
    ] = None,
    costs: Annotated[
        Path | None, typer.Option(help="CSV file with columns agent,cost.")
    ] = None,
    leaderboard: Annotated[
        Path | None, typer.Option(help="Leaderboard CSV (default: the shipped copy).")
    ] = None,
    target_coverage: Annotated[
        float | None, typer.Option(help="Smallest team reaching this coverage (0–1).")
    ] = None,
    budget: Annotated[float | None, typer.Option(help="Spend at most this much.")] = None,
    min_gain: Annotated[
        float | None,
        typer.Option(help="Stop threshold, percentage points of tasks per unit cost "
                     "(default 0.1 per USD, 0.5 per agent)."),
    ] = None,
    forecaster: Annotated[str, typer.Option(help="Forecaster for the curve.")] = (
        DEFAULT_FORECASTER
    ),
    replicates: options.Replicates = DEFAULT_REPLICATES,
    resplits: Annotated[int, typer.Option(help="Random re-splits.")] = DEFAULT_RESPLITS,
    seed: options.Seed = 0,
    out: options.OptionalOutFile = None,
    no_html: NoHtml = False,
) -> None:
    """Recommend a team size and members, with costs, intervals and blind spots."""
    require_page_extra(out, no_html)
    if cost_column is not None and costs is not None:
        raise ConfigError("give either --cost-column or --costs, not both")
    if target_coverage is not None and budget is not None:
        raise ConfigError("give either --target-coverage or --budget, not both")
    if resplits < 0:
        raise ConfigError("--resplits must be at least 0")
    for flag, value in (("--target-coverage", target_coverage), ("--budget", budget),
                        ("--min-gain", min_gain)):
        if value is not None and not math.isfinite(value):
            raise ConfigError(f"{flag} must be a finite number, got {value}")
    loaded = load_one(source, split, file_format)
    matrix = loaded.matrix
    check_array_fits(f"--replicates {replicates}", replicates * matrix.n_tasks, 8,
                     f"the bootstrap's resampled task counts ({replicates:,} ×"
                     f" {matrix.n_tasks:,})")
    provenance = agent_provenance(matrix, loaded.split_dir, leaderboard)
    table: CostTable | None = None
    if costs is not None:
        table = read_cost_file(costs, matrix.agents)
    elif cost_column is not None:
        table = costs_from_provenance(matrix.agents, provenance.costs_usd, cost_column)
    report = advise(
        matrix, costs=table, target_coverage=target_coverage, budget=budget,
        min_gain_pp_per_cost=min_gain, forecaster=forecaster, orgs=provenance.orgs,
        agent_clusters=provenance.clusters, replicates=replicates, resplits=resplits, seed=seed,
    )
    if out is not None:
        write_report(out, report)
    console = Console()
    render(report, console)
    if out is not None:
        console.print(f"report written to {out}")
        if not no_html:
            console.print(page_line("HTML report", out))
