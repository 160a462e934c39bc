"""The reference run of a replication: its report, frozen by SHA-256 and read back checked.

A run that names a reference run (``reference_run``: a previous run folder of
the same study, e.g. the same plan replayed with a cheaper model) copies that
folder's ``report.json`` byte for byte into its own folder as
:data:`REFERENCE_REPORT` and freezes its SHA-256 in the plan (the analysis
configuration's ``reference_report_sha256``). The analysis reads the copy, checks
the digest (a changed or missing copy is refused with
:class:`~foreseen.core.errors.IntegrityError`), and hands the reference's
estimate table to the gates: ``sign_agrees`` compares each estimate's sign
with the reference's (:func:`foreseen.credit.analysis.gates.evaluate_gate`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foreseen.core.errors import IntegrityError, SourceError, UserInputError
from foreseen.core.schema import SchemaError, from_json
from foreseen.credit.analysis.gates import Estimate

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


def read_reference_run(folder: Path, study: str) -> ReferenceReport:
    """The reference run folder's ``report.json`` (refused when missing or of another study)."""
    path = Path(folder) / "report.json"
    if not path.is_file():
        raise UserInputError(f"reference run {folder} has no report.json: run it to the end first")
    reference = parse_reference(path.read_bytes(), f"reference run {path}")
    if reference.study != study:
        raise UserInputError(f"reference run {folder} is a run of study {reference.study!r},"
                             f" not {study!r}")
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
