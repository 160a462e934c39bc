"""Reading a forecast out of what a model answered, under the plan's answer rules.

A forecast answer is one JSON object ``{"point", "lower", "upper",
"direction_probability"?}`` (spec credit.md §5). How strictly an answer is
read is frozen in the plan
(:class:`~foreseen.credit.plan.answer_rules.AnswerRules`, part of the execution
block):

* ``parsing = "strict"`` — the whole text must be that JSON object with
  numbers (plans frozen before the rules existed read this way);
* ``parsing = "lenient"`` (new plans) — real models wrap the object: the text
  may hold reasoning in ``<think>…</think>`` blocks (dropped first), a fenced
  code block (```` ```json … ``` ````), prose before or after the object (the
  first ``{…}`` that decodes as a JSON object is taken), and numbers written
  as strings (``"0.12"``, ``"+0.1"``) or percentages (``"12%"`` → 0.12).

Either way the forecast must then be **valid**: finite numbers, ``lower <=
upper``, a direction probability (when given) in [0, 1]; anything else is a
:class:`ForecastParseError` and the slot gets the plan's fallback (intention
to treat, never re-asked). On top of validity,
:data:`~foreseen.credit.plan.answer_rules.INCOHERENCES` names
answers that are valid but incoherent; ``fallback_on`` lists those the plan
treats as fallbacks (default: none — they are counted in the report's answer
quality table instead, :mod:`foreseen.credit.analysis.answer_quality`).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from foreseen.credit.model import Forecast
from foreseen.credit.plan.answer_rules import AnswerRules

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


class ForecastParseError(ValueError):
    """A response arrived but is not a valid forecast (the message is the reason)."""


def _reject_constant(name: str) -> float:
    raise ForecastParseError(f"non-finite number {name} in response")


def _loads(text: str) -> Any:
    return json.loads(text, parse_constant=_reject_constant)


def _first_object(text: str) -> Any:
    """The first JSON object in ``text`` (after dropping think blocks), or what ``text`` is."""
    cleaned = _THINK.sub("", text).strip()
    if "<think>" in cleaned.lower() and "</think>" not in cleaned.lower():
        raise ForecastParseError("response ends inside a <think> block (answer cut short?)")
    try:
        return _loads(cleaned)
    except ForecastParseError:
        raise
    except (json.JSONDecodeError, RecursionError):
        pass
    for block in _FENCE.findall(cleaned):
        try:
            found = _loads(block.strip())
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(found, dict):
            return found
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    start = cleaned.find("{")
    while start != -1:
        try:
            found, _ = decoder.raw_decode(cleaned, start)
        except (json.JSONDecodeError, RecursionError):
            start = cleaned.find("{", start + 1)
            continue
        if isinstance(found, dict):
            return found
        start = cleaned.find("{", start + 1)
    raise ForecastParseError("response is not valid JSON (no JSON object in it)")


def _number(value: Any, key: str, lenient: bool) -> float:
    """A JSON number; leniently also a numeric string or a percentage string."""
    if isinstance(value, str) and lenient:
        value = _numeric_text(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ForecastParseError(f"field {key!r} is not a number")
    if not math.isfinite(value):
        raise ForecastParseError(f"field {key!r} is not finite")
    return float(value)


def _numeric_text(value: str) -> Any:
    """``"0.12"`` → 0.12, ``"12%"`` → 0.12; any other text is returned unchanged."""
    text = value.strip()
    scale = 1.0
    if text.endswith("%"):
        text, scale = text[:-1].strip(), 0.01
    if _NUMBER.fullmatch(text):
        return float(text) * scale
    return value


def parse_forecast(text: str, rules: AnswerRules | None = None) -> Forecast:
    """Parse and validate an answer under ``rules`` (strict when None); raise with the reason."""
    rules = rules or AnswerRules(parsing="strict")
    lenient = rules.parsing == "lenient"
    if lenient:
        obj = _first_object(text)
    else:
        try:
            obj = _loads(text)
        except ForecastParseError:
            raise
        except (json.JSONDecodeError, RecursionError):
            raise ForecastParseError("response is not valid JSON") from None
    if not isinstance(obj, dict):
        raise ForecastParseError("response is not a JSON object")
    values: dict[str, float] = {}
    for key in ("point", "lower", "upper"):
        if key not in obj:
            raise ForecastParseError(f"missing field {key!r}")
        values[key] = _number(obj[key], key, lenient)
    if values["lower"] > values["upper"]:
        raise ForecastParseError("lower > upper")
    probability = obj.get("direction_probability")
    if probability is not None:
        if lenient and isinstance(probability, str):
            probability = _numeric_text(probability)
        if isinstance(probability, bool) or not isinstance(probability, (int, float)):
            raise ForecastParseError("direction_probability is not a number")
        if not (math.isfinite(probability) and 0.0 <= probability <= 1.0):
            raise ForecastParseError("direction_probability is not in [0, 1]")
        probability = float(probability)
    if "point_outside_interval" in rules.fallback_on and not (
            values["lower"] <= values["point"] <= values["upper"]):
        raise ForecastParseError("point outside its own interval (the plan treats this as a"
                                 " fallback)")
    return Forecast(values["point"], values["lower"], values["upper"], probability)
