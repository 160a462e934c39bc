"""Sub-populations by provenance, model clusters, and cluster-aware pilots.

* **one per model** — one submission per canonical model set (the sorted tuple
  of a submission's canonical model names). Rule ``"most_solved"`` (default)
  keeps the submission solving the most tasks of the matrix, ties broken by the
  earlier date (unknown dates last), then by name; rule ``"earliest"`` keeps the
  earliest-dated one, ties broken by most solved, then name. Submissions with no
  known model are dropped and counted (they cannot be assigned to a model).
* **single-attempt only** — submissions whose ``attempts`` is 1; unknown attempts
  are dropped and counted, as are multi-attempt submissions.
* **model clusters** — ``"model_set"`` (default): submissions with the same
  canonical model set share a cluster; ``"shared_model"``: connected components
  of "uses a common canonical model". A submission with no known model is its
  own cluster. Cluster ids are 0, 1, … in order of first appearance.
* **cluster pilot** — :func:`draw_cluster_pilot` draws k agents in two stages:
  (1) a uniformly random order of the clusters, and a uniformly random order of
  the members inside each cluster; (2) round robin — round r takes the r-th
  member of every cluster (in the cluster order) that has more than r members —
  until k agents are drawn. So the first min(k, #clusters) agents come from
  distinct clusters, every cluster has the same chance of entering the pilot
  whatever its size, and repeated submissions of one model enter only after
  every model has one.
"""

from __future__ import annotations

import datetime
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from foreseen.core.errors import ConfigError
from foreseen.teams.matrix import OutcomeMatrix
from foreseen.teams.provenance.submissions import SubmissionInfo

__all__ = [
    "Population",
    "PopulationSummary",
    "draw_cluster_pilot",
    "model_clusters",
    "one_per_model",
    "select_one_per_model",
    "select_single_attempt",
    "single_attempt_only",
    "whole_population",
]

IntArray = npt.NDArray[np.int64]
_LATE = datetime.date.max


@dataclass(frozen=True)
class Population:
    """A sub-population: its matrix, and each dropped agent with the reason."""

    name: str
    rule: str
    matrix: OutcomeMatrix
    dropped: dict[str, str]

    def summary(self) -> PopulationSummary:
        """How many agents were kept and dropped, and why."""
        reasons: dict[str, int] = {}
        for reason in self.dropped.values():
            reasons[reason] = reasons.get(reason, 0) + 1
        return PopulationSummary(
            population=self.name,
            rule=self.rule,
            agents=self.matrix.n_agents,
            dropped=len(self.dropped),
            dropped_by_reason=dict(sorted(reasons.items())),
            dropped_agents=dict(sorted(self.dropped.items())),
        )


@dataclass(frozen=True)
class PopulationSummary:
    """A sub-population as written in reports: its rule, its size, the dropped agents."""

    population: str
    rule: str
    agents: int
    dropped: int
    dropped_by_reason: dict[str, int]
    dropped_agents: dict[str, str]


def whole_population(matrix: OutcomeMatrix) -> Population:
    """Every agent of ``matrix`` (nothing dropped)."""
    return Population("all", "every agent", matrix, {})


def _subset(matrix: OutcomeMatrix, keep: Sequence[str], label: str) -> OutcomeMatrix:
    wanted = set(keep)
    rows = np.array([agent in wanted for agent in matrix.agents], dtype=np.bool_)
    if not rows.any():
        raise ConfigError(
            f"split {matrix.provenance.split!r}: the {label} population is empty"
        )
    agents = tuple(a for a, k in zip(matrix.agents, rows, strict=True) if k)
    return OutcomeMatrix(agents, matrix.tasks, matrix.solved[rows], matrix.provenance)


def _info(info: Mapping[str, SubmissionInfo], agent: str) -> SubmissionInfo | None:
    return info.get(agent)


