"""The follow-up slots of a plan: rendered, frozen by digest, re-rendered by the runner.

A follow-up slot (:mod:`foreseen.credit.plan.followups`) shows the judged
explainer's **matched-card** context of a selected state, rendered by the
plan's context renderer exactly as the forecast slot, followed by the
follow-up question; its payload carries the follow-up definition, threshold
and classes and asks for :data:`~foreseen.credit.plan.followups.ANSWER_SCHEMA`
(``response_schema``: every backend constrains the answer under its frozen
output mode). Its prompt's SHA-256 is frozen in the slot like a forecast
slot's, and the freeze checks (blinding, leak) search it too.

The sealed outcome file of a plan with follow-ups holds ``<state>#followup``
for exactly the selected states (:func:`check_sealed_followups`, at freeze).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from foreseen.core.digest import sha256_text
from foreseen.core.errors import UserInputError
from foreseen.credit.model import Explanation, Study
from foreseen.credit.plan.followups import (
    ANSWER_SCHEMA,
    ANSWER_SCHEMA_NAME,
    CLASSES,
    FOLLOWUP_CONTEXT,
    FollowupDesign,
)
from foreseen.credit.plan.outcome_file import read_followup_outcomes
from foreseen.credit.plan.plan_file import PlanSlot
from foreseen.credit.plan.rendered_prompts import RenderedPrompt
from foreseen.credit.plan.renderers import ContextRenderer

MATCHED = "matched_card"


@dataclass(frozen=True)
class RenderedFollowup:
    """A follow-up slot's prompt, payload, whether the card was delivered, cache prefix."""

    prompt: str
    payload: dict[str, Any]
    delivered: bool | None
    cache_prefix: int
    added: str | None


def render_followup(study: Study, state_id: str, design: FollowupDesign,
                    explanations: Mapping[str, Explanation],
                    donors: Mapping[str, Mapping[str, str]],
                    contexts: ContextRenderer) -> RenderedFollowup:
    """The matched-card prompt of ``state_id`` plus the follow-up question (module docstring)."""
    state = study.state(state_id)
    rendered = contexts.render_context(study, state, MATCHED, design.explainer, explanations,
                                       donors)
    payload = {**rendered.payload, "context_id": FOLLOWUP_CONTEXT,
               "followup": {"definition": design.definition, "threshold": design.threshold,
                            "classes": list(CLASSES)},
               "response_schema": {"name": ANSWER_SCHEMA_NAME, "schema": ANSWER_SCHEMA}}
    prompt = rendered.prompt.rstrip("\n") + "\n\n" + design.question() + "\n"
    return RenderedFollowup(prompt, payload, rendered.delivered, rendered.cache_prefix,
                            getattr(rendered, "added", None))


def followup_slot_id(explainer: str, state_id: str) -> str:
    """``<explainer>|<state>|followup|1`` (the agreed slot id with context ``followup``)."""
    return f"{explainer}|{state_id}|{FOLLOWUP_CONTEXT}|1"


def followup_slots(study: Study, design: FollowupDesign,
                   explanations: Mapping[str, Mapping[str, Explanation]],
                   donors: Mapping[str, Mapping[str, str]], contexts: ContextRenderer,
                   forecaster_sha256: str, seed_of: Callable[[str], int],
                   prompts: list[RenderedPrompt]) -> list[PlanSlot]:
    """One slot per selected state for the judged explainer (its prompt appended to
    ``prompts`` for the freeze checks); ``seed_of`` is the plan's per-slot seed."""
    explainer = design.explainer
    if explainer is None or explainer not in explanations:
        raise UserInputError(f"follow-ups: the judged explainer {explainer!r} has no"
                             " explanations in the plan")
    slots: list[PlanSlot] = []
    for state_id in design.selected:
        rendered = render_followup(study, state_id, design, explanations[explainer], donors,
                                   contexts)
        sid = followup_slot_id(explainer, state_id)
        prompts.append(RenderedPrompt(sid, explainer, state_id, None, rendered.prompt,
                                      rendered.added))
        slots.append(PlanSlot(slot_id=sid, explainer=explainer, state_id=state_id,
                              context_id=FOLLOWUP_CONTEXT, repeat=1, donor_state_id=None,
                              delivered=rendered.delivered, signal=None,
                              prompt_sha256=sha256_text(rendered.prompt),
                              forecaster_sha256=forecaster_sha256, seed=seed_of(sid)))
    return slots


def check_sealed_followups(path: str | os.PathLike[str], study: Study,
                           selected: Sequence[str]) -> int:
    """The sealed file holds ``<state>#followup`` for exactly the selected states (a
    one-line refusal otherwise); the number of follow-up outcomes."""
    found = read_followup_outcomes(path, study)
    missing = sorted(set(selected) - set(found))
    extra = sorted(set(found) - set(selected))
    if missing or extra:
        detail = (f"no follow-up outcome for selected state {missing[0]!r}" if missing
                  else f"a follow-up outcome for {extra[0]!r}, which is not selected")
        raise UserInputError(f"outcome file: {detail}")
    return len(found)


def freeze_followups(study: Study, declared: Mapping[str, Any],
                     explanations: Mapping[str, Mapping[str, Explanation]],
                     donors: Mapping[str, Mapping[str, str]], contexts: ContextRenderer,
                     forecaster_sha256: str, seed: int, seed_of: Callable[[str], int],
                     analysis: Mapping[str, Any],
                     base: Study, prompts: list[RenderedPrompt],
                     outcomes_path: str | os.PathLike[str] | None
                     ) -> tuple[dict[str, Any], list[PlanSlot]]:
    """The plan's ``followups`` block and its slots.

    The preselection is made now, from the base states' ids and the plan
    ``seed`` (:func:`~foreseen.credit.plan.followups.preselect`); the judged
    explainer is the declared one, else the analysis's primary explainer. A
    sealed outcome file must hold the selected states' follow-up outcomes.
    """
    design = FollowupDesign.from_json(declared)
    explainer = design.explainer or analysis.get("primary_explainer")
    if not isinstance(explainer, str):
        raise UserInputError("follow-ups: no judged explainer (declare one, or the analysis's"
                             " primary_explainer)")
    frozen = design.frozen([state.id for state in base.states], seed, explainer)
    slots = followup_slots(study, frozen, explanations, donors, contexts, forecaster_sha256,
                           seed_of, prompts)
    if outcomes_path is not None:
        check_sealed_followups(outcomes_path, study, frozen.selected)
    return frozen.to_json(), slots
