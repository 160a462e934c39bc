"""Plans made from a frozen plan: analysis amendments and the known-signal calibration child.

An amendment (:func:`amend_plan`) changes only :data:`AMENDABLE_KEYS` and records
its parent; the known-signal child plan (:func:`freeze_signal_plan`) shows each
state one of the five known signals (:data:`SIGNAL_NAMES`) and is frozen after
the reveal (credit §9).
"""


from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from foreseen.core.digest import sha256_json
from foreseen.core.errors import UserInputError
from foreseen.credit.analysis.config import AnalysisConfig
from foreseen.credit.plan.freeze import (
    ExecutionConfig,
    FrozenPlan,
    build_slots,
    load_contexts_module,
    plan_id_of,
    slot_seed,
)
from foreseen.credit.plan.freeze_checks import FIELD as FREEZE_CHECKS
from foreseen.credit.plan.reveal import reveal
from foreseen.credit.plan.scopes import base_study

SIGNAL_NAMES: tuple[str, ...] = ("exact", "noisy", "noisy_large", "sign", "placebo")
"""The five known-signal contexts of the calibration child plan.

The paper names "five known-signal contexts" without listing them in its
surviving text; this set is ours, chosen so the calibration is a rule a reader
can act on: ``exact`` (the slope a forecaster that takes a known number up
should show: 1), ``noisy`` (declared small noise, ``noise_sd``), ``noisy_large``
(declared large noise, :data:`LARGE_NOISE_FACTOR` × ``noise_sd``: uptake should
fall as the signal gets less reliable), ``sign`` (the direction only) and
``placebo`` (a negative control: the realised outcome of a state of *another
task*, labelled as such in the prompt; a forecaster should not take it up).
"""


#: the large noise's sd as a multiple of the declared ``noise_sd``
LARGE_NOISE_FACTOR = 5.0


AMENDABLE_KEYS: tuple[str, ...] = ("analysis", "analysis_code_sha256", "analysis_modules",
                                   "execution")


def amend_plan(parent: FrozenPlan, changes: Mapping[str, Any], reason: str) -> FrozenPlan:
    """An amendment: a new plan with ``changes`` applied, naming its parent, with the reason.

    Only :data:`AMENDABLE_KEYS` may change (what is analysed and how calls are
    executed); anything that determines the slots, the prompts or the
    commitment needs a new plan, not an amendment. The amendment records the
    parent's value of every block it changed (``previous``), so an analysis of
    an amendment made after the reveal can still report the preregistered
    analysis, with the amended one apart (:mod:`foreseen.credit.run.post_hoc`).
    """
    bad = sorted(set(changes) - set(AMENDABLE_KEYS))
    if bad:
        raise UserInputError(
            f"amendment may not change {bad[0]!r} (amendable: {', '.join(AMENDABLE_KEYS)})"
        )
    if not reason.strip():
        raise UserInputError("an amendment needs a reason")
    body = {**dict(parent.body), **dict(changes)}
    if "execution" in changes:
        ExecutionConfig.from_json(body["execution"])
    if "analysis" in changes:  # refused now, not by analyze after every paid call
        AnalysisConfig.from_json(body["analysis"])
    body["parent"] = parent.plan_id
    body["amendments"] = [*parent.body["amendments"],
                          {"parent": parent.plan_id, "reason": reason,
                           "changed": sorted(changes),
                           "previous": {key: parent.body.get(key) for key in sorted(changes)}}]
    return FrozenPlan(body, plan_id_of(body))


