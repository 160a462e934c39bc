"""The forecaster interface: pilot statistics, a fitted forecast, and the forecaster base classes.

A *pilot* is a boolean k × N array (k agents, N tasks; ``True`` = solved) or a
stack P × k × N of pilots. Every forecaster obeys one interface:

    forecaster.fit(pilot) → CoverageForecast,   forecast.curve(sizes) → C(m)

vectorised over pilots and team sizes: ``curve`` returns an array of shape
(P…, len(sizes)) (teams §4).

Each forecaster class carries *tags* (scikit-learn's estimator tags are the
model) instead of name lists kept elsewhere:

* ``family`` — ``"preregistered"`` for the seven forecasters of the E046
  preregistration, ``"exploratory"`` for the models added after the data had
  been seen;
* ``closed_form`` — the forecast depends on the pilot only through
  :class:`PilotStats` (so ``fit_stats`` exists and the task bootstrap can pass
  weighted statistics);
* ``uses_phi`` — the forecast needs the pilot's mean pairwise φ̄, i.e. the
  pilot's Gram matrix of joint solve counts;
* ``tuned_on_pilot`` — a hyperparameter is chosen on the pilot; :meth:`Forecaster.tuned`
  returns the forecaster with it fixed (the default returns the forecaster
  itself).

:class:`PilotStats` (teams §4 "pilot statistics"): the pilot size k, the
histogram Q_j of pilot solver counts c_t (j = 0..k, weighted when tasks carry
bootstrap multiplicities w_t), the number of tasks N = Σ_j Q_j, the pooled rate
p̄ = Σ_t c_t/(kN), and φ̄ over the k pilot agents (teams §3).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Literal, get_args

import numpy as np
import numpy.typing as npt

from foreseen.teams.curves import gram_matrix, mean_phi_from_gram

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

Family = Literal["preregistered", "exploratory"]
FAMILIES: tuple[Family, ...] = get_args(Family)


def check_sizes(sizes: npt.ArrayLike) -> FloatArray:
    """Team sizes as a non-negative 1-D float array (ValueError otherwise)."""
    array = np.atleast_1d(np.asarray(sizes, dtype=np.float64))
    if array.ndim != 1 or np.any(array < 0):
        raise ValueError("team sizes must be a non-negative 1-D sequence")
    return array


def as_pilot(pilot: npt.ArrayLike) -> BoolArray:
    """A boolean k × N (or P × k × N) pilot with at least one agent and one task."""
    array = np.asarray(pilot)
    if array.dtype != np.bool_:
        raise TypeError("a pilot must be a boolean array (k × N or P × k × N)")
    if array.ndim < 2 or array.shape[-1] == 0 or array.shape[-2] == 0:
        raise ValueError("a pilot needs at least one agent and one task")
    return array


@dataclass(frozen=True)
class PilotStats:
    """Sufficient statistics of (a stack of) pilots for the closed-form forecasters.

    ``histogram[..., j]`` = (weighted) number of tasks solved by exactly j of the k
    pilot agents (j = 0..k); ``n_tasks`` = its total; ``mean_phi`` = φ̄ of the pilot,
    or ``None`` when it was not computed (``with_phi=False``).
    """

    k: int
    histogram: FloatArray
    mean_phi: FloatArray | None

    @property
    def n_tasks(self) -> FloatArray:
        total: FloatArray = self.histogram.sum(axis=-1)
        return total

    @property
    def solves(self) -> FloatArray:
        """Σ_t c_t (weighted)."""
        total: FloatArray = self.histogram @ np.arange(self.k + 1, dtype=np.float64)
        return total

    @property
    def pooled_rate(self) -> FloatArray:
        """p̄ = Σ c_t / (kN)."""
        rate: FloatArray = self.solves / (self.k * self.n_tasks)
        return rate

    def phi(self) -> FloatArray:
        """φ̄, or a ValueError when these statistics were computed without it."""
        if self.mean_phi is None:
            raise ValueError("these pilot statistics were computed without φ̄ (with_phi=False)")
        return self.mean_phi

    @classmethod
    def from_pilot(
        cls,
        pilot: npt.ArrayLike,
        weights: npt.ArrayLike | None = None,
        *,
        with_phi: bool = True,
    ) -> PilotStats:
        """Statistics of a k × N (or P × k × N) pilot; ``weights`` = task multiplicities.

        ``with_phi=False`` skips φ̄ (and the Gram matrix it needs).
        """
        outcomes = as_pilot(pilot)
        k = outcomes.shape[-2]
        counts = outcomes.sum(axis=-2, dtype=np.int64)
        batch = counts.shape[:-1]
        flat = counts.reshape(-1, counts.shape[-1])
        offsets = (np.arange(flat.shape[0], dtype=np.int64) * (k + 1))[:, None]
        if weights is None:
            flat_weights = None
        else:
            flat_weights = np.broadcast_to(
                np.asarray(weights, dtype=np.float64), counts.shape
            ).reshape(flat.shape).ravel()
        histogram = np.bincount(
            (flat + offsets).ravel(), weights=flat_weights, minlength=flat.shape[0] * (k + 1)
        ).astype(np.float64).reshape(*batch, k + 1)
        if not with_phi:
            return cls(k=k, histogram=histogram, mean_phi=None)
        gram = gram_matrix(outcomes, weights)
        mean_phi = mean_phi_from_gram(gram, histogram.sum(axis=-1))
        return cls(k=k, histogram=histogram, mean_phi=np.asarray(mean_phi, dtype=np.float64))


class CoverageForecast(ABC):
    """A fitted forecast of team coverage C(m) (vectorised over pilots and sizes)."""

    @abstractmethod
    def curve(self, sizes: npt.ArrayLike) -> FloatArray:
        """Forecast C(m) for each m in ``sizes``; shape = pilot batch shape + (len(sizes),)."""


class Forecaster(ABC):
    """The one interface every coverage model obeys, with its tags (module docstring)."""

    name: ClassVar[str]
    family: ClassVar[Family]
    closed_form: ClassVar[bool] = False
    uses_phi: ClassVar[bool] = False
    tuned_on_pilot: ClassVar[bool] = False

    @abstractmethod
    def fit(self, pilot: npt.ArrayLike) -> CoverageForecast:
        """Fit on a boolean k × N pilot (or a P × k × N stack of pilots)."""

    def tuned(self, pilot: npt.ArrayLike) -> Forecaster:
        """This forecaster with its pilot-chosen hyperparameters fixed (default: itself)."""
        del pilot
        return self


class ClosedFormForecaster(Forecaster):
    """A forecaster that depends on the pilot only through :class:`PilotStats`."""

    closed_form: ClassVar[bool] = True

    def fit(self, pilot: npt.ArrayLike) -> CoverageForecast:
        return self.fit_stats(PilotStats.from_pilot(pilot, with_phi=self.uses_phi))

    @abstractmethod
    def fit_stats(self, stats: PilotStats) -> CoverageForecast:
        """Fit from precomputed pilot statistics."""
