"""The hard wall-clock cap on the maximum-coverage programme and its greedy fallback."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from foreseen.teams.exploratory.max_coverage import (
    GREEDY_FALLBACK,
    capped_milp_max_coverage,
    exhaustive_max_coverage,
    greedy_max_coverage,
    milp_max_coverage,
)


def _reference_greedy(solved: np.ndarray, size: int) -> tuple[int, ...]:
    covered = np.zeros(solved.shape[1], dtype=bool)
    team: list[int] = []
    for _ in range(size):
        gains = [(-1 if a in team else int((solved[a] & ~covered).sum()), -a)
                 for a in range(solved.shape[0])]
        pick = -max(gains)[1]
        team.append(pick)
        covered |= solved[pick]
    return tuple(sorted(team))


@pytest.mark.parametrize("seed", range(10))
def test_greedy_fallback_follows_the_plain_greedy_rule(seed: int) -> None:
    rng = np.random.default_rng(seed)
    solved = rng.random((int(rng.integers(3, 12)), int(rng.integers(1, 150)))) < 0.3
    size = int(rng.integers(1, solved.shape[0]))
    team = greedy_max_coverage(solved, size)
    assert team.team == _reference_greedy(solved, size)
    assert team.covered == int(solved[list(team.team)].any(axis=0).sum())
    assert not team.proven_optimal and team.method == GREEDY_FALLBACK


def test_ties_go_to_the_lowest_index() -> None:
    solved = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=bool)
    assert greedy_max_coverage(solved, 1).team == (0,)
    assert greedy_max_coverage(solved, 2).team == (0, 2)


def test_a_child_stopped_at_the_cap_gives_the_greedy_team() -> None:
    rng = np.random.default_rng(1)
    solved = rng.random((30, 400)) < 0.2
    stopped = capped_milp_max_coverage(solved, 5, 60.0, wall_limit=0.0, in_process_cells=0)
    assert stopped == greedy_max_coverage(solved, 5)
    assert not stopped.proven_optimal


def test_a_child_within_the_cap_returns_the_exact_programme() -> None:
    rng = np.random.default_rng(2)
    solved = rng.random((9, 80)) < 0.25
    child = capped_milp_max_coverage(solved, 3, 30.0, wall_limit=120.0, in_process_cells=0)
    here = milp_max_coverage(solved, 3, 30.0)
    assert child == here and child.proven_optimal
    best = max(int(solved[list(c)].any(axis=0).sum())
               for c in itertools.combinations(range(9), 3))
    assert child.covered == best == exhaustive_max_coverage(solved, 3).covered
