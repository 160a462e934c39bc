"""Follow-up slots in a run: their requests, how their answers are read, their records.

A follow-up slot (context ``followup``, :mod:`foreseen.credit.plan.followups`)
runs through the same runner as a forecast slot — transport retries, the
circuit breaker, the budget, resume, the response cache and the ledger's
events — and differs in three places only:

* its prompt is re-rendered by :func:`followup_request` (the matched-card
  prompt plus the question) and must hash to the frozen ``prompt_sha256``;
* its answer is read by :func:`parse_effect_change` under the plan's answer
  rules: one JSON object ``{"effect_change": <class>}`` whose class is one of
  :data:`~foreseen.credit.plan.followups.CLASSES` (strict: the whole text;
  lenient: the object found in reasoning, fences or prose, the class compared
  case-insensitively; other fields are ignored, a non-finite number anywhere is
  refused); anything else is a :class:`ForecastParseError`;
* its fallback (intention to treat) is ``{"effect_change": null}``: no class,
  scored wrong.

:func:`followup_records` reads the terminal events of the follow-up slots
(:func:`foreseen.credit.run.runner.slot_records` leaves them out).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from foreseen.core.digest import sha256_text
from foreseen.core.errors import IntegrityError
from foreseen.core.ledger import LedgerEvent
from foreseen.credit.analysis.followups import CHANCE, NOTE, FollowupReport, score_explainer
from foreseen.credit.backends.base import ForecastRequest
from foreseen.credit.model import Explanation, Forecast, Study
from foreseen.credit.plan.answer_rules import AnswerRules
from foreseen.credit.plan.followup_slots import render_followup
from foreseen.credit.plan.followups import (
    CLASSES,
    FollowupDesign,
    is_followup_context,
    plan_followups,
    template_digest,
)
from foreseen.credit.plan.outcome_file import read_followup_outcomes
from foreseen.credit.plan.plan_file import PlanSlot
from foreseen.credit.plan.renderers import ContextRenderer
from foreseen.credit.run.answers import ForecastParseError, parse_forecast, read_answer_object
from foreseen.credit.run.events import FallbackAssigned, is_terminal


@dataclass(frozen=True)
class FollowupAnswer:
    """A follow-up answer: the class (None for a fallback), valid, and why not."""

    effect_change: str | None
    valid: bool = True
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON object a ledger event records as the slot's answer."""
        return {"effect_change": self.effect_change, "valid": self.valid,
                "reason": self.reason}


def _reject_constant(name: str) -> float:
    raise ForecastParseError(f"non-finite number {name} in response")


def parse_effect_change(text: str, rules: AnswerRules | None = None) -> FollowupAnswer:
    """Read ``{"effect_change": <class>}`` under ``rules`` (strict when None; docstring)."""
    lenient = (rules or AnswerRules(parsing="strict")).parsing == "lenient"
    if lenient:
        obj = read_answer_object(text)
    else:
        try:
            obj = json.loads(text, parse_constant=_reject_constant)
        except (json.JSONDecodeError, RecursionError):
            raise ForecastParseError("response is not valid JSON") from None
    if not isinstance(obj, dict):
        raise ForecastParseError("response is not a JSON object")
    if "effect_change" not in obj:
        raise ForecastParseError("missing field 'effect_change'")
    value = obj["effect_change"]
    if isinstance(value, str) and lenient:
        value = value.strip().lower()
    if value not in CLASSES:
        raise ForecastParseError(f"effect_change {value!r} is not one of {', '.join(CLASSES)}")
    return FollowupAnswer(str(value))


def fallback_answer(reason: str) -> FollowupAnswer:
    """A follow-up slot's fallback: no class (scored wrong, intention to treat)."""
    return FollowupAnswer(None, valid=False, reason=reason)


def followup_design(body: Mapping[str, Any]) -> FollowupDesign:
    """The plan's follow-up block, its question template checked against the frozen digest."""
    design = plan_followups(body)
    if design is None:
        raise IntegrityError("plan: a follow-up slot but no followups block")
    frozen = dict(body["followups"]).get("template_sha256")
    if frozen != template_digest():
        raise IntegrityError("the follow-up question template changed since the plan was"
                             " frozen")
    return design


def followup_request(body: Mapping[str, Any], slot: PlanSlot, study: Study,
                     explanations: Mapping[str, Mapping[str, Explanation]],
                     donors: Mapping[str, Mapping[str, str]],
                     contexts: ContextRenderer) -> ForecastRequest:
    """A follow-up slot's request, re-rendered; IntegrityError when its digest changed."""
    explainer = str(slot.explainer)
    rendered = render_followup(study, slot.state_id, followup_design(body),
                               explanations.get(explainer, {}), donors, contexts)
    if sha256_text(rendered.prompt) != slot.prompt_sha256:
        raise IntegrityError(f"slot {slot.slot_id}: rendered prompt differs from the"
                             " frozen one")
    return ForecastRequest(slot_id=slot.slot_id, state_id=slot.state_id,
                           context_kind=slot.context_id, repeat=slot.repeat,
                           prompt=rendered.prompt, seed=slot.seed,
                           context=rendered.payload, cache_prefix=rendered.cache_prefix)


@dataclass(frozen=True)
class FollowupRecord:
    """One follow-up slot's result as the analysis sees it."""

    slot_id: str
    explainer: str
    state_id: str
    effect_change: str | None
    fallback: bool


def followup_records(events: Sequence[LedgerEvent]) -> list[FollowupRecord]:
    """The terminal events of the follow-up slots, one record each, sorted by slot id."""
    records = []
    for event in events:
        if not is_terminal(event) or not is_followup_context(event.payload.get("context_id")):
            continue
        answer = event.payload.get("forecast") or {}
        value = answer.get("effect_change") if isinstance(answer, Mapping) else None
        records.append(FollowupRecord(
            str(event.payload["slot_id"]), str(event.payload.get("explainer")),
            str(event.payload["state_id"]), value if value in CLASSES else None,
            event.type == FallbackAssigned.TYPE))
    records.sort(key=lambda r: r.slot_id)
    return records


def read_slot_answer(slot: PlanSlot, text: str,
                     rules: AnswerRules) -> Forecast | FollowupAnswer:
    """A slot's answer: a forecast, or a follow-up's class (ForecastParseError if neither)."""
    if is_followup_context(slot.context_id):
        return parse_effect_change(text, rules)
    return parse_forecast(text, rules)


def followup_report(body: Mapping[str, Any], events: Sequence[LedgerEvent],
                    outcomes: Mapping[str, float],
                    outcomes_path: str | os.PathLike[str]) -> FollowupReport | None:
    """The report's ``followups`` block (None: the plan has no follow-ups).

    ``y_f`` comes from the revealed outcome file (already checked against the
    commitment, so the follow-ups are covered by it); the answers from the
    follow-up slots' terminal events.
    """
    design = plan_followups(body)
    if design is None:
        return None
    followup_y = read_followup_outcomes(outcomes_path, Study.from_json(body["study"]))
    by_explainer: dict[str, list[FollowupRecord]] = {}
    for record in followup_records(events):
        by_explainer.setdefault(record.explainer, []).append(record)
    scores = tuple(score_explainer(
        name, {r.state_id: r.effect_change for r in records},
        sum(r.fallback for r in records), outcomes, followup_y, design.threshold)
        for name, records in sorted(by_explainer.items()))
    return FollowupReport(threshold=design.threshold, classes=CLASSES,
                          definition=design.definition, selected=design.selected,
                          chance=CHANCE, scores=scores, note=NOTE)
