"""The JSON a backend is asked to answer with: the forecast schema, or the caller's own.

A forecast answer is ``{"point", "lower", "upper", "direction_probability"}``
(:data:`FORECAST_SCHEMA`). A caller other than the forecast runner (an LLM
explainer) may ask for its own schema with ``request.context["response_schema"]
= {"name", "schema"}``; an explainer call that wants free text (``llm_task`` set
and ``response_schema`` null, e.g. an ordinary note) gets ``None``: no
structured output is requested (:func:`response_schema`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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


def response_schema(request: ForecastRequest) -> tuple[str, dict[str, Any]] | None:
    """The JSON schema the answer must follow: the forecast schema by default.

    A caller other than the forecast runner (an LLM explainer) may ask for its
    own schema with ``request.context["response_schema"] = {"name", "schema"}``;
    an explainer call that wants free text (``llm_task`` set and
    ``response_schema`` null, e.g. an ordinary note) gets ``None``: no
    structured output is requested.
    """
    custom = request.context.get("response_schema")
    if isinstance(custom, Mapping) and isinstance(custom.get("schema"), Mapping):
        return str(custom.get("name") or "answer"), dict(custom["schema"])
    if request.context.get("llm_task") is not None and custom is None:
        return None
    return FORECAST_SCHEMA_NAME, FORECAST_SCHEMA
