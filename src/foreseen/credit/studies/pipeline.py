"""Run any study end to end: build → explain → seal → freeze → run → reveal → calibrate → report.

:func:`run_study` does, into one folder ``out``:

1. **build** the study (models trained for real; cached with ``cache``);
2. **explain**: the study's offline explainers come with the build; each
   configured LLM explainer (:class:`ExplainerSpec`) writes explanations
   through the one :class:`~foreseen.credit.explainers.llm.LLMExplainer` from
   the public study only, with the study's brief. A finished explainer run
   is kept in ``explainers/<name>.json`` and reused by a rerun with the same
   configuration (a paid call is never repeated). An explainer with
   ``propose = true`` on a study that executes proposals (the controlled
   study, :mod:`foreseen.credit.studies.controlled.proposals`) explains its
   own proposal states ``…~<name>``; they join the study (their outcomes
   executed now in a sealed-file run, with the others after the forecasts in
   a prospective run), the explainer's contexts (the study's
   ``proposal_contexts``) cover them only (``scopes`` in ``design.json``) and
   the plan commits to ``proposals.json`` by digest (``committed_files``).
   With LLM explainers the gates judge the **primary explainer** (the
   configuration's ``primary_explainer``, else the first LLM explainer), and
   the stand-ins' gates are kept as machinery checks
   (:mod:`foreseen.credit.studies.primary`);
3. **seal and freeze**: the study folder files — ``study.json``,
   ``explanations.json``, ``outcomes.sealed.json`` (committed by digest),
   ``design.json`` and the study's own public files — are staged, and the
   plan is frozen from them exactly as ``foreseen credit plan DIR`` would.
   When ``out`` already holds a ``plan.json`` with the **same plan id**, the
   run is **resumed** (its ledger continues; nothing is paid twice). Otherwise
   a previous run's files move to ``out/previous/<n>/`` (never deleted). The
   **leak check** (:mod:`foreseen.credit.plan.leak`) freezes the staged folder
   again with a seeded permutation of the outcomes and writes whether only the
   commitment changed to ``leak_check.json`` (shown in the report);
4. **run** the plan's slots into ``ledger.jsonl``, **reveal** the sealed
   outcomes (digest checked), freeze and run the post-outcome known-signal
   child plan (``signal_plan.json``, ``signal_ledger.jsonl``);
5. **section**: the study's extra report section (``study_section.json``);
6. **analyse** into ``report.json`` and ``report.md`` (a pure function of the
   plan, the ledgers, the revealed outcomes and the section file, so
   ``foreseen credit analyze`` on the folder reproduces it).

**Prospective** (``StudySettings.prospective``, as in the paper): step 1 builds
the public part only (``build(..., outcomes=False)``: states and offline
explanations, no outcome computed or cached); step 3 writes no outcome file —
the plan commits to the outcome-execution code digest and inputs
(:func:`prospective_commitment`) — and the leak check says no outcome existed;
in step 4, only after every slot has its result, the study's
``execute_outcomes`` runs, the sealed file is written and the ledger records
``outcomes_executed`` (:mod:`foreseen.credit.run.prospective`); then the
reveal, the known-signal child plan and a requested outcome re-execution
(``verify_fraction``) follow.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from foreseen.core.digest import canonical_json, write_bytes_atomic, write_json_atomic
from foreseen.core.errors import ConfigError, UserInputError
from foreseen.core.extras import require_extra
from foreseen.core.parallel import Executor
from foreseen.credit.analysis.report import CreditReport
from foreseen.credit.backends.base import Backend
from foreseen.credit.backends.registry import build_backend
from foreseen.credit.explainers.base import ExplainerRun, Proposal
from foreseen.credit.explainers.llm import LLMExplainer
from foreseen.credit.model import Explanation
from foreseen.credit.plan.freeze import (
    FrozenPlan,
    load_plan,
    outcome_execution_commitment,
    write_outcomes,
    write_plan,
)
from foreseen.credit.plan.leak import leak_check
from foreseen.credit.plan.study_folder import freeze_study_dir
from foreseen.credit.run.calibrated import (
    SEALED_OUTCOMES,
    archive_previous_run,
    run_with_signal_plan,
)
from foreseen.credit.run.faults import FaultInjectingBackend
from foreseen.credit.run.pipeline import LEAK_CHECK_FILE, STUDY_SECTION_FILE, analyze_run
from foreseen.credit.run.reference import REFERENCE_REPORT, read_reference_run
from foreseen.credit.studies.base import BuiltStudy, StudyDefinition, StudyDesign, Verification
from foreseen.credit.studies.followup_outcomes import (
    sealed_followups,
    sealed_values,
    verify_followups,
    with_judged_explainer,
)
from foreseen.credit.studies.note_delivery import with_note_delivery
from foreseen.credit.studies.primary import primary_explainer_of, with_primary_explainer
from foreseen.credit.studies.registry import committed_study_section

STUDY_FILES: tuple[str, ...] = ("study.json", "explanations.json", "design.json",
                                SEALED_OUTCOMES)
EXPLAINERS_FOLDER = "explainers"
STAGING = ".staging"


@dataclass(frozen=True)
class BackendSpec:
    """A registered backend name and its options (a plan's forecaster block)."""

    backend: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The ``forecaster`` block of ``design.json`` (and of the frozen plan)."""
        return {"factory": self.backend, "options": dict(self.options)}


@dataclass(frozen=True)
class ExplainerSpec:
    """An LLM explainer to run on the study: its plan name, backend and behaviour."""

    name: str
    backend: BackendSpec
    propose: bool = False
    extractor: str = "llm"
    concurrency: int = 4
    max_attempts: int = 4


@dataclass(frozen=True)
class StudySettings:
    """Everything a study run can be told (the run configuration file maps onto this)."""

    options: Mapping[str, Any] = field(default_factory=dict)
    forecaster: BackendSpec | None = None
    explainers: tuple[ExplainerSpec, ...] = ()
    replicates: int = 10_000
    seed: int | None = None
    #: the analysis's bootstrap seed and interval method (None: the study's design's)
    bootstrap_seed: int | None = None
    interval_method: str | None = None
    repeats: int | None = None
    cache: Path | None = None
    verify_fraction: float | None = None
    inject_faults: int | None = None
    concurrency: int | None = None
    budget_usd: float | None = None
    accept_failures: bool = False
    reference_run: Path | None = None
    prospective: bool = False
    #: the explainer the gates judge (:mod:`foreseen.credit.studies.primary`)
    primary_explainer: str | None = None
    #: forecast calls through the provider's batch API (:mod:`foreseen.credit.run.batch`)
    batch: bool = False


@dataclass(frozen=True)
class StudyRunResult:
    """What a study run did and where its report is."""

    study: str
    folder: Path
    plan: FrozenPlan
    report: CreditReport
    slots: int
    resumed: bool
    built: BuiltStudy
    explainer_runs: Mapping[str, ExplainerRun]
    verification: Verification | None
    seconds: float


def study_design(definition: StudyDefinition, built: BuiltStudy, settings: StudySettings
                 ) -> StudyDesign:
    """The study's design for a run with ``settings``: the study decides it from the run's
    ``replicates``, ``seed`` and ``repeats``; a ``bootstrap_seed`` or ``interval_method`` the
    run names then replaces the design's (the plan's analysis resampling, one name each)."""
    design = definition.design(built, replicates=settings.replicates, seed=settings.seed,
                               repeats=settings.repeats)
    analysis = design.analysis
    if settings.bootstrap_seed is not None:
        analysis = replace(analysis, bootstrap_seed=settings.bootstrap_seed)
    if settings.interval_method is not None:
        analysis = replace(analysis, interval_method=settings.interval_method)
    return replace(design, analysis=analysis)


def default_forecaster(design: StudyDesign) -> BackendSpec:
    """The offline card-reading stand-in, seeded with the design's seed."""
    return BackendSpec("card_reader", {"seed": design.seed})


