"""The credit report as a typed artefact: header, analysis, study section, run metadata.

A report (credit §11) is one :class:`CreditReport` in memory and one
JSON object in ``report.json``: the header (plan id and parent, amendments,
forecaster block, analysis-code digest and whether it matches the plan, the
outcome commitment check, the calibration plan, ledger heads), then every key
of :class:`~foreseen.credit.analysis.analyze.CreditAnalysis`, then the study's
own section (when the run folder has one), the analysis under a configuration
amended after the reveal (``post_hoc``, kept apart; never a headline) and the
run metadata — in that order, the order of the dataclass fields.

:func:`report_text` writes it, :func:`read_report` reads it back
(``read_report`` of a written report equals the report), :func:`report_schema`
is its JSON Schema, and :data:`ARTEFACTS` names the type for the project's
artefact list.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from foreseen.core.digest import dumps_strict
from foreseen.core.errors import IntegrityError, SourceError
from foreseen.core.inputs import read_regular_text
from foreseen.core.schema import SchemaError, from_json, json_schema, to_json
from foreseen.credit.analysis.analyze import CreditAnalysis
from foreseen.credit.analysis.config import AnalysisConfig
from foreseen.credit.analysis.followups import FollowupReport
from foreseen.credit.analysis.gates import GateResult
from foreseen.credit.analysis.record import OPTIONAL, Record
from foreseen.credit.analysis.verdicts import CheckVerdicts

REPORT_FORMAT = "foreseen.credit.report/2"
#: earlier formats :func:`read_report` still reads (their new keys read as null)
READABLE_FORMATS: tuple[str, ...] = ("foreseen.credit.report/1", REPORT_FORMAT)


@dataclass(frozen=True, kw_only=True)
class Amendment(Record):
    """An amendment of the plan: the parent plan, the reason, the plan keys it changed.

    ``post_hoc`` is true when it was made after the outcomes were revealed
    (:mod:`foreseen.credit.run.post_hoc`; absent otherwise).
    """

    parent: str
    reason: str
    changed: tuple[str, ...]
    post_hoc: bool | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class PostHocAnalysis(Record):
    """The analysis under a configuration amended after the reveal, kept apart.

    ``amendments`` are the indices (in the header's ``amendments``) of the
    post-hoc amendments; ``preregistered_reported`` says whether the report's
    own gates and verdicts are the preregistered analysis (true) or were
    withheld because the amendment did not record the configuration it replaced
    (false: the report then has no headline verdict). ``gates`` and ``verdicts``
    are the amended configuration's: never a headline.
    """

    note: str
    amendments: tuple[int, ...]
    preregistered_reported: bool
    config: AnalysisConfig
    gates: tuple[GateResult, ...]
    verdicts: CheckVerdicts | None


@dataclass(frozen=True, kw_only=True)
class ForecasterBlock(Record):
    """The frozen forecaster: its factory, options and the configuration it reported."""

    factory: str
    options: Mapping[str, Any]
    configuration: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class OutcomeCommitment(Record):
    """The outcome commitment and its check at the reveal.

    ``kind`` ``sealed``: ``expected`` is the SHA-256 of the sealed outcome file
    frozen in the plan. ``prospective``: the plan froze the outcome-execution code
    digest (``outcome_code_sha256``) and seeds before any outcome existed;
    ``expected`` is the outcome file's SHA-256 the ledger's ``outcomes_executed``
    event recorded, and ``executed_after_forecasts`` whether that event follows
    every slot's terminal event. ``ok``: the observed file is the committed one (and,
    prospective, the order and the code digest hold). A block whose ``ok`` says
    more than its digests show — ``ok`` with an observed digest other than the
    committed one, or without the outcomes executed after the forecasts — is
    refused (:class:`~foreseen.core.errors.IntegrityError`): a report whose
    committed field was changed afterwards never reads as "check ok".
    """

    expected: str
    observed: str | None
    ok: bool
    kind: str | None = field(default=None, metadata=OPTIONAL)
    outcome_code_sha256: str | None = field(default=None, metadata=OPTIONAL)
    executed_after_forecasts: bool | None = field(default=None, metadata=OPTIONAL)

    def __post_init__(self) -> None:
        if self.ok and (self.observed != self.expected
                        or self.executed_after_forecasts is False):
            raise IntegrityError(
                f"outcome commitment: the check says ok but the observed outcome file"
                f" ({str(self.observed)[:12]}…) is not the committed one"
                f" ({self.expected[:12]}…): the report was changed after it was written")


@dataclass(frozen=True, kw_only=True)
class ReferenceRun(Record):
    """The reference run a replication gate compares with (frozen by its report's SHA-256)."""

    plan_id: str
    report_sha256: str
    study: str
    ok: bool


@dataclass(frozen=True, kw_only=True)
class LeakCheck(Record):
    """Whether what the forecaster saw could depend on the outcomes (credit §11, §13).

    ``method`` ``outcome_search``: at freeze the sealed outcomes were read in
    memory and every rendered prompt was searched for them (exact, rounded,
    percentage, difference from a public baseline); a hit refuses the freeze, so
    a frozen plan records a pass with what was searched
    (:mod:`foreseen.credit.plan.leak`). ``prospective``: no outcome existed when
    the plan was frozen (the ledger orders the outcome execution after every
    forecast). ``not_recorded``: a plan frozen before the freeze ran the search.
    """

    method: str
    passed: bool
    detail: str


@dataclass(frozen=True, kw_only=True)
class CalibrationPlan(Record):
    """The post-outcome known-signal child plan analysed with this plan (credit §8, check 5)."""

    plan_id: str
    parent_plan_id: str | None
    post_outcome: bool
    signals: Mapping[str, Any] | None


@dataclass(frozen=True, kw_only=True)
class LedgerHead(Record):
    """A ledger's head hash and event count when it was analysed."""

    head_hash: str
    events: int


@dataclass(frozen=True, kw_only=True)
class StandIns(Record):
    """Which parts of the run were offline stand-ins, not models — said before any number.

    ``label`` is the sentence every human-readable output starts with (None when
    a model forecast every slot and wrote every explanation).
    """

    forecaster: bool
    forecaster_does: str | None
    explainers: tuple[str, ...]
    label: str | None


@dataclass(frozen=True, kw_only=True)
class SpendSummary(Record):
    """What the run's answers cost, from the ledger's ``call_completed`` events.

    ``spent_usd`` = Σ ``cost_usd`` (the money actually spent on answers that
    arrived); ``saved_by_cache_usd`` = Σ ``cache_saved_usd`` (each call's tokens
    at the plain input price minus its cost); ``uncached_usd`` = their sum.
    ``input_tokens`` counts every input token, cached ones included.
    """

    calls: int
    spent_usd: float
    saved_by_cache_usd: float
    uncached_usd: float
    input_tokens: int
    cache_write_tokens: int
    cache_read_tokens: int
    output_tokens: int


@dataclass(frozen=True, kw_only=True)
class ReportHeader(Record):
    """Provenance of a credit report (credit §4, §5, §11)."""

    format: str = REPORT_FORMAT
    plan_id: str
    parent_plan_id: str | None
    post_outcome: bool
    amendments: tuple[Amendment, ...]
    forecaster: ForecasterBlock
    stand_ins: StandIns
    analysis_code_sha256: str
    analysis_code_matches_plan: bool
    outcome_commitment: OutcomeCommitment
    calibration_plan: CalibrationPlan | None
    ledger: LedgerHead
    calibration_ledger: LedgerHead | None
    reference: ReferenceRun | None = field(default=None, metadata=OPTIONAL)
    leak_check: LeakCheck | None = field(default=None, metadata=OPTIONAL)
    #: the money spent on the run's answers (absent when no call was priced)
    spend: SpendSummary | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class StudySection(Record):
    """A study's own report section, from the run folder's ``study_section.json``."""

    name: str
    data: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class LatencySummary(Record):
    """Forecast call latencies recorded in the ledger (null mean and max without calls)."""

    calls: int
    mean_s: float | None
    max_s: float | None


@dataclass(frozen=True, kw_only=True)
class RunMetadata(Record):
    """What legitimately differs between two analyses of one plan (``varying_keys``)."""

    varying_keys: tuple[str, ...]
    host: str
    python: str
    analysis_wall_s: float
    latency: LatencySummary


@dataclass(frozen=True, kw_only=True)
class CreditReport(CreditAnalysis, ReportHeader):
    """A predictive-credit report: header, analysis, study section, run metadata (credit §11).

    A pure function of the plan, the ledger, the revealed outcomes and the run
    folder's study section; only :data:`~foreseen.credit.run.pipeline.VARYING_KEYS`
    (ledger heads, run metadata) differ between two analyses of one plan.
    """

    study_section: StudySection | None = field(default=None, metadata=OPTIONAL)
    post_hoc: PostHocAnalysis | None = field(default=None, metadata=OPTIONAL)
    #: the controlled follow-ups' scores (:mod:`foreseen.credit.analysis.followups`; absent
    #: when the plan has none)
    followups: FollowupReport | None = field(default=None, metadata=OPTIONAL)
    run_metadata: RunMetadata

    @classmethod
    def assemble(cls, header: ReportHeader, analysis: CreditAnalysis, *,
                 study_section: StudySection | None, run_metadata: RunMetadata,
                 post_hoc: PostHocAnalysis | None = None,
                 followups: FollowupReport | None = None) -> CreditReport:
        """The report of ``analysis`` under ``header`` (``post_hoc``: an amended analysis
        kept apart; ``followups``: the follow-up scores)."""
        values = {f.name: getattr(header, f.name) for f in fields(ReportHeader)}
        values.update({f.name: getattr(analysis, f.name) for f in fields(CreditAnalysis)})
        return cls(**values, study_section=study_section, post_hoc=post_hoc,
                   followups=followups, run_metadata=run_metadata)

    def header(self) -> ReportHeader:
        """The provenance part of the report."""
        return ReportHeader(**{f.name: getattr(self, f.name) for f in fields(ReportHeader)})

    def analysis(self) -> CreditAnalysis:
        """The analysis part of the report."""
        return CreditAnalysis(**{f.name: getattr(self, f.name) for f in fields(CreditAnalysis)})


ARTEFACTS: dict[str, type] = {"credit-report": CreditReport}
"""The credit instrument's artefact types, by artefact name."""


def report_text(report: CreditReport) -> str:
    """``report.json``'s text: strict JSON (no NaN), two-space indent, a final newline."""
    return dumps_strict(to_json(report)) + "\n"


def read_report(path: str | os.PathLike[str]) -> CreditReport:
    """The report written at ``path`` (``report.json``); a SourceError names what is wrong."""
    file = Path(path)
    try:
        data = json.loads(read_regular_text(file, "report"))
    except OSError as error:
        raise SourceError(f"cannot read {file}: {error.strerror}") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise SourceError(f"{file.name} is not valid JSON") from None
    if not isinstance(data, dict) or data.get("format") not in READABLE_FORMATS:
        raise SourceError(f"{file.name} is not a credit report ({REPORT_FORMAT})")
    try:
        return from_json(CreditReport, data, strict=True)
    except SchemaError as error:
        raise SourceError(f"{file.name}: {error}") from None


def report_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``report.json``, generated from :class:`CreditReport`."""
    return json_schema(CreditReport, title="Predictive credit report")