def select_one_per_model(
    matrix: OutcomeMatrix,
    info: Mapping[str, SubmissionInfo],
    rule: Literal["most_solved", "earliest"] = "most_solved",
) -> Population:
    """One submission per canonical model set (module docstring)."""
    if rule not in ("most_solved", "earliest"):
        raise ConfigError(f"unknown one-per-model rule {rule!r} (most_solved, earliest)")
    solved = dict(zip(matrix.agents, matrix.solve_counts().tolist(), strict=True))
    groups: dict[tuple[str, ...], list[str]] = {}
    dropped: dict[str, str] = {}
    for agent in matrix.agents:
        entry = _info(info, agent)
        if entry is None or not entry.models:
            dropped[agent] = "models unknown"
            continue
        groups.setdefault(entry.models, []).append(agent)

    def order(agent: str) -> tuple[int, datetime.date, str] | tuple[datetime.date, int, str]:
        entry = info[agent]
        date = entry.date or _LATE
        if rule == "most_solved":
            return (-solved[agent], date, agent)
        return (date, -solved[agent], agent)

    keep = []
    for models, members in groups.items():
        best = min(members, key=order)
        keep.append(best)
        for agent in members:
            if agent != best:
                dropped[agent] = f"another submission kept for {'+'.join(models)}"
    return Population("one_per_model", rule, _subset(matrix, keep, "one-per-model"), dropped)


def select_single_attempt(
    matrix: OutcomeMatrix, info: Mapping[str, SubmissionInfo]
) -> Population:
    """Submissions with ``attempts == 1``; unknown and multi-attempt ones dropped."""
    keep = []
    dropped: dict[str, str] = {}
    for agent in matrix.agents:
        entry = _info(info, agent)
        attempts = entry.attempts if entry is not None else None
        if attempts is None:
            dropped[agent] = "attempts unknown"
        elif attempts != 1:
            label = entry.attempts_label if entry is not None else None
            dropped[agent] = f"attempts {label or attempts}"
        else:
            keep.append(agent)
    return Population(
        "single_attempt_only", "attempts == 1",
        _subset(matrix, keep, "single-attempt"), dropped,
    )


def one_per_model(matrix: OutcomeMatrix, info: Mapping[str, SubmissionInfo]) -> OutcomeMatrix:
    """Matrix of :func:`select_one_per_model` with the default rule."""
    return select_one_per_model(matrix, info).matrix


def single_attempt_only(
    matrix: OutcomeMatrix, info: Mapping[str, SubmissionInfo]
) -> OutcomeMatrix:
    """Matrix of :func:`select_single_attempt`."""
    return select_single_attempt(matrix, info).matrix


def model_clusters(
    agents: Sequence[str],
    info: Mapping[str, SubmissionInfo],
    how: Literal["model_set", "shared_model"] = "model_set",
) -> IntArray:
    """Cluster id of each agent (module docstring); ids 0, 1, … by first appearance."""
    if how not in ("model_set", "shared_model"):
        raise ConfigError(f"unknown clustering {how!r} (model_set, shared_model)")
    parent = list(range(len(agents)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_holder: dict[object, int] = {}
    for index, agent in enumerate(agents):
        entry = info.get(agent)
        models = entry.models if entry is not None else ()
        keys: list[object] = [models] if how == "model_set" and models else list(models)
        for key in keys:
            if key in first_holder:
                parent[root(index)] = root(first_holder[key])
            else:
                first_holder[key] = index
    labels: dict[int, int] = {}
    ids = np.empty(len(agents), dtype=np.int64)
    for index in range(len(agents)):
        ids[index] = labels.setdefault(root(index), len(labels))
    return ids


def _permutation(rng: random.Random | np.random.Generator, n: int) -> list[int]:
    if isinstance(rng, np.random.Generator):
        return [int(i) for i in rng.permutation(n)]
    return rng.sample(range(n), n)


def draw_cluster_pilot(
    rng: random.Random | np.random.Generator, clusters: npt.ArrayLike, k: int
) -> IntArray:
    """Indices (sorted) of k agents drawn by the two-stage scheme of the module docstring."""
    labels = np.asarray(clusters, dtype=np.int64)
    if labels.ndim != 1:
        raise ValueError("clusters must be one label per agent")
    if not 1 <= k <= labels.size:
        raise ValueError(f"cannot draw {k} of {labels.size} agents")
    distinct = sorted(set(labels.tolist()))
    members = [np.flatnonzero(labels == c).tolist() for c in distinct]
    order = _permutation(rng, len(distinct))
    shuffled = []
    for position in order:
        group = members[position]
        shuffled.append([group[i] for i in _permutation(rng, len(group))])
    drawn: list[int] = []
    depth = 0
    while len(drawn) < k:
        for group in shuffled:
            if depth < len(group):
                drawn.append(group[depth])
                if len(drawn) == k:
                    break
        depth += 1
    return np.array(sorted(drawn), dtype=np.int64)
