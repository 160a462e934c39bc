"""Temporal holdout: fit on the submissions before a date, forecast what later ones add.

Issue 7 item 6. For each cutoff date d:

* **earlier** = the (competent) submissions dated strictly before d — they are
  the pilot, all of them (k = their number);
* **population** = earlier + the submissions dated on or after d (M agents);
* **observed** — the earlier submissions' coverage S_k/N (tasks any of them
  solves), the population's coverage S_M/N = 1 − floor/N, and the coverage the
  later submissions add, S_M/N − S_k/N;
* **forecasts**, for every forecaster in ``forecasters.FORECASTERS``:
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
from typing import Any

import numpy as np
import numpy.typing as npt

from foreseen.core.errors import UserInputError
from foreseen.teams.forecasters.models import FORECASTERS
from foreseen.teams.matrix import OutcomeMatrix
from foreseen.teams.provenance.submissions import SubmissionInfo

__all__ = [
    "EXPLORATORY_NOTE",
    "KINDS",
    "MIN_EARLIER",
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
KINDS = ("unconditional", "conditional")


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


def _forecast_pair(
    name: str, pilot: npt.NDArray[np.bool_], population: int, earlier: float, observed: float
) -> dict[str, Any]:
    k = pilot.shape[0]
    try:
        at_pilot, at_population = (
            float(v) for v in FORECASTERS[name].fit(pilot).curve([k, population])
        )
    except (ValueError, ArithmeticError, UserInputError) as exc:
        failed = {"coverage": None, "reason": f"forecaster failed: {exc}"}
        return {kind: dict(failed) for kind in KINDS}
    values = {
        "unconditional": at_population,
        "conditional": conditional_from_curve(at_pilot, at_population, earlier),
    }
    result: dict[str, Any] = {}
    for kind, value in values.items():
        if not math.isfinite(value):
            result[kind] = {"coverage": None, "reason": "the forecast is not a finite number"}
        else:
            result[kind] = {
                "coverage": value,
                "added_coverage": value - earlier,
                "error": value - observed,
            }
    return result


def _one_cutoff(
    cutoff: datetime.date,
    solved: npt.NDArray[np.bool_],
    dates: Sequence[datetime.date],
    forecasters: Sequence[str],
) -> dict[str, Any]:
    earlier_rows = np.array([d < cutoff for d in dates], dtype=np.bool_)
    k = int(earlier_rows.sum())
    later = len(dates) - k
    report: dict[str, Any] = {
        "cutoff": cutoff.isoformat(),
        "earlier_agents": k,
        "later_agents": later,
        "population_agents": len(dates),
    }
    if k < MIN_EARLIER or later < 1:
        report["feasible"] = False
        report["reason"] = (
            f"needs at least {MIN_EARLIER} earlier and 1 later submission "
            f"(has {k} and {later})"
        )
        return report
    pilot = np.ascontiguousarray(solved[earlier_rows])
    earlier = _rate(pilot)
    observed = _rate(solved)
    report["feasible"] = True
    report["observed"] = {
        "earlier_coverage": earlier,
        "population_coverage": observed,
        "added_coverage": observed - earlier,
    }
    report["forecasts"] = {
        name: _forecast_pair(name, pilot, len(dates), earlier, observed) for name in forecasters
    }
    return report


def _mean_absolute_errors(
    cutoffs: list[dict[str, Any]], forecasters: Sequence[str]
) -> dict[str, dict[str, Any]]:
    summary: dict[str, dict[str, Any]] = {}
    feasible = [c for c in cutoffs if c["feasible"]]
    for name in forecasters:
        summary[name] = {}
        for kind in KINDS:
            errors = [c["forecasts"][name][kind].get("error") for c in feasible]
            usable = [abs(e) for e in errors if e is not None]
            if not feasible:
                summary[name][kind] = {"mae": None, "reason": "no feasible cutoff"}
            elif len(usable) < len(errors):
                summary[name][kind] = {
                    "mae": None, "reason": "the forecaster failed at some cutoff"
                }
            else:
                summary[name][kind] = {"mae": float(np.mean(usable)), "cutoffs": len(usable)}
    return summary


def temporal_holdout(
    matrix: OutcomeMatrix,
    info: Mapping[str, SubmissionInfo],
    cutoffs: Sequence[datetime.date] | None = None,
    forecasters: Sequence[str] | None = None,
    *,
    competent_only: bool = True,
) -> dict[str, Any]:
    """The temporal-holdout report of one matrix (module docstring) as strict-JSON data.

    ``forecasters`` defaults to every name in ``FORECASTERS`` (in registry order).
    """
    names_used = list(FORECASTERS) if forecasters is None else list(dict.fromkeys(forecasters))
    unknown = [name for name in names_used if name not in FORECASTERS]
    if unknown:
        known = ", ".join(FORECASTERS)
        raise UserInputError(f"unknown forecaster {unknown[0]!r} (known: {known})")
    if not names_used:
        raise UserInputError("choose at least one forecaster")
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
        raise UserInputError(
            f"split {matrix.provenance.split!r}: no submission has a date "
            "(leaderboard, metadata.yaml or a YYYYMMDD_ name prefix)"
        )
    chosen = sorted(set(cutoffs)) if cutoffs else default_cutoffs(dates)
    solved = np.ascontiguousarray(population.solved[rows])
    reports = [_one_cutoff(cutoff, solved, dates, names_used) for cutoff in chosen]
    return {
        "analysis": "temporal holdout",
        "exploratory": True,
        "note": EXPLORATORY_NOTE,
        "split": matrix.provenance.split,
        "source": matrix.provenance.source,
        "tasks": population.n_tasks,
        "competence_screen": competent_only,
        "agents": population.n_agents,
        "dated_agents": len(dates),
        "undated_agents": undated,
        "first_date": min(dates).isoformat(),
        "last_date": max(dates).isoformat(),
        "cutoffs_rule": "declared" if cutoffs else "quartiles of submission dates",
        "forecasters": names_used,
        "cutoffs": reports,
        "mean_absolute_error": _mean_absolute_errors(reports, names_used),
    }
