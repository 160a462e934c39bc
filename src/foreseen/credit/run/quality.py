"""What the forecaster's answers looked like, from the ledger: arrived, unparseable, invalid.

From the ``call_completed`` events of a ledger: how many answers arrived, how
many were not JSON at all (the model ignored the format), how many were JSON
but not a valid forecast, by reason (e.g. ``lower > upper``), and which model
ids the service returned. It describes a real model's behaviour; the run's
integrity (valid / assigned) is in the report.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from foreseen.core.ledger import read_ledger

PARSE_FAILURES: tuple[str, ...] = ("response is not valid JSON", "response is not a JSON object")


@dataclass(frozen=True)
class AnswerQuality:
    """Arrived answers, JSON parse failures, other invalid answers by reason, returned models."""

    arrived: int
    json_parse_failures: int
    semantic_invalid_by_reason: dict[str, int]
    returned_models: dict[str, int]


def answer_quality(ledger_path: str | os.PathLike[str]) -> AnswerQuality:
    """Count the ledger's arrived answers by validity and reason (see the module docstring)."""
    arrived = 0
    reasons: dict[str, int] = {}
    models: dict[str, int] = {}
    for event in read_ledger(ledger_path):
        if event.type != "call_completed":
            continue
        arrived += 1
        model = str(event.payload.get("returned_model"))
        models[model] = models.get(model, 0) + 1
        if not event.payload.get("valid"):
            reason = str(event.payload.get("reason"))
            reasons[reason] = reasons.get(reason, 0) + 1
    parse = sum(n for r, n in reasons.items() if r in PARSE_FAILURES)
    return AnswerQuality(arrived, parse,
                         {r: n for r, n in sorted(reasons.items()) if r not in PARSE_FAILURES},
                         dict(sorted(models.items())))
