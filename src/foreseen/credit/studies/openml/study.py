"""The OpenML study as a :class:`~foreseen.credit.studies.base.StudyDefinition`.

Design (credit §9): the hash lottery draws 12 OpenML-CC18
classification and 12 OpenML-CTR23 regression datasets (distinct families)
from a mirror; each gets 3 label budgets × 2 seeds; a LightGBM parent and six
public changes. Contexts ``description``; for the ``probe`` explainer
``matched_card``, ``numeric``, ``prose``, ``donor_card@seed_swap`` and
``donor_card@cross_task`` (dropped, with the study's ``cross_task`` donor map,
when some task kind has fewer than two tasks: a cross-task donor needs another
task of the same kind); 2 repeats; seed 20261129; the lottery (index digest,
seed, ranking) frozen into the plan; analysis stratified by task kind with the
joint OpenML gate. The folder adds ``lottery.json`` and ``timings.json``.

**Direct-text pipeline** (``--pipeline direct_text``; credit §13, the
paper's direct-text follow-up on the same states): the forecaster is shown the
explainer's full note, not a card — contexts ``description`` and
``matched_note`` only, for the offline probe explainer and for any LLM
explainer (whose notes it writes from the public state; an elicited state's
note is its card written out as text). Note delivery is counted (delivered,
truncated, empty by reason: :mod:`foreseen.credit.studies.note_delivery`). No
gate: the declared secondary estimates are Δ_desc of ``matched_note`` on drift
and on the interval score (:func:`direct_text_analysis`); point MAE and the
drift reduction are exploratory. Same task-stratified bootstrap (by kind).
With an LLM explainer the secondary estimates move onto it
(:func:`foreseen.credit.studies.primary.with_primary_explainer`).

Report section: the re-draw statement, the lottery's picks, the share of
y = 0 per change and (when asked) the outcome re-execution.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from foreseen.core.errors import UserInputError
from foreseen.core.parallel import Executor
from foreseen.core.seeds import CREDIT_SEED
from foreseen.credit.analysis.config import AnalysisConfig
from foreseen.credit.plan.freeze import ExecutionConfig
from foreseen.credit.studies.base import (
    BuiltStudy,
    StudyCommand,
    StudyDefinition,
    StudyDesign,
    StudyParameter,
    StudySection,
    Verification,
)
from foreseen.credit.studies.openml.build import (
    DRAW_NOTE,
    EXPLAINER,
    OpenMLBuild,
    build_openml_study,
    execute_study_outcomes,
    verify_outcomes,
)
from foreseen.credit.studies.openml.commands import MIRROR
from foreseen.credit.studies.openml.gates import openml_joint_gate
from foreseen.credit.studies.openml.lottery import DEFAULT_QUOTAS
from foreseen.credit.studies.openml.pipeline import ROW_CAP
from foreseen.credit.studies.verification import zero_counts_json, zero_outcome_share

CONTEXTS: tuple[str, ...] = ("matched_card", "numeric", "prose", "donor_card@seed_swap",
                             "donor_card@cross_task")
LLM_CONTEXTS: tuple[str, ...] = ("matched_card", "donor_card@seed_swap")
#: the pipelines a run can choose (``--pipeline``)
PIPELINES: tuple[str, ...] = ("cards", "direct_text")
_EXECUTION = ExecutionConfig(concurrency=4, max_attempts=4, backoff_base_s=0.01,
                             backoff_max_s=0.2)
DIRECT_TEXT_CONTEXTS: tuple[str, ...] = ("matched_note",)
REPEATS = 2
DESIGN_SEED = CREDIT_SEED
BRIEF = (
    "Each task is one OpenML dataset (OpenML-CC18 classification or OpenML-CTR23 "
    "regression); the parent is a LightGBM model trained on a budgeted share of the "
    "training rows. The metric is held-out skill = 1 − loss / loss of the constant "
    "predictor, on rows nobody sees (OpenML study, brief version 1)."
)


def direct_text_analysis(replicates: int, explainer: str = EXPLAINER) -> AnalysisConfig:
    """The direct-text pipeline's analysis: task-stratified bootstrap by kind, no gate;
    secondary Δ_desc(drift) and Δ_desc(interval score) of ``matched_note``; exploratory
    Δ_desc(point MAE) and the drift reduction."""
    arm = f"{explainer}/matched_note"
    return AnalysisConfig(
        replicates=replicates, stratify_by_kind=True,
        secondary=(f"delta_desc/{arm}/drift/itt", f"delta_desc/{arm}/interval_score/itt"),
        exploratory=(f"delta_desc/{arm}/point_mae/itt", f"drift_reduction/{arm}/itt"))


def _pipeline(options: Mapping[str, Any]) -> str:
    pipeline = str(options.get("pipeline", "cards"))
    if pipeline not in PIPELINES:
        raise UserInputError(f"study openml: pipeline must be one of {', '.join(PIPELINES)};"
                             f" got {pipeline!r}")
    return pipeline


def _native(built: BuiltStudy) -> OpenMLBuild:
    native = built.native
    if not isinstance(native, OpenMLBuild):
        raise TypeError("not an OpenML build")
    return native


def _without_cross_task(build: OpenMLBuild) -> OpenMLBuild:
    """Drop the cross-task donor map when some task kind has fewer than two tasks."""
    kinds: dict[str, int] = {}
    for task in build.build.study.tasks:
        kinds[task.kind] = kinds.get(task.kind, 0) + 1
    study = build.build.study
    if min(kinds.values(), default=0) >= 2 or "cross_task" not in study.donor_maps:
        return build
    maps = tuple(m for m in study.donor_maps if m != "cross_task")
    return replace(build, build=replace(build.build, study=replace(study, donor_maps=maps)))


class OpenMLStudy(StudyDefinition):
    """The OpenML lottery, LightGBM recipes and the probe explainer."""

    name = "openml"
    title = "OpenML: a hash lottery of CC18/CTR23 datasets, LightGBM recipes (144 states)"
    extra = "tabular"
    offline_explainers = (EXPLAINER,)
    llm_brief = BRIEF

    def commands(self) -> tuple[StudyCommand, ...]:
        return (MIRROR,)

    def parameters(self) -> tuple[StudyParameter, ...]:
        return (
            StudyParameter("mirror", "path", None,
                           "OpenML mirror folder (default: $FORESEEN_OPENML_MIRROR, else the "
                           "mirror shipped with foreseen)"),
            StudyParameter("row_cap", "int", ROW_CAP, "rows used per dataset at most"),
            StudyParameter("classification", "int", DEFAULT_QUOTAS["OpenML-CC18"],
                           "OpenML-CC18 datasets the lottery draws"),
            StudyParameter("regression", "int", DEFAULT_QUOTAS["OpenML-CTR23"],
                           "OpenML-CTR23 datasets the lottery draws"),
            StudyParameter("pipeline", "str", "cards",
                           "cards (the source study) or direct_text (the explainer's full "
                           "note vs description)"),
        )

    #: the outcome pipeline's code (:data:`foreseen.credit.studies.openml.build.PIPELINE_MODULES`)
    outcome_modules = ("foreseen.credit.studies.openml.mirror",
                       "foreseen.credit.studies.openml.pipeline",
                       "foreseen.credit.studies.openml.build")
    outcome_libraries = ("numpy", "pandas", "lightgbm")

    def outcome_seeds(self) -> dict[str, Any]:
        from foreseen.credit.studies.openml.build import BUILD_SEED
        from foreseen.credit.studies.openml.lottery import LOTTERY_SEED
        from foreseen.credit.studies.openml.pipeline import SEEDS

        return {"lottery_seed": LOTTERY_SEED, "build_seed": BUILD_SEED,
                "state_seeds": list(SEEDS)}

    def execute_outcomes(self, built: BuiltStudy, options: Mapping[str, Any], *,
                         executor: Executor | None) -> BuiltStudy:
        native = execute_study_outcomes(_native(built), executor)
        return replace(built, build=native.build, native=native)

    def with_outcomes(self, built: BuiltStudy, outcomes: Mapping[str, float]) -> BuiltStudy:
        done = super().with_outcomes(built, outcomes)
        return replace(done, native=replace(_native(built), build=done.build))

    def build(self, options: Mapping[str, Any], *, executor: Executor | None,
              cache: Path | None, outcomes: bool = True) -> BuiltStudy:
        pipeline = _pipeline(options)
        quotas = {"OpenML-CC18": int(options["classification"]),
                  "OpenML-CTR23": int(options["regression"])}
        native = _without_cross_task(build_openml_study(
            options["mirror"], executor=executor, cache=cache, quotas=quotas,
            row_cap=int(options["row_cap"]), outcomes=outcomes))
        native = replace(native, pipeline=pipeline)
        files = {"lottery.json": native.lottery.to_json(), "timings.json": native.timings()}
        picks = ", ".join(f"{e.name} ({e.suite})" for e in native.lottery.picks)
        return BuiltStudy(native.build, files, False, (f"lottery picks: {picks}",), native)

    def design(self, built: BuiltStudy, *, replicates: int, seed: int | None,
               repeats: int | None) -> StudyDesign:
        native = _native(built)
        if native.pipeline == "direct_text":
            return StudyDesign(
                contexts={None: ("description",), EXPLAINER: DIRECT_TEXT_CONTEXTS},
                repeats=REPEATS if repeats is None else repeats,
                seed=DESIGN_SEED if seed is None else seed,
                analysis=direct_text_analysis(replicates), execution=_EXECUTION,
                llm_contexts=DIRECT_TEXT_CONTEXTS, lottery=native.lottery.to_json(),
                note_delivery=True)
        maps = set(native.build.study.donor_maps)
        contexts = tuple(c for c in CONTEXTS if "@" not in c or c.partition("@")[2] in maps)
        analysis = AnalysisConfig(replicates=replicates, stratify_by_kind=True,
                                  gates=(openml_joint_gate(explainer=EXPLAINER),))
        return StudyDesign(
            contexts={None: ("description",), EXPLAINER: contexts},
            repeats=REPEATS if repeats is None else repeats,
            seed=DESIGN_SEED if seed is None else seed, analysis=analysis,
            execution=_EXECUTION,
            llm_contexts=LLM_CONTEXTS, lottery=native.lottery.to_json())

    def verify(self, built: BuiltStudy, options: Mapping[str, Any], *, fraction: float,
               executor: Executor | None) -> Verification:
        return verify_outcomes(_native(built), fraction, executor=executor).verification()

    def section(self, built: BuiltStudy, outcomes: Mapping[str, float],
                verification: Verification | None) -> StudySection:
        native = _native(built)
        data: dict[str, Any] = {
            "draw": DRAW_NOTE,
            "lottery_seed": native.lottery.lottery_seed,
            "mirror_index_sha256": native.lottery.index_sha256,
            "picks": [{"suite": e.suite, "name": e.name, "family": e.family}
                      for e in native.lottery.picks],
            "zero_outcome_share": zero_counts_json(zero_outcome_share(native.build.study,
                                                                      native.build.outcomes)),
            "verify_outcomes": (dict(verification.record) if verification is not None else
                                {"value": None, "reason": "not requested"}),
            "task_scaled_mae": "reported per context under metrics (scale max(mean |y| of the "
                               "task, 0.01))",
        }
        if native.pipeline != "cards":
            data["pipeline"] = native.pipeline
        return StudySection("openml_study", data, _markdown(data))


def _markdown(section: Mapping[str, Any]) -> str:
    lines = ["# OpenML study", "", f"This is {section['draw']}.", "",
             *((["Direct-text pipeline: the forecaster is shown the explainer's full note "
                 "(matched_note) or nothing (description); no gate, drift and interval score"
                 " are the declared secondary estimates.", ""])
               if section.get("pipeline") == "direct_text" else []),
             f"Lottery seed {section['lottery_seed']}; mirror index sha256 "
             f"{section['mirror_index_sha256']}.", "",
             "Picks: " + ", ".join(f"{p['name']} ({p['suite']})" for p in section["picks"]),
             "", "| change | states | y = 0 | share |", "|---|---|---|---|"]
    for change, row in section["zero_outcome_share"].items():
        share = "—" if row["share"] is None else f"{row['share']:.3f}"
        lines.append(f"| {change} | {row['states']} | {row['zero']} | {share} |")
    verification = section["verify_outcomes"]
    if verification.get("value", True) is None:
        lines += ["", f"Outcome re-execution: not run ({verification['reason']})."]
    else:
        lines += ["", f"Outcome re-execution: {verification['reproduced']}/"
                      f"{verification['checked']} states reproduced bit for bit "
                      f"({'ok' if verification['ok'] else 'MISMATCH'})."]
    return "\n".join(lines) + "\n\n"
