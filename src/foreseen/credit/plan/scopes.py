"""State scopes: which states an explainer's slots cover (proposal states, paper v5).

A plan may give some explainers a **scope**: the ids of the states their
slots cover (``scopes``: explainer → state ids; the controlled study's
proposal states (``…~<explainer>``), whose intervention the explainer chose
itself). The rule:

* a scoped explainer's slots cover exactly its scope;
* every other explainer's slots cover the **base** states (the states in no
  scope) — so adding scoped states changes no other explainer's slots;
* the ``description`` arm covers every state (it is each explainer's
  comparator);
* donor maps are computed over the base states only, so no donor is ever a
  scoped state and no base state's donor changes; a scoped explainer's
  contexts therefore may not need a donor (description vs matched only).

Scopes must be disjoint and name states of the study. A plan without scopes is
unchanged (no ``scopes`` field; every explainer covers every state).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from foreseen.core.errors import UserInputError
from foreseen.credit.model import State, Study


def check_scopes(study: Study, scopes: Mapping[str, Sequence[str]],
                 design: Mapping[str | None, Sequence[str]],
                 needs_donor: Mapping[str, bool]) -> None:
    """Refuse scopes naming unknown states, overlapping, or scoped contexts needing donors.

    ``needs_donor``: context id → True when the context shows a donor's card.
    """
    known = {state.id for state in study.states}
    seen: set[str] = set()
    for name, ids in sorted(scopes.items()):
        if name not in design:
            raise UserInputError(f"plan: scope for explainer {name!r}, which has no contexts")
        for sid in ids:
            if sid not in known:
                raise UserInputError(f"plan: scope of {name!r} names state {sid!r},"
                                     " which the study does not have")
            if sid in seen:
                raise UserInputError(f"plan: state {sid!r} is in two scopes")
            seen.add(sid)
        donor = [c for c in design[name] if needs_donor[c]]
        if donor:
            raise UserInputError(f"plan: scoped explainer {name!r} cannot have donor context"
                                 f" {donor[0]!r} (donor maps cover the base states only)")


def base_study(study: Study, scopes: Mapping[str, Sequence[str]]) -> Study:
    """The study restricted to the states in no scope (donor maps are computed on it)."""
    if not scopes:
        return study
    scoped = {sid for ids in scopes.values() for sid in ids}
    return replace(study, states=tuple(s for s in study.states if s.id not in scoped))


def states_of(study: Study, explainer: str | None,
              scopes: Mapping[str, Sequence[str]]) -> tuple[State, ...]:
    """The states ``explainer``'s slots cover (None: the description arm, every state)."""
    if explainer is None or not scopes:
        return study.states
    if explainer in scopes:
        wanted = set(scopes[explainer])
        return tuple(s for s in study.states if s.id in wanted)
    return base_study(study, scopes).states
