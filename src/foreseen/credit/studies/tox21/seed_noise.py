"""Seed noise of a Tox21 study's outcomes, reported beside its gate (credit §9).

For every budget cell with two seeds: whether the pair's effects share a sign,
and the gap between them — the noise floor a forecast's error is read against.
It reads sealed outcomes after the run and decides none, so it is not part of
the outcome code a prospective plan commits to (:mod:`.outcome_code`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from foreseen.credit.model import Study


@dataclass(frozen=True, slots=True)
class SeedPairSummary:
    """Seed noise of a build's cell pairs (:func:`seed_pair_summary`).

    With no pair every number is None and ``reason`` says why.
    """

    pairs: int
    same_sign: int | None = None
    same_sign_share: float | None = None
    median_seed_gap: float | None = None
    mean_seed_gap: float | None = None
    point_mae: float | None = None
    reason: str | None = None

    @property
    def point_mae_over_median_seed_gap(self) -> float | None:
        """``point_mae / median_seed_gap`` (None without a point MAE or when the gap is 0)."""
        if self.point_mae is None or self.median_seed_gap is None or not self.median_seed_gap > 0:
            return None
        return self.point_mae / self.median_seed_gap

    def to_json(self) -> dict[str, Any]:
        """The ``seed_noise`` object of the Tox21 report section."""
        if self.pairs == 0:
            return {"pairs": 0, "same_sign": None, "same_sign_share": None,
                    "median_seed_gap": None, "reason": self.reason}
        result: dict[str, Any] = {"pairs": self.pairs, "same_sign": self.same_sign,
                                  "same_sign_share": self.same_sign_share,
                                  "median_seed_gap": self.median_seed_gap,
                                  "mean_seed_gap": self.mean_seed_gap}
        if self.point_mae is not None:
            result["point_mae"] = self.point_mae
            result["point_mae_over_median_seed_gap"] = self.point_mae_over_median_seed_gap
            if self.median_seed_gap == 0:
                result["ratio_reason"] = "median seed gap is 0"
        return result


def seed_pair_summary(study: Study, outcomes: Mapping[str, float],
                      point_mae: float | None = None) -> SeedPairSummary:
    """Seed noise beside the gate (credit §9): sign agreement and median seed gap of cell pairs.

    For every cell with two seeds: the pair shares the effect's sign iff
    ``sign(y₁) == sign(y₂)`` (0 is its own sign); seed gap = ``|y₁ − y₂|``.
    Reports the count and share of agreeing pairs, the median gap, and — when
    given — the ratio of a forecast's point MAE to the median gap (≤ 1: the
    forecast errs less than the seed-to-seed noise floor).
    """
    cells: dict[str, list[float]] = {}
    for state in study.states:
        if state.id in outcomes:
            cells.setdefault(state.cell, []).append(float(outcomes[state.id]))
    pairs = [ys for ys in cells.values() if len(ys) == 2]
    if not pairs:
        return SeedPairSummary(0, reason="no cell has two seeds with outcomes")
    same = sum(1 for a, b in pairs if np.sign(a) == np.sign(b))
    gaps = [abs(a - b) for a, b in pairs]
    return SeedPairSummary(len(pairs), same, same / len(pairs), float(np.median(gaps)),
                           float(np.mean(gaps)), point_mae)