def _explainer_record(spec: ExplainerSpec, explainer: LLMExplainer,
                      run: ExplainerRun) -> dict[str, Any]:
    """The JSON written to ``explainers/<name>.json`` (read back by :func:`_reuse`)."""
    return {"name": spec.name, "configuration": explainer.configuration(),
            "calls": run.calls, "transport_failures": run.transport_failures,
            "explanations": {sid: e.to_json() for sid, e in run.explanations.items()},
            "proposals": {sid: p.to_json() for sid, p in run.proposals.items()},
            "issues": run.issues, "issue_counts": run.issue_counts(),
            "prompts": dict(sorted(run.prompts.items())),
            "truncation_detectable": run.truncation_detectable}


def _reuse(path: Path, configuration: Mapping[str, Any]) -> ExplainerRun | None:
    """A stored explainer run with exactly this configuration, else None."""
    if not path.is_file():
        return None
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(stored, dict) or canonical_json(stored.get("configuration")) != \
            canonical_json(dict(configuration)):
        return None
    return ExplainerRun(
        {sid: Explanation.from_json(e) for sid, e in stored["explanations"].items()},
        {sid: Proposal.from_json(p) for sid, p in stored.get("proposals", {}).items()},
        {sid: list(r) for sid, r in stored.get("issues", {}).items()},
        int(stored.get("calls", 0)), int(stored.get("transport_failures", 0)),
        {cid: str(p) for cid, p in stored.get("prompts", {}).items()},
        stored.get("truncation_detectable") is True)


