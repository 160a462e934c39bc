"""The ``teams history`` artefact: the temporal holdout of each split, with its provenance.

For every split: read the submissions' provenance
(:func:`foreseen.teams.provenance.submissions.load_provenance`: the leaderboard,
the split directory's ``metadata.yaml`` files, the ``YYYYMMDD_`` name prefix),
keep the chosen population (all agents, one per model, or single-attempt
submissions only; :mod:`foreseen.teams.provenance.populations`), run the
temporal holdout (:mod:`foreseen.teams.exploratory.temporal`) and attach the
population and provenance summaries. Exploratory on data that has been seen.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, get_args

from foreseen.core.errors import ConfigError
from foreseen.teams.exploratory.temporal import EXPLORATORY_NOTE, TemporalHoldout, temporal_holdout
from foreseen.teams.matrix import OutcomeMatrix
from foreseen.teams.provenance.populations import (
    Population,
    select_one_per_model,
    select_single_attempt,
    whole_population,
)
from foreseen.teams.provenance.submissions import SubmissionInfo, load_provenance
from foreseen.teams.provenance.summary import summarise_provenance

PopulationRule = Literal["all", "one-per-model", "single-attempt"]
POPULATIONS: tuple[PopulationRule, ...] = get_args(PopulationRule)
SHIPPED_LEADERBOARD = "foreseen/data/swebench/leaderboard.csv"


@dataclass(frozen=True)
class HistoryReport:
    """The ``teams history`` artefact: one temporal holdout per split, marked exploratory."""

    analysis: str
    exploratory: bool
    note: str
    leaderboard: str
    splits: dict[str, TemporalHoldout]


@dataclass(frozen=True)
class HistorySource:
    """A matrix and the folder holding its submissions' ``metadata.yaml`` files (if any)."""

    matrix: OutcomeMatrix
    split_dir: Path | None


def choose_population(
    matrix: OutcomeMatrix, info: dict[str, SubmissionInfo], rule: str
) -> Population:
    """The sub-population named by ``rule`` (one of :data:`POPULATIONS`)."""
    if rule == "all":
        return whole_population(matrix)
    if rule == "one-per-model":
        return select_one_per_model(matrix, info)
    if rule == "single-attempt":
        return select_single_attempt(matrix, info)
    raise ConfigError(f"unknown population {rule!r} ({', '.join(POPULATIONS)})")


def history_report(
    sources: Sequence[HistorySource],
    *,
    leaderboard: Path | None = None,
    cutoffs: Sequence[datetime.date] | None = None,
    forecasters: Sequence[str] | None = None,
    population: str = "all",
    competent_only: bool = True,
) -> HistoryReport:
    """The temporal holdout of every source's split (module docstring)."""
    if population not in POPULATIONS:
        raise ConfigError(f"unknown population {population!r} ({', '.join(POPULATIONS)})")
    splits: dict[str, TemporalHoldout] = {}
    for source in sources:
        matrix = source.matrix
        name = matrix.provenance.split
        info = load_provenance(matrix.agents, leaderboard=leaderboard,
                               experiments_split_dir=source.split_dir, split=name)
        chosen = choose_population(matrix, info, population)
        holdout = temporal_holdout(chosen.matrix, info, cutoffs, forecasters,
                                   competent_only=competent_only)
        splits[name] = replace(holdout, population=chosen.summary(),
                               provenance=summarise_provenance(info))
    return HistoryReport(
        analysis="temporal holdout",
        exploratory=True,
        note=EXPLORATORY_NOTE,
        leaderboard=str(leaderboard) if leaderboard is not None else SHIPPED_LEADERBOARD,
        splits=splits,
    )
