"""Donor maps (spec credit.md §3): never self, involution, groups, determinism, errors."""

from __future__ import annotations

import pytest

from foreseen.core.errors import UserInputError
from foreseen.credit.model import Study
from foreseen.credit.plan.contexts import DONOR_MAPS, donor_map

from support.cards_study import make_study

SEEDS = (0, 1, 7, 20261129)


def _by_id(study: Study) -> dict[str, object]:
    return {s.id: s for s in study.states}


@pytest.mark.parametrize("name", DONOR_MAPS)
@pytest.mark.parametrize("seed", SEEDS)
def test_every_state_has_a_donor_other_than_itself(name: str, seed: int) -> None:
    study = make_study(n_tasks=6, seeds=3)
    donors = donor_map(name, study, seed)
    assert set(donors) == {s.id for s in study.states}
    assert all(state != donor for state, donor in donors.items())
    assert set(donors.values()) <= set(donors)


@pytest.mark.parametrize("seed", SEEDS)
def test_seed_swap_is_the_other_seed_of_the_cell_and_an_involution(seed: int) -> None:
    study = make_study(seeds=2)
    states = {s.id: s for s in study.states}
    donors = donor_map("seed_swap", study, seed)
    for state_id, donor_id in donors.items():
        state, donor = states[state_id], states[donor_id]
        assert donor.cell == state.cell and donor.seed != state.seed
        assert donors[donor_id] == state_id


@pytest.mark.parametrize("seed", SEEDS)
def test_seed_swap_with_three_seeds_is_one_cycle_per_cell(seed: int) -> None:
    study = make_study(seeds=3)
    states = {s.id: s for s in study.states}
    donors = donor_map("seed_swap", study, seed)
    for cell in {s.cell for s in study.states}:
        start = next(s.id for s in study.states if s.cell == cell)
        seen, current = [], start
        for _ in range(3):
            seen.append(current)
            current = donors[current]
            assert states[current].cell == cell
        assert current == start and len(set(seen)) == 3


@pytest.mark.parametrize("seed", SEEDS)
def test_cross_task_shares_kind_budget_and_intervention_but_not_task(seed: int) -> None:
    study = make_study(n_tasks=7, seeds=2)
    kinds = {t.id: t.kind for t in study.tasks}
    states = {s.id: s for s in study.states}
    donors = donor_map("cross_task", study, seed)
    for state_id, donor_id in donors.items():
        state, donor = states[state_id], states[donor_id]
        assert kinds[donor.task_id] == kinds[state.task_id]
        assert donor.budget_index == state.budget_index
        assert donor.intervention_id == state.intervention_id
        assert donor.task_id != state.task_id
    # a balanced design gives a permutation (every state donates exactly once)
    assert sorted(donors.values()) == sorted(donors)


def test_cross_task_depends_on_the_seed() -> None:
    study = make_study(n_tasks=8, seeds=2)
    maps = {tuple(sorted(donor_map("cross_task", study, seed).items())) for seed in range(8)}
    assert len(maps) > 1


@pytest.mark.parametrize("seed", SEEDS)
def test_other_intervention_same_task_budget_and_seed(seed: int) -> None:
    study = make_study(seeds=2, interventions_per_budget=3)
    states = {s.id: s for s in study.states}
    donors = donor_map("other_intervention", study, seed)
    for state_id, donor_id in donors.items():
        state, donor = states[state_id], states[donor_id]
        assert (donor.task_id, donor.budget_index) == (state.task_id, state.budget_index)
        assert donor.intervention_id != state.intervention_id
        assert donor.seed == state.seed


def test_other_intervention_uses_both_candidates_across_seeds() -> None:
    study = make_study(seeds=1, interventions_per_budget=3)
    chosen = {donor_map("other_intervention", study, seed)["t0/b0/iv0/s0"] for seed in range(20)}
    assert chosen == {"t0/b0/iv1/s0", "t0/b0/iv2/s0"}


@pytest.mark.parametrize("name", DONOR_MAPS)
def test_deterministic_and_independent_of_state_order(name: str) -> None:
    forward = make_study(n_tasks=6, seeds=2)
    backward = make_study(n_tasks=6, seeds=2, reverse=True)
    first = donor_map(name, forward, 11)
    assert donor_map(name, forward, 11) == first
    assert donor_map(name, backward, 11) == first
    assert list(first) == sorted(first)


def test_seed_swap_refuses_a_cell_with_one_seed() -> None:
    study = make_study(seeds=1)
    with pytest.raises(UserInputError, match=r"state t0/b0/iv0/s0 has no donor"):
        donor_map("seed_swap", study, 0)


def test_cross_task_refuses_a_group_with_one_task_and_names_the_state() -> None:
    # three tasks alternate two kinds: the regression kind has a single task (t1)
    study = make_study(n_tasks=3)
    with pytest.raises(UserInputError, match=r"cross_task: state t1/b0/iv0/s0 has no donor.*"
                                             r"kind 'regression'"):
        donor_map("cross_task", study, 0)


def test_other_intervention_refuses_a_single_intervention() -> None:
    study = make_study(interventions_per_budget=1)
    with pytest.raises(UserInputError, match=r"other_intervention: state t0/b0/iv0/s0"):
        donor_map("other_intervention", study, 0)


def test_unknown_map_is_a_user_error() -> None:
    with pytest.raises(UserInputError, match="unknown donor map"):
        donor_map("nearest_neighbour", make_study(), 0)


def _mixed_cells(seeds: int) -> Study:
    """make_study with the condition alternating over seeds inside every cell."""
    from dataclasses import replace

    study = make_study(seeds=seeds)
    states = tuple(replace(s, condition="ordinary" if s.seed % 2 == 0 else "elicited")
                   for s in study.states)
    return replace(study, states=states)


@pytest.mark.parametrize("seed", SEEDS)
def test_seed_swap_stays_in_the_matched_card_s_condition(seed: int) -> None:
    """Spec §12: four seeds per cell, two per condition: each donor shares the condition."""
    study = _mixed_cells(seeds=4)
    states = _by_id(study)
    donors = donor_map("seed_swap", study, seed)
    assert set(donors) == set(states)
    for state_id, donor_id in donors.items():
        state, donor = states[state_id], states[donor_id]
        assert donor.cell == state.cell and donor.condition == state.condition  # type: ignore[attr-defined]


def test_seed_swap_refuses_a_cell_whose_two_seeds_differ_in_condition() -> None:
    """The old OpenML design (seed 0 ordinary, seed 1 elicited) has no same-condition donor."""
    study = _mixed_cells(seeds=2)
    with pytest.raises(UserInputError, match=r"seed_swap: state t0/b0/iv0/s1 has no donor"
                                             r" \(cell 't0/b0/iv0' has no other seed in the"
                                             r" elicited condition\)"):
        donor_map("seed_swap", study, 0)
