"""The answer-quality table: unreadable answers, incoherent points, off-scale points."""

from __future__ import annotations

import pytest

from foreseen.credit.analysis.answer_quality import OFF_SCALE_FACTOR, answer_quality
from foreseen.credit.model import Forecast, SlotRecord


def _slot(index: int, forecast: Forecast, fallback: bool = False) -> SlotRecord:
    return SlotRecord(f"x{index}", "s1", "description", 1, forecast, fallback)


def test_each_count_and_its_boundary() -> None:
    scale = 0.05  # the task's outcome scale
    slots = [
        _slot(0, Forecast(0.01, 0.0, 0.02, 0.6)),                     # fine
        _slot(1, Forecast(0.02, 0.0, 0.02, 0.6)),                     # point on the upper end
        _slot(2, Forecast(4.5, 3.12, 4.37 + 1.0, None)),              # off scale, no probability
        _slot(3, Forecast(0.03, 0.04, 0.05, 0.5)),                    # point below its interval
        _slot(4, Forecast(OFF_SCALE_FACTOR * scale, 0.0, 1.0, 0.5)),  # exactly 10×: not off
        _slot(5, Forecast(0.0, 0.0, 0.0, None, valid=False, reason="lower > upper"), True),
        _slot(6, Forecast(0.0, 0.0, 0.0, None, valid=False, reason="transport_exhausted"),
              True),
    ]
    (row,) = answer_quality({"-|description": slots}, {"s1": "t"}, {"t": scale})
    assert (row.slots, row.valid, row.unreadable, row.transport_exhausted) == (7, 5, 1, 1)
    assert row.unreadable_share == pytest.approx(1 / 7)
    assert row.point_outside_interval == 1 and row.point_outside_interval_share == 0.2
    assert row.off_scale == 1 and row.off_scale_share == 0.2
    assert row.no_direction_probability == 1


def test_an_arm_with_no_valid_answer_has_null_shares() -> None:
    slots = [_slot(0, Forecast(0.0, 0.0, 0.0, None, valid=False, reason="not JSON"), True)]
    (row,) = answer_quality({"a|matched_card": slots}, {"s1": "t"}, {"t": 0.05})
    assert row.valid == 0 and row.point_outside_interval_share is None
    assert row.off_scale_share is None and row.unreadable_share == 1.0
