"""Checks on a built study's sealed outcomes shared by the studies.

:func:`count_zero_outcomes` (and :func:`zero_outcome_share`) report, per
intervention, how many outcomes are
exactly 0 (credit §9); :func:`reproduce_sample` re-executes a seeded share of
states and compares the recomputed outcomes bit for bit; :class:`OutcomeCheck`
is a study's whole re-execution check (the sample, the digests it compares and
the zero-outcome counts). Neither defines an
outcome, so this module is not part of any study's code digest.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from foreseen.core.errors import UserInputError
from foreseen.credit.model import Outcome, State, Study
from foreseen.credit.studies.base import Verification


@dataclass(frozen=True, slots=True)
class ZeroOutcomeCount:
    """One intervention's states, those with y == 0 exactly, and their share.

    ``share`` is None (and ``reason`` says why) for an intervention without states.
    """

    states: int
    zero: int
    share: float | None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The entry written under ``zero_outcome_share`` (``reason`` only when set)."""
        entry: dict[str, Any] = {"states": self.states, "zero": self.zero, "share": self.share}
        if self.reason is not None:
            entry["reason"] = self.reason
        return entry


def zero_counts_json(counts: Mapping[str, ZeroOutcomeCount]) -> dict[str, dict[str, Any]]:
    """The ``zero_outcome_share`` JSON object of a report section (intervention → entry)."""
    return {intervention: count.to_json() for intervention, count in counts.items()}


def count_zero_outcomes(study: Study, outcomes: Sequence[Outcome],
                        empty_reason: str) -> dict[str, ZeroOutcomeCount]:
    """Per intervention (study order): states, states with y == 0 exactly, and their share.

    An intervention without states gets share ``None`` and ``empty_reason``.
    """
    by_id = {o.state_id: o.y for o in outcomes}
    result: dict[str, ZeroOutcomeCount] = {}
    for intervention in study.interventions:
        ys = [by_id[s.id] for s in study.states
              if s.intervention_id == intervention.id and s.id in by_id]
        zeros = sum(1 for y in ys if y == 0.0)
        result[intervention.id] = (ZeroOutcomeCount(len(ys), zeros, zeros / len(ys)) if ys
                                   else ZeroOutcomeCount(0, 0, None, empty_reason))
    return result


def zero_outcome_share(study: Study, outcomes: Sequence[Outcome]) -> dict[str, ZeroOutcomeCount]:
    """Per intervention: number of states, number with y == 0 exactly, and their share."""
    return count_zero_outcomes(study, outcomes, "no states with this intervention")


def check_fraction(fraction: float) -> None:
    """Refuse a verification fraction outside (0, 1]."""
    if not 0.0 < fraction <= 1.0:
        raise UserInputError(f"fraction must be in (0, 1], got {fraction}")


@dataclass(frozen=True, slots=True)
class OutcomeMismatch:
    """A re-executed state whose recomputed y differs from the sealed one."""

    state_id: str
    sealed: float
    recomputed: float

    def to_json(self) -> dict[str, Any]:
        return {"state_id": self.state_id, "sealed": self.sealed, "recomputed": self.recomputed}


@dataclass(frozen=True, slots=True)
class ReproducedSample:
    """A seeded sample of states re-executed: what was picked and what did not reproduce."""

    fraction: float
    seed: int
    total: int
    state_ids: tuple[str, ...]
    mismatches: tuple[OutcomeMismatch, ...]

    @property
    def checked(self) -> int:
        return len(self.state_ids)

    @property
    def reproduced(self) -> int:
        return self.checked - len(self.mismatches)

    @property
    def ok(self) -> bool:
        """Every sampled state reproduced bit for bit."""
        return not self.mismatches

    def to_json(self) -> dict[str, Any]:
        """The sample's part of the ``verify_outcomes`` record of a report section."""
        return {"fraction": self.fraction, "seed": self.seed, "total": self.total,
                "checked": self.checked, "reproduced": self.reproduced, "ok": self.ok,
                "state_ids": list(self.state_ids),
                "mismatches": [m.to_json() for m in self.mismatches]}


def sample_size(fraction: float, states: int) -> int:
    """``max(1, ceil(fraction × states))``: how many states a re-execution picks."""
    return max(1, math.ceil(fraction * states))


def compare_outcomes(state_ids: Sequence[str], sealed: Mapping[str, float],
                     recomputed: Mapping[str, float]) -> tuple[OutcomeMismatch, ...]:
    """The states whose recomputed y differs from the sealed y by ``==`` or ``float.hex``."""
    return tuple(OutcomeMismatch(sid, sealed[sid], recomputed[sid]) for sid in state_ids
                 if recomputed[sid] != sealed[sid]
                 or float(recomputed[sid]).hex() != float(sealed[sid]).hex())


def reproduce_sample(study: Study, outcomes: Sequence[Outcome], fraction: float, seed: int,
                     recompute: Callable[[State], float]) -> ReproducedSample:
    """Recompute a seeded ``fraction`` of states; compare y with ``==`` and ``float.hex``.

    Every state needs an outcome. Picks :func:`sample_size` states with
    ``default_rng(seed).choice`` (no replacement), in state-id order.
    """
    by_id = {o.state_id: o.y for o in outcomes}
    missing = [s.id for s in study.states if s.id not in by_id]
    if missing:
        raise UserInputError(f"outcomes are missing for {len(missing)} states, e.g. {missing[0]}")
    count = sample_size(fraction, len(study.states))
    picks = np.random.default_rng(seed).choice(len(study.states), size=count, replace=False)
    chosen = sorted(study.states[int(i)].id for i in picks)
    recomputed = {sid: recompute(study.state(sid)) for sid in chosen}
    return ReproducedSample(fraction, seed, len(study.states), tuple(chosen),
                            compare_outcomes(chosen, by_id, recomputed))


@dataclass(frozen=True, slots=True)
class OutcomeCheck:
    """A study's outcome re-execution: the sample, the digests compared, the zero counts.

    ``code_digest_matches`` / ``data_sha256_matches`` are None when the study
    does not compare that digest. The check passes (:attr:`ok`) when the sample
    reproduced and every compared digest matches.
    """

    sample: ReproducedSample
    zero_outcome_share: Mapping[str, ZeroOutcomeCount]
    code_digest_matches: bool | None = None
    data_sha256_matches: bool | None = None

    @property
    def ok(self) -> bool:
        return self.sample.ok and self.code_digest_matches is not False \
            and self.data_sha256_matches is not False

    def to_json(self) -> dict[str, Any]:
        """The ``verify_outcomes`` record written to a study's report section."""
        digests = {name: value for name, value in (
            ("data_sha256_matches", self.data_sha256_matches),
            ("code_digest_matches", self.code_digest_matches)) if value is not None}
        return {**self.sample.to_json(), **digests,
                "zero_outcome_share": zero_counts_json(self.zero_outcome_share)}

    def verification(self) -> Verification:
        """The pipeline's :class:`~foreseen.credit.studies.base.Verification` of this check."""
        return Verification(self.sample.checked, self.sample.reproduced, self.ok,
                            self.to_json())
