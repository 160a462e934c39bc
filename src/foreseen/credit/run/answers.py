"""Reading a forecast out of what a model answered, under the plan's answer rules.

A forecast answer is one JSON object ``{"point", "lower", "upper",
"direction_probability"?}`` (credit §5). How strictly an answer is
read is frozen in the plan
(:class:`~foreseen.credit.plan.answer_rules.AnswerRules`, part of the execution
block):

* ``parsing = "strict"`` — the whole text must be that JSON object with
  numbers (plans frozen before the rules existed read this way);
* ``parsing = "lenient"`` (new plans) — real models wrap the object: the text
  may hold reasoning in ``<think>…</think>`` blocks (dropped first; so is
  everything before a ``</think>`` whose opening tag was in the prompt, as
  chat templates of reasoning models write it), a fenced code block
  (```` ```json … ``` ````), prose before or after the object, and numbers
  written as strings (``"0.12"``, ``"+0.1"``). Among the fenced blocks, else
  among the ``{…}`` in the prose, the **last** object holding a ``point`` is
  the answer (a model drafts before it answers), else the first object. A
  percentage (``"70%"`` → 0.7) is read for ``direction_probability`` only:
  ``y`` is in the metric's own units, where ``"2%"`` may be relative or in
  points, so it is not a number there (a parse failure, never a guess).

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
_CLOSE_THINK = re.compile(r"</think>", re.IGNORECASE)
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


class ForecastParseError(ValueError):
    """A response arrived but is not a valid forecast (the message is the reason)."""


def _reject_constant(name: str) -> float:
    raise ForecastParseError(f"non-finite number {name} in response")


def _loads(text: str) -> Any:
    """The JSON value of a model's answer text, not yet validated (NaN/Infinity refused)."""
    return json.loads(text, parse_constant=_reject_constant)


def _answer_part(text: str) -> str:
    """``text`` without its reasoning: ``<think>`` blocks and anything before a lone
    ``</think>`` (the opening tag was in the prompt)."""
    cleaned = _THINK.sub("", text)
    closings = list(_CLOSE_THINK.finditer(cleaned))
    if closings:
        cleaned = cleaned[closings[-1].end():]
    cleaned = cleaned.strip()
    if "<think>" in cleaned.lower():
        raise ForecastParseError("response ends inside a <think> block (answer cut short?)")
    return cleaned


def _pick(found: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last object holding a ``point`` (the answer after any draft), else the first."""
    answers = [obj for obj in found if "point" in obj]
    if answers:
        return answers[-1]
    return found[0] if found else None


def _objects_in(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in ``text``, in order."""
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    found: list[dict[str, Any]] = []
    start = text.find("{")
    while start != -1:
        try:
            obj, end = decoder.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError):
            start = text.find("{", start + 1)
            continue
        if isinstance(obj, dict):
            found.append(obj)
        start = text.find("{", end)
    return found


def _first_object(text: str) -> Any:
    """The answer's JSON object (module docstring), or what the whole answer text is."""
    cleaned = _answer_part(text)
    try:
        return _loads(cleaned)
    except ForecastParseError:
        raise
    except (json.JSONDecodeError, RecursionError):
        pass
    fenced: list[dict[str, Any]] = []
    for block in _FENCE.findall(cleaned):
        try:
            found = _loads(block.strip())
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(found, dict):
            fenced.append(found)
    chosen = _pick(fenced) or _pick(_objects_in(cleaned))
    if chosen is None:
        raise ForecastParseError("response is not valid JSON (no JSON object in it)")
    return chosen


def read_answer_object(text: str) -> Any:
    """The JSON object the lenient rules read out of ``text`` (not yet checked as a
    forecast); :class:`ForecastParseError` when there is none."""
    return _first_object(text)


def _number(value: Any, key: str, lenient: bool) -> float:
    """A JSON number; leniently also a numeric string (never a percentage: y has units)."""
    if isinstance(value, str) and lenient:
        if value.strip().endswith("%"):
            raise ForecastParseError(f"field {key!r} is a percentage ({value.strip()!r}); y is"
                                     " in the metric's units")
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
