"""Per-fold changes of a training-data-only probe, shared by the studies' probe results.

A probe fits parent and child on each internal fold of a state's training data
and records the change of the validation metric per fold; this dataclass holds
those changes with their mean, standard error and JSON form. The studies
subclass it (:class:`foreseen.credit.studies.controlled.probes.Probe`,
:class:`foreseen.credit.studies.tox21.probe.ProbeResult`); builds cache it, so
it is part of both studies' code digests.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

import numpy as np


@dataclass(frozen=True)
class FoldChanges:
    """Per-fold validation changes of one state's intervention (training data only)."""

    fold_changes: tuple[float, ...]

    @property
    def mean(self) -> float:
        return float(np.mean(self.fold_changes))

    @property
    def standard_error(self) -> float:
        """Sample standard deviation over folds / sqrt(K)."""
        values = np.asarray(self.fold_changes)
        return float(np.std(values, ddof=1) / np.sqrt(values.size))

    def to_json(self) -> dict[str, Any]:
        return {"fold_changes": list(self.fold_changes)}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Self:
        return cls(tuple(float(v) for v in obj["fold_changes"]))
