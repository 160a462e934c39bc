"""The controlled-learning study as a :class:`~foreseen.credit.studies.base.StudyDefinition`.

Design (credit §9, §10): contexts ``description``; for every offline
explainer ``matched_card``, ``donor_card@other_intervention`` and
``donor_card@seed_swap`` (the resolution check); ``matched_note`` for the
plain notes; explainers ``mechanism`` (positive control: knows the generating
mechanism), ``plain_note`` (the natural notes) and ``placebo`` (negative
control); 2 repeats; seed 20261129. An LLM explainer gets ``matched_card``,
``matched_note`` and ``donor_card@other_intervention``; one with ``propose =
true`` gets ``matched_card`` and ``matched_note`` on its own proposal states
only (:mod:`.proposals`: the proposal is executed; donor maps cover the
assigned states, so a proposing explainer is measured description vs matched).

Controlled follow-ups (docs/paper-parts.md): a seeded preselection of a
quarter of the states (30 of the paper's 120) is executed again with the
training budget doubled (:mod:`.followups`); the primary explainer's
matched-card prompt asks for the four-class effect change.

Gates: ``predictive_value`` on the plain notes (point-MAE Δ_desc and Δ_donor
with positive one-sided lower bounds; role ``primary``) and the same gate on the
mechanism explainer, reported beside it as the positive control (role
``control``). The primary explainer is ``plain_note``; ``mechanism`` and
``placebo`` are the declared controls (their contrasts are reported apart). A
run with LLM explainers gates the primary LLM explainer instead
(:mod:`foreseen.credit.studies.primary`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from foreseen.core.parallel import Executor
from foreseen.core.seeds import CREDIT_SEED
from foreseen.credit.analysis.config import AnalysisConfig
from foreseen.credit.analysis.gates import predictive_value_gate
from foreseen.credit.explainers.base import Proposal
from foreseen.credit.explainers.llm import ProposalState
from foreseen.credit.plan.followups import FollowupDesign
from foreseen.credit.plan.freeze import ExecutionConfig
from foreseen.credit.run.pipeline import StudySectionFile
from foreseen.credit.studies.base import (
    BuiltStudy,
    StudyCommand,
    StudyDefinition,
    StudyDesign,
    StudyParameter,
    StudySection,
    Verification,
)
from foreseen.credit.studies.controlled import proposals as proposing
from foreseen.credit.studies.controlled.commands import DEMO, SYNTHETIC_TRUTH
from foreseen.credit.studies.controlled.outcome_code import CODE_MODULES, LIBRARIES

#: the controlled follow-up (:mod:`.followups`), as the plan freezes it (kept here so
#: listing the study imports no build code)
FOLLOWUP_DEFINITION = ("the same task, seed, intervention and held-out evaluation set with"
                       " the training budget doubled (parent and child train on twice the"
                       " rows, at most the seed's 1000-row training pool)")

CARD_CONTEXTS: tuple[str, ...] = ("matched_card", "donor_card@other_intervention",
                                  "donor_card@seed_swap")
CONTEXTS: dict[str | None, tuple[str, ...]] = {
    None: ("description",),
    "mechanism": CARD_CONTEXTS,
    "plain_note": ("matched_card", "matched_note", *CARD_CONTEXTS[1:]),
    "placebo": CARD_CONTEXTS,
}
#: the build seed and the largest study (kept here so listing the study imports no build code)
DEFAULT_SEED = CREDIT_SEED
MAX_TASKS = 240
LLM_CONTEXTS: tuple[str, ...] = ("matched_card", "matched_note", "donor_card@other_intervention")
REPEATS = 2
#: the stand-in the study's gates judge, and its positive and negative controls
PRIMARY = "plain_note"
CONTROLS: tuple[str, ...] = ("mechanism", "placebo")
DEFAULT_TASKS = 24
BRIEF = (
    "Each task is a binary classification problem drawn from a synthetic generating "
    "mechanism; the parent is a logistic regression on the raw features, trained on the "
    "budgeted rows. The metric is the held-out log-loss on 4,000 rows nobody sees "
    "(controlled-learning study, brief version 1)."
)


def gates() -> tuple[dict[str, Any], ...]:
    """Primary gate on the natural notes; the mechanism positive control reported beside it."""
    primary = {**predictive_value_gate(PRIMARY), "role": "primary"}
    control = {**predictive_value_gate("mechanism"),
               "name": "predictive_value_mechanism_positive_control", "role": "control"}
    return primary, control


class ControlledStudy(StudyDefinition):
    """Synthetic mechanisms, scikit-learn recipes, offline explainers (see the module)."""

    name = "controlled"
    title = "controlled learning: synthetic mechanisms, scikit-learn recipes (192 states)"
    extra = "learn"
    offline_explainers = ("mechanism", "placebo", "plain_note")
    llm_brief = BRIEF

    def parameters(self) -> tuple[StudyParameter, ...]:
        return (StudyParameter("tasks", "int", DEFAULT_TASKS,
                               f"tasks in the study (1 to {MAX_TASKS}; 8 states each)"),)

    #: the modules whose source decides the outcomes (one list, shared with the build)
    outcome_modules = CODE_MODULES
    outcome_libraries = LIBRARIES

    def build(self, options: Mapping[str, Any], *, executor: Executor | None,
              cache: Path | None, outcomes: bool = True) -> BuiltStudy:
        from foreseen.credit.studies.controlled.build import build_controlled_study

        build = build_controlled_study(DEFAULT_SEED, n_tasks=int(options["tasks"]), cache=cache,
                                       executor=executor, outcomes=outcomes)
        return BuiltStudy(build)

    def execute_outcomes(self, built: BuiltStudy, options: Mapping[str, Any], *,
                         executor: Executor | None) -> BuiltStudy:
        from foreseen.credit.studies.controlled.build import (
            ControlledBuild,
            execute_study_outcomes,
        )

        if not isinstance(built.build, ControlledBuild):
            raise TypeError("controlled study: not a controlled build")
        return replace(built, build=execute_study_outcomes(built.build, executor))

    def outcome_seeds(self) -> dict[str, Any]:
        return {"build_seed": DEFAULT_SEED, "state_seeds": [0, 1]}

    def design(self, built: BuiltStudy, *, replicates: int, seed: int | None,
               repeats: int | None) -> StudyDesign:
        chosen = DEFAULT_SEED if seed is None else seed
        analysis = AnalysisConfig(replicates=replicates, gates=gates(),
                                  primary_explainer=PRIMARY, controls=CONTROLS)
        return StudyDesign(
            contexts=CONTEXTS, repeats=REPEATS if repeats is None else repeats, seed=chosen,
            analysis=analysis,
            execution=ExecutionConfig(concurrency=4, max_attempts=4, backoff_base_s=0.01,
                                      backoff_max_s=0.2),
            llm_contexts=LLM_CONTEXTS, followups=FollowupDesign(FOLLOWUP_DEFINITION).to_json())

    def followup_outcomes(self, built: BuiltStudy, selected: Sequence[str], *,
                          executor: Executor | None) -> dict[str, float]:
        from foreseen.credit.studies.controlled.followups import followup_outcomes

        return followup_outcomes(built.build.study, selected, executor)

    proposal_contexts = proposing.PROPOSAL_CONTEXTS

    def proposal_hook(self, explainer: str) -> ProposalState | None:
        return proposing.proposal_state(explainer)

    def with_proposals(self, built: BuiltStudy, proposals: Mapping[str, Mapping[str, Proposal]],
                       *, executor: Executor | None) -> tuple[BuiltStudy, dict[str, list[str]]]:
        extended, record = proposing.with_proposals(built, proposals, executor)
        return extended, {name: record.proposal_state_ids(name) for name in sorted(proposals)}

    def section(self, built: BuiltStudy, outcomes: Mapping[str, float],
                verification: Verification | None) -> StudySection | None:
        record = built.files.get(proposing.PROPOSALS_FILE)
        return None if record is None else proposing.proposal_section(
            proposing.ProposalsRecord.from_json(record), outcomes)

    def committed_section(self, body: Mapping[str, Any], folder: Path,
                          outcomes: Mapping[str, float]) -> StudySectionFile | None:
        return proposing.committed_section(body, folder, outcomes)

    def section_lines(self, name: str, data: Mapping[str, Any]) -> tuple[str, ...]:
        proposals = data.get("proposals")
        if name != proposing.SECTION or not isinstance(proposals, dict):
            return ()
        return tuple("proposals executed: " + proposing.proposal_line(name, counts)
                     .removeprefix("- ") for name, counts in sorted(proposals.items()))

    def commands(self) -> tuple[StudyCommand, ...]:
        return (SYNTHETIC_TRUTH,)

    shortcut = DEMO

    def verify(self, built: BuiltStudy, options: Mapping[str, Any], *, fraction: float,
               executor: Executor | None) -> Verification:
        from foreseen.credit.studies.controlled.build import verify_outcomes

        return verify_outcomes(built.build.study, built.build.outcomes,
                               fraction).verification()
