"""Reveal and analyse a finished run into ``report.json`` / ``report.md`` (credit §4, §5, §11).

A report is a pure function of the plan, the ledger's terminal events, the
revealed outcomes and the run folder's ``study_section.json``. Everything
that legitimately differs between two runs of the same plan (the ledger's
head hash and event count — a resumed run logs extra
``call_started``/``torn_line_discarded`` events — latencies, wall time, host)
lives in :data:`VARYING_KEYS`; dropping those keys, two reports of one plan
are byte-identical whatever happened during the runs.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from foreseen.core.digest import sha256_file, sha256_text, write_text_atomic
from foreseen.core.errors import IntegrityError, SourceError, UserInputError
from foreseen.core.ledger import Ledger, LedgerEvent, VerifiedLedger
from foreseen.core.schema import SchemaError, from_json, to_json
from foreseen.credit.analysis.analyze import CreditAnalysis, analyze
from foreseen.credit.analysis.config import AnalysisConfig
from foreseen.credit.analysis.followups import FollowupReport
from foreseen.credit.analysis.gates import Estimate
from foreseen.credit.analysis.report import (
    REPORT_FORMAT,
    Amendment,
    CalibrationPlan,
    CreditReport,
    ForecasterBlock,
    LatencySummary,
    LeakCheck,
    LedgerHead,
    OutcomeCommitment,
    PostHocAnalysis,
    ReferenceRun,
    ReportHeader,
    RunMetadata,
    SpendSummary,
    StudySection,
    report_text,
)
from foreseen.credit.model import Explanation, SlotRecord, Study
from foreseen.credit.plan.freeze import ANALYSIS_MODULES, FrozenPlan, analysis_code_sha256
from foreseen.credit.plan.plan_file import OutcomeExecutionCommitment, SealedFileCommitment
from foreseen.credit.plan.reveal import reveal
from foreseen.credit.presentation.markdown import render_markdown
from foreseen.credit.run.events import (
    AnalysisWritten,
    CallCompleted,
    OutcomesExecuted,
    OutcomesRevealed,
    entry,
)
from foreseen.credit.run.followup_answers import followup_report
from foreseen.credit.run.post_hoc import (
    POST_HOC_NOTE,
    changes_analysis,
    post_reveal_amendments,
    preregistered_analysis,
)
from foreseen.credit.run.prospective import executed_outcomes
from foreseen.credit.run.quality import spend_of
from foreseen.credit.run.reference import ReferenceReport, checked_reference
from foreseen.credit.run.run_ledger import (
    check_ledger_plan,
    read_run_ledger,
    slot_records,
    terminal_slots,
)
from foreseen.credit.run.stand_ins import stand_ins

__all__ = ["LEAK_CHECK_FILE", "REPORT_FORMAT", "STUDY_SECTION_FILE", "VARYING_KEYS", "Analyzer",
           "MarkdownRenderer",
           "RunInputs", "StudySectionFile", "analyze_run", "check_run", "default_analyzer",
           "read_leak_check", "read_study_section", "record_reveal", "stable_part"]

VARYING_KEYS: tuple[str, ...] = ("ledger", "calibration_ledger", "run_metadata")
#: a study that adds a section to its report writes it here, in the run folder, as
#: ``{"name": str, "data": {...}, "markdown": str}``; :func:`analyze_run` copies ``data``
#: into ``report.json`` under ``study_section`` and puts ``markdown`` above the analysis
STUDY_SECTION_FILE = "study_section.json"
#: the leak check's result (:mod:`foreseen.credit.plan.leak`), written by a study run beside
#: the plan as ``{"method": str, "passed": bool, "detail": str}``; copied into the report
LEAK_CHECK_FILE = "leak_check.json"

Analyzer = Callable[[Study, Mapping[str, Mapping[str, Explanation]], Sequence[SlotRecord],
                     Mapping[str, float], Mapping[str, Any], Sequence[SlotRecord],
                     Mapping[str, Estimate] | None, Mapping[str, Sequence[str]]],
                    CreditAnalysis]
MarkdownRenderer = Callable[[CreditReport], str]
#: (plan body, run folder, revealed outcomes) → the study section recomputed from the
#: plan's committed files (None: the plan commits nothing a section is computed from)
SectionFromCommitted = Callable[[Mapping[str, Any], Path, Mapping[str, float]],
                                "StudySectionFile | None"]


def default_analyzer(study: Study, explanations: Mapping[str, Mapping[str, Explanation]],
                     slots: Sequence[SlotRecord], outcomes: Mapping[str, float],
                     config: Mapping[str, Any], calibration: Sequence[SlotRecord],
                     reference: Mapping[str, Estimate] | None = None,
                     scopes: Mapping[str, Sequence[str]] | None = None) -> CreditAnalysis:
    """:func:`~foreseen.credit.analysis.analyze.analyze` with the plan's frozen configuration.

    ``reference`` is the reference run's estimate table (replication gates);
    ``scopes`` the plan's (base states carry the scales, baselines and the
    shared description arm).
    """
    frozen = AnalysisConfig.from_json(config)
    return analyze(study, explanations, slots, outcomes, frozen, calibration=calibration,
                   reference_estimates=reference, scopes=scopes)


@dataclass(frozen=True)
class StudySectionFile:
    """A study's extra report section: what goes into ``report.json`` and the Markdown above."""

    section: StudySection
    markdown: str


