"""Checks on a built study's sealed outcomes shared by the studies.

:func:`count_zero_outcomes` (and :func:`zero_outcome_share`) report, per
intervention, how many outcomes are
exactly 0 (credit §9); :func:`reproduce_sample` re-executes a seeded share of
states and compares the recomputed outcomes bit for bit. Neither defines an
outcome, so this module is not part of any study's code digest.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from foreseen.core.errors import UserInputError
from foreseen.credit.model import Outcome, State, Study


def count_zero_outcomes(study: Study, outcomes: Sequence[Outcome],
                        empty_reason: str) -> dict[str, dict[str, Any]]:
    """Per intervention: states, states with y == 0 exactly, and their share.

    An intervention without states gets share ``None`` and ``empty_reason``.
    """
    by_id = {o.state_id: o.y for o in outcomes}
    result: dict[str, dict[str, Any]] = {}
    for intervention in study.interventions:
        ys = [by_id[s.id] for s in study.states
              if s.intervention_id == intervention.id and s.id in by_id]
        zeros = sum(1 for y in ys if y == 0.0)
        entry: dict[str, Any] = {"states": len(ys), "zero": zeros,
                                 "share": zeros / len(ys) if ys else None}
        if not ys:
            entry["reason"] = empty_reason
        result[intervention.id] = entry
    return result


def zero_outcome_share(study: Study, outcomes: Sequence[Outcome]) -> dict[str, dict[str, Any]]:
    """Per intervention: number of states, number with y == 0 exactly, and their share."""
    return count_zero_outcomes(study, outcomes, "no states with this intervention")


def check_fraction(fraction: float) -> None:
    """Refuse a verification fraction outside (0, 1]."""
    if not 0.0 < fraction <= 1.0:
        raise UserInputError(f"fraction must be in (0, 1], got {fraction}")


def reproduce_sample(study: Study, outcomes: Sequence[Outcome], fraction: float, seed: int,
                     recompute: Callable[[State], float]) -> dict[str, Any]:
    """Recompute a seeded ``fraction`` of states; compare y with ``==`` and ``float.hex``.

    Every state needs an outcome. Picks ``max(1, ceil(fraction × states))``
    states with ``default_rng(seed).choice`` (no replacement), in state-id order.
    Returns the fraction, seed, counts, chosen ids and mismatches.
    """
    by_id = {o.state_id: o.y for o in outcomes}
    missing = [s.id for s in study.states if s.id not in by_id]
    if missing:
        raise UserInputError(f"outcomes are missing for {len(missing)} states, e.g. {missing[0]}")
    count = max(1, math.ceil(fraction * len(study.states)))
    picks = np.random.default_rng(seed).choice(len(study.states), size=count, replace=False)
    chosen = sorted(study.states[int(i)].id for i in picks)
    mismatches = []
    for sid in chosen:
        y = recompute(study.state(sid))
        if y != by_id[sid] or y.hex() != float(by_id[sid]).hex():
            mismatches.append({"state_id": sid, "sealed": by_id[sid], "recomputed": y})
    return {
        "fraction": fraction, "seed": seed, "total": len(study.states), "checked": len(chosen),
        "reproduced": len(chosen) - len(mismatches), "ok": not mismatches,
        "state_ids": chosen, "mismatches": mismatches,
    }
