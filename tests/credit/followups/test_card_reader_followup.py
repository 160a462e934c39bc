"""The offline card reader answers a follow-up from its card (a labelled stand-in rule)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from foreseen.credit.backends.base import ForecastRequest
from foreseen.credit.backends.offline import CardReadingForecaster, read_effect_change
from foreseen.credit.run.followup_answers import parse_effect_change

PRIOR = {"typical_effect": 0.03, "typical_magnitude": 0.02, "half_width": 0.01}


def _context(point: float | None, threshold: float | None = 0.005) -> dict[str, Any]:
    context: dict[str, Any] = {"public": {"intervention_prior": PRIOR}}
    if point is not None:
        context["card"] = {"direction": None, "target": {"point": point, "intervals": [],
                                                         "benefit_probability": None}}
    if threshold is not None:
        context["followup"] = {"threshold": threshold}
    return context


@pytest.mark.parametrize("point,expected", [
    (0.005, "unchanged"),    # |p| = tau: unchanged
    (-0.005, "unchanged"),
    (0.00501, "shrinks"),    # just above
    (-0.2, "shrinks"),
])
def test_the_card_point_against_the_threshold(point: float, expected: str) -> None:
    assert read_effect_change(_context(point)) == expected


def test_without_a_card_the_prior_decides_and_without_a_threshold_zero_does() -> None:
    assert read_effect_change(_context(None)) == "shrinks"  # prior 0.03
    assert read_effect_change(_context(0.001, None)) == "shrinks"
    assert read_effect_change(_context(0.0, None)) == "unchanged"
    # a reader that ignores explanations reads the prior only
    assert read_effect_change(_context(0.0), read_explanations=False) == "shrinks"


def test_the_backend_answers_followup_slots_with_a_readable_class() -> None:
    backend = CardReadingForecaster(seed=1)
    request = ForecastRequest("e|s|followup|1", "s", "followup", 1, "prompt", 0,
                              _context(0.001))
    response = asyncio.run(backend.complete(request))
    assert parse_effect_change(response.text).effect_change == "unchanged"
    assert response.text == '{"effect_change": "unchanged"}'  # the wire format, byte for byte
    forecast = asyncio.run(backend.complete(ForecastRequest(
        "e|s|matched_card|1", "s", "matched_card", 1, "prompt", 0, _context(0.001))))
    assert "point" in forecast.text
