"""Temporal holdout: fit on the submissions before a date, forecast what later ones add.

Exploratory. For each cutoff date d:

* **earlier** = the (competent) submissions dated strictly before d — they are
  the pilot, all of them (k = their number);
* **population** = earlier + the submissions dated on or after d (M agents);
* **observed** — the earlier submissions' coverage S_k/N (tasks any of them
  solves), the population's coverage S_M/N = 1 − floor/N, and the coverage the
  later submissions add, S_M/N − S_k/N;
* **forecasts**, for every forecaster of the registry
  (:data:`foreseen.teams.forecasters.registry.FORECASTERS`):
  *unconditional* — the fitted curve at M, C(M), the expected coverage of M
  agents drawn from the pilot's model (it does not know the pilot belongs to the
  population); *conditional* — the pilot's solved tasks counted as covered and
  each unsolved task covered with the model's probability that one of the M − k
  later agents solves it (the model-agnostic form of
  :mod:`foreseen.teams.forecasters.conditional`, computed from the same single fit):
  S_k/N + (1 − S_k/N)·clip((C(M) − C(k))/(1 − C(k)), 0, 1), the ratio taken as 1
  when C(k) = 1 (for the beta-binomial this is its posterior closed form; the
  tests check it against :func:`~foreseen.teams.forecasters.conditional.conditional_coverages`).
  The forecast added coverage is forecast − S_k/N and the error is forecast − S_M/N.

Default cutoffs: the quartiles of the dated submissions' dates (numpy quantile
of the date ordinals at 0.25, 0.5, 0.75, method ``"higher"``, so each cutoff is a
real submission date), duplicates removed. A cutoff with fewer than 2 earlier or
no later submission is reported as infeasible with the reason. Submissions
without a date are left out of every population and counted. Dates come from
:mod:`foreseen.teams.provenance.submissions` (leaderboard, metadata.yaml, name prefix).

Everything here is exploratory on data that has been seen; the output says so.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from foreseen.core.errors import ConfigError, SourceError
from foreseen.teams.forecasters.registry import FORECASTERS, get
from foreseen.teams.matrix import OutcomeMatrix
from foreseen.teams.provenance.populations import PopulationSummary
from foreseen.teams.provenance.submissions import SubmissionInfo
from foreseen.teams.provenance.summary import ProvenanceSummary

__all__ = [
    "EXPLORATORY_NOTE",
    "KINDS",
    "MIN_EARLIER",
    "CutoffResult",
    "ErrorPair",
    "ForecastPair",
    "ForecastValue",
    "MeanAbsoluteError",
    "ObservedCoverage",
    "TemporalHoldout",
    "conditional_from_curve",
    "default_cutoffs",
    "temporal_holdout",
]

EXPLORATORY_NOTE = (
    "exploratory on data that has been seen: not a preregistered test, "
    "and not a confirmatory result"
)
MIN_EARLIER = 2
QUARTILES = (0.25, 0.5, 0.75)
Kind = Literal["unconditional", "conditional"]
KINDS: tuple[Kind, ...] = ("unconditional", "conditional")


@dataclass(frozen=True)
class ForecastValue:
    """A forecast of the population's coverage; ``coverage`` null with a reason on failure."""

    coverage: float | None
    added_coverage: float | None
    error: float | None
    reason: str | None


@dataclass(frozen=True)
class ForecastPair:
    """One forecaster's unconditional and conditional forecast at one cutoff."""

    unconditional: ForecastValue
    conditional: ForecastValue

    def of(self, kind: Kind) -> ForecastValue:
        return self.unconditional if kind == "unconditional" else self.conditional


@dataclass(frozen=True)
class ObservedCoverage:
    """Coverage of the earlier submissions, of the whole population, and what later ones add."""

    earlier_coverage: float
    population_coverage: float
    added_coverage: float


@dataclass(frozen=True)
class CutoffResult:
    """One cutoff: who is earlier and later, what was observed and what each model forecast.

    An infeasible cutoff has a ``reason`` and null ``observed`` and ``forecasts``.
    """

    cutoff: str
    earlier_agents: int
    later_agents: int
    population_agents: int
    feasible: bool
    reason: str | None
    observed: ObservedCoverage | None
    forecasts: dict[str, ForecastPair] | None


