"""The Tox21 study as a :class:`~foreseen.credit.studies.base.StudyDefinition`.

Design (credit §9, §13): 12 endpoints × 3 nested label budgets × 2 seeds =
72 states, all elicited (the probe explainer writes six-field cards). Contexts
``description`` and seven card contexts — the paper's component crossover,
two forecasts each: 72 × 8 × 2 = 1,152 calls at the paper's size
(:data:`CARD_CONTEXTS`):

1. ``matched_card`` — the full card (primary, harm gate);
2. ``donor_card@seed_swap`` — the other seed's full card (primary, harm gate);
3. ``numeric`` — the card's numbers only (the paper's numbers-only arm);
4. ``prose`` — its screened mechanism prose only;
5. ``crossover`` — its own numbers + its own screened prose;
6. ``crossover@seed_swap`` — its own numbers + the donor's screened prose;
7. ``crossover_numbers@seed_swap`` — the donor's numbers + its own screened prose.

**Why these seven.** The paper names the full card, the numbers-only arm and
the screened-mechanism prose at fixed numbers (donor and matched), and says the
crossover "tests numerical targets and mechanism text" with seven
card-versus-description contrasts; the seventh is not named in the text that
survives. We take the cell that makes it a crossover in both components:
numbers swapped at fixed (own) mechanism prose, the mirror of the mechanism
swapped at fixed numbers. With it the two components are crossed
(own/donor numbers × own/donor screened prose, the donor × donor cell being
the donor's full card) and each component has a donor-minus-matched contrast
against the same matched cell ``crossover``.

**What is frozen.** The one declared secondary contrast is the paper's
fixed-number mechanism contrast, Δ_donor of ``crossover@seed_swap`` on point MAE
(donor minus matched screened prose at the state's own numbers; :data:`SECONDARY`),
frozen in the plan before any call. The seven card-versus-description contrasts
(point MAE and drift) and the numbers-swap contrast are named exploratory
(:data:`EXPLORATORY`): reported in their own table, unadjusted for multiplicity,
never gated. 2 repeats; seed 20261129. The gate is
the Tox21 harm gate (primary loss: the ROC-AUC interval score). The declared
sensitivity analysis is the paper's hierarchical bootstrap: endpoint → budget
cell → seed (``HIERARCHY``; each contrast carries its hierarchical interval
beside the primary task-cluster one).
An LLM explainer's cards get the same seven card contexts, and the frozen secondary
contrast and the exploratory ones move onto it (the probe's stay exploratory). The study
folder adds ``build.json`` (outcome-free diagnostics: unparseable SMILES, splits,
convergence, per-state seconds).

Report section (after the reveal): seed noise — for every cell, whether its
two seeds' outcomes share the sign and their gap, summarised as the share of
agreeing pairs and the median gap (the noise floor a point forecast cannot
beat) — and the share of y = 0 per change.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from foreseen.core.parallel import Executor
from foreseen.core.seeds import CREDIT_SEED
from foreseen.credit.analysis.config import AnalysisConfig
from foreseen.credit.analysis.gates import replication_gate
from foreseen.credit.model import Outcome
from foreseen.credit.plan.freeze import ExecutionConfig
from foreseen.credit.studies.base import (
    BuiltStudy,
    StudyDefinition,
    StudyDesign,
    StudyParameter,
    StudySection,
    Verification,
)
from foreseen.credit.studies.tox21.data import ENDPOINTS
from foreseen.credit.studies.tox21.gates import tox21_harm_gate
from foreseen.credit.studies.tox21.outcome_code import CODE_MODULES, LIBRARIES
from foreseen.credit.studies.verification import zero_counts_json, zero_outcome_share

DESIGN_SEED = CREDIT_SEED
#: the declared hierarchical bootstrap sensitivity: endpoint (task) → budget cell → seed
HIERARCHY: tuple[str, ...] = ("task", "cell", "seed")
REPEATS = 2
MINIMUM_TASKS = 6
#: the primary contexts (the harm gate) and the rest of the component crossover
PRIMARY_CONTEXTS: tuple[str, ...] = ("matched_card", "donor_card@seed_swap")
CROSSOVER_CONTEXTS: tuple[str, ...] = ("numeric", "prose", "crossover",
                                       "crossover@seed_swap", "crossover_numbers@seed_swap")
#: the seven card contexts of the crossover (each forecast beside ``description``)
CARD_CONTEXTS: tuple[str, ...] = (*PRIMARY_CONTEXTS, *CROSSOVER_CONTEXTS)
CONTEXTS: dict[str | None, tuple[str, ...]] = {
    None: ("description",), "probe": CARD_CONTEXTS}
#: the one frozen secondary contrast: screened mechanism prose, donor minus matched, at the
#: state's own numbers, on point MAE (the paper's fixed-number mechanism contrast)
MECHANISM_CONTRAST = "delta_donor/probe/crossover@seed_swap/point_mae/itt"
SECONDARY: tuple[str, ...] = (MECHANISM_CONTRAST,)
#: exploratory and unadjusted: every card context against description on point MAE and
#: drift, and the numbers swapped at fixed mechanism prose
EXPLORATORY: tuple[str, ...] = (
    *(f"delta_desc/probe/{cid}/{loss}/itt" for loss in ("point_mae", "drift")
      for cid in CARD_CONTEXTS),
    "delta_donor/probe/crossover_numbers@seed_swap/point_mae/itt",
)
#: an LLM explainer's cards go through the whole crossover (the paper's crossover reused
#: the source cards); its estimates become the secondary and exploratory ones
LLM_CONTEXTS: tuple[str, ...] = CARD_CONTEXTS
BRIEF = (
    "Each task is one Tox21 assay endpoint (MoleculeNet's Tox21): the parent is an "
    "L2 logistic regression on 2048-bit Morgan fingerprints (radius 2), trained on a "
    "budgeted share of the training labels. The metric is ROC AUC on a held-out set of "
    "molecules nobody sees (Tox21 study, brief version 1)."
)


def _data(options: Mapping[str, Any]) -> str | None:
    data = options.get("data")
    return None if data is None else str(data)


class Tox21Study(StudyDefinition):
    """MoleculeNet's Tox21 with RDKit features and logistic-regression recipes."""

    name = "tox21"
    title = "Tox21: 12 assay endpoints, RDKit features, logistic regression (72 states)"
    extra = "chem"
    offline_explainers = ("probe",)
    llm_brief = BRIEF

    def parameters(self) -> tuple[StudyParameter, ...]:
        return (
            StudyParameter("endpoints", "str_list", tuple(ENDPOINTS),
                           "assay endpoints to include (default: all 12)"),
            StudyParameter("data", "path", None,
                           "tox21.csv.gz to read (default: the shipped copy; SHA-256 checked)"),
        )

    #: the modules whose source decides the outcomes (one list, shared with the build)
    outcome_modules = CODE_MODULES
    outcome_libraries = LIBRARIES

    def outcome_seeds(self) -> dict[str, Any]:
        from foreseen.credit.studies.tox21.data import SEEDS, SPLIT_SEED

        return {"split_seed": SPLIT_SEED, "state_seeds": list(SEEDS)}

    def execute_outcomes(self, built: BuiltStudy, options: Mapping[str, Any], *,
                         executor: Executor | None) -> BuiltStudy:
        from foreseen.credit.studies.tox21.build import execute_study_outcomes

        return replace(built, build=execute_study_outcomes(built.build, executor=executor,
                                                           data_path=_data(options)))

    def build(self, options: Mapping[str, Any], *, executor: Executor | None,
              cache: Path | None, outcomes: bool = True) -> BuiltStudy:
        from foreseen.credit.studies.tox21.build import build_tox21

        built = build_tox21(tuple(options["endpoints"]), executor=executor, cache=cache,
                            data_path=_data(options), outcomes=outcomes)
        diagnostics = built.diagnostics()
        return BuiltStudy(built.build, {"build.json": diagnostics.to_json()}, built.from_cache,
                          diagnostics.summary_lines())

    def design(self, built: BuiltStudy, *, replicates: int, seed: int | None,
               repeats: int | None) -> StudyDesign:
        analysis = AnalysisConfig(replicates=replicates, gates=(tox21_harm_gate(),),
                                  minimum_tasks=MINIMUM_TASKS, hierarchical=HIERARCHY,
                                  secondary=SECONDARY, exploratory=EXPLORATORY)
        return StudyDesign(
            contexts=CONTEXTS, repeats=REPEATS if repeats is None else repeats,
            seed=DESIGN_SEED if seed is None else seed, analysis=analysis,
            execution=ExecutionConfig(), llm_contexts=LLM_CONTEXTS)

    def replication_gate(self, design: StudyDesign) -> dict[str, Any]:
        """The paper's replication gate (signs of the interval-score and point-MAE Δ_desc and
        the interval-score Δ_donor agree; Δ_donor's 90 % interval inside ±0.005)."""
        return replication_gate("probe")

    def verify(self, built: BuiltStudy, options: Mapping[str, Any], *, fraction: float,
               executor: Executor | None) -> Verification:
        from foreseen.credit.studies.tox21.build import verify_outcomes

        return verify_outcomes(built.build.study, built.build.outcomes, fraction,
                               data_path=_data(options)).verification()

    def section(self, built: BuiltStudy, outcomes: Mapping[str, float],
                verification: Verification | None) -> StudySection:
        from foreseen.credit.studies.tox21.seed_noise import seed_pair_summary

        study = built.build.study
        noise = seed_pair_summary(study, outcomes)
        zeros = zero_outcome_share(study, [Outcome(sid, y) for sid, y in sorted(outcomes.items())])
        data: dict[str, Any] = {
            "seed_noise": noise.to_json(), "zero_outcome_share": zero_counts_json(zeros),
            "verify_outcomes": (dict(verification.record) if verification is not None else
                                {"value": None, "reason": "not requested"}),
        }
        lines = ["# Tox21 study", "",
                 "Seed noise: the two seeds of a cell share the sign of y in "
                 f"{noise.same_sign} of {noise.pairs} pairs; median seed gap "
                 f"{_number(noise.median_seed_gap)}. A point forecast cannot be "
                 "expected to err less than this gap; compare it with the matched card's "
                 "point MAE in the metrics below.", "",
                 "| change | states | y = 0 |", "|---|---|---|"]
        lines += [f"| {cid} | {row.states} | {row.zero} |" for cid, row in zeros.items()]
        if verification is not None:
            lines += ["", f"Outcome re-execution: {verification.reproduced}/"
                          f"{verification.checked} states reproduced bit for bit "
                          f"({'ok' if verification.ok else 'MISMATCH'})."]
        return StudySection("tox21_study", data, "\n".join(lines) + "\n\n")


def _number(value: Any) -> str:
    return "—" if value is None else f"{float(value):.4f}"
