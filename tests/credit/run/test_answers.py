"""Reading real models' answers: the plan's answer rules, strict and lenient."""

from __future__ import annotations

import pytest

from foreseen.core.errors import ConfigError
from foreseen.credit.plan.answer_rules import AnswerRules
from foreseen.credit.plan.freeze import ExecutionConfig
from foreseen.credit.run.answers import ForecastParseError, parse_forecast

LENIENT = AnswerRules()
OBJECT = '{"point": 0.02, "lower": -0.01, "upper": 0.05, "direction_probability": 0.7}'


@pytest.mark.parametrize("text", [
    OBJECT,
    f"<think>The change adds capacity; maybe {{not json}}.</think>\n{OBJECT}",
    f"Here is my forecast:\n```json\n{OBJECT}\n```\nI hope this helps.",
    f"```\n{OBJECT}\n```",
    f"My answer is {OBJECT} — based on the validation curve.",
    '{"point": "0.02", "lower": "-0.01", "upper": "+0.05", "direction_probability": "70%"}',
    '{"point": "2%", "lower": "-1 %", "upper": "5%", "direction_probability": 0.7}',
])
def test_lenient_reading_finds_the_forecast(text: str) -> None:
    forecast = parse_forecast(text, LENIENT)
    assert forecast.valid
    assert (forecast.point, forecast.lower, forecast.upper) == pytest.approx((0.02, -0.01, 0.05))
    assert forecast.direction_probability == pytest.approx(0.7)


@pytest.mark.parametrize(("text", "reason"), [
    ("I think it will improve a little.", "response is not valid JSON"),
    ("<think>still thinking about {\"point\": 1", "ends inside a <think> block"),
    ('{"point": "about two", "lower": 0, "upper": 1}', "field 'point' is not a number"),
    ('{"point": 0.1, "lower": 0.3, "upper": 0.2}', "lower > upper"),
    ('{"point": 0.1, "lower": 0, "upper": 1, "direction_probability": "150%"}',
     "direction_probability is not in [0, 1]"),
    ('{"point": 0.1, "lower": 0}', "missing field 'upper'"),
    ('[{"point": 0.1}]', "response is not a JSON object"),
])
def test_lenient_reading_still_refuses_what_is_not_a_forecast(text: str, reason: str) -> None:
    with pytest.raises(ForecastParseError, match=reason.replace("[", r"\[").replace("]", r"\]")):
        parse_forecast(text, LENIENT)


@pytest.mark.parametrize("text", [
    f"```json\n{OBJECT}\n```",
    '{"point": "0.02", "lower": -0.01, "upper": 0.05}',
    f"<think>x</think>{OBJECT}",
])
def test_strict_reading_is_the_old_rule(text: str) -> None:
    with pytest.raises(ForecastParseError):
        parse_forecast(text)  # no rules: strict, as every plan frozen before the rules
    with pytest.raises(ForecastParseError):
        parse_forecast(text, AnswerRules(parsing="strict"))


def test_point_outside_its_interval_is_a_fallback_only_when_the_plan_says_so() -> None:
    outside = '{"point": 4.5, "lower": 3.12, "upper": 4.37}'
    edge = '{"point": 4.37, "lower": 3.12, "upper": 4.37}'  # on the boundary: inside
    assert parse_forecast(outside, LENIENT).valid
    declared = AnswerRules(fallback_on=("point_outside_interval",))
    with pytest.raises(ForecastParseError, match="point outside its own interval"):
        parse_forecast(outside, declared)
    assert parse_forecast(edge, declared).valid


def test_rules_are_frozen_and_old_plans_read_strictly() -> None:
    new = ExecutionConfig().to_json()
    assert new["answer_rules"] == {"parsing": "lenient", "fallback_on": []}
    assert ExecutionConfig.from_json(new).answer_rules == AnswerRules()
    old = {k: v for k, v in new.items() if k != "answer_rules"}
    assert ExecutionConfig.from_json(old).answer_rules == AnswerRules(parsing="strict")
    for bad in ({"parsing": "loose"}, {"fallback_on": ["off_scale"]}, []):
        with pytest.raises(ConfigError):
            AnswerRules.from_json(bad)
