"""The leak check: a permuted sealed-outcome file changes only the commitment.

A plan is frozen before any outcome is read, so nothing the forecaster sees may
depend on the outcomes. This module tests that for a study folder: it copies
the folder, replaces ``outcomes.sealed.json`` by a seeded permutation of the same
values (state ``s`` gets the outcome of state ``π(s)``), freezes the copy, and
compares the two plan bodies. The check **passes** when every part of the body
but ``outcome_commitment`` — explanations, every slot (its prompt digest,
context, donor, delivery and seed), the donor maps, the forecaster, the analysis
and execution configuration — is byte-identical (canonical JSON), and the
permutation moved at least one outcome to a state with a different value (else
nothing was tested: **inconclusive**, reported as not passed with that reason).

The permutation is ``numpy.random.default_rng(seed).permutation``; the seed is
the plan's seed, so the check is reproducible.

A **prospective** plan is frozen before any outcome exists (it commits to the
outcome-execution code instead): there is nothing to permute, and the check
says so (method ``prospective``, passed); the ledger orders the execution
after every forecast (:mod:`foreseen.credit.run.prospective`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from foreseen.core.digest import canonical_json
from foreseen.credit.plan.freeze import FrozenPlan, read_outcomes, write_outcomes
from foreseen.credit.plan.study_folder import freeze_study_dir

SEALED_OUTCOMES = "outcomes.sealed.json"
METHOD = "permuted_outcomes"
PROSPECTIVE_METHOD = "prospective"
COMMITTED_ONLY: tuple[str, ...] = ("outcome_commitment",)


@dataclass(frozen=True)
class LeakResult:
    """The leak check's result: its method, whether it passed, and a line saying why."""

    method: str
    passed: bool
    detail: str

    def to_json(self) -> dict[str, Any]:
        """The JSON object a run folder keeps in ``leak_check.json``."""
        return {"method": self.method, "passed": self.passed, "detail": self.detail}


def permuted_outcomes(outcomes: dict[str, float], seed: int) -> dict[str, float]:
    """State ``s`` (sorted ids) gets the outcome of state ``π(s)``, π a seeded permutation."""
    ids = sorted(outcomes)
    order = np.random.default_rng(seed).permutation(len(ids))
    return {sid: outcomes[ids[int(k)]] for sid, k in zip(ids, order, strict=True)}


def differing_parts(first: FrozenPlan, second: FrozenPlan) -> list[str]:
    """Top-level plan body keys whose canonical JSON differs (commitment excluded)."""
    keys = sorted((set(first.body) | set(second.body)) - set(COMMITTED_ONLY))
    return [key for key in keys
            if canonical_json(first.body.get(key)) != canonical_json(second.body.get(key))]


def leak_check(study_dir: str | os.PathLike[str], plan: FrozenPlan) -> LeakResult:
    """Freeze ``study_dir`` again with permuted outcomes and compare with ``plan`` (docstring)."""
    if plan.prospective:
        return LeakResult(PROSPECTIVE_METHOD, True,
                          "no outcome existed when the plan was frozen: it commits to the"
                          " outcome-execution code, which runs only after every forecast")
    source = Path(study_dir)
    outcomes = read_outcomes(source / SEALED_OUTCOMES, plan.study)
    shuffled = permuted_outcomes(outcomes, plan.seed)
    moved = sum(1 for sid, y in outcomes.items() if shuffled[sid] != y)
    with tempfile.TemporaryDirectory(prefix="leak-check-") as scratch:
        copy = Path(scratch) / "study"
        shutil.copytree(source, copy, ignore=shutil.ignore_patterns(SEALED_OUTCOMES))
        write_outcomes(copy / SEALED_OUTCOMES, plan.study, shuffled)
        permuted = freeze_study_dir(copy)
    if moved == 0:
        return LeakResult(METHOD, False, "inconclusive: the permutation moved no outcome to a "
                                         "state with another value (nothing was tested)")
    differs = differing_parts(plan, permuted)
    if permuted.body["outcome_commitment"] == plan.body["outcome_commitment"]:
        differs.append("outcome_commitment unchanged")
    if differs:
        return LeakResult(METHOD, False, f"{moved} of {len(outcomes)} outcomes permuted (seed "
                                         f"{plan.seed}); the plan changed in: "
                                         + ", ".join(differs))
    return LeakResult(METHOD, True, f"{moved} of {len(outcomes)} outcomes permuted (seed "
                                    f"{plan.seed}); explanations, {len(plan.slots)} slots "
                                    "(prompt digests, donors, delivery, seeds) and every other "
                                    "part of the plan are byte-identical; only the commitment "
                                    "changed")
