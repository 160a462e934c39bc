"""Tests of the offline explainers: coverage, spans, condition-blind extraction, controls."""

from __future__ import annotations

from collections import Counter

import pytest
from scipy.stats import norm

from foreseen.core.digest import canonical_json
from foreseen.credit.cards.render import extract_card, render_card
from foreseen.credit.model import SLOT_NAMES
from foreseen.credit.studies.controlled.explainers import (
    EXPLAINERS,
    Z80,
    build_explanations,
    plain_note_explanations,
    probe_target,
)
from foreseen.credit.studies.controlled.probes import Probe

from support.controlled_build import small_build


def test_every_explainer_explains_every_state_with_its_source() -> None:
    build = small_build()
    state_ids = {s.id for s in build.study.states}
    assert set(build.explanations) == set(EXPLAINERS)
    for name in EXPLAINERS:
        assert set(build.explanations[name]) == state_ids
    for state in build.study.states:
        assert build.explanations["mechanism"][state.id].source == "mechanism"
        assert build.explanations["placebo"][state.id].source == "placebo"
        assert build.explanations["plain_note"][state.id].source == state.condition


def test_written_cards_are_complete_and_evidence_backed_in_their_note() -> None:
    build = small_build()
    for name in ("mechanism", "placebo"):
        for explanation in build.explanations[name].values():
            card, note = explanation.card, explanation.note
            assert card is not None and note is not None
            assert card.filled_slots() == SLOT_NAMES
            assert note == render_card(card)
            backed = card.evidence_backed_slots(note)
            assert {"direction", "observable", "regime", "falsification",
                    "counterfactual"} <= set(backed)


def test_plain_notes_are_extracted_blind_and_elicited_cards_are_rendered() -> None:
    build = small_build()
    notes = build.explanations["plain_note"]
    ordinary_complete = elicited_complete = 0
    for state in build.study.states:
        explanation = notes[state.id]
        assert explanation.note
        if state.condition == "ordinary":
            assert canonical_json(explanation.card.to_json()) == canonical_json(  # type: ignore[union-attr]
                extract_card(explanation.note).to_json())
            ordinary_complete += explanation.card.is_complete  # type: ignore[union-attr]
        else:
            assert explanation.note == render_card(explanation.card)  # type: ignore[arg-type]
            elicited_complete += explanation.card.is_complete  # type: ignore[union-attr]
    ordinary_notes = [notes[s.id].note for s in build.study.states if s.condition == "ordinary"]
    assert len(set(ordinary_notes)) == len(ordinary_notes)  # varied, not one template
    assert elicited_complete > ordinary_complete


def test_probe_target_formula_against_scipy() -> None:
    assert pytest.approx(norm.ppf(0.9), rel=1e-12) == Z80
    probe = Probe((0.03, 0.01, 0.02, 0.04))
    direction, target = probe_target(probe)
    mean = 0.025
    se = (sum((v - mean) ** 2 for v in probe.fold_changes) / 3) ** 0.5 / 2  # sd(ddof=1)/sqrt(4)
    spread = max(se, mean / 4, 0.002)
    assert direction == "improve"
    assert target.point == round(mean, 4)
    assert target.intervals[0] == pytest.approx((mean - Z80 * spread, mean + Z80 * spread),
                                                abs=1e-4)
    assert target.benefit_probability == round(norm.cdf(mean / se), 2)
    assert probe_target(Probe((-0.02, -0.03)))[0] == "worsen"
    assert probe_target(Probe((0.0005, -0.0002)))[0] == "no_change"


def test_placebo_permutes_targets_within_each_task() -> None:
    build = small_build()
    mech, placebo = build.explanations["mechanism"], build.explanations["placebo"]
    moved = 0
    for task in build.study.tasks:
        ids = [s.id for s in build.study.states if s.task_id == task.id]

        def numbers(source: dict, ids: list[str] = ids) -> Counter:  # type: ignore[type-arg]
            return Counter(canonical_json([source[i].card.direction,
                                           source[i].card.target.to_json()]) for i in ids)

        assert numbers(placebo) == numbers(mech)
        for sid in ids:
            assert placebo[sid].card.regime == mech[sid].card.regime
            assert placebo[sid].card.observable == mech[sid].card.observable
            moved += placebo[sid].card.target != mech[sid].card.target
    assert moved > len(build.study.states) // 2


def test_explanations_are_deterministic_in_the_seed() -> None:
    build = small_build()
    seed = build.study.notes["build"]["seed"]
    again = build_explanations(build.study, build.mechanisms, build.probes, seed)
    for name in EXPLAINERS:
        for sid, explanation in again[name].items():
            assert explanation == build.explanations[name][sid]
    other = plain_note_explanations(build.study, build.probes, seed + 1)
    assert any(other[sid].note != build.explanations["plain_note"][sid].note for sid in other)


def test_the_plain_note_and_the_mechanism_control_read_the_same_folds() -> None:
    """Both estimates are the mean over the same K internal folds (rounded 3 vs 4 decimals)."""
    build = small_build()
    folds = {len(probe.fold_changes) for probe in build.probes.values()}
    assert folds == {4}
    compared = 0
    for state in build.study.states:
        if state.condition != "elicited":
            continue
        probe = build.probes[state.id]
        plain = build.explanations["plain_note"][state.id].card
        mechanism = build.explanations["mechanism"][state.id].card
        assert plain is not None and plain.target is not None
        assert mechanism is not None and mechanism.target is not None
        assert plain.target.point == round(probe.mean, 3)
        assert mechanism.target.point == round(probe.mean, 4)
        compared += 1
    assert compared == len(build.study.states) // 2
