"""The calibration page's headline: the 3-point goal at its boundary, and skipped sizes."""

from __future__ import annotations

from foreseen.report.teams.calibration import _verdict, point_label, worst_gap
from foreseen.teams.exploratory.calibration import SkippedPilotSize
from foreseen.teams.exploratory.extrapolation_calibration import (
    MatrixCalibration,
    PilotSizeCalibration,
    PointMetrics,
)


def _matrix(cov80: float, cov95: float) -> MatrixCalibration:
    metrics = PointMetrics(0.01, 0.0, {"50%": 0.5, "80%": cov80, "95%": cov95},
                           {"50%": 0.1, "80%": 0.2, "95%": 0.3})
    block = PilotSizeCalibration(sizes=(10, 40), truth={"10": 0.5, "40": 0.7},
                                 forecasters={"pilot_calibrated": {"10": metrics,
                                                                   "40": metrics}})
    return MatrixCalibration("exploratory", "x", 40, 100, 10, 5, 1, ("50%", "80%", "95%"),
                             "pilot_calibrated",
                             {"5": block, "50": SkippedPilotSize("too big")})


def test_the_goal_holds_at_exactly_three_points_and_fails_just_beyond() -> None:
    assert worst_gap(_matrix(0.77, 0.95), "80%") == 0.8 - 0.77
    assert _verdict("x", _matrix(0.8 - 0.03, 0.95 + 0.03)).tone == "pass"
    assert _verdict("x", _matrix(0.8 - 0.0301, 0.95)).tone == "warn"
    assert _verdict("x", _matrix(0.8, 0.95 - 0.0301)).word == "outside 3 points"


def test_a_matrix_with_every_size_skipped_has_no_verdict_word() -> None:
    matrix = MatrixCalibration("exploratory", "x", 4, 100, 10, 5, 1, ("80%",),
                               "pilot_calibrated", {"5": SkippedPilotSize("k ≥ M")})
    assert worst_gap(matrix, "80%") is None
    assert _verdict("x", matrix).word == "no pilot size run"


def test_point_labels() -> None:
    assert [point_label(5, m, 78) for m in (10, 20, 78, 12)] == \
        ["m = 2k", "m = 4k", "m = M", "m = 12"]


def test_captions_give_the_pilots_and_their_monte_carlo_error() -> None:
    from dataclasses import replace

    from foreseen.report.teams.calibration import pilots_caption

    matrix = _matrix(0.8, 0.95)
    block = matrix.by_k["5"]
    assert isinstance(block, PilotSizeCalibration)
    assert pilots_caption(matrix, block) == "10 held-out pilots"  # a file from before
    sampled = replace(block, pilots=200, coverage_se={"50%": 0.0354, "80%": 0.0283,
                                                      "95%": 0.0154})
    assert "200 held-out pilots" in pilots_caption(matrix, sampled)
    assert "0.0283 at 80%" in pilots_caption(matrix, sampled)
    exact = replace(block, pilots=66, exhaustive=True,
                    coverage_se={"50%": 0.0, "80%": 0.0, "95%": 0.0})
    caption = pilots_caption(matrix, exact)
    assert caption.startswith("all 66 possible pilots (no pilot-sampling error")
    # the forecasts' own seeded draws still move an exhaustive share: never "exact"
    assert "exact" not in caption and "no Monte Carlo error" not in caption


def test_a_calibration_file_from_before_the_monte_carlo_fields_still_loads() -> None:
    import json
    from dataclasses import replace

    from foreseen.core.schema import from_json, to_json

    matrix = _matrix(0.8, 0.95)
    block = matrix.by_k["5"]
    assert isinstance(block, PilotSizeCalibration)
    recorded = replace(block, pilots=10, exhaustive=False, coverage_se={"80%": 0.126})
    data = json.loads(json.dumps(to_json(replace(matrix, by_k={"5": recorded}))))
    assert data["by_k"]["5"]["exhaustive"] is False
    assert from_json(MatrixCalibration, data, strict=True).by_k["5"] == recorded
    for field in ("pilots", "exhaustive", "coverage_se"):
        del data["by_k"]["5"][field]
    old = from_json(MatrixCalibration, data, strict=True).by_k["5"]
    assert isinstance(old, PilotSizeCalibration)
    assert (old.pilots, old.exhaustive, old.coverage_se) == (None, None, None)
