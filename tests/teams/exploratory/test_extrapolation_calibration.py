"""``teams calibrate``: extrapolation points, metrics by hand, settings, synthetic data."""

from __future__ import annotations

import numpy as np
import pytest

from foreseen.core.errors import ConfigError
from foreseen.teams.curves import population_curve
from foreseen.teams.exploratory.calibration import SkippedPilotSize
from foreseen.teams.exploratory.extrapolation_calibration import (
    PilotSizeCalibration,
    calibrate_matrix,
    check_calibration_settings,
    extrapolation_sizes,
    point_metrics,
)
from foreseen.teams.exploratory.intervals import IntervalForecast
from foreseen.teams.exploratory.synthetic_matrices import (
    FLOOR_SHARE,
    STRUCTURES,
    TASKS,
    synthetic_matrix,
)

from support.teams_matrices import synthetic_matrix as small_synthetic


def test_extrapolation_sizes_are_2k_4k_below_m_then_m() -> None:
    assert extrapolation_sizes(5, 78) == (10, 20, 78)
    assert extrapolation_sizes(20, 78) == (40, 78)
    assert extrapolation_sizes(10, 40) == (20, 40)  # 4k = M: not strictly below, M once
    assert extrapolation_sizes(10, 41) == (20, 40, 41)


def _forecast(point: float, low: float, high: float) -> IntervalForecast:
    return IntervalForecast(np.array([10]), np.array([point]), {0.8: np.array([low])},
                            {0.8: np.array([high])})


def test_point_metrics_by_hand_with_interval_ends_included() -> None:
    truth = np.array([0.5])
    forecasts = [_forecast(0.6, 0.5, 0.7), _forecast(0.4, 0.3, 0.49), _forecast(0.5, 0.4, 0.5),
                 _forecast(0.7, 0.51, 0.9)]
    metrics = point_metrics(forecasts, truth, 0, (0.8,))
    assert metrics.mae == pytest.approx((0.1 + 0.1 + 0.0 + 0.2) / 4)
    assert metrics.bias == pytest.approx((0.1 - 0.1 + 0.0 + 0.2) / 4)
    assert metrics.coverage == {"80%": 0.5}  # ends 0.5 and 0.5 count; 0.49 and 0.51 miss
    assert metrics.width["80%"] == pytest.approx((0.2 + 0.19 + 0.1 + 0.39) / 4)


def test_settings_that_cannot_work_are_refused() -> None:
    with pytest.raises(ConfigError, match="at least 3"):
        check_calibration_settings([2], 5, 5, [])
    with pytest.raises(ConfigError, match="2 pilots"):
        check_calibration_settings([5], 1, 5, [])
    with pytest.raises(ConfigError, match="1 replicate"):
        check_calibration_settings([5], 2, 0, [])
    with pytest.raises(ConfigError, match="unknown forecaster"):
        check_calibration_settings([5], 2, 1, ["nope"])
    check_calibration_settings([3], 2, 1, ["kish"])  # the smallest settings that work


def test_calibrate_matrix_scores_each_point_against_the_exact_curve() -> None:
    solved = small_synthetic(30, 100, seed=4).competent().solved
    report = calibrate_matrix("small", solved, [4, 30], pilots=5, replicates=8, seed=2,
                              references=["kish"])
    block = report.by_k["4"]
    assert isinstance(block, PilotSizeCalibration)
    population = solved.shape[0]
    assert block.sizes == extrapolation_sizes(4, population)
    truth = population_curve(solved, list(block.sizes))
    assert [block.truth[str(m)] for m in block.sizes] == pytest.approx(truth.tolist())
    assert set(block.forecasters) == {"pilot_calibrated", "kish"}
    for by_size in block.forecasters.values():
        assert list(by_size) == [str(m) for m in block.sizes]
        for metrics in by_size.values():
            assert list(metrics.coverage) == ["50%", "80%", "95%"]
            assert all(0.0 <= share <= 1.0 for share in metrics.coverage.values())
            assert metrics.width["50%"] <= metrics.width["95%"] + 1e-12
    assert isinstance(report.by_k["30"], SkippedPilotSize)  # k not below M


def test_synthetic_structures_are_seeded_and_have_their_structure() -> None:
    for structure in STRUCTURES:
        a = synthetic_matrix(structure, 11)
        assert np.array_equal(a, synthetic_matrix(structure, 11))
        assert not np.array_equal(a, synthetic_matrix(structure, 12))
        assert a.shape[1] == TASKS
        assert np.all(a.mean(axis=1) >= 0.05)
    floored = synthetic_matrix("rasch_floor", 11)
    assert (~floored.any(axis=0)).sum() >= round(FLOOR_SHARE * TASKS)
    with pytest.raises(ValueError, match="unknown structure"):
        synthetic_matrix("nope", 1)
