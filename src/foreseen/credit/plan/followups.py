"""Controlled follow-ups: the frozen preselection, the four classes and the follow-up slots.

The paper (controlled study): thirty preselected states ran follow-ups whose
four-class effect-change predictions were scored (11/30 correct, as simple
majority baselines). Here (credit §13, docs/paper-parts.md):

* **Preselection, frozen before any outcome.** The states are ranked by
  ``SHA-256(canonical JSON [seed, "followup", state id])`` ascending and the
  first ``k`` are taken, ``k = max(1, ⌊share · n + ½⌋)`` (``share`` declared,
  default 0.25: 30 of the paper's 120 states); :func:`preselect`.
* **The follow-up** is executed for real by the study's outcome code (the
  controlled study: the same task, seed, intervention and held-out set with the
  training budget doubled); its outcome ``y_f`` is sealed in the outcome file
  beside ``y`` under the id ``<state>#followup`` (:func:`followup_outcome_id`).
* **Four classes** of the effect change, checked in this order with the
  threshold ``τ`` (:func:`foreseen.credit.analysis.followups.classify_change`):
  ``unchanged`` if ``|y_f − y| ≤ τ``; ``reverses`` if ``y · y_f < 0``; ``grows``
  if ``|y_f| > |y|``; ``shrinks`` otherwise. Exhaustive and exclusive by
  construction (the first that holds).
* **One follow-up slot** per selected state and judged explainer (context
  ``followup``, slot id ``<explainer>|<state>|followup|1``): the explainer's
  matched-card prompt with its forecast request replaced by the follow-up
  question; the answer is ``{"effect_change": <class>}`` under the backend's
  frozen output mode (:data:`ANSWER_SCHEMA`, an enum).

The block enters a plan only when a study declares follow-ups (key
``followups``): a plan without it has no follow-up and its digest is what it was.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from foreseen.core.digest import canonical_json, sha256_json
from foreseen.core.errors import ConfigError
from foreseen.credit.analysis.followups import CLASSES as CLASSES
from foreseen.credit.analysis.followups import classify_change as classify_change

DEFAULT_SHARE = 0.25
DEFAULT_THRESHOLD = 0.005
#: the paper's controlled study: 30 follow-ups among 120 states (share 0.25)
PAPER_STATES, PAPER_FOLLOWUPS = 120, 30
FOLLOWUP_CONTEXT = "followup"
FOLLOWUP_SUFFIX = "#followup"
FORMAT = "foreseen.credit.followups/1"
ANSWER_SCHEMA_NAME = "effect_change"
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"effect_change": {"type": "string", "enum": list(CLASSES),
                                     "description": "how the follow-up's effect compares"}},
    "required": ["effect_change"],
    "additionalProperties": False,
}
QUESTION = (
    "## Follow-up question (answer this instead of the forecast asked above)\n"
    "After the planned change is run, a follow-up runs it again: {definition}. Let y be the "
    "outcome of the planned change and y_f the outcome of the follow-up, both in the units "
    "above. Classify how the effect changes, taking the first class that holds, in this order:"
    "\n- unchanged: |y_f - y| <= {threshold}\n- reverses: y and y_f have opposite signs"
    " (y * y_f < 0)\n- grows: |y_f| > |y|\n- shrinks: otherwise\n"
    "Answer with one JSON object and nothing else:\n"
    '{{"effect_change": "unchanged" | "reverses" | "grows" | "shrinks"}}'
)


def template_digest() -> str:
    """SHA-256 of the follow-up question, the classes and the answer schema (frozen)."""
    return sha256_json({"format": FORMAT, "question": QUESTION, "classes": list(CLASSES),
                        "schema": ANSWER_SCHEMA})


def selection_size(states: int, share: float) -> int:
    """``k = max(1, ⌊share · n + ½⌋)``, at most ``n`` (30 of 120 at the default share)."""
    return min(states, max(1, math.floor(share * states + 0.5)))


def rank_key(seed: int, state_id: str) -> str:
    """The ranking key of a state: SHA-256 of canonical JSON ``[seed, "followup", id]``."""
    return hashlib.sha256(canonical_json([seed, "followup", state_id]).encode()).hexdigest()


def preselect(state_ids: Sequence[str], seed: int, share: float) -> tuple[str, ...]:
    """The first :func:`selection_size` states by :func:`rank_key`, returned sorted by id."""
    if not state_ids:
        raise ConfigError("follow-ups: no state to preselect from")
    ranked = sorted(state_ids, key=lambda sid: (rank_key(seed, sid), sid))
    return tuple(sorted(ranked[: selection_size(len(state_ids), share)]))


def followup_outcome_id(state_id: str) -> str:
    """The follow-up outcome's id in the sealed file: ``<state>#followup``."""
    return f"{state_id}{FOLLOWUP_SUFFIX}"


