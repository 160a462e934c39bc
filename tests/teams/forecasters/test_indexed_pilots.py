"""Pilot statistics from agent indices equal those of the materialised pilot stack, exactly."""

from __future__ import annotations

import numpy as np
import pytest

from foreseen.teams.curves import gram_matrix
from foreseen.teams.forecasters.base import PilotStats
from foreseen.teams.forecasters.indexed_pilots import (
    PATTERN_MAX_K,
    _whole_gram_is_cheaper,
    pilot_stats,
    resampled_pilot_stats,
)


@pytest.fixture(autouse=True, params=["indexed", "stacked", "whole gram"])
def route(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs on the index routes (no stack is small), on the stack route (the
    whole matrix's J only when the caller gives the unweighted one) and on the stack's
    histograms with the whole matrix's (weighted) J for every small input."""
    if request.param == "indexed":
        monkeypatch.setattr("foreseen.teams.forecasters.indexed_pilots.STACK_CELLS", 0)
    factor = {"stacked": 0, "whole gram": 10**9}.get(str(request.param))
    if factor is not None:
        monkeypatch.setattr("foreseen.teams.forecasters.indexed_pilots.WHOLE_GRAM_FACTOR",
                            factor)
    return str(request.param)


def _matrix(seed: int, agents: int = 30, tasks: int = 257) -> np.ndarray:
    rng = np.random.default_rng(seed)
    solved = rng.random((agents, tasks)) < rng.uniform(0.05, 0.9, agents)[:, None]
    solved[0] = False  # an agent that solves nothing: φ undefined for its pairs
    solved[1] = True
    return solved


def _pilots(seed: int, agents: int, k: int, count: int) -> np.ndarray:
    rng = np.random.default_rng(seed + 1)
    return np.array([rng.choice(agents, k, replace=False) for _ in range(count)])


def _same(left: PilotStats, right: PilotStats) -> None:
    assert left.k == right.k
    assert left.histogram.dtype == right.histogram.dtype == np.float64
    assert np.array_equal(left.histogram, right.histogram)
    if right.mean_phi is None:
        assert left.mean_phi is None
    else:
        assert left.mean_phi is not None
        assert np.array_equal(left.mean_phi, right.mean_phi, equal_nan=True)


@pytest.mark.parametrize("k", [2, 5, 10, PATTERN_MAX_K, PATTERN_MAX_K + 1, 20])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_unweighted_and_bootstrap_weighted_equal_the_stack(k: int, seed: int) -> None:
    solved = _matrix(seed, tasks=4099)  # ≥ 2^12 tasks: column codes up to k = 12
    pilots = _pilots(seed, solved.shape[0], k, 9)
    _same(pilot_stats(solved, pilots), PilotStats.from_pilot(solved[pilots]))
    _same(pilot_stats(solved, pilots, joint=gram_matrix(solved)),
          PilotStats.from_pilot(solved[pilots]))
    rng = np.random.default_rng(seed + 7)
    weights = np.bincount(rng.integers(0, solved.shape[1], solved.shape[1]),
                          minlength=solved.shape[1]).astype(np.float64)
    _same(pilot_stats(solved, pilots, weights), PilotStats.from_pilot(solved[pilots], weights))
    _same(pilot_stats(solved, pilots, weights, with_phi=False),
          PilotStats.from_pilot(solved[pilots], weights, with_phi=False))


def test_fractional_weights_take_the_stack_route_and_agree() -> None:
    solved = _matrix(5)
    pilots = _pilots(5, solved.shape[0], 10, 6)
    weights = np.random.default_rng(3).uniform(0.0, 2.0, solved.shape[1])
    _same(pilot_stats(solved, pilots, weights), PilotStats.from_pilot(solved[pilots], weights))


def test_chunks_of_pilots_give_the_same_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """The chunk size of the stack route (used by both routes' fallbacks) changes nothing."""
    solved = _matrix(8)
    pilots = _pilots(8, solved.shape[0], 10, 11)
    weights = np.arange(solved.shape[1], dtype=np.float64) % 3
    whole = pilot_stats(solved, pilots, weights)
    monkeypatch.setattr("foreseen.teams.forecasters.indexed_pilots.CELLS_PER_CHUNK",
                        2 * solved.shape[1])  # two pilots per chunk, the last one alone
    _same(pilot_stats(solved, pilots, weights), whole)
    _same(pilot_stats(solved, pilots), PilotStats.from_pilot(solved[pilots]))


def test_histogram_counts_by_hand() -> None:
    solved = np.array([[1, 1, 0, 0], [1, 0, 1, 0], [0, 0, 0, 0]], dtype=bool)
    stats = pilot_stats(solved, [[0, 1]], [2.0, 1.0, 0.0, 3.0])
    # solver counts per task: 2, 1, 1, 0 with weights 2, 1, 0, 3
    assert stats.histogram.tolist() == [[3.0, 1.0, 2.0]]


@pytest.mark.parametrize("bad", [np.ones(3), np.ones((2, 4))])
def test_weights_must_be_one_per_task(bad: np.ndarray) -> None:
    with pytest.raises(ValueError, match="one multiplicity per task"):
        pilot_stats(np.ones((3, 4), dtype=bool), [[0, 1]], bad)


@pytest.mark.filterwarnings("ignore:invalid value encountered in sqrt:RuntimeWarning")
@pytest.mark.parametrize("weights", [
    [2.0**24 + 1, 1.0, 0.0, 2.0] * 3,  # a total past float32's exact integers
    [2.0**25, -(2.0**25) + 1, 3.0, 1.0] * 3,  # negative weights
])
def test_weights_outside_the_exact_range_give_the_stacks_values(weights: list[float]) -> None:
    """12 tasks ≥ 2^3 codes: without the guard these weights would take the code route."""
    solved = np.tile(np.array([[1, 1, 0, 1], [1, 0, 1, 1], [0, 1, 1, 1], [1, 1, 1, 0],
                               [0, 0, 1, 1]], dtype=bool), 3)
    pilots = np.array([[0, 1, 2], [1, 3, 4], [0, 2, 4]])
    _same(pilot_stats(solved, pilots, weights), PilotStats.from_pilot(solved[pilots], weights))


def test_no_pilots_give_empty_statistics() -> None:
    solved = _matrix(1)
    stats = pilot_stats(solved, np.zeros((0, 3), dtype=np.int64))
    _same(stats, PilotStats.from_pilot(solved[np.zeros((0, 3), dtype=np.int64)]))
    assert stats.histogram.shape == (0, 4)


def test_pilots_too_large_for_the_counters_take_the_stack(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("foreseen.teams.forecasters.indexed_pilots.MAX_COUNTED_K", 4)
    solved = _matrix(2, tasks=600)
    pilots = _pilots(2, solved.shape[0], 5, 4)
    _same(pilot_stats(solved, pilots), PilotStats.from_pilot(solved[pilots]))



def test_the_whole_matrix_gram_is_chosen_up_to_its_cost_boundary(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """M² ≤ 2·P·k²: at the boundary the whole matrix's J, one agent more the stack's; the
    unweighted J the caller has is always read (never for weighted pilots)."""
    monkeypatch.setattr("foreseen.teams.forecasters.indexed_pilots.WHOLE_GRAM_FACTOR", 2)
    pilots = np.zeros((8, 3), dtype=np.int64)  # P·k² = 72: M² ≤ 144
    at, past = np.zeros((12, 5), dtype=bool), np.zeros((13, 5), dtype=bool)
    joint = np.zeros((13, 13))
    assert _whole_gram_is_cheaper(at, pilots, None, weighted=True)
    assert not _whole_gram_is_cheaper(past, pilots, None, weighted=True)
    assert not _whole_gram_is_cheaper(past, pilots, None, weighted=False)
    assert _whole_gram_is_cheaper(past, pilots, joint, weighted=False)
    assert not _whole_gram_is_cheaper(past, pilots, joint, weighted=True)


@pytest.mark.parametrize("cells", [1, 257 * 7])
def test_the_weighted_joint_counts_in_blocks_of_rows_equal_the_stack(
        monkeypatch: pytest.MonkeyPatch, cells: int) -> None:
    """One row per product, and 7 rows per product (30 agents: a shorter last block)."""
    monkeypatch.setattr("foreseen.teams.forecasters.indexed_pilots.SINGLE_THREAD_PRODUCT",
                        cells * 30)
    monkeypatch.setattr("foreseen.teams.forecasters.indexed_pilots.WHOLE_GRAM_FACTOR", 10**9)
    solved = _matrix(4)
    pilots = _pilots(4, solved.shape[0], 10, 6)
    weights = np.bincount(np.random.default_rng(9).integers(0, 257, 257),
                          minlength=257).astype(np.float64)
    _same(pilot_stats(solved, pilots, weights), PilotStats.from_pilot(solved[pilots], weights))


def _resamples(seed: int, tasks: int, count: int) -> np.ndarray:
    rng = np.random.default_rng(seed + 11)
    return np.stack([np.bincount(rng.integers(0, tasks, tasks), minlength=tasks)
                     for _ in range(count)]).astype(np.float64)


def _same_per_resample(solved: np.ndarray, pilots: np.ndarray, weights: np.ndarray) -> None:
    stacked = resampled_pilot_stats(solved, pilots, weights)
    assert stacked.histogram.shape == (*pilots.shape[:2], pilots.shape[2] + 1)
    for index, (one, row) in enumerate(zip(pilots, weights, strict=True)):
        single = pilot_stats(solved, one, row)
        assert single.mean_phi is not None and stacked.mean_phi is not None
        _same(PilotStats(k=stacked.k, histogram=stacked.histogram[index],
                         mean_phi=stacked.mean_phi[index]), single)


@pytest.mark.parametrize(("limit", "cells"), [("RESAMPLED_STACK_CELLS", 10**9),
                                              ("RESAMPLED_STACK_CELLS", 35 * 257 * 2),
                                              ("STACK_CELLS", 1)])
@pytest.mark.parametrize("seed", [0, 1])
def test_resampled_pilot_stats_equal_pilot_stats_resample_by_resample(
        monkeypatch: pytest.MonkeyPatch, seed: int, limit: str, cells: int) -> None:
    """All 9 resamples in one stack, 2 per stack (the last alone), and one at a time (a
    resample's stack too large); on each route of the joint counts the fixture sets
    (whole J, the stack's products)."""
    monkeypatch.setattr(f"foreseen.teams.forecasters.indexed_pilots.{limit}", cells)
    solved = _matrix(seed)
    pilots = np.stack([_pilots(seed + r, solved.shape[0], 7, 5) for r in range(9)])
    _same_per_resample(solved, pilots, _resamples(seed, solved.shape[1], 9))


def test_resampled_pilot_stats_with_fractional_weights_go_one_by_one() -> None:
    solved = _matrix(3)
    pilots = np.stack([_pilots(3 + r, solved.shape[0], 4, 3) for r in range(2)])
    weights = np.random.default_rng(5).uniform(0.0, 2.0, (2, solved.shape[1]))
    _same_per_resample(solved, pilots, weights)


def test_resampled_pilot_stats_check_their_shapes() -> None:
    solved = _matrix(1)
    with pytest.raises(ValueError, match="one row per resample"):
        resampled_pilot_stats(solved, np.zeros((2, 3, 4), dtype=np.int64),
                              np.ones((3, solved.shape[1])))
    with pytest.raises(ValueError, match="one row per resample"):
        resampled_pilot_stats(solved, np.zeros((3, 4), dtype=np.int64),
                              np.ones((3, solved.shape[1])))
    empty = resampled_pilot_stats(solved, np.zeros((0, 3, 4), dtype=np.int64),
                                  np.ones((0, solved.shape[1])))
    assert empty.histogram.shape == (0, 3, 5) and empty.phi().shape == (0, 3)