@dataclass(frozen=True)
class MeanAbsoluteError:
    """MAE of the forecast population coverage over the feasible cutoffs (null with a reason)."""

    mae: float | None
    cutoffs: int | None
    reason: str | None


@dataclass(frozen=True)
class ErrorPair:
    """One forecaster's MAE, unconditional and conditional."""

    unconditional: MeanAbsoluteError
    conditional: MeanAbsoluteError

    def of(self, kind: Kind) -> MeanAbsoluteError:
        return self.unconditional if kind == "unconditional" else self.conditional


@dataclass(frozen=True)
class TemporalHoldout:
    """The temporal-holdout report of one split (module docstring).

    ``population`` and ``provenance`` are filled by
    :func:`foreseen.teams.exploratory.history.history_report`.
    """

    analysis: str
    exploratory: bool
    note: str
    split: str
    source: str
    tasks: int
    competence_screen: bool
    agents: int
    dated_agents: int
    undated_agents: tuple[str, ...]
    first_date: str
    last_date: str
    cutoffs_rule: str
    forecasters: tuple[str, ...]
    cutoffs: tuple[CutoffResult, ...]
    mean_absolute_error: dict[str, ErrorPair]
    population: PopulationSummary | None = None
    provenance: ProvenanceSummary | None = None


def default_cutoffs(dates: Sequence[datetime.date]) -> list[datetime.date]:
    """Quartile dates of ``dates`` (module docstring); empty if there is no date."""
    if not dates:
        return []
    ordinals = np.array(sorted(d.toordinal() for d in dates), dtype=np.int64)
    picked = np.quantile(ordinals, QUARTILES, method="higher")
    return sorted({datetime.date.fromordinal(int(value)) for value in picked})


def _rate(outcomes: npt.NDArray[np.bool_]) -> float:
    return float(outcomes.any(axis=0).mean())


def conditional_from_curve(at_pilot: float, at_population: float, earlier: float) -> float:
    """S_k/N + (1 − S_k/N)·clip((C(M) − C(k))/(1 − C(k)), 0, 1); ratio 1 when C(k) = 1."""
    remaining = 1.0 - at_pilot
    ratio = (at_population - at_pilot) / remaining if remaining > 0.0 else 1.0
    return earlier + (1.0 - earlier) * min(1.0, max(0.0, ratio))


def _failed(reason: str) -> ForecastValue:
    return ForecastValue(coverage=None, added_coverage=None, error=None, reason=reason)


def _forecast_pair(
    name: str, pilot: npt.NDArray[np.bool_], population: int, earlier: float, observed: float
) -> ForecastPair:
    k = pilot.shape[0]
    try:
        at_pilot, at_population = (
            float(v) for v in get(name).fit(pilot).curve([k, population])
        )
    except (ValueError, ArithmeticError) as exc:
        failed = _failed(f"forecaster failed: {exc}")
        return ForecastPair(unconditional=failed, conditional=failed)
    conditional = conditional_from_curve(at_pilot, at_population, earlier)
    return ForecastPair(unconditional=_forecast_value(at_population, earlier, observed),
                        conditional=_forecast_value(conditional, earlier, observed))


def _forecast_value(value: float, earlier: float, observed: float) -> ForecastValue:
    """One forecast of C(M) at a cutoff: its added coverage over the earlier agents' and its
    error against the observed coverage; a non-finite forecast is a failure with a reason."""
    if not math.isfinite(value):
        return _failed("the forecast is not a finite number")
    return ForecastValue(coverage=value, added_coverage=value - earlier, error=value - observed,
                         reason=None)