@dataclass(frozen=True)
class RunInputs:
    """A plan with its ledger, read and verified once: every slot has exactly one terminal event.

    ``ledger`` is the verified view (its kept events, its end); appends after
    it go through ``ledger.appender()`` so the ledger is never read twice.
    """

    plan: FrozenPlan
    ledger_path: Path
    slots: list[SlotRecord]
    head_hash: str
    events: int
    latencies: list[float]
    ledger: VerifiedLedger
    revealed: bool
    executed: OutcomesExecuted | None = None


def check_run(plan: FrozenPlan, ledger_path: str | os.PathLike[str]) -> RunInputs:
    """Verify the ledger, that it belongs to ``plan``, and that every slot is accounted for once.

    Reads the ledger once (streamed, :func:`~foreseen.credit.run.run_ledger.read_run_ledger`).
    """
    path = Path(ledger_path)
    view = read_run_ledger(path)
    events = view.kept
    check_ledger_plan(events, plan, path, analysis=True)
    terminal = terminal_slots(events)
    assigned = {slot["slot_id"] for slot in plan.body["slots"]}
    missing = sorted(assigned - set(terminal))
    if missing and plan.prospective:
        raise IntegrityError(
            f"ledger {path.name}: prospective plan: {len(missing)} of {len(assigned)} slots have"
            f" no result yet (first: {missing[0]}); its outcomes are executed and revealed only"
            " after the forecast ledger closes")
    if missing:
        raise UserInputError(
            f"ledger {path.name}: {len(missing)} of {len(assigned)} slots have no result yet"
            f" (first: {missing[0]}); resume with 'foreseen credit run'"
        )
    stray = sorted(set(terminal) - assigned)
    if stray:
        raise UserInputError(f"ledger {path.name}: slot {stray[0]!r} is not in the plan")
    latencies = [float(e.payload["latency_s"]) for e in events
                 if e.type == CallCompleted.TYPE and isinstance(e.payload.get("latency_s"),
                                                              (int, float))]
    revealed = any(e.type == OutcomesRevealed.TYPE for e in events)
    return RunInputs(plan, path, slot_records(events), view.head_hash, view.events, latencies,
                     view, revealed, executed_outcomes(plan, events))


def _log_reveal(run: RunInputs, outcomes: Mapping[str, float],
                outcomes_path: str | os.PathLike[str]) -> Ledger:
    """Log ``outcomes_revealed`` once after a checked run; return the ledger, open to append."""
    ledger = run.ledger.appender()
    if not run.revealed:
        ledger.append(*entry(OutcomesRevealed(sha256_file(outcomes_path), len(outcomes),
                                              run.plan.plan_id)))
    return ledger


def record_reveal(plan: FrozenPlan, ledger_path: str | os.PathLike[str],
                  outcomes_path: str | os.PathLike[str]) -> dict[str, float]:
    """Reveal (digest checked) and log ``outcomes_revealed`` once in the plan's ledger.

    Refused until every slot of the plan has its result (nothing may be
    forecast after the reveal) and, for a prospective plan, until the ledger
    records the outcomes' execution after that (IntegrityError). The ledger is
    read once.
    """
    run = check_run(plan, ledger_path)
    outcomes = reveal(plan, outcomes_path, executed_sha256=_executed_sha256(run))
    _log_reveal(run, outcomes, outcomes_path).close()
    return outcomes


