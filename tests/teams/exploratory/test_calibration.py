"""Calibration shares: by hand on a constructed run, and end to end on a small matrix."""

from __future__ import annotations

import json

import numpy as np
import pytest

from foreseen.core.schema import to_json
from foreseen.teams.curves import coverage_grid, population_curve
from foreseen.teams.exploratory.calibration import (
    EXPLORATORY,
    CalibrationAtK,
    PilotRun,
    SkippedPilotSize,
    calibration_report,
    draw_pilot_indices,
    hit_shares,
)


def test_hit_shares_by_hand() -> None:
    run = PilotRun(
        k=2, grid=[2, 5], truth=np.array([0.5, 0.7]), pilots=np.zeros((4, 2), dtype=np.int64),
        point={"x": np.zeros((4, 2))},
        lower={"x": {0.8: np.array([[0.4, 0.7], [0.6, 0.6], [0.5, 0.71], [0.0, 0.0]])}},
        upper={"x": {0.8: np.array([[0.6, 0.8], [0.9, 0.69], [0.5, 0.9], [0.49, 1.0]])}},
    )
    assert hit_shares(run, "x", 0.8).tolist() == [0.5, 0.5]


def test_pilot_indices_are_seeded_and_distinct() -> None:
    a = draw_pilot_indices(30, 5, 7, seed=1)
    assert np.array_equal(a, draw_pilot_indices(30, 5, 7, seed=1))
    assert not np.array_equal(a, draw_pilot_indices(30, 5, 7, seed=2))
    assert all(len(set(row)) == 5 for row in a.tolist())


def test_report_counts_pilots_whose_interval_holds_the_truth(small_matrix) -> None:  # type: ignore[no-untyped-def]
    solved = small_matrix.solved
    report = calibration_report(solved, [5, 40], pilots=4, forecasters=["beta_binomial"],
                                replicates=20, seed=3)
    assert report.status == EXPLORATORY
    assert isinstance(report.by_k["40"], SkippedPilotSize)
    at_five = report.by_k["5"]
    assert isinstance(at_five, CalibrationAtK)
    block = at_five.calibration["beta_binomial"]
    grid = coverage_grid(solved.shape[0])
    truth = population_curve(solved, grid)
    from foreseen.teams.exploratory.intervals import batched_intervals

    pilots = draw_pilot_indices(solved.shape[0], 5, 4, 3)
    forecasts = batched_intervals(solved[pilots], ["beta_binomial"], grid,
                                  [3 * 1_000_003 + p for p in range(4)], replicates=20)
    for level, key in ((0.8, "80%"), (0.95, "95%")):
        expected = np.mean([(f.lower[level] <= truth) & (truth <= f.upper[level])
                            for f in forecasts["beta_binomial"]], axis=0)
        assert [block[key].by_size[str(m)] for m in grid] == expected.tolist()
        assert block[key].over_grid == pytest.approx(float(expected.mean()), abs=1e-15)
    json.dumps(to_json(report), allow_nan=False)
