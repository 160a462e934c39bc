"""The Tox21 component crossover: seven card contexts, the frozen mechanism contrast, the
exploratory rest, and the dry run's call count at the paper's size (spec credit.md §13).

The study is a synthetic stand-in with the paper's shape (12 endpoints × 3 budgets ×
2 seeds = 72 states, one intervention per cell, a card per state), so the dry run
needs neither RDKit nor the data file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from foreseen.credit.analysis.analyze import matched_counterpart
from foreseen.credit.cards.render import extract_card
from foreseen.credit.model import Explanation, Outcome
from foreseen.credit.plan.contexts import parse_context_id
from foreseen.credit.studies.base import BuiltStudy, StudyBuild
from foreseen.credit.studies.estimate import estimate_study
from foreseen.credit.studies.pipeline import StudySettings
from foreseen.credit.studies.tox21 import study as tox21_design
from foreseen.credit.studies.tox21.study import Tox21Study

from support.cards_study import make_study

NOTE = ("Scaling the fingerprints should improve ROC AUC by about 0.013, because the solver "
        "converges. We should see fewer iterations at the cap. The benefit should be largest at "
        "the smallest budget. If the iterations stay at the cap, the story is wrong. Without the "
        "change, the solver keeps stopping early.")


def paper_sized_build() -> BuiltStudy:
    """72 states in the paper's shape, a probe-like card each, sealed outcomes far from 0.013."""
    study = make_study(n_tasks=12, budgets=3, seeds=2, interventions_per_budget=1)
    explanations = {s.id: Explanation(s.id, "elicited", "probe", note=NOTE,
                                      card=extract_card(NOTE)) for s in study.states}
    outcomes = tuple(Outcome(s.id, -0.3 - 0.001 * i) for i, s in enumerate(study.states))
    return BuiltStudy(StudyBuild(study, outcomes, {"probe": explanations}))


@pytest.fixture(scope="module")
def estimate(tmp_path_factory: pytest.TempPathFactory) -> object:
    built = paper_sized_build()
    assert len(built.build.study.states) == 72 and len(built.build.study.tasks) == 12
    return estimate_study(Tox21Study(), built, StudySettings(replicates=100),
                          tmp_path_factory.mktemp("dry"))


def test_the_dry_run_counts_1152_crossover_calls_at_the_paper_s_size(estimate: object) -> None:
    from foreseen.credit.studies.estimate import RunEstimate

    assert isinstance(estimate, RunEstimate)
    assert estimate.slots == 1152 and estimate.calls == 1152
    per_context = {g.context: g.calls for g in estimate.groups if g.role == "forecaster"}
    assert per_context == {"-|description": 144,
                           **{f"probe|{cid}": 144 for cid in tox21_design.CARD_CONTEXTS}}


def test_seven_card_contexts_cross_numbers_and_mechanism_prose() -> None:
    cards = tox21_design.CARD_CONTEXTS
    assert len(cards) == len(set(cards)) == 7
    assert {None: ("description",), "probe": cards} == tox21_design.CONTEXTS
    for cid in cards:
        parse_context_id(cid)  # every one is a declared context id
    # both components swapped against the same matched cell (own numbers, own prose)
    assert matched_counterpart("crossover@seed_swap") == "crossover"
    assert matched_counterpart("crossover_numbers@seed_swap") == "crossover"
    assert matched_counterpart("crossover") is None  # the matched cell is not a donor arm


def test_the_mechanism_contrast_is_the_one_frozen_secondary_and_the_rest_exploratory(
        tmp_path: Path) -> None:
    from foreseen.credit.plan.study_folder import freeze_study_dir
    from foreseen.credit.studies.pipeline import default_forecaster, write_study_folder

    assert tox21_design.SECONDARY == ("delta_donor/probe/crossover@seed_swap/point_mae/itt",)
    built = paper_sized_build()
    design = Tox21Study().design(built, replicates=100, seed=None, repeats=None)
    assert design.analysis.secondary == tox21_design.SECONDARY
    exploratory = design.analysis.exploratory
    assert not set(exploratory) & set(design.analysis.secondary)
    assert {f"delta_desc/probe/{cid}/point_mae/itt" for cid in tox21_design.CARD_CONTEXTS} \
        <= set(exploratory)
    assert "delta_donor/probe/crossover_numbers@seed_swap/point_mae/itt" in exploratory
    # frozen: the plan's analysis configuration holds both lists before any call
    write_study_folder(tmp_path, built, built.build.explanations, design,
                       default_forecaster(design), commitment=None)
    frozen = freeze_study_dir(tmp_path).body["analysis"]
    assert frozen["secondary"] == list(tox21_design.SECONDARY)
    assert frozen["exploratory"] == list(exploratory)
