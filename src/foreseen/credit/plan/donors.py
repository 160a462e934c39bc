"""Donor maps π: state → donor state (credit §3, donor table).

Every map is a deterministic function of (study, seed) — fixed before any
forecast — and never maps a state to itself. Randomness is drawn per *group*
from ``numpy.random.default_rng`` seeded with the SHA-256 of the canonical JSON
``[map name, seed, group key]``, so a group's donors do not depend on any other
group, on state order in the study file, or on Python's hash seed.

* ``seed_swap`` — group = the state's cell (task × budget × intervention) and
  its elicitation condition (credit §12: a seed-swap donor comes from the same
  condition as the matched card, so a donor contrast never compares an
  ordinary note with an elicited card). The group's states, sorted by
  (seed, id), are put in a seeded random cyclic order and each state's donor
  is the next one in the cycle. With two states (the usual two seeds) this is
  the swap, an involution, whatever the seed. A study whose cells mix
  conditions has no seed-swap donor for a state alone in its condition.
* ``cross_task`` — group = (task kind, budget index, intervention). The
  group's *tasks* (sorted ids) are put in a seeded random cyclic order (a
  derangement of tasks: every task maps to another one); a state of task T
  takes its donor from the next task T′ in the cycle: the state of T′ with the
  same seed rank (rank by (seed, id) within its task in the group), or, when
  T′ has fewer states, rank modulo their number.
* ``other_intervention`` — candidates = states of the same task and budget
  index with a different intervention; those with the same seed are preferred
  when any exists; one is chosen uniformly with the state's own seeded
  generator (key = the state id).

A state with no possible donor (a cell with one state for ``seed_swap``, a
(kind, budget index, intervention) group with a single task for
``cross_task``, a task × budget with one intervention for
``other_intervention``) raises :class:`UserInputError` naming the state and
the map, so the plan is never frozen with a silent self-donation.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence

import numpy as np

from foreseen.core.digest import sha256_json
from foreseen.core.errors import UserInputError
from foreseen.credit.model import State, Study

DONOR_MAPS: tuple[str, ...] = ("seed_swap", "cross_task", "other_intervention")


def _rng(name: str, seed: int, key: object) -> np.random.Generator:
    digest = sha256_json([name, seed, key])
    return np.random.default_rng(int(digest[:32], 16))


def _by_seed(states: Sequence[State]) -> list[State]:
    return sorted(states, key=lambda s: (s.seed, s.id))


def _groups(study: Study, key: Callable[[State], Hashable]) -> dict[Hashable, list[State]]:
    groups: dict[Hashable, list[State]] = defaultdict(list)
    for state in study.states:
        groups[key(state)].append(state)
    return groups


def _seed_swap(study: Study, seed: int) -> dict[str, str]:
    donors: dict[str, str] = {}
    cells: dict[tuple[str, str], list[State]] = defaultdict(list)
    for state in study.states:
        cells[(state.cell, state.condition)].append(state)
    for (cell, condition), members in sorted(cells.items()):
        ordered = _by_seed(members)
        if len(ordered) < 2:
            raise UserInputError(
                f"donor map seed_swap: state {ordered[0].id} has no donor "
                f"(cell {cell!r} has no other seed in the {condition} condition)"
            )
        cycle = [ordered[i] for i in _rng("seed_swap", seed, str(cell)).permutation(len(ordered))]
        for index, state in enumerate(cycle):
            donors[state.id] = cycle[(index + 1) % len(cycle)].id
    return donors


def _cross_task(study: Study, seed: int) -> dict[str, str]:
    kinds = {task.id: task.kind for task in study.tasks}
    groups: dict[tuple[str, int, str], list[State]] = defaultdict(list)
    for state in study.states:
        groups[(kinds[state.task_id], state.budget_index, state.intervention_id)].append(state)
    donors: dict[str, str] = {}
    for key, members in sorted(groups.items()):
        by_task: dict[str, list[State]] = defaultdict(list)
        for state in members:
            by_task[state.task_id].append(state)
        tasks = sorted(by_task)
        if len(tasks) < 2:
            kind, budget_index, intervention = key
            raise UserInputError(
                f"donor map cross_task: state {_by_seed(members)[0].id} has no donor "
                f"(no other task of kind {kind!r} has budget index {budget_index} "
                f"and intervention {intervention!r})"
            )
        rng = _rng("cross_task", seed, [str(part) for part in key])
        order = [tasks[i] for i in rng.permutation(len(tasks))]
        for index, task_id in enumerate(order):
            donor_states = _by_seed(by_task[order[(index + 1) % len(order)]])
            for rank, state in enumerate(_by_seed(by_task[task_id])):
                donors[state.id] = donor_states[rank % len(donor_states)].id
    return donors


def _other_intervention(study: Study, seed: int) -> dict[str, str]:
    groups = _groups(study, lambda s: (s.task_id, s.budget_index))
    donors: dict[str, str] = {}
    for state in sorted(study.states, key=lambda s: s.id):
        group = groups[(state.task_id, state.budget_index)]
        candidates = [s for s in group if s.intervention_id != state.intervention_id]
        if not candidates:
            raise UserInputError(
                f"donor map other_intervention: state {state.id} has no donor "
                f"(task {state.task_id!r} at budget index {state.budget_index} "
                f"has no other intervention)"
            )
        same_seed = [s for s in candidates if s.seed == state.seed]
        pool = sorted(same_seed or candidates, key=lambda s: s.id)
        pick = int(_rng("other_intervention", seed, state.id).integers(len(pool)))
        donors[state.id] = pool[pick].id
    return donors


_BUILDERS: dict[str, Callable[[Study, int], dict[str, str]]] = {
    "seed_swap": _seed_swap,
    "cross_task": _cross_task,
    "other_intervention": _other_intervention,
}


def donor_map(name: str, study: Study, seed: int) -> dict[str, str]:
    """State id → donor state id under map ``name`` (one of :data:`DONOR_MAPS`).

    Deterministic in (study, seed); never maps a state to itself; raises
    :class:`UserInputError` for an unknown map or a state without a donor.
    """
    if name not in _BUILDERS:
        raise UserInputError(f"unknown donor map {name!r}; choose one of {DONOR_MAPS}")
    donors = _BUILDERS[name](study, seed)
    for state_id, donor_id in donors.items():
        if state_id == donor_id:  # defensive: the constructions above exclude it
            raise UserInputError(f"donor map {name}: state {state_id} would donate to itself")
    return dict(sorted(donors.items()))
