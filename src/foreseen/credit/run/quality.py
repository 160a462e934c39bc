"""What the forecaster's answers looked like, from the ledger: arrived, unparseable, invalid.

From the ``call_completed`` events of a ledger: how many answers arrived, how
many were not JSON at all (the model ignored the format), how many were JSON
but not a valid forecast, by reason (e.g. ``lower > upper``), and which model
ids the service returned. It describes a real model's behaviour; the run's
integrity (valid / assigned) is in the report.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from foreseen.core.ledger import LedgerEvent, read_ledger

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


@dataclass(frozen=True)
class Spend:
    """What a ledger's answers cost, and what the provider's prompt cache saved on them.

    ``spent_usd`` = Σ ``cost_usd`` of the ``call_completed`` events (the money
    actually spent on answers that arrived; unpriced calls add 0);
    ``saved_by_cache_usd`` = Σ ``cache_saved_usd`` (each call's tokens at the
    plain input price minus its cost); ``uncached_usd`` = their sum, what the
    same calls would have cost without the cache. Token sums are over calls
    that reported them.
    """

    calls: int
    spent_usd: float
    saved_by_cache_usd: float
    input_tokens: int
    cache_write_tokens: int
    cache_read_tokens: int
    output_tokens: int

    @property
    def uncached_usd(self) -> float:
        return self.spent_usd + self.saved_by_cache_usd


def spend(ledger_path: str | os.PathLike[str]) -> Spend:
    """Sum the ledger's ``call_completed`` costs, cache savings and tokens (:class:`Spend`)."""
    return spend_of(read_ledger(ledger_path))


def spend_of(events: Iterable[LedgerEvent]) -> Spend:
    """:func:`spend` of events already read (a verified ledger's kept events)."""
    calls, spent, saved = 0, 0.0, 0.0
    tokens = {"input_tokens": 0, "cache_write_tokens": 0, "cache_read_tokens": 0,
              "output_tokens": 0}
    for event in events:
        if event.type != "call_completed":
            continue
        calls += 1
        spent += float(event.payload.get("cost_usd") or 0.0)
        saved += float(event.payload.get("cache_saved_usd") or 0.0)
        usage = event.payload.get("usage") or {}
        for key in tokens:
            tokens[key] += int(usage.get(key) or 0)
    return Spend(calls, spent, saved, **tokens)
