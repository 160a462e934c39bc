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
from support.http import KEY, KEY_ENV

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


def _llm(propose: bool) -> Any:
    from foreseen.credit.studies.pipeline import BackendSpec, ExplainerSpec

    options = {"model": "gpt-test", "api_key_env": KEY_ENV, "max_tokens": 300,
               "timeout_s": 5, "base_url": "http://127.0.0.1:9/v1", "temperature": 1.0,
               "pricing": {"gpt-test": {"input_per_mtok": 3.0, "output_per_mtok": 15.0}}}
    return ExplainerSpec("llm", BackendSpec("openai_compatible", options), propose=propose)


@pytest.mark.parametrize("propose,judged", [(False, "llm"), (True, "plain_note")])
def test_the_dry_run_counts_the_judged_explainer_s_followups(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, propose: bool, judged: str) -> None:
    """A primary LLM explainer's follow-ups are bounded like its other slots (its card does
    not exist yet); a proposing one hands them to the study's own primary, as the run does."""
    monkeypatch.setenv(KEY_ENV, KEY)
    built = paper_sized_build()
    settings = StudySettings(replicates=100, explainers=(_llm(propose),))
    estimate = estimate_study(ControlledStudy(), built, settings, tmp_path / "dry")
    followups = {g.context: g for g in estimate.groups if g.context.endswith("|followup")}
    assert set(followups) == {f"{judged}|followup"}
    assert followups[f"{judged}|followup"].calls == 30
    if judged == "llm":  # bounded by the description + the allowance + the question
        matched = next(g for g in estimate.groups if g.context == "llm|matched_card")
        assert followups["llm|followup"].token_bound / 30 > matched.token_bound / 240
