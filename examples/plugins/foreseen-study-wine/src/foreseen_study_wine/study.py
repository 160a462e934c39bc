"""The wine study's definition: what foreseen calls (``foreseen.credit.studies.api``).

Importing this module is cheap (foreseen lists every installed study); the
experiment (scikit-learn) is imported only when the study is built.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from foreseen.credit.studies.api import (
    AnalysisConfig,
    BuiltStudy,
    Card,
    Direction,
    ExecutionConfig,
    Explanation,
    Intervention,
    Outcome,
    State,
    Study,
    StudyBuild,
    StudyDefinition,
    StudyDesign,
    StudyParameter,
    Target,
    Task,
    Verification,
    predictive_value_gate,
    render_card,
)

EXPLAINER = "probe"
CONTEXTS: dict[str | None, tuple[str, ...]] = {
    None: ("description",),
    EXPLAINER: ("matched_card", "donor_card@seed_swap", "donor_card@other_intervention"),
}
DESIGN_SEED = 7
REPEATS = 2
BRIEF = ("Each task is a feature subset of scikit-learn's wine data; the parent is a"
         " logistic regression trained on a budgeted share of the training rows. The"
         " metric is the held-out log-loss on rows nobody sees (wine study, brief"
         " version 1).")


def _state(task_index: int, task: str, budget_index: int, budget: int, k: int, change: str,
           seed: int) -> State:
    from foreseen_study_wine.experiment import public_part

    cell = f"{task}/b{budget}/{change}"
    return State(id=f"{cell}/s{seed}", task_id=task, cell=cell, seed=seed,
                 budget=float(budget), budget_index=budget_index, intervention_id=change,
                 condition="ordinary" if k == 0 else "elicited",
                 public=public_part(task, budget, seed))


def public_study() -> Study:
    """Every state and its public part; no outcome is computed."""
    from foreseen_study_wine.experiment import BUDGETS, CHANGES, SEEDS, TASKS

    changes = list(CHANGES)
    states = [_state(i, task, b, budget, k, changes[(i + b + k) % len(changes)], seed)
              for i, task in enumerate(TASKS) for b, budget in enumerate(BUDGETS)
              for k in (0, 1) for seed in SEEDS]
    return Study(
        name="wine", version="1", metric="log_loss", higher_is_better=False,
        tasks=tuple(Task(task, "classification", "wine") for task in TASKS),
        interventions=tuple(Intervention(cid, name, text)
                            for cid, (name, text) in CHANGES.items()),
        states=tuple(states), donor_maps=("seed_swap", "other_intervention"),
        notes={"outcome": "y = held-out log-loss(parent) − log-loss(child); y > 0 helps"})


def probe_explanations(study: Study) -> dict[str, Explanation]:
    """The offline explainer: a card from the change's effect on a validation split of the
    state's own training rows (never the held-out rows)."""
    from foreseen_study_wine.experiment import probe_estimate

    result = {}
    for state in study.states:
        estimate = probe_estimate(state.task_id, int(state.budget), state.intervention_id,
                                  state.seed)
        half = max(abs(estimate), 0.01)
        direction: Direction = ("improve" if estimate > 0.005 else "worsen"
                                 if estimate < -0.005 else "no_change")
        card = Card(direction=direction, target=Target(
            point=estimate, intervals=((round(estimate - half, 4), round(estimate + half, 4)),)),
            observable="held-out log-loss of the child against the parent",
            falsification="the child's held-out log-loss moves against the stated direction")
        result[state.id] = Explanation(state.id, "probe", "probe/v1", render_card(card), card)
    return result


def executed_outcomes(study: Study) -> tuple[Outcome, ...]:
    """Every state's outcome, executed (the code a prospective plan commits to)."""
    from foreseen_study_wine.experiment import outcome

    return tuple(Outcome(s.id, outcome(s.task_id, int(s.budget), s.intervention_id, s.seed))
                 for s in study.states)


class WineStudy(StudyDefinition):
    """scikit-learn models on the wine data: a small study, seconds to build."""

    name = "wine"
    title = "wine: scikit-learn models on the wine data (48 states)"
    extra = "learn"
    offline_explainers = (EXPLAINER,)
    llm_brief = BRIEF
    outcome_modules = ("foreseen_study_wine.experiment",)
    outcome_libraries = ("scikit-learn",)

    def parameters(self) -> tuple[StudyParameter, ...]:
        return ()

    def build(self, options: Mapping[str, Any], *, executor: Any, cache: Path | None,
              outcomes: bool = True) -> BuiltStudy:
        study = public_study()
        build = StudyBuild(study, executed_outcomes(study) if outcomes else (),
                           {EXPLAINER: probe_explanations(study)})
        return BuiltStudy(build, summary_lines=(f"{len(study.states)} states built",))

    def execute_outcomes(self, built: BuiltStudy, options: Mapping[str, Any], *,
                         executor: Any) -> BuiltStudy:
        outcomes = executed_outcomes(built.build.study)
        return replace(built, build=replace(built.build, outcomes=outcomes))

    def outcome_seeds(self) -> dict[str, Any]:
        from foreseen_study_wine.experiment import SEEDS, SPLIT_SEED

        return {"split_seed": SPLIT_SEED, "state_seeds": list(SEEDS)}

    def design(self, built: BuiltStudy, *, replicates: int, seed: int | None,
               repeats: int | None) -> StudyDesign:
        gate = predictive_value_gate(EXPLAINER, "matched_card", "donor_card@other_intervention")
        return StudyDesign(
            contexts=CONTEXTS, repeats=REPEATS if repeats is None else repeats,
            seed=DESIGN_SEED if seed is None else seed,
            analysis=AnalysisConfig(replicates=replicates, gates=(gate,)),
            execution=ExecutionConfig(), llm_contexts=CONTEXTS[EXPLAINER])

    def verify(self, built: BuiltStudy, options: Mapping[str, Any], *, fraction: float,
               executor: Any) -> Verification:
        """Re-execute every k-th state (k = 1 / fraction), refitting every model, and
        compare bit for bit."""
        from foreseen_study_wine.experiment import outcome

        step = max(1, round(1 / fraction))
        study = built.build.study
        chosen = study.states[::step]
        sealed = built.build.outcome_map()
        same = [s.id for s in chosen if float(outcome(
            s.task_id, int(s.budget), s.intervention_id, s.seed, fresh=True)).hex() == float(
            sealed[s.id]).hex()]
        return Verification(len(chosen), len(same), len(same) == len(chosen),
                            {"checked": len(chosen), "reproduced": len(same)})