def is_followup_context(context_id: object) -> bool:
    """A follow-up slot's context (``followup``), not a forecast slot's."""
    return context_id == FOLLOWUP_CONTEXT


@dataclass(frozen=True)
class FollowupDesign:
    """What a study declares (``share``, ``threshold``, ``definition``) and what the freeze
    adds: the seed, the selected states and the judged explainer."""

    definition: str
    share: float = DEFAULT_SHARE
    threshold: float = DEFAULT_THRESHOLD
    seed: int | None = None
    selected: tuple[str, ...] = ()
    explainer: str | None = None

    def __post_init__(self) -> None:
        if not (isinstance(self.share, (int, float)) and 0.0 < self.share <= 1.0):
            raise ConfigError(f"follow-ups: share must be in (0, 1], got {self.share!r}")
        if not (isinstance(self.threshold, (int, float)) and math.isfinite(self.threshold)
                and self.threshold >= 0.0):
            raise ConfigError(f"follow-ups: threshold must be a finite number >= 0, got"
                              f" {self.threshold!r}")
        if not isinstance(self.definition, str) or not self.definition.strip():
            raise ConfigError("follow-ups: the follow-up needs its definition (one sentence)")

    def question(self) -> str:
        """The follow-up question appended to the matched-card prompt."""
        return QUESTION.format(definition=self.definition, threshold=f"{self.threshold:g}")

    def to_json(self) -> dict[str, Any]:
        """The JSON object frozen in the plan's ``followups`` block."""
        body: dict[str, Any] = {"definition": self.definition, "share": self.share,
                                "threshold": self.threshold}
        if self.seed is not None:
            body.update({"format": FORMAT, "seed": self.seed, "selected": list(self.selected),
                         "explainer": self.explainer, "classes": list(CLASSES),
                         "template_sha256": template_digest(),
                         "ranking": "sha256(canonical_json([seed, 'followup', state_id]))"})
        return body

    @classmethod
    def from_json(cls, obj: object) -> FollowupDesign:
        if not isinstance(obj, Mapping):
            raise ConfigError("follow-ups: the block must be an object")
        try:
            selected = tuple(str(s) for s in obj.get("selected", ()))
            seed = obj.get("seed")
            return cls(str(obj["definition"]), float(obj.get("share", DEFAULT_SHARE)),
                       float(obj.get("threshold", DEFAULT_THRESHOLD)),
                       None if seed is None else int(seed), selected, obj.get("explainer"))
        except (KeyError, TypeError, ValueError):
            raise ConfigError("follow-ups: the block is malformed (definition, share,"
                              " threshold, seed, selected, explainer)") from None

    def frozen(self, state_ids: Sequence[str], seed: int, explainer: str) -> FollowupDesign:
        """The design with its preselection made (seeded) and its judged explainer."""
        return FollowupDesign(self.definition, self.share, self.threshold, seed,
                              preselect(state_ids, seed, self.share), explainer)


def plan_followups(body: Mapping[str, Any]) -> FollowupDesign | None:
    """A plan's follow-up block (None: a plan without follow-ups, as every older plan)."""
    block = body.get("followups")
    return None if block is None else FollowupDesign.from_json(block)
