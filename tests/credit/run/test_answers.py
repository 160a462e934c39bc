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
    '{"point": 0.02, "lower": -0.01, "upper": 0.05, "direction_probability": "70 %"}',
    # a template that opens the think block in the prompt: the answer holds only its end
    'Maybe {"point": 0.9, "lower": 0.8, "upper": 1.0} fits.\n</think>\n' + OBJECT,
    # text whose lower-case form is longer (İ → i̇) before the closing tag
    'İİİİ {"point": 0.9, "lower": 0.8, "upper": 1.0} İİİİ\n</THINK>\n' + OBJECT,
    # a draft, then the answer: the last forecast object is the answer
    'A first guess would be {"point": 0.9, "lower": 0.8, "upper": 1.0}; on reflection,'
    f" my forecast is {OBJECT}",
    f'Draft:\n```json\n{{"point": 0.9, "lower": 0.8, "upper": 1.0}}\n```\nFinal:\n```json\n'
    f"{OBJECT}\n```",
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
    # y is in the metric's units: a percentage may be relative or in points, never guessed
    ('{"point": "2%", "lower": -0.01, "upper": 0.05}', "field 'point' is a percentage"),
    ('{"point": 0.02, "lower": -0.01, "upper": "5 %"}', "field 'upper' is a percentage"),
    # reasoning ends with an unclosed draft and then no answer: not read out of the reasoning
    ('Maybe {"point": 0.9, "lower": 0.8, "upper": 1.0}.</think>\nI cannot say.',
     "no JSON object"),
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
