"""The linear leave-one-cell-out task-mean prior equals the per-state quadratic one exactly."""

from __future__ import annotations

import numpy as np
import pytest

from foreseen.credit.analysis.baselines import task_mean_loco_prior


def _quadratic(y: np.ndarray, tasks: list[str], cells: list[str]) -> np.ndarray:
    """The original definition: one mask over all states for every state."""
    prior = np.full(y.size, np.nan)
    task_arr = np.array(tasks, dtype=object)
    cell_arr = np.array(cells, dtype=object)
    for i in range(y.size):
        others = (task_arr == task_arr[i]) & (cell_arr != cell_arr[i])
        if others.any():
            prior[i] = y[others].mean()
    return prior


@pytest.mark.parametrize("seed", range(40))
def test_linear_prior_is_bit_identical_to_the_quadratic_one(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    n_tasks = int(rng.integers(1, 8))
    tasks = [f"t{int(k)}" for k in rng.integers(0, n_tasks, n)]
    cells = [f"{t}/c{int(c)}" for t, c in zip(tasks, rng.integers(0, 6, n), strict=True)]
    scale = 10.0 ** rng.uniform(-8, 8, n)
    y = rng.normal(size=n) * scale
    fast = task_mean_loco_prior(y, tasks, cells)
    slow = _quadratic(y, tasks, cells)
    assert np.array_equal(np.isnan(fast), np.isnan(slow))
    assert [v.hex() for v in fast[~np.isnan(fast)]] == [v.hex() for v in slow[~np.isnan(slow)]]


def test_prior_boundaries_one_cell_no_prior_two_cells_each_other() -> None:
    y = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    tasks = ["a", "a", "a", "b", "b"]
    cells = ["a1", "a1", "a2", "b1", "b1"]
    prior = task_mean_loco_prior(y, tasks, cells)
    assert prior[0] == prior[1] == 4.0
    assert prior[2] == 1.5
    assert np.isnan(prior[3]) and np.isnan(prior[4])
    assert np.isnan(task_mean_loco_prior(np.array([3.0]), ["a"], ["a1"])[0])
