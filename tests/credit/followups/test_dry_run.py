"""The dry run counts the follow-up calls: 30 at the paper's 120 controlled states.

The study is a synthetic stand-in with the controlled study's shape (15 tasks × 2 budgets
× 2 interventions × 2 seeds = 120 states, a card per state for each offline explainer), so
no model is trained; the follow-ups' outcomes are never executed by a dry run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from foreseen.credit.cards.render import extract_card
from foreseen.credit.model import Explanation, Outcome
from foreseen.credit.studies.base import BuiltStudy, StudyBuild
from foreseen.credit.studies.controlled.study import CONTEXTS, ControlledStudy
from foreseen.credit.studies.estimate import estimate_lines, estimate_study
from foreseen.credit.studies.pipeline import StudySettings

from support.cards_study import make_study

NOTE = ("Adding squared features should improve accuracy by about 0.013, because the boundary "
        "is curved. We should see a lower training loss. The benefit should be largest at the "
        "smallest budget. If the loss stays flat, the story is wrong. Without the change, the "
        "model underfits.")


def paper_sized_build() -> BuiltStudy:
    study = make_study(n_tasks=15, budgets=2, seeds=2, interventions_per_budget=2)
    cards = {s.id: Explanation(s.id, "elicited", "stand-in", note=NOTE, card=extract_card(NOTE))
             for s in study.states}
    outcomes = tuple(Outcome(s.id, -0.3 - 0.001 * i) for i, s in enumerate(study.states))
    return BuiltStudy(StudyBuild(study, outcomes, {name: dict(cards) for name in
                                                   ("mechanism", "plain_note", "placebo")}))


def test_the_dry_run_counts_30_followup_calls_at_the_paper_s_size(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> dict[str, float]:
        raise AssertionError("a dry run executes no follow-up")

    monkeypatch.setattr(ControlledStudy, "followup_outcomes", refuse)
    built = paper_sized_build()
    assert len(built.build.study.states) == 120
    estimate = estimate_study(ControlledStudy(), built, StudySettings(replicates=100),
                              tmp_path / "dry")
    per_context = {g.context: g.calls for g in estimate.groups if g.role == "forecaster"}
    assert per_context["plain_note|followup"] == 30
    forecasts = 120 * sum(len(cids) for cids in CONTEXTS.values()) * 2
    assert estimate.slots == estimate.calls == forecasts + 30 == 2670
    assert any("plain_note|followup" in line and " 30 " in line
               for line in estimate_lines(estimate))
