"""Scoped states (a proposing explainer's proposal states) change no other explainer's numbers.

The same forecasts are analysed twice: on the base study alone, and with a
scoped explainer's states (larger outcomes, so task scales and baselines over
all states would differ) plus its description and matched slots. Every
number of the other explainer, the shared description arm, the scales (seen
through the task-scaled losses) and the baselines must be identical bit for
bit; the scoped explainer is contrasted with description slots on its own
states.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from foreseen.core.schema import to_json
from foreseen.credit.analysis.analyze import AnalysisConfig, CreditAnalysis, analyze
from foreseen.credit.model import Explanation, SlotRecord, Study

from support.analysis_fixtures import make_explanations, make_outcomes, make_slots, make_study, slot

PROPOSER = "proposer"


def _with_scope(study: Study, outcomes: dict[str, float]
                ) -> tuple[Study, dict[str, float], list[str], list[SlotRecord],
                           dict[str, Explanation]]:
    """One scoped state per base state; every other one shares its base state's cell."""
    rng = np.random.default_rng(7)
    added = []
    for index, state in enumerate(study.states):
        cell = state.cell if index % 2 == 0 else f"{state.cell}/other"
        added.append(replace(state, id=f"{state.id}~{PROPOSER}", cell=cell))
    y = {s.id: float(outcomes[s.id.split("~")[0]] + 0.3 + rng.normal(0.0, 0.05))
         for s in added}
    records = []
    for state in added:
        for repeat in (1, 2):
            for context, noise in (("description", 0.2), ("matched_card", 0.02)):
                point = y[state.id] + float(rng.normal(0.0, noise))
                records.append(slot(state.id, context, repeat, point,
                                    explainer=None if context == "description" else PROPOSER))
    explanations = {s.id: replace(e, state_id=s.id) for s, e in zip(
        added, make_explanations(study, outcomes).values(), strict=True)}
    return (replace(study, states=(*study.states, *added)), {**outcomes, **y},
            [s.id for s in added], records, explanations)


def _other(key: str) -> bool:
    return PROPOSER not in key


def _json(value: Any) -> Any:
    return to_json(value)


@pytest.mark.parametrize("config", [
    AnalysisConfig(replicates=300, bootstrap_seed=5),
    AnalysisConfig(replicates=300, bootstrap_seed=5, baseline_interval=(-0.05, 0.05)),
])
def test_a_scoped_explainer_changes_no_other_number(config: AnalysisConfig) -> None:
    study = make_study(6)
    outcomes = make_outcomes(study)
    explanations = {"probe": make_explanations(study, outcomes)}
    slots = make_slots(study, outcomes)
    alone = analyze(study, explanations, slots, outcomes, config)

    extended, all_outcomes, scoped, extra, own = _with_scope(study, outcomes)
    both = analyze(extended, {**explanations, PROPOSER: own}, [*slots, *extra], all_outcomes,
                   config, scopes={PROPOSER: scoped})

    _same_for_others(alone, both)
    # the proposer is contrasted with description slots on its own states
    description = both.metrics[f"{PROPOSER}|description"].itt
    assert description.n_states == len(scoped)
    assert both.metrics["-|description"].itt.n_states == len(study.states)
    key = f"delta_desc/{PROPOSER}/matched_card/point_mae/itt"
    assert both.estimates[key].estimate is not None
    row = next(r for r in both.contrasts if (r.explainer, r.context, r.loss, r.variant)
               == (PROPOSER, "matched_card", "point_mae", "itt"))
    assert row.n_states == len(scoped)
    assert any(r.arm == f"{PROPOSER}|matched_card" for r in both.baseline_contrasts)


def _same_for_others(alone: CreditAnalysis, both: CreditAnalysis) -> None:
    assert _json(alone.baselines) == _json(both.baselines)
    assert {k: _json(v) for k, v in alone.estimates.items()} == {
        k: _json(v) for k, v in both.estimates.items() if _other(k)}
    assert {k: _json(v) for k, v in alone.metrics.items()} == {
        k: _json(v) for k, v in both.metrics.items() if _other(k)}
    assert [_json(r) for r in alone.contrasts] == [
        _json(r) for r in both.contrasts if r.explainer != PROPOSER]
    assert [_json(r) for r in alone.baseline_contrasts] == [
        _json(r) for r in both.baseline_contrasts if _other(r.arm)]
    assert _json(alone.claims["probe"]) == _json(both.claims["probe"])


def test_without_scopes_every_state_is_a_base_state() -> None:
    """No scopes: the extended study's states all carry scales and baselines (the rule's
    other side — the numbers then do change, so the scoped test can fail)."""
    study = make_study(6)
    outcomes = make_outcomes(study)
    config = AnalysisConfig(replicates=200, bootstrap_seed=5)
    extended, all_outcomes, _, extra, own = _with_scope(study, outcomes)
    explanations = {"probe": make_explanations(study, outcomes), PROPOSER: own}
    slots = [*make_slots(study, outcomes), *extra]
    unscoped = analyze(extended, explanations, slots, all_outcomes, config)
    alone = analyze(study, {"probe": explanations["probe"]}, make_slots(study, outcomes),
                    outcomes, config)
    assert _json(unscoped.baselines) != _json(alone.baselines)
    assert unscoped.metrics["-|description"].itt.n_states == len(extended.states)