def run_explainers(definition: StudyDefinition, built: BuiltStudy,
                   specs: Sequence[ExplainerSpec], folder: Path,
                   seed: int, progress: bool = False) -> dict[str, ExplainerRun]:
    """Run (or reuse) every configured LLM explainer; keep each run in ``explainers/``."""
    runs: dict[str, ExplainerRun] = {}
    taken = set(definition.offline_explainers)
    for spec in specs:
        if spec.name in taken:
            raise ConfigError(f"explainer name {spec.name!r} is taken in study"
                              f" {definition.name}")
        taken.add(spec.name)
        backend = build_backend(spec.backend.backend, spec.backend.options)
        explainer = LLMExplainer(backend, seed=seed, propose=spec.propose,
                                 extractor=spec.extractor, concurrency=spec.concurrency,
                                 max_attempts=spec.max_attempts, brief=definition.llm_brief,
                                 proposal_state=(definition.proposal_hook(spec.name)
                                                 if spec.propose else None),
                                 progress=progress)
        path = folder / EXPLAINERS_FOLDER / f"{spec.name}.json"
        reused = _reuse(path, explainer.configuration())
        if reused is not None:
            runs[spec.name] = reused
            continue
        try:
            run = explainer.explain(built.build.study)
        finally:
            backend.close()
        write_json_atomic(path, _explainer_record(spec, explainer, run))
        runs[spec.name] = run
    return runs


def design_json(design: StudyDesign, forecaster: BackendSpec) -> dict[str, Any]:
    """``design.json`` of a study folder (see :mod:`foreseen.credit.plan.study_folder`)."""
    return {"contexts": design.contexts_json(), "repeats": design.repeats,
            "seed": design.seed, "forecaster": forecaster.to_json(),
            "analysis": design.analysis.to_json(), "execution": design.execution.to_json(),
            **({} if design.lottery is None else {"lottery": dict(design.lottery)}),
            **({} if not design.scopes else {
                "scopes": {k: list(v) for k, v in sorted(design.scopes.items())}}),
            **({} if not design.committed_files else {
                "committed_files": list(design.committed_files)}),
            **({} if design.followups is None else {"followups": dict(design.followups)})}


def prospective_commitment(definition: StudyDefinition,
                           settings: StudySettings) -> dict[str, Any] | None:
    """A prospective run's outcome-execution commitment, the JSON ``design.json`` carries as
    ``outcome_execution`` (None: a sealed-file run)."""
    if not settings.prospective:
        return None
    options = definition.option_values(settings.options)
    return outcome_execution_commitment(definition.outcome_modules,
                                        definition.outcome_inputs(options),
                                        definition.outcome_libraries)


