"""How a plan reads its forecasters' answers: frozen in the plan's execution block.

``parsing`` is ``"strict"`` (the whole answer must be the JSON object; plans
frozen before these rules existed read this way) or ``"lenient"`` (the object
is found inside reasoning, fences and prose; numbers may be numeric strings or
percentages). ``fallback_on`` lists the valid but incoherent answers
(:data:`INCOHERENCES`) the plan treats as fallbacks. The reading itself is
:mod:`foreseen.credit.run.answers`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from foreseen.core.errors import ConfigError

Parsing = Literal["strict", "lenient"]
#: valid but incoherent answers a plan may declare fallbacks: the point estimate outside
#: the answer's own interval
INCOHERENCES: tuple[str, ...] = ("point_outside_interval",)


@dataclass(frozen=True)
class AnswerRules:
    """How a plan reads answers (module docstring); frozen in the execution block."""

    parsing: Parsing = "lenient"
    fallback_on: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The JSON object frozen in the plan's ``execution.answer_rules``."""
        return {"parsing": self.parsing, "fallback_on": list(self.fallback_on)}

    @classmethod
    def from_json(cls, obj: object) -> AnswerRules:
        """The rules of a plan's execution block; a plan without them reads strictly."""
        if obj is None:
            return cls(parsing="strict")
        if not isinstance(obj, Mapping):
            raise ConfigError("plan: execution.answer_rules must be an object")
        parsing = obj.get("parsing", "lenient")
        fallback_on = obj.get("fallback_on", [])
        if parsing not in ("strict", "lenient"):
            raise ConfigError("plan: answer_rules.parsing must be 'strict' or 'lenient'")
        if not isinstance(fallback_on, list) or any(
                item not in INCOHERENCES for item in fallback_on):
            raise ConfigError(f"plan: answer_rules.fallback_on lists answers to treat as"
                              f" fallbacks, from {', '.join(INCOHERENCES)}")
        return cls(parsing, tuple(fallback_on))