def _executed_sha256(run: RunInputs) -> str | None:
    return None if run.executed is None else run.executed.sha256


def _latency_summary(latencies: Sequence[float]) -> LatencySummary:
    if not latencies:
        return LatencySummary(calls=0, mean_s=None, max_s=None)
    return LatencySummary(calls=len(latencies), mean_s=sum(latencies) / len(latencies),
                          max_s=max(latencies))


_Block = TypeVar("_Block")


def _plan_block(cls: type[_Block], value: object, what: str) -> _Block:
    """A plan body's block read as its report type (free-form parts as plain JSON values)."""
    try:
        return from_json(cls, to_json(value), what)
    except SchemaError as error:
        raise SourceError(str(error)) from None


def _amendment(value: Mapping[str, Any], index: int, post_hoc: bool) -> Amendment:
    """The report's block of a plan amendment (its ``previous`` values stay in the plan)."""
    amendment = _plan_block(
        Amendment, {k: v for k, v in value.items() if k in ("parent", "reason", "changed")},
        f"plan.amendments[{index}]")
    return replace(amendment, post_hoc=True) if post_hoc else amendment


def _header(plan: FrozenPlan, run: RunInputs, child_run: RunInputs | None,
            observed: str | None, leak: LeakCheck | None = None,
            reference: ReferenceReport | None = None,
            post_hoc: Sequence[int] = ()) -> ReportHeader:
    commitment = plan.outcome_commitment
    code_now = analysis_code_sha256(ANALYSIS_MODULES)
    calibration_plan = None
    if child_run is not None:
        signals = child_run.plan.body.get("signals")
        calibration_plan = CalibrationPlan(
            plan_id=child_run.plan.plan_id, parent_plan_id=child_run.plan.parent,
            post_outcome=True, signals=None if signals is None else to_json(signals))
    return ReportHeader(
        plan_id=plan.plan_id,
        parent_plan_id=plan.parent,
        post_outcome=plan.post_outcome,
        amendments=tuple(_amendment(a, i, i in post_hoc)
                         for i, a in enumerate(plan.body["amendments"])),
        forecaster=_plan_block(ForecasterBlock, plan.body["forecaster"], "plan.forecaster"),
        stand_ins=stand_ins(plan),
        analysis_code_sha256=code_now,
        analysis_code_matches_plan=code_now == plan.body["analysis_code_sha256"],
        outcome_commitment=outcome_commitment_check(commitment, run.executed, observed),
        calibration_plan=calibration_plan,
        ledger=LedgerHead(head_hash=run.head_hash, events=run.events),
        calibration_ledger=None if child_run is None
        else LedgerHead(head_hash=child_run.head_hash, events=child_run.events),
        leak_check=leak,
        reference=None if reference is None else ReferenceRun(
            plan_id=reference.plan_id, report_sha256=reference.sha256, study=reference.study,
            ok=True),
        spend=_spend(run.ledger.kept),
    )


def _spend(events: Sequence[LedgerEvent]) -> SpendSummary | None:
    """The report's spend block (:func:`foreseen.credit.run.quality.spend_of` of the ledger
    read once); None when no call was priced."""
    total = spend_of(events)
    if total.spent_usd <= 0 and total.saved_by_cache_usd == 0:
        return None
    return SpendSummary(calls=total.calls, spent_usd=total.spent_usd,
                        saved_by_cache_usd=total.saved_by_cache_usd,
                        uncached_usd=total.uncached_usd, input_tokens=total.input_tokens,
                        cache_write_tokens=total.cache_write_tokens,
                        cache_read_tokens=total.cache_read_tokens,
                        output_tokens=total.output_tokens)