def write_study_folder(folder: Path, built: BuiltStudy,
                       explanations: Mapping[str, Mapping[str, Explanation]],
                       design: StudyDesign, forecaster: BackendSpec,
                       outcomes: Mapping[str, float] | None = None,
                       commitment: Mapping[str, Any] | None = None) -> None:
    """Write the study folder files (``outcomes`` overrides the build's, for the leak test).

    With an outcome-execution ``commitment`` (a prospective run) no outcome file
    is written and ``design.json`` carries the commitment.
    """
    study = built.build.study
    folder.mkdir(parents=True, exist_ok=True)
    write_json_atomic(folder / "study.json", study.to_json())
    write_json_atomic(folder / "explanations.json", {
        name: {sid: e.to_json() for sid, e in sorted(by_state.items())}
        for name, by_state in sorted(explanations.items())})
    if commitment is None:
        write_outcomes(folder / SEALED_OUTCOMES, study,
                       dict(outcomes) if outcomes is not None else built.build.outcome_map())
    write_json_atomic(folder / "design.json", {
        **design_json(design, forecaster),
        **({} if commitment is None else {"outcome_execution": dict(commitment)})})
    for name, content in built.files.items():
        write_json_atomic(folder / name, content)


def _same_plan(folder: Path, plan: FrozenPlan) -> bool:
    existing = folder / "plan.json"
    if not existing.is_file():
        return False
    try:
        return load_plan(existing).plan_id == plan.plan_id
    except UserInputError:  # a damaged plan file is archived, never reused
        return False


def _install(staging: Path, folder: Path, names: Sequence[str]) -> None:
    for name in names:
        (staging / name).replace(folder / name)
    shutil.rmtree(staging, ignore_errors=True)


def build_study(definition: StudyDefinition, settings: StudySettings, *,
                executor: Executor | None = None) -> BuiltStudy:
    """Build (or load from the cache) the study with the settings' options.

    The study's extra is checked first (every package it provides imports), so
    a build, a dry run or a cached build without it names the extra to install.
    """
    require_extra(definition.extra)
    options = definition.option_values(settings.options)
    return definition.build(options, executor=executor, cache=settings.cache,
                            outcomes=not settings.prospective)