def known_signals(plan: FrozenPlan, outcomes: Mapping[str, float], donors: Mapping[str, str],
                  *, noise_sd: float, noise_seed: int) -> dict[tuple[str, str], float]:
    """Signals per (state, ``signal@name``) for the five :data:`SIGNAL_NAMES`.

    exact = the ``seed_swap`` donor's outcome; with ``z₁, z₂`` the first two
    draws of ``default_rng(slot_seed(noise_seed, state id))`` (per state,
    independent of order): noisy = exact + noise_sd·z₁, noisy_large = exact +
    LARGE_NOISE_FACTOR·noise_sd·z₂; sign = sign(exact) ∈ {−1, 0, 1}; placebo =
    the outcome of the state at index ``⌊u·n⌋`` of the ``n`` states of other
    tasks (sorted by id), ``u`` the third draw (uniform). A study with one task
    has no placebo.
    """
    if not (noise_sd >= 0 and math.isfinite(noise_sd)):
        raise UserInputError("signal noise sd must be a finite number >= 0")
    signals: dict[tuple[str, str], float] = {}
    study = base_study(plan.study, plan.scopes())
    states = sorted(study.states, key=lambda s: s.id)
    for state in study.states:
        exact = float(outcomes[donors[state.id]])
        rng = np.random.default_rng(slot_seed(noise_seed, state.id))
        noise, large = float(rng.normal(0.0, 1.0)), float(rng.normal(0.0, 1.0))
        signals[(state.id, "signal@exact")] = exact
        signals[(state.id, "signal@noisy")] = exact + noise_sd * noise
        signals[(state.id, "signal@noisy_large")] = exact + LARGE_NOISE_FACTOR * noise_sd * large
        signals[(state.id, "signal@sign")] = float(np.sign(exact))
        others = [s for s in states if s.task_id != state.task_id]
        if others:
            placebo = others[int(float(rng.random()) * len(others))]
            signals[(state.id, "signal@placebo")] = float(outcomes[placebo.id])
    return signals


def freeze_signal_plan(parent: FrozenPlan, outcomes_path: str | os.PathLike[str], *,
                       repeats: int | None = None, noise_sd: float = 0.01,
                       names: Sequence[str] | None = None,
                       executed_sha256: str | None = None) -> FrozenPlan:
    """Known-signal child plan (credit §4): frozen after the reveal, names its parent, post_outcome.

    Reuses the parent's study, forecaster, analysis configuration, execution
    parameters and ``seed_swap`` donor map (computed with the parent's seed if the
    parent did not use it); one ``signal@<name>`` slot per
    base state (the states in no explainer scope, :mod:`.scopes`), name and
    repeat (explainer none). ``names`` defaults to
    :data:`SIGNAL_NAMES` (without ``placebo`` when the study has one task).
    ``executed_sha256``: a prospective parent's executed outcome file digest
    (see :func:`reveal`).
    """
    if names is None:
        one_task = len({s.task_id for s in parent.study.states}) < 2
        names = tuple(n for n in SIGNAL_NAMES if not (one_task and n == "placebo"))
    elif "placebo" in names and len({s.task_id for s in parent.study.states}) < 2:
        raise UserInputError("signal 'placebo' needs a study with at least two tasks")
    unknown = sorted(set(names) - set(SIGNAL_NAMES))
    if unknown:
        raise UserInputError(f"unknown signal {unknown[0]!r}; known: {SIGNAL_NAMES}")
    outcomes = reveal(parent, outcomes_path, executed_sha256=executed_sha256)
    contexts = load_contexts_module(parent.body["contexts_module"])
    study = base_study(parent.study, parent.scopes())
    swap = parent.donor_maps().get("seed_swap")
    if swap is None:
        swap = dict(contexts.donor_map("seed_swap", study, parent.seed))
    donors = {"seed_swap": swap}
    noise_seed = parent.seed + 1
    signals = known_signals(parent, outcomes, swap, noise_sd=noise_sd, noise_seed=noise_seed)
    reps = repeats if repeats is not None else int(parent.body.get("repeats", 1))
    cids = [f"signal@{name}" for name in names]
    slots = build_slots(study, {}, {None: cids}, reps, parent.seed, contexts, donors,
                         sha256_json(parent.body["forecaster"]), signals)
    body = {key: value for key, value in parent.body.items() if key != FREEZE_CHECKS}
    body.update({
        "explanations": {},
        "design": {"-": cids},
        "repeats": reps,
        "donor_maps": donors,
        "prompt_template_sha256": contexts.prompt_template_digest(),
        "parent": parent.plan_id,
        "post_outcome": True,
        "signals": {"source": "seed_swap", "names": list(names), "noise_sd": noise_sd,
                    "large_noise_sd": LARGE_NOISE_FACTOR * noise_sd,
                    "noise_seed": noise_seed},
        "amendments": [],
        "slots": [slot.to_json() for slot in slots],
    })
    return FrozenPlan(body, plan_id_of(body))
