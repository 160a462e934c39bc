"""The sizing advisor: cost-aware greedy, stop rules, costs, report and command line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from foreseen.core.digest import dumps_strict
from foreseen.core.errors import ConfigError, SourceError
from foreseen.core.schema import to_json
from foreseen.core.stats import percentile_interval
from foreseen.teams.curves import mean_pairwise_phi, population_curve
from foreseen.teams.e046.selection import greedy
from foreseen.teams.exploratory.advice import Advice
from foreseen.teams.exploratory.advisor import (
    EXPLORATORY,
    LEVELS,
    advise,
    cost_aware_greedy,
    dependence_shape,
    measured_curve,
)
from foreseen.teams.exploratory.intervals import forecast_with_intervals
from foreseen.teams.matrix import OutcomeMatrix
from foreseen.teams.provenance.costs import CostTable, read_cost_file

from support.teams_cli import run, validated_json
from support.teams_matrices import synthetic_matrix, write_wide_csv


def reference_cost_greedy(
    solved: np.ndarray, names: list[str], costs: list[float | None], budget: float | None
) -> list[int]:
    """Plain-Python cost-aware greedy with the documented tie-breaks."""
    chosen: list[int] = []
    covered: set[int] = set()
    spent = 0.0
    solves = [int(row.sum()) for row in solved]
    while True:
        options = [
            a for a in range(len(names))
            if a not in chosen and costs[a] is not None
            and (budget is None or costs[a] <= budget - spent + 1e-9)  # type: ignore[operator]
        ]
        gains = {a: len(set(np.flatnonzero(solved[a]).tolist()) - covered) for a in options}
        options = [a for a in options if gains[a] > 0]
        if not options:
            return chosen
        best = max(
            options,
            key=lambda a: (gains[a] / costs[a], gains[a], solves[a],  # type: ignore[operator]
                           tuple(-ord(ch) for ch in names[a])),
        )
        chosen.append(best)
        spent += costs[best]  # type: ignore[operator]
        covered |= set(np.flatnonzero(solved[best]).tolist())


def test_unit_costs_reproduce_e046_greedy(lite: OutcomeMatrix) -> None:
    competent = lite.competent()
    path = cost_aware_greedy(competent.solved, competent.agents, [1.0] * competent.n_agents,
                             max_steps=10)
    everything = np.ones(competent.n_tasks, dtype=bool)
    assert [s.agent for s in path] == greedy(competent.solved, competent.agents, 10, everything)


def test_cost_aware_greedy_matches_reference_with_costs_and_budget() -> None:
    rng = np.random.default_rng(31)
    for trial in range(6):
        solved = rng.random((9, 40)) < rng.uniform(0.05, 0.5, (9, 1))
        names = [f"agent-{i}" for i in range(9)]
        costs: list[float | None] = [float(c) for c in rng.integers(1, 6, 9)]
        costs[trial] = None
        budget = None if trial % 2 else 9.0
        path = cost_aware_greedy(solved, names, costs, budget=budget)
        assert [s.agent for s in path] == reference_cost_greedy(solved, names, costs, budget)
        assert all(s.agent != trial for s in path)
        if budget is not None:
            assert sum(s.cost for s in path) <= budget
        assert [s.covered for s in path] == [
            int(solved[[t.agent for t in path[: i + 1]]].any(axis=0).sum())
            for i in range(len(path))
        ]


def test_dependence_shape_formulas(lite: OutcomeMatrix) -> None:
    solved = lite.competent().solved
    shape = dependence_shape(solved)
    m = solved.shape[0]
    phi = mean_pairwise_phi(solved)
    assert shape.mean_solve_rate == pytest.approx(solved.mean(), rel=1e-12)
    assert shape.effective_independent_agents_phi == pytest.approx(m / (1 + (m - 1) * phi))
    alpha, beta = shape.beta_binomial_alpha, shape.beta_binomial_beta
    assert alpha is not None and beta is not None
    assert shape.beta_binomial_rho == pytest.approx(1 / (alpha + beta + 1))
    # moments: ρ = (v / (M μ (1 − μ)) − 1)/(M − 1) from the solver counts directly
    counts = solved.sum(axis=0)
    mu = counts.sum() / (m * solved.shape[1])
    rho = (counts.var(ddof=1) / (m * mu * (1 - mu)) - 1) / (m - 1)
    assert shape.beta_binomial_rho == pytest.approx(rho, rel=1e-9)


def test_measured_curve_intervals_match_an_independent_bootstrap() -> None:
    matrix = synthetic_matrix(12, 80, seed=5)
    sizes = [1, 2, 5, 12]
    block = measured_curve(matrix.solved, sizes, replicates=40, seed=9)
    assert block.point == pytest.approx(population_curve(matrix.solved, sizes).tolist())
    rng = np.random.default_rng(9)
    weights = rng.multinomial(80, np.full(80, 1 / 80), size=40)
    replicate_curves = [
        population_curve(np.repeat(matrix.solved, w, axis=1), sizes) for w in weights
    ]
    for position in range(len(sizes)):
        values = [float(curve[position]) for curve in replicate_curves]
        low, high = percentile_interval(values, 0.95)
        assert block.intervals["0.95"].lower[position] == pytest.approx(low)
        assert block.intervals["0.95"].upper[position] == pytest.approx(high)


@pytest.fixture(scope="module")
def synthetic() -> OutcomeMatrix:
    return synthetic_matrix(30, 160, seed=11, split="synthetic")


def test_default_report_is_strict_json_and_follows_the_stop_rule(
    synthetic: OutcomeMatrix,
) -> None:
    report = advise(synthetic, replicates=30, resplits=4, seed=2)
    dumps_strict(to_json(report))  # strict JSON: no NaN anywhere
    assert report.label == EXPLORATORY
    assert "exploratory" in report.label and "seen" in report.label
    threshold = report.settings.threshold_pp_per_cost
    assert threshold == 0.5
    size = report.recommendation.size
    gains = [row.gain_pp_per_cost for row in report.path]
    first_below = next((i for i, g in enumerate(gains) if i > 0 and g < threshold), len(gains))
    assert size == max(1, first_below)
    assert all(g >= threshold for g in gains[1:size])
    assert report.recommendation.team == tuple(row.agent for row in report.path[:size])
    check = report.held_out_check
    assert check.size == size
    assert set(check.strategies) >= {"advisor", "top_k", "greedy", "max_coverage"}
    # unit costs: the advisor's calibration team is E046 greedy
    assert check.strategies["advisor"].team == check.strategies["greedy"].team
    assert to_json(report) == to_json(advise(synthetic, replicates=30, resplits=4, seed=2))


def test_target_coverage_gives_the_shortest_reaching_prefix(synthetic: OutcomeMatrix) -> None:
    report = advise(synthetic, target_coverage=0.8, replicates=10, resplits=0)
    size = report.recommendation.size
    coverages = [row.coverage for row in report.path]
    assert size > 1
    assert coverages[size - 1] >= 0.8 > coverages[size - 2]
    assert report.recommendation.target_reached is True
    assert synthetic.competent().solved.any(axis=0).mean() < 1.0
    unreachable = advise(synthetic, target_coverage=1.0, replicates=10, resplits=0)
    assert unreachable.recommendation.target_reached is False


def test_costs_budget_and_unknown_costs(synthetic: OutcomeMatrix) -> None:
    agents = synthetic.competent().agents
    costs = {agent: 1.0 + (index % 5) for index, agent in enumerate(agents) if index % 4}
    table = CostTable(costs, "USD", "test", tuple(a for a in agents if a not in costs))
    report = advise(synthetic, costs=table, budget=6.0, replicates=10, resplits=0)
    assert report.recommendation.cost <= 6.0
    assert all(row.agent in costs for row in report.path)
    assert report.settings.threshold_pp_per_cost == 0.1
    for entry in report.held_out_check.strategies.values():
        assert set(entry.team) <= set(costs)
        assert entry.team_cost == sum(costs[agent] for agent in entry.team)
    with pytest.raises(ConfigError, match="no agent"):
        advise(synthetic, costs=CostTable({}, "USD", "test", agents), replicates=5)
    with pytest.raises(ConfigError, match="not both"):
        advise(synthetic, target_coverage=0.5, budget=3.0)


def test_cost_file_parsing(tmp_path: Path) -> None:
    good = tmp_path / "costs.csv"
    good.write_text("agent,cost,note\na,2.5,x\nb,1,y\nzz,3,not in matrix\n")
    table = read_cost_file(good, ["a", "b", "c"])
    assert table.costs == {"a": 2.5, "b": 1.0}
    assert table.unknown == ("c",) and table.not_in_matrix == ("zz",)
    for body, message in (
        ("agent,price\na,1\n", "columns"),
        ("agent,cost\na,1\na,2\n", "twice"),
        ("agent,cost\na,-1\n", "> 0"),
        ("agent,cost\na,abc\n", "not a number"),
    ):
        bad = tmp_path / "bad.csv"
        bad.write_text(body)
        with pytest.raises(SourceError, match=message):
            read_cost_file(bad, ["a"])


def test_command_line_writes_identical_json_and_refuses_bad_options(
    tmp_path: Path, synthetic: OutcomeMatrix, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_wide_csv(synthetic, tmp_path / "bench.csv")
    costs = tmp_path / "costs.csv"
    costs.write_text("agent,cost\n" + "".join(
        f"{agent},{1 + i % 3}\n" for i, agent in enumerate(synthetic.agents)
    ))
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    base = ["teams", "advise", str(source), "--costs", str(costs), "--replicates", "20",
            "--resplits", "3"]
    assert run([*base, "--out", str(first)]) == 0
    out = capsys.readouterr().out
    assert "exploratory" in out and "recommended" in out
    assert run([*base, "--out", str(second)]) == 0
    assert first.read_bytes() == second.read_bytes()
    report = validated_json(first, Advice)
    assert report["costs"]["unit"] == "cost-file units"
    assert list(report["held_out_check"]["strategies"]["advisor"])[-1] == "team_cost"
    capsys.readouterr()
    refused = tmp_path / "refused.json"
    assert run([*base, "--budget", "3", "--target-coverage", "0.5",
                "--out", str(refused)]) == 2
    assert "not both" in capsys.readouterr().err
    assert not refused.exists()
    assert run(["teams", "advise", str(source), "--cost-column", "price",
                "--out", str(refused)]) == 2
    assert "unsupported cost column" in capsys.readouterr().err
    assert not refused.exists()


def test_forecast_curve_block_is_the_interval_forecast(synthetic: OutcomeMatrix) -> None:
    clusters = {agent: i // 2 for i, agent in enumerate(synthetic.agents)}
    report = advise(synthetic, agent_clusters=clusters, replicates=20, resplits=0, seed=3)
    block = report.curve.forecast
    m = report.dependence.agents
    assert block.forecaster == "beta_binomial"
    assert block.sizes[-1] == 2 * m and m in block.sizes
    pool = synthetic.competent()
    expected = forecast_with_intervals(
        pool.solved, "beta_binomial", block.sizes, levels=LEVELS, replicates=20, seed=3,
        agent_clusters=np.array([clusters[a] for a in pool.agents], dtype=np.int64),
    )
    assert block.point == pytest.approx(expected.point.tolist(), abs=1e-15)
    for level in LEVELS:
        bounds = block.intervals[str(level)]
        assert bounds.lower == pytest.approx(expected.lower[level].tolist(), abs=1e-15)
        assert bounds.upper == pytest.approx(expected.upper[level].tolist(), abs=1e-15)
        assert all(lo <= hi for lo, hi in zip(bounds.lower, bounds.upper, strict=True))


def test_advice_says_whether_the_max_coverage_team_is_proven_optimal(
        synthetic: OutcomeMatrix, monkeypatch: pytest.MonkeyPatch) -> None:
    from foreseen.teams.exploratory import advisor as advisor_module
    from foreseen.teams.exploratory import max_coverage as max_coverage_module

    report = advise(synthetic, replicates=10, resplits=0, seed=1)
    assert report.held_out_check.max_coverage_proven_optimal is True
    assert report.held_out_check.max_coverage_method in ("exhaustive", "milp", "all agents")
    # force the programme into a child process and stop it at once: the greedy team stands in
    monkeypatch.setattr(max_coverage_module, "IN_PROCESS_CELLS", 0)
    monkeypatch.setattr(advisor_module, "MILP_WALL_SECONDS", 0.0)
    capped = advise(synthetic, replicates=10, resplits=0, seed=1)
    assert capped.held_out_check.max_coverage_proven_optimal is False
    assert capped.held_out_check.max_coverage_method == max_coverage_module.GREEDY_FALLBACK