def _one_cutoff(
    cutoff: datetime.date,
    solved: npt.NDArray[np.bool_],
    dates: Sequence[datetime.date],
    forecasters: Sequence[str],
) -> CutoffResult:
    earlier_rows = np.array([d < cutoff for d in dates], dtype=np.bool_)
    k = int(earlier_rows.sum())
    later = len(dates) - k
    if k < MIN_EARLIER or later < 1:
        return CutoffResult(
            cutoff=cutoff.isoformat(), earlier_agents=k, later_agents=later,
            population_agents=len(dates), feasible=False,
            reason=(f"needs at least {MIN_EARLIER} earlier and 1 later submission "
                    f"(has {k} and {later})"),
            observed=None, forecasts=None,
        )
    pilot = np.ascontiguousarray(solved[earlier_rows])
    earlier = _rate(pilot)
    observed = _rate(solved)
    return CutoffResult(
        cutoff=cutoff.isoformat(), earlier_agents=k, later_agents=later,
        population_agents=len(dates), feasible=True, reason=None,
        observed=ObservedCoverage(
            earlier_coverage=earlier, population_coverage=observed,
            added_coverage=observed - earlier,
        ),
        forecasts={
            name: _forecast_pair(name, pilot, len(dates), earlier, observed)
            for name in forecasters
        },
    )


def _mean_absolute_error(errors: Sequence[float | None], feasible: int) -> MeanAbsoluteError:
    usable = [abs(error) for error in errors if error is not None]
    if not feasible:
        return MeanAbsoluteError(mae=None, cutoffs=None, reason="no feasible cutoff")
    if len(usable) < len(errors):
        return MeanAbsoluteError(mae=None, cutoffs=None,
                                 reason="the forecaster failed at some cutoff")
    return MeanAbsoluteError(mae=float(np.mean(usable)), cutoffs=len(usable), reason=None)


def _mean_absolute_errors(
    cutoffs: Sequence[CutoffResult], forecasters: Sequence[str]
) -> dict[str, ErrorPair]:
    feasible = [c.forecasts for c in cutoffs if c.forecasts is not None]
    return {
        name: ErrorPair(
            unconditional=_mean_absolute_error(
                [f[name].unconditional.error for f in feasible], len(feasible)),
            conditional=_mean_absolute_error(
                [f[name].conditional.error for f in feasible], len(feasible)),
        )
        for name in forecasters
    }


def temporal_holdout(
    matrix: OutcomeMatrix,
    info: Mapping[str, SubmissionInfo],
    cutoffs: Sequence[datetime.date] | None = None,
    forecasters: Sequence[str] | None = None,
    *,
    competent_only: bool = True,
) -> TemporalHoldout:
    """The temporal-holdout report of one matrix (module docstring).

    ``forecasters`` defaults to every registered forecaster (in registry order).
    """
    names_used = list(FORECASTERS) if forecasters is None else list(dict.fromkeys(forecasters))
    for name in names_used:
        get(name)
    if not names_used:
        raise ConfigError("choose at least one forecaster")
    population = matrix.competent() if competent_only else matrix
    dated = [
        (index, info[agent].date)
        for index, agent in enumerate(population.agents)
        if agent in info and info[agent].date is not None
    ]
    undated = sorted(set(population.agents) - {population.agents[i] for i, _ in dated})
    rows = np.array([index for index, _ in dated], dtype=np.int64)
    dates: list[datetime.date] = [d for _, d in dated if d is not None]
    if not dates:
        raise SourceError(
            f"split {matrix.provenance.split!r}: no submission has a date "
            "(leaderboard, metadata.yaml or a YYYYMMDD_ name prefix)"
        )
    chosen = sorted(set(cutoffs)) if cutoffs else default_cutoffs(dates)
    solved = np.ascontiguousarray(population.solved[rows])
    reports = tuple(_one_cutoff(cutoff, solved, dates, names_used) for cutoff in chosen)
    return TemporalHoldout(
        analysis="temporal holdout",
        exploratory=True,
        note=EXPLORATORY_NOTE,
        split=matrix.provenance.split,
        source=matrix.provenance.source,
        tasks=population.n_tasks,
        competence_screen=competent_only,
        agents=population.n_agents,
        dated_agents=len(dates),
        undated_agents=tuple(undated),
        first_date=min(dates).isoformat(),
        last_date=max(dates).isoformat(),
        cutoffs_rule="declared" if cutoffs else "quartiles of submission dates",
        forecasters=tuple(names_used),
        cutoffs=reports,
        mean_absolute_error=_mean_absolute_errors(reports, names_used),
    )
