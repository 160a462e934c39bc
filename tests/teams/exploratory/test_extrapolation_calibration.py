"""``teams calibrate``: extrapolation points, metrics by hand, settings, synthetic data."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest

from foreseen.core.errors import ConfigError
from foreseen.teams.curves import population_curve
from foreseen.teams.exploratory.calibration import SkippedPilotSize, draw_pilot_indices
from foreseen.teams.exploratory.extrapolation_calibration import (
    PilotSizeCalibration,
    calibrate_matrix,
    check_calibration_settings,
    coverage_standard_errors,
    extrapolation_sizes,
    held_out_pilots,
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


def test_a_pilot_must_leave_two_agents_out_and_the_boundary_is_scored() -> None:
    solved = small_synthetic(12, 60, seed=3).competent().solved
    population = solved.shape[0]
    assert population == 12
    report = calibrate_matrix("twelve", solved, [10, 11, 20], pilots=4, replicates=2, seed=1,
                              references=[])
    at_boundary = report.by_k["10"]  # M − k = 2: scored
    assert isinstance(at_boundary, PilotSizeCalibration)
    for k in ("11", "20"):  # one agent or none left out: skipped with the reason, no crash
        skipped = report.by_k[k]
        assert isinstance(skipped, SkippedPilotSize)
        assert "leave at least 2 of the M = 12 agents out" in skipped.skipped


def test_pilots_are_exhaustive_exactly_when_there_are_no_more_than_asked() -> None:
    assert held_out_pilots(6, 4, 15, seed=0).tolist() == [
        list(c) for c in combinations(range(6), 4)]  # C(6, 4) = 15 ≤ 15: every one once
    drawn = held_out_pilots(6, 4, 14, seed=0)  # 15 > 14: seeded draws
    assert np.array_equal(drawn, draw_pilot_indices(6, 4, 14, 0))
    solved = small_synthetic(12, 60, seed=3).competent().solved
    report = calibrate_matrix("twelve", solved, [10, 5], pilots=66, replicates=2, seed=1,
                              references=[])
    exact, sampled = report.by_k["10"], report.by_k["5"]
    assert isinstance(exact, PilotSizeCalibration) and isinstance(sampled, PilotSizeCalibration)
    assert (exact.pilots, exact.exhaustive) == (66, True)  # C(12, 10) = 66
    assert exact.coverage_se == {"50%": 0.0, "80%": 0.0, "95%": 0.0}
    assert (sampled.pilots, sampled.exhaustive) == (66, False)  # C(12, 5) = 792
    assert sampled.coverage_se == pytest.approx(
        {"50%": math.sqrt(0.25 / 66), "80%": math.sqrt(0.16 / 66),
         "95%": math.sqrt(0.0475 / 66)})
    shares = [m.coverage["80%"] * 66 for m in exact.forecasters["pilot_calibrated"].values()]
    assert all(abs(share - round(share)) < 1e-9 for share in shares)  # counts out of 66


def test_monte_carlo_error_is_that_of_a_calibrated_share() -> None:
    errors = coverage_standard_errors((0.5, 0.8, 0.95), 200, exhaustive=False)
    assert errors["80%"] == pytest.approx(0.028284, abs=1e-6)  # the 2.8 points at P = 200
    assert errors["50%"] == pytest.approx(0.035355, abs=1e-6)
    assert coverage_standard_errors((0.8,), 200, exhaustive=True) == {"80%": 0.0}


def test_exhaustive_pilots_remove_pilot_sampling_error_not_the_forecasts_own_draws() -> None:
    # C(12, 10) = 66 pilots, every one once; the default draws 20 of the C(10, 5) = 252
    # sub-pilots of each pilot from the seed, so another seed moves its intervals.
    from foreseen.cli.teams.calibrate import pilots_note

    solved = small_synthetic(12, 60, seed=3).competent().solved
    blocks = [calibrate_matrix("twelve", solved, [10], pilots=66, replicates=2, seed=seed,
                               references=[]).by_k["10"] for seed in (1, 2)]
    assert all(isinstance(b, PilotSizeCalibration) and b.exhaustive for b in blocks)
    widths = [b.forecasters["pilot_calibrated"]["12"].width["80%"] for b in blocks
              if isinstance(b, PilotSizeCalibration)]
    assert widths[0] != widths[1]
    assert isinstance(blocks[0], PilotSizeCalibration)
    note = pilots_note(blocks[0])
    assert note == "all 66 pilots (no pilot-sampling error)" and "exact" not in note
