"""The ``teams curve`` artefact: a split's exact population curve, floor and mean φ.

For the competent agents of one split (teams §2 screen; M agents, N
tasks): the exact mean oracle coverage C(m) on the grid G = {2, 5, 10, 20, 40}
∩ {m < M} plus M (:mod:`foreseen.teams.curves`, teams §3), the blind-spot floor
(tasks no agent solves; C(M) = 1 − floor/N) and the mean pairwise φ̄.
"""

from __future__ import annotations

from dataclasses import dataclass

from foreseen.core.errors import SourceError
from foreseen.teams.curves import (
    blind_spot_floor,
    coverage_grid,
    mean_pairwise_phi,
    population_curve,
)
from foreseen.teams.matrix import OutcomeMatrix


@dataclass(frozen=True)
class CurvePoint:
    """C(m) for one team size m."""

    size: int
    coverage: float


@dataclass(frozen=True)
class CurveReport:
    """The exact population curve of one split's competent agents (teams §3)."""

    split: str
    source: str
    agents_with_results: int
    competent_agents: int
    tasks: int
    curve: tuple[CurvePoint, ...]
    unsolved_by_every_agent: int
    floor_fraction: float
    mean_pairwise_phi: float


def curve_report(matrix: OutcomeMatrix) -> CurveReport:
    """The curve, floor and φ̄ of the competent agents of ``matrix``."""
    competent = matrix.competent()
    n_agents, n_tasks = competent.n_agents, competent.n_tasks
    if n_agents == 0:
        raise SourceError(f"split {matrix.provenance.split!r} has no competent agent")
    grid = coverage_grid(n_agents)
    values = population_curve(competent.solved, grid)
    floor = blind_spot_floor(competent.solved)
    return CurveReport(
        split=matrix.provenance.split,
        source=matrix.provenance.source,
        agents_with_results=matrix.n_agents,
        competent_agents=n_agents,
        tasks=n_tasks,
        curve=tuple(CurvePoint(size=m, coverage=float(c))
                    for m, c in zip(grid, values, strict=True)),
        unsolved_by_every_agent=floor,
        floor_fraction=floor / n_tasks,
        mean_pairwise_phi=mean_pairwise_phi(competent.solved),
    )