def outcome_commitment_check(commitment: SealedFileCommitment | OutcomeExecutionCommitment,
                             executed: OutcomesExecuted | None,
                             observed: str | None) -> OutcomeCommitment:
    """The report's commitment block: ``ok`` only when every committed field holds.

    Sealed file: the observed file's SHA-256 equals the plan's committed
    ``sha256``. Prospective: the observed file's SHA-256 equals the one the
    ledger's ``outcomes_executed`` event recorded, **and** the outcome-execution
    code digest that event recorded equals the plan's committed ``code_sha256``
    (a plan whose committed code digest differs from the code that executed
    the outcomes fails the check). A prospective plan whose ledger records no execution
    is refused (IntegrityError), as its reveal is.
    """
    if isinstance(commitment, SealedFileCommitment):
        expected = commitment.sha256
        return OutcomeCommitment(expected=expected, observed=observed,
                                 ok=observed is not None and observed == expected)
    code = commitment.code_sha256
    if executed is None:
        raise IntegrityError("prospective plan: the ledger records no execution of its"
                             " outcomes (outcomes_executed), so no outcome file is committed")
    return OutcomeCommitment(expected=executed.sha256, observed=observed,
                             ok=observed == executed.sha256 and executed.code_sha256 == code,
                             kind="prospective", outcome_code_sha256=code,
                             executed_after_forecasts=True)


def analyze_run(plan: FrozenPlan, ledger_path: str | os.PathLike[str],
                outcomes_path: str | os.PathLike[str], out_dir: str | os.PathLike[str], *,
                calibration: tuple[FrozenPlan, str | os.PathLike[str]] | None = None,
                analyzer: Analyzer = default_analyzer,
                markdown: MarkdownRenderer = render_markdown,
                committed_section: SectionFromCommitted | None = None) -> CreditReport:
    """Reveal, analyse and write ``DIR/report.json`` + ``DIR/report.md``; return the report.

    ``calibration`` is the known-signal child plan and its ledger; its slots go
    to the analysis as ``calibration`` (→ ``checks.known_signal``). The run
    folder (the ledger's folder) may hold :data:`STUDY_SECTION_FILE`,
    :data:`LEAK_CHECK_FILE` and, when the plan froze a reference report's SHA-256,
    must hold that report (:mod:`foreseen.credit.run.reference`).
    ``committed_section`` recomputes the study section from the plan's committed
    files (a study's audit, e.g. ``proposals.json``); when it returns a section,
    that one is reported and :data:`STUDY_SECTION_FILE` — not committed, so
    editable after the fact — is ignored.
    """
    started = time.monotonic()
    run = check_run(plan, ledger_path)
    observed = sha256_file(outcomes_path) if Path(outcomes_path).is_file() else None
    outcomes = reveal(plan, outcomes_path, executed_sha256=_executed_sha256(run))
    with _log_reveal(run, outcomes, outcomes_path) as ledger:
        return _analyze_checked(plan, run, ledger, observed, outcomes, out_dir,
                                calibration=calibration, analyzer=analyzer, markdown=markdown,
                                started=started, committed_section=committed_section,
                                followups=followup_report(plan.body, run.ledger.kept,
                                                          outcomes, outcomes_path))


