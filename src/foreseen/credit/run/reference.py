"""The reference run of a replication: its report, frozen by SHA-256 and read back checked.

A run that names a reference run (``reference_run``: a previous run folder of
the same study, e.g. the same plan replayed with a cheaper model) copies that
folder's ``report.json`` byte for byte into its own folder as
:data:`REFERENCE_REPORT` and freezes its SHA-256 in the plan (the analysis
configuration's ``reference_report_sha256``). The analysis reads the copy, checks
the digest (a changed or missing copy is refused with
:class:`~foreseen.core.errors.IntegrityError`), and hands the reference's
estimate table to the gates: ``within_reference_interval`` asks each estimate
to lie inside the reference's 95 % interval
(:func:`foreseen.credit.analysis.gates.evaluate_gate`).

A reference is accepted only when it ran the **same study definition**
(credit §13, Replication): its ``plan.json`` (beside its report, and the
plan its report names) must hold the same tasks and the same base states —
:func:`study_definition_digest` equal. What a replication may change (the
forecaster and its model, the explainers, the bootstrap) lies outside that
digest; a subset of the tasks (6 of 24), another build or another study is
refused with the reason, one line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foreseen.core.digest import sha256_json
from foreseen.core.errors import IntegrityError, SourceError, UserInputError
from foreseen.core.schema import SchemaError, from_json
from foreseen.credit.analysis.gates import Estimate
from foreseen.credit.model import Study
from foreseen.credit.plan.freeze import load_plan
from foreseen.credit.plan.scopes import base_study

REFERENCE_REPORT = "reference_report.json"


@dataclass(frozen=True)
class ReferenceReport:
    """A reference run's report: its bytes, digest, plan id, study and estimate table."""

    data: bytes
    sha256: str
    plan_id: str
    study: str
    estimates: Mapping[str, Estimate]


def parse_reference(data: bytes, what: str) -> ReferenceReport:
    """Parse a credit ``report.json``'s bytes into a :class:`ReferenceReport`."""
    try:
        report: Any = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise SourceError(f"{what} is not valid JSON") from None
    study = report.get("study") if isinstance(report, dict) else None
    raw = report.get("estimates") if isinstance(report, dict) else None
    if not (isinstance(study, dict) and isinstance(study.get("name"), str)
            and isinstance(report.get("plan_id"), str) and isinstance(raw, dict)):
        raise SourceError(f"{what} is not a credit report (plan_id, study, estimates)")
    try:
        estimates = {str(name): from_json(Estimate, value, f"{what}: estimates.{name}")
                     for name, value in raw.items()}
    except SchemaError as error:
        raise SourceError(str(error)) from None
    return ReferenceReport(data, hashlib.sha256(data).hexdigest(), report["plan_id"],
                           study["name"], estimates)


def study_definition_digest(study: Study) -> str:
    """SHA-256 of the canonical JSON of the study's name, version, metric, tasks and states.

    The states are the base states (a plan's scoped proposal states are removed
    first, :func:`foreseen.credit.plan.scopes.base_study`): they are what a
    replication must rerun unchanged.
    """
    return sha256_json({"name": study.name, "version": study.version, "metric": study.metric,
                        "tasks": [t.to_json() for t in study.tasks],
                        "states": [s.to_json() for s in study.states]})


def _counts(study: Study) -> str:
    return f"{len(study.tasks)} tasks, {len(study.states)} states"


def read_reference_run(folder: Path, study: Study) -> ReferenceReport:
    """The reference run folder's ``report.json``, accepted only for the same study definition.

    Refused (:class:`~foreseen.core.errors.UserInputError`, one line) when the
    folder has no report or no plan, the report is of another study or of
    another plan than the folder's, or the plan's tasks and base states differ
    from ``study``'s (:func:`study_definition_digest`).
    """
    path = Path(folder) / "report.json"
    if not path.is_file():
        raise UserInputError(f"reference run {folder} has no report.json: run it to the end first")
    reference = parse_reference(path.read_bytes(), f"reference run {path}")
    if reference.study != study.name:
        raise UserInputError(f"reference run {folder} is a run of study {reference.study!r},"
                             f" not {study.name!r}")
    plan_path = Path(folder) / "plan.json"
    if not plan_path.is_file():
        raise UserInputError(f"reference run {folder} has no plan.json: its study definition"
                             " cannot be compared")
    plan = load_plan(plan_path)
    if plan.plan_id != reference.plan_id:
        raise UserInputError(f"reference run {folder}: report.json is of plan"
                             f" {reference.plan_id[:12]}…, plan.json is {plan.plan_id[:12]}…")
    theirs = base_study(plan.study, plan.scopes())
    if study_definition_digest(theirs) != study_definition_digest(study):
        raise UserInputError(
            f"reference run {folder} ran another definition of study {study.name!r}"
            f" ({_counts(theirs)}; this run: {_counts(study)}): a replication reruns the"
            " same tasks and states")
    return reference


def checked_reference(folder: Path, expected_sha256: str) -> ReferenceReport:
    """The run folder's copy of the reference report, refused unless its SHA-256 is frozen."""
    path = Path(folder) / REFERENCE_REPORT
    if not path.is_file():
        raise IntegrityError(f"the plan names a reference report (SHA-256 {expected_sha256[:12]}…)"
                             f" but {REFERENCE_REPORT} is missing from {folder}")
    data = path.read_bytes()
    observed = hashlib.sha256(data).hexdigest()
    if observed != expected_sha256:
        raise IntegrityError(f"{REFERENCE_REPORT} has SHA-256 {observed[:12]}…, the plan froze "
                             f"{expected_sha256[:12]}…: the reference report was changed")
    return parse_reference(data, REFERENCE_REPORT)
