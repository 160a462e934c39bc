"""The one interface every explainer obeys, and the record of what an explainer did.

An explainer writes, for every state of a study, the explanation a forecaster
may later be shown (a note, a card, or both; credit §2). It sees the
public study only — never an outcome, never held-out data.

* :class:`Explainer` — ``name``, ``stand_in`` (True for offline stand-ins that
  imitate an explainer without a model; every report says so),
  ``configuration()`` (frozen beside the explanations) and
  ``explain(study) -> ExplainerRun``.
* :class:`ExplainerRun` — explanations by state, the proposals (when the
  explainer chose the change itself), per-state issues (intention to treat:
  a state whose calls failed keeps an empty explanation and its reason),
  call counts.
* :class:`PrecomputedExplainer` — explanations a study computed while it was
  built (the offline explainers: mechanism, plain note, placebo, probe), served
  through the same interface.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from foreseen.credit.model import Explanation, Study


@dataclass(frozen=True)
class Proposal:
    """A model's proposed intervention (or the declared fallback) for one state.

    ``matches_assigned``: a VALID proposal equal to the state's assigned
    intervention (a fallback never matches).
    """

    state_id: str
    intervention_id: str
    valid: bool
    reason: str | None
    raw: str | None
    matches_assigned: bool

    def to_json(self) -> dict[str, Any]:
        """The JSON object recorded with the explanations (:meth:`from_json` reads it)."""
        return {"state_id": self.state_id, "intervention_id": self.intervention_id,
                "valid": self.valid, "reason": self.reason, "raw": self.raw,
                "matches_assigned": self.matches_assigned}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Proposal:
        return cls(str(obj["state_id"]), str(obj["intervention_id"]), bool(obj["valid"]),
                   obj.get("reason"), obj.get("raw"), bool(obj["matches_assigned"]))


@dataclass
class ExplainerRun:
    """Explanations by state, proposals by state, per-state issues (reasons), call counts."""

    explanations: dict[str, Explanation]
    proposals: dict[str, Proposal] = field(default_factory=dict)
    issues: dict[str, list[str]] = field(default_factory=dict)
    calls: int = 0
    transport_failures: int = 0
    #: call id (``explain:<task>|<state>``) → the prompt sent (kept with the run's files)
    prompts: dict[str, str] = field(default_factory=dict)
    #: whether a note cut off at the backend's ``max_tokens`` could be noticed
    #: (issue ``note: truncated``); False for stand-ins and backends without the limit
    truncation_detectable: bool = False

    def issue_counts(self) -> dict[str, int]:
        """Reason → number of states with it (reasons are open text; for the report)."""
        counts: dict[str, int] = {}
        for reasons in self.issues.values():
            for reason in reasons:
                counts[reason] = counts.get(reason, 0) + 1
        return dict(sorted(counts.items()))


class Explainer(ABC):
    """Writes one explanation per state of a study from its public state."""

    name: str = "explainer"
    #: True for offline stand-ins (no model writes the explanation)
    stand_in: bool = False

    @abstractmethod
    def configuration(self) -> dict[str, Any]:
        """The JSON object recorded beside the explanations: what produced them (never a
        secret); compared as canonical JSON to reuse stored explanations."""

    @abstractmethod
    def explain(self, study: Study) -> ExplainerRun:
        """Explain every state of ``study``."""


class PrecomputedExplainer(Explainer):
    """Explanations computed while a study was built, served through the interface."""

    def __init__(self, name: str, explanations: Mapping[str, Explanation], *,
                 stand_in: bool = True, description: str = "") -> None:
        self.name = name
        self.stand_in = stand_in
        self.description = description
        self._explanations = dict(explanations)

    def configuration(self) -> dict[str, Any]:
        return {"explainer": self.name, "kind": "precomputed", "stand_in": self.stand_in,
                "description": self.description}

    def explain(self, study: Study) -> ExplainerRun:
        missing = sorted({s.id for s in study.states} - set(self._explanations))
        issues = {sid: ["no explanation was computed for this state"] for sid in missing}
        return ExplainerRun({sid: e for sid, e in sorted(self._explanations.items())},
                            issues=issues)