def _analyze_checked(plan: FrozenPlan, run: RunInputs, ledger: Ledger, observed: str | None,
                     outcomes: Mapping[str, float], out_dir: str | os.PathLike[str], *,
                     calibration: tuple[FrozenPlan, str | os.PathLike[str]] | None,
                     analyzer: Analyzer, markdown: MarkdownRenderer,
                     started: float,
                     committed_section: SectionFromCommitted | None = None,
                     followups: FollowupReport | None = None) -> CreditReport:
    """:func:`analyze_run` after the reveal, with the ledger open (and locked) to append."""
    ledger_path = run.ledger_path
    child_run: RunInputs | None = None
    if calibration is not None:
        child_plan, child_ledger = calibration
        if child_plan.parent != plan.plan_id or not child_plan.post_outcome:
            raise UserInputError(
                "calibration plan does not name this plan as its parent (or is not post-outcome)"
            )
        child_run = check_run(child_plan, child_ledger)
    folder = Path(ledger_path).parent
    recomputed = None if committed_section is None else committed_section(
        plan.body, folder, outcomes)
    section = recomputed if recomputed is not None else read_study_section(folder)
    digest = plan.body["analysis"].get("reference_report_sha256")
    reference = None if digest is None else checked_reference(folder, str(digest))
    post_hoc = post_reveal_amendments(plan, run.ledger.kept)
    header = _header(plan, run, child_run, observed, read_leak_check(folder), reference,
                     post_hoc)
    explanations, scopes = plan.explanations(), plan.scopes()

    def analysis_under(config: Mapping[str, Any]) -> CreditAnalysis:
        return analyzer(plan.study, explanations, run.slots, outcomes, config,
                        child_run.slots if child_run else [],
                        None if reference is None else reference.estimates, scopes)

    analysis, post_hoc_block = _preregistered_and_post_hoc(plan, post_hoc, analysis_under)
    report = CreditReport.assemble(
        header, analysis, study_section=None if section is None else section.section,
        post_hoc=post_hoc_block, followups=followups,
        run_metadata=RunMetadata(
            varying_keys=VARYING_KEYS,
            host=platform.node(),
            python=platform.python_version(),
            analysis_wall_s=time.monotonic() - started,
            latency=_latency_summary(run.latencies)))
    out = Path(out_dir)
    text = report_text(report)
    summary_md = markdown(report)  # rendered before anything is written
    if section is not None:
        summary_md = section.markdown + summary_md
    write_text_atomic(out / "report.json", text)
    write_text_atomic(out / "report.md", summary_md)
    ledger.append(*entry(AnalysisWritten(sha256_text(text), "report.json")))
    return report


def _preregistered_and_post_hoc(plan: FrozenPlan, post_hoc: Sequence[int],
                                analysis_under: Callable[[Mapping[str, Any]], CreditAnalysis]
                                ) -> tuple[CreditAnalysis, PostHocAnalysis | None]:
    """The report's analysis and, after a post-hoc change of the analysis configuration,
    the amended analysis kept apart (:mod:`foreseen.credit.run.post_hoc`).

    The report's own gates and verdicts are the preregistered configuration's; when that
    configuration is unknown they are withheld (empty gates, no verdicts) and the amended
    ones appear only in the post-hoc block.
    """
    frozen = plan.body["analysis"]
    if not changes_analysis(plan, post_hoc):
        return analysis_under(frozen), None
    preregistered = preregistered_analysis(plan, post_hoc)
    amended = analysis_under(frozen)
    block = PostHocAnalysis(note=POST_HOC_NOTE, amendments=tuple(post_hoc),
                            preregistered_reported=preregistered is not None,
                            config=amended.config, gates=amended.gates,
                            verdicts=amended.verdicts)
    if preregistered is None:
        return replace(amended, gates=(), verdicts=None), block
    return analysis_under(preregistered), block


def read_study_section(folder: Path) -> StudySectionFile | None:
    """The study's extra report section from :data:`STUDY_SECTION_FILE`, if the folder has one."""
    path = folder / STUDY_SECTION_FILE
    if not path.is_file():
        return None
    try:
        section = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise UserInputError(f"cannot read {path}: {error.strerror}") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise UserInputError(f"{path.name} is not valid JSON") from None
    if not (isinstance(section, dict) and isinstance(section.get("name"), str)
            and isinstance(section.get("data"), dict)
            and isinstance(section.get("markdown"), str)):
        raise UserInputError(f"{path.name}: expected name, data and markdown")
    return StudySectionFile(StudySection(name=section["name"], data=section["data"]),
                            section["markdown"])


def read_leak_check(folder: Path) -> LeakCheck | None:
    """The leak check of :data:`LEAK_CHECK_FILE`, if the run folder has one."""
    path = folder / LEAK_CHECK_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise UserInputError(f"{path.name} is not valid JSON") from None
    if not (isinstance(data, dict) and isinstance(data.get("method"), str)
            and isinstance(data.get("passed"), bool) and isinstance(data.get("detail"), str)):
        raise UserInputError(f"{path.name}: expected method, passed and detail")
    return LeakCheck(method=data["method"], passed=data["passed"], detail=data["detail"])


def stable_part(report: CreditReport) -> dict[str, Any]:
    """The report's JSON object without :data:`VARYING_KEYS` (identical across runs of a plan)."""
    data = to_json(report)
    return {k: v for k, v in data.items() if k not in VARYING_KEYS}
