"""Maximum coverage (exhaustive vs integer programme vs brute force) and pilot selection."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from foreseen.core.errors import ConfigError
from foreseen.core.schema import to_json
from foreseen.core.stats import mcnemar_exact_p
from foreseen.teams.e046.selection import hash_split
from foreseen.teams.exploratory.max_coverage import (
    exhaustive_max_coverage,
    max_coverage,
    milp_max_coverage,
    team_covered,
    undominated_agents,
)
from foreseen.teams.exploratory.pilot_selection import (
    choose_greedy,
    choose_top_k,
    compare_selection,
    one_per_org_strategy,
)
from foreseen.teams.matrix import OutcomeMatrix, Provenance


def brute_force_best(solved: np.ndarray, size: int) -> int:
    sets = [set(np.flatnonzero(row).tolist()) for row in solved]
    return max(
        len(set().union(*(sets[i] for i in team)))
        for team in itertools.combinations(range(len(sets)), size)
    )


def random_instance(seed: int) -> tuple[np.ndarray, int]:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(5, 11))
    n_tasks = int(rng.integers(10, 70))
    density = rng.uniform(0.05, 0.5)
    solved = rng.random((k, n_tasks)) < density * rng.uniform(0.3, 1.5, (k, 1))
    return solved, int(rng.integers(1, k))


def test_exhaustive_equals_python_brute_force_and_returns_first_optimum() -> None:
    for seed in range(8):
        solved, size = random_instance(seed)
        result = exhaustive_max_coverage(solved, size)
        assert result.covered == brute_force_best(solved, size)
        assert result.covered == team_covered(solved, result.team)
        first = next(
            team for team in itertools.combinations(range(solved.shape[0]), size)
            if team_covered(solved, team) == result.covered
        )
        assert result.team == first


def test_milp_equals_exhaustive_on_random_small_instances() -> None:
    for seed in range(100, 125):
        solved, size = random_instance(seed)
        exact = exhaustive_max_coverage(solved, size)
        milp = milp_max_coverage(solved, size)
        assert milp.proven_optimal
        assert len(milp.team) == size and len(set(milp.team)) == size
        assert milp.covered == exact.covered, seed


def test_max_coverage_dispatch_and_trivial_sizes() -> None:
    solved, _ = random_instance(3)
    k = solved.shape[0]
    assert max_coverage(solved, 2).method == "exhaustive"
    assert max_coverage(solved, 2, enumeration_limit=1).method == "milp"
    everyone = max_coverage(solved, k)
    assert everyone.team == tuple(range(k)) and everyone.covered == int(solved.any(0).sum())


def test_undominated_agents_by_brute_force() -> None:
    rng = np.random.default_rng(9)
    solved = rng.random((12, 8)) < 0.4
    solved[5] = solved[2]  # identical agents: the lower index stays
    sets = [frozenset(np.flatnonzero(row).tolist()) for row in solved]
    expected = [
        a for a in range(12)
        if not any(
            b != a and sets[a] <= sets[b] and (len(sets[b]) > len(sets[a]) or b < a)
            for b in range(12)
        )
    ]
    assert undominated_agents(solved).tolist() == expected
    assert 5 not in expected


def test_exact_is_never_worse_than_greedy_on_lite_calibration(lite: OutcomeMatrix) -> None:
    competent = lite.competent()
    calibration = competent.solved[:, hash_split(competent.tasks)]
    for size in (3, 5, 10):
        greedy_team = choose_greedy(calibration, competent.agents, size)
        exact = max_coverage(calibration, size)
        assert exact.proven_optimal
        assert exact.covered >= team_covered(calibration, tuple(greedy_team))


def test_one_per_org_takes_distinct_orgs_then_fills_in_top_k_order() -> None:
    solved = np.array(
        [[1, 1, 1, 1], [1, 1, 1, 0], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=bool
    )
    names = ["a", "b", "c", "d"]
    orgs = {"a": "X", "b": "X", "c": "Y"}  # d unknown: its own organisation
    choose = one_per_org_strategy(orgs)
    assert choose(solved, names, 2) == [0, 2]
    assert choose(solved, names, 3) == [0, 2, 3]
    assert choose(solved, names, 4) == [0, 2, 3, 1]
    assert choose_top_k(solved, names, 3) == [0, 1, 2]


def _matrix(solved: np.ndarray) -> OutcomeMatrix:
    agents = tuple(f"agent-{i:02d}" for i in range(solved.shape[0]))
    tasks = tuple(f"task-{j:03d}" for j in range(solved.shape[1]))
    provenance = Provenance("tiny", None, solved.shape[0], "0" * 64)
    return OutcomeMatrix(agents, tasks, solved, provenance)


def test_compare_selection_against_direct_computation() -> None:
    rng = np.random.default_rng(21)
    solved = rng.random((7, 60)) < rng.uniform(0.1, 0.6, (7, 1))
    matrix = _matrix(solved)
    orgs = {"agent-00": "A", "agent-01": "A", "agent-02": "B"}
    report = compare_selection(matrix, [2, 3], orgs=orgs, resplits=6, seed=4)
    calibration = hash_split(matrix.tasks)
    held = solved[:, ~calibration]
    for size in (2, 3):
        block = report.by_size[str(size)]
        teams = list(itertools.combinations(range(7), size))
        random_mean = np.mean([held[list(t)].any(axis=0).mean() for t in teams])
        assert block.random_team_held_out_coverage == pytest.approx(random_mean, rel=1e-12)
        top = [matrix.agents.index(a) for a in block.strategies["top_k"].team]
        assert top == choose_top_k(solved[:, calibration], matrix.agents, size)
        top_union = held[top].any(axis=0)
        assert set(block.strategies) == {"top_k", "greedy", "max_coverage", "one_per_org"}
        for entry in block.strategies.values():
            team = [matrix.agents.index(a) for a in entry.team]
            union = held[team].any(axis=0)
            b = int((union & ~top_union).sum())
            c = int((top_union & ~union).sum())
            assert entry.held_out_coverage == pytest.approx(union.mean())
            assert (entry.only_this_team, entry.only_top_k) == (b, c)
            assert entry.mcnemar_p == mcnemar_exact_p(b, c)
            assert entry.resplit_not_worse_fraction is not None
            assert 0.0 <= entry.resplit_not_worse_fraction <= 1.0
        assert block.strategies["one_per_org"].orgs_exhausted is False
        assert block.strategies["greedy"].orgs_exhausted is None
        exact = block.strategies["max_coverage"].calibration_coverage
        assert exact >= block.strategies["greedy"].calibration_coverage


def test_compare_selection_is_seeded_and_can_skip_resplits() -> None:
    rng = np.random.default_rng(22)
    matrix = _matrix(rng.random((6, 50)) < 0.3)
    first = compare_selection(matrix, [2], resplits=5, seed=1)
    again = compare_selection(matrix, [2], resplits=5, seed=1)
    assert to_json(first) == to_json(again)
    other = compare_selection(matrix, [2], resplits=5, seed=2)
    assert other.by_size["2"].strategies["top_k"].team == (
        first.by_size["2"].strategies["top_k"].team
    )
    assert to_json(other) != to_json(first)  # the re-splits follow the seed
    skipped = compare_selection(matrix, [2], resplits=5, resplit_strategies=["greedy"])
    entry = skipped.by_size["2"].strategies["max_coverage"]
    assert entry.resplit_mean_difference_vs_top_k is None
    assert entry.resplit_reason == "not re-split"


def test_compare_selection_refuses_bad_sizes_and_pools() -> None:
    matrix = _matrix(np.random.default_rng(23).random((4, 30)) < 0.4)
    with pytest.raises(ConfigError, match="team size"):
        compare_selection(matrix, [5], resplits=0)
    with pytest.raises(ConfigError, match="not in the matrix"):
        compare_selection(matrix, [1], pool=["nobody"], resplits=0)


def test_pilot_pool_restricts_the_choice() -> None:
    matrix = _matrix(np.random.default_rng(24).random((8, 40)) < 0.4)
    pool = list(matrix.agents[2:6])
    report = compare_selection(matrix, [2], pool=pool, resplits=2)
    for entry in report.by_size["2"].strategies.values():
        assert set(entry.team) <= set(pool)
    assert report.pool_agents == 4
