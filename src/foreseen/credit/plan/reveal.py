"""The reveal: the sealed outcome file checked against the plan's commitment, then read."""

from __future__ import annotations

import os
from pathlib import Path

from foreseen.core.digest import sha256_file
from foreseen.core.errors import IntegrityError
from foreseen.core.inputs import require_file
from foreseen.credit.plan.committed_files import check_committed_files
from foreseen.credit.plan.freeze import (
    FrozenPlan,
    check_outcome_code,
)
from foreseen.credit.plan.outcome_file import read_outcomes
from foreseen.credit.plan.plan_file import SealedFileCommitment


def reveal(plan: FrozenPlan, outcomes_path: str | os.PathLike[str], *,
           executed_sha256: str | None = None) -> dict[str, float]:
    """Open the sealed outcomes: refuse a file whose SHA-256 differs from the commitment.

    For a prospective plan the expected SHA-256 is ``executed_sha256``, the one
    the ledger's ``outcomes_executed`` event recorded (read and order-checked
    by :func:`foreseen.credit.run.prospective.executed_outcomes`); without it
    the reveal is refused, and so it is when the execution code changed.
    """
    path = Path(outcomes_path)
    check_committed_files(plan.body, path.parent, "the outcome file")
    if plan.prospective:
        if executed_sha256 is None:
            raise IntegrityError(
                "prospective plan: its outcomes may be revealed only after the ledger records"
                " every forecast and then their execution (outcomes_executed)")
        check_outcome_code(plan)
    require_file(path, "outcome file")
    observed = sha256_file(path)
    expected = _expected_sha256(plan, executed_sha256)
    if observed != expected:
        raise IntegrityError(
            f"outcome file {path.name} does not match the plan's commitment"
            f" (sha256 {observed[:12]}…, plan expects {expected[:12]}…)"
        )
    return read_outcomes(path, plan.study)


def _expected_sha256(plan: FrozenPlan, executed_sha256: str | None) -> str:
    """The outcome file's expected SHA-256: the executed file's for a prospective plan,
    else the sealed file's the plan commits to (IntegrityError for a plan that copies an
    outcome-execution commitment without being prospective: a known-signal child)."""
    if plan.prospective and executed_sha256 is not None:
        return executed_sha256
    commitment = plan.outcome_commitment
    if not isinstance(commitment, SealedFileCommitment):
        raise IntegrityError("the plan commits to outcome execution, not to a sealed file:"
                             " reveal the outcomes of the prospective plan it derives from")
    return commitment.sha256