def run_study(definition: StudyDefinition, out: str | Path, settings: StudySettings, *,
              executor: Executor | None = None, progress: bool = False,
              outcomes_override: Mapping[str, float] | None = None,
              built: BuiltStudy | None = None) -> StudyRunResult:
    """The whole study into ``out`` (see the module docstring); returns what it did.

    ``built``: the study already built with these settings (a dry run or a cost
    check built it first), else it is built here.
    """
    require_extra(definition.extra)
    started = time.monotonic()
    folder = Path(out)
    options = definition.option_values(settings.options)
    if built is None:
        built = definition.build(options, executor=executor, cache=settings.cache,
                                 outcomes=not settings.prospective)
    commitment = prospective_commitment(definition, settings)
    if commitment is not None and (not built.build.public_only
                                   or outcomes_override is not None):
        raise ConfigError("a prospective run starts from a public build (no outcomes)")
    design = study_design(definition, built, settings)
    reference = None
    if settings.reference_run is not None:
        reference = read_reference_run(settings.reference_run, built.build.study)
        design = replace(design, analysis=replace(
            design.analysis, reference_report_sha256=reference.sha256,
            gates=(*design.analysis.gates, definition.replication_gate(design))))
    forecaster = settings.forecaster or default_forecaster(design)
    # a bad forecaster (unknown name, bad options, missing program) fails before anything runs
    build_backend(forecaster.backend, forecaster.options).close()
    folder.mkdir(parents=True, exist_ok=True)  # only once the settings are known good
    runs = run_explainers(definition, built, settings.explainers, folder, design.seed,
                          progress)
    built, design = _with_proposals(definition, built, design, settings.explainers, runs,
                                    executor)
    explanations: dict[str, Mapping[str, Explanation]] = dict(built.build.explanations)
    for name, run in runs.items():
        explanations[name] = run.explanations
        if name not in design.scopes:
            design = design.with_explainer(name, design.llm_contexts)
    primary = primary_explainer_of(settings.primary_explainer,
                                   [spec.name for spec in settings.explainers],
                                   definition.offline_explainers)
    design = with_judged_explainer(design, primary)
    if primary is not None:
        design = replace(design, analysis=with_primary_explainer(
            design.analysis, primary, definition.offline_explainers))
    verification = None
    if settings.verify_fraction is not None and commitment is None:
        verification = definition.verify(built, options, fraction=settings.verify_fraction,
                                         executor=executor)
    staging = folder / STAGING
    shutil.rmtree(staging, ignore_errors=True)
    write_study_folder(staging, built, explanations, design, forecaster,
                       sealed_values(definition, built, design, outcomes_override, commitment,
                                     executor=executor), commitment)
    extra = [*built.files]
    if reference is not None:
        write_bytes_atomic(staging / REFERENCE_REPORT, reference.data)
        extra.append(REFERENCE_REPORT)
    plan = freeze_study_dir(staging)
    leak = leak_check(staging, plan)
    resumed = _same_plan(folder, plan)
    if not resumed:
        archive_previous_run(folder, (*STUDY_FILES, *built.files, STUDY_SECTION_FILE,
                                      LEAK_CHECK_FILE, REFERENCE_REPORT))
    _install(staging, folder, [name for name in (*STUDY_FILES, *extra)
                               if commitment is None or name != SEALED_OUTCOMES])
    write_json_atomic(folder / LEAK_CHECK_FILE, leak.to_json())
    if not resumed:
        write_plan(plan, folder / "plan.json")
    sealed = folder / SEALED_OUTCOMES
    backend = _backend(plan, forecaster, settings.inject_faults)
    public = built

    def execute() -> Mapping[str, float]:
        executed = definition.execute_outcomes(public, options, executor=executor)
        return {**executed.build.outcome_map(),
                **sealed_followups(definition, executed, design, executor=executor)}

    calibrated = run_with_signal_plan(plan, folder, sealed, progress=progress,
                                      backend=backend, concurrency=settings.concurrency,
                                      budget_usd=settings.budget_usd,
                                      accept_failures=settings.accept_failures,
                                      batch=settings.batch,
                                      execute_outcomes=None if commitment is None else execute)
    if commitment is not None:
        built = definition.with_outcomes(built, calibrated.outcomes)
        if settings.verify_fraction is not None:
            verification = definition.verify(built, options,
                                             fraction=settings.verify_fraction,
                                             executor=executor)
    verification = verify_followups(definition, built, sealed, verification,
                                    settings.verify_fraction, executor=executor)
    section = with_note_delivery(definition.section(built, calibrated.outcomes, verification),
                                 design, built.build.study, explanations, runs)
    if section is not None:
        write_json_atomic(folder / STUDY_SECTION_FILE, section.to_json())
    report = analyze_run(plan, folder / "ledger.jsonl", sealed, folder,
                         calibration=(calibrated.child, folder / "signal_ledger.jsonl"),
                         committed_section=committed_study_section)
    return StudyRunResult(definition.name, folder, plan, report, len(plan.body["slots"]),
                          resumed, built, runs, verification, time.monotonic() - started)


def _with_proposals(definition: StudyDefinition, built: BuiltStudy, design: StudyDesign,
                    specs: Sequence[ExplainerSpec], runs: Mapping[str, ExplainerRun],
                    executor: Executor | None) -> tuple[BuiltStudy, StudyDesign]:
    """Add the proposal states of every proposing explainer whose proposals the study
    executes; each such explainer gets the study's proposal contexts on its own states."""
    proposing = {spec.name: runs[spec.name].proposals for spec in specs
                 if spec.propose and definition.proposal_hook(spec.name) is not None}
    if not proposing:
        return built, design
    extended, scopes = definition.with_proposals(built, proposing, executor=executor)
    for name in sorted(proposing):
        design = design.with_explainer(name, definition.proposal_contexts, scopes[name])
    return extended, replace(design, committed_files=tuple(
        sorted({*design.committed_files, *(n for n in extended.files
                                           if n not in built.files)})))


def _backend(plan: FrozenPlan, forecaster: BackendSpec, inject_faults: int | None) -> Backend:
    from foreseen.credit.run.runner import build_backend as plan_backend

    backend = plan_backend(plan, forecaster.backend)
    return backend if inject_faults is None else FaultInjectingBackend(backend, inject_faults)
