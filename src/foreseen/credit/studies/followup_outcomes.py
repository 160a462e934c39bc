"""The follow-up outcomes a study run seals beside its outcomes (docs/paper-parts.md).

A study whose design declares follow-ups (``StudyDesign.followups``) gets them
executed for real by its own outcome code
(:meth:`~foreseen.credit.studies.base.StudyDefinition.followup_outcomes`) for
the states the plan will preselect: the preselection is a pure function of
the base states' ids, the plan seed and the declared share
(:func:`foreseen.credit.plan.followups.preselect`), so it is known before the
plan is frozen, and the freeze checks that the sealed file holds exactly these
follow-ups. A sealed-file run seals them before the freeze; a prospective run
executes them after the last call, with the other outcomes. ``--verify-outcomes``
re-executes a seeded share of the sealed follow-ups (:func:`verify_followups`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from foreseen.core.parallel import Executor
from foreseen.credit.plan.followups import FollowupDesign, followup_outcome_id, preselect
from foreseen.credit.plan.outcome_file import read_followup_outcomes
from foreseen.credit.plan.scopes import base_study
from foreseen.credit.studies.base import BuiltStudy, StudyDefinition, StudyDesign, Verification
from foreseen.credit.studies.verification import compare_outcomes, sample_size


def selected_states(built: BuiltStudy, design: StudyDesign) -> tuple[str, ...]:
    """The states the plan will preselect (none when the design declares no follow-ups)."""
    if design.followups is None:
        return ()
    declared = FollowupDesign.from_json(design.followups)
    base = base_study(built.build.study, {k: list(v) for k, v in design.scopes.items()})
    return preselect([state.id for state in base.states], design.seed, declared.share)


def sealed_followups(definition: StudyDefinition, built: BuiltStudy, design: StudyDesign, *,
                     executor: Executor | None) -> dict[str, float]:
    """``<state>#followup`` → ``y_f`` for every preselected state (empty: no follow-ups)."""
    selected = selected_states(built, design)
    if not selected:
        return {}
    values = definition.followup_outcomes(built, selected, executor=executor)
    return {followup_outcome_id(sid): float(values[sid]) for sid in selected}


def sealed_values(definition: StudyDefinition, built: BuiltStudy, design: StudyDesign,
                  override: Mapping[str, float] | None, commitment: Mapping[str, Any] | None,
                  *, executor: Executor | None) -> dict[str, float] | None:
    """What a sealed-file run writes to its outcome file when it is not the build's
    outcomes alone: ``override`` (or the build's outcomes) plus the follow-ups (None: the
    build's outcomes as they are; a prospective run — ``commitment`` — seals later)."""
    followups = {} if commitment is not None else sealed_followups(
        definition, built, design, executor=executor)
    if override is None and not followups:
        return None
    return {**(override if override is not None else built.build.outcome_map()), **followups}


def verify_followups(definition: StudyDefinition, built: BuiltStudy, sealed: Path,
                     verification: Verification | None, fraction: float | None, *,
                     executor: Executor | None) -> Verification | None:
    """``--verify-outcomes`` for the sealed follow-ups: a seeded ``fraction`` of them
    (``max(1, ⌈fraction · k⌉)``, ``default_rng(0)``) re-executed from scratch and compared
    bit for bit with the sealed file; the verification with ``record["followups"]`` and
    ``ok`` false on any mismatch (unchanged when the file holds no follow-up)."""
    if verification is None or fraction is None:
        return verification  # no --verify-outcomes
    sealed_y = read_followup_outcomes(sealed, built.build.study)
    if not sealed_y:
        return verification
    ids = sorted(sealed_y)
    chosen = sorted(ids[int(i)] for i in np.random.default_rng(0).choice(
        len(ids), size=sample_size(fraction, len(ids)), replace=False))
    again = definition.followup_outcomes(built, chosen, executor=executor)
    mismatches = compare_outcomes(chosen, sealed_y, again)
    record = {"checked": len(chosen), "reproduced": len(chosen) - len(mismatches),
              "state_ids": chosen, "mismatches": [m.to_json() for m in mismatches],
              "ok": not mismatches}
    return replace(verification, ok=verification.ok and not mismatches,
                   record={**verification.record, "followups": record})


def with_judged_explainer(design: StudyDesign, primary: str | None) -> StudyDesign:
    """The follow-ups judge the run's primary explainer (the freeze takes the analysis's);
    a primary that explains only its own proposal states (a scope) has no card for the
    preselected base states, so the follow-ups then judge the study's own primary
    (declared in the block, so the freeze does not take the proposing one)."""
    if design.followups is None or primary is None or primary not in design.scopes:
        return design
    return replace(design, followups={**design.followups,
                                      "explainer": design.analysis.primary_explainer})
