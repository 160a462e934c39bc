"""The JSON a backend is asked to answer with: the forecast schema, or the caller's own.

A forecast answer is ``{"point", "lower", "upper", "direction_probability"}``
(:data:`FORECAST_SCHEMA`). A caller other than the forecast runner (an LLM
explainer) may ask for its own schema with ``request.context["response_schema"]
= {"name", "schema"}``; an explainer call that wants free text (``llm_task`` set
and ``response_schema`` null, e.g. an ordinary note) gets ``None``: no
structured output is requested (:func:`response_schema`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from foreseen.credit.backends.base import ForecastRequest

FORECAST_SCHEMA_NAME = "forecast"
FORECAST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "point": {"type": "number", "description": "expected change of the outcome"},
        "lower": {"type": "number", "description": "lower end of the 80% interval"},
        "upper": {"type": "number", "description": "upper end of the 80% interval"},
        "direction_probability": {"type": "number",
                                  "description": "probability that the change helps, 0..1"},
    },
    "required": ["point", "lower", "upper", "direction_probability"],
    "additionalProperties": False,
}


@dataclass(frozen=True, slots=True)
class ForecastAnswer:
    """A forecast answer as an offline stand-in composes it (:data:`FORECAST_SCHEMA`'s fields).

    Not validated here: the runner parses and validates :meth:`text` like any
    model's answer, so a stand-in's answer gets the treatment a model's gets.
    """

    point: float
    lower: float
    upper: float
    direction_probability: float | None

    def to_json(self) -> dict[str, float | None]:
        """The answer object ``{"point", "lower", "upper", "direction_probability"}``."""
        return {"point": self.point, "lower": self.lower, "upper": self.upper,
                "direction_probability": self.direction_probability}

    def text(self) -> str:
        """The answer text a stand-in returns: the object's JSON with sorted keys."""
        return json.dumps(self.to_json(), sort_keys=True)


class ResponseSchema(NamedTuple):
    """The JSON schema an answer must follow and the name a request gives it (a tool's, a
    ``response_format``'s)."""

    name: str
    schema: dict[str, Any]


def response_schema(request: ForecastRequest) -> ResponseSchema | None:
    """The JSON schema the answer must follow: the forecast schema by default.

    A caller other than the forecast runner (an LLM explainer) may ask for its
    own schema with ``request.context["response_schema"] = {"name", "schema"}``;
    an explainer call that wants free text (``llm_task`` set and
    ``response_schema`` null, e.g. an ordinary note) gets ``None``: no
    structured output is requested.
    """
    custom = request.context.get("response_schema")
    if isinstance(custom, Mapping) and isinstance(custom.get("schema"), Mapping):
        return ResponseSchema(str(custom.get("name") or "answer"), dict(custom["schema"]))
    if request.context.get("llm_task") is not None and custom is None:
        return None
    return ResponseSchema(FORECAST_SCHEMA_NAME, FORECAST_SCHEMA)
