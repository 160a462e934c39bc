"""The report's outcome-commitment check can fail: it compares every committed field with what
was observed (sealed: the file's digest; prospective: the executed file's digest and the code
digest the execution recorded), and a report whose committed field was changed afterwards is
refused when read, never shown as "check ok"."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from foreseen.core.digest import sha256_file
from foreseen.core.errors import IntegrityError, UserInputError
from foreseen.credit.analysis.report import OutcomeCommitment, read_report, report_text
from foreseen.credit.plan.freeze import FrozenPlan, check_outcome_code, plan_id_of
from foreseen.credit.plan.plan_file import (
    OutcomeExecutionCommitment,
    SealedFileCommitment,
    read_outcome_commitment,
)
from foreseen.credit.plan.reveal import reveal
from foreseen.credit.presentation.markdown import render_markdown
from foreseen.credit.run.events import OutcomesExecuted
from foreseen.credit.run.pipeline import outcome_commitment_check

from support.report_fixtures import demo_report
from support.spine import make_plan

A, B, C, D = "a" * 64, "b" * 64, "c" * 64, "d" * 64


def test_a_sealed_commitment_holds_only_for_the_committed_file() -> None:
    assert outcome_commitment_check(SealedFileCommitment(A), None, A).ok is True
    changed = outcome_commitment_check(SealedFileCommitment(B), None, A)  # the field changed
    assert (changed.ok, changed.expected, changed.observed) == (False, B, A)
    assert outcome_commitment_check(SealedFileCommitment(A), None, None).ok is False


def test_a_prospective_commitment_checks_the_file_and_the_committed_code_digest() -> None:
    executed = OutcomesExecuted(sha256=A, code_sha256=C, states=3)
    committed = OutcomeExecutionCommitment(kind="outcome_execution", code_sha256=C,
                                           modules=["m"], inputs={})
    held = outcome_commitment_check(committed, executed, A)
    assert (held.ok, held.kind, held.outcome_code_sha256) == (True, "prospective", C)
    other_code = outcome_commitment_check(replace(committed, code_sha256=D), executed, A)
    assert other_code.ok is False and other_code.outcome_code_sha256 == D
    assert outcome_commitment_check(committed, executed, B).ok is False
    with pytest.raises(IntegrityError, match="records no execution of its outcomes"):
        outcome_commitment_check(committed, None, A)


def test_a_plan_reads_its_commitment_as_its_type(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    sealed = tmp_path / "outcomes.sealed.json"
    assert plan.outcome_commitment == SealedFileCommitment(sha256_file(sealed))
    with pytest.raises(UserInputError, match="not a prospective plan"):
        check_outcome_code(plan)
    execution = {"kind": "outcome_execution", "code_sha256": C, "modules": ["m"],
                 "inputs": {"seeds": {"build": 3}}, "libraries": {"lib": "1.0"}}
    assert read_outcome_commitment(execution) == OutcomeExecutionCommitment(
        kind="outcome_execution", code_sha256=C, modules=["m"],
        inputs={"seeds": {"build": 3}}, libraries={"lib": "1.0"})


def test_a_child_copying_an_execution_commitment_is_not_revealed_as_a_sealed_file(
        tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    body = {**plan.body, "post_outcome": True, "outcome_commitment": {
        "kind": "outcome_execution", "code_sha256": C, "modules": ["m"], "inputs": {}}}
    child = FrozenPlan(body, plan_id_of(body))
    assert not child.prospective
    with pytest.raises(IntegrityError, match="commits to outcome execution, not to a sealed"):
        reveal(child, tmp_path / "outcomes.sealed.json")
    assert reveal(plan, tmp_path / "outcomes.sealed.json")  # the sealed plan's file opens


def test_a_block_that_says_ok_against_its_own_digests_is_refused() -> None:
    with pytest.raises(IntegrityError, match="the check says ok but"):
        OutcomeCommitment(expected=A, observed=B, ok=True)
    with pytest.raises(IntegrityError, match="the check says ok but"):
        OutcomeCommitment(expected=A, observed=A, ok=True, kind="prospective",
                          executed_after_forecasts=False)
    assert OutcomeCommitment(expected=A, observed=B, ok=False).ok is False


def test_a_report_whose_committed_digest_was_edited_is_refused_on_read(tmp_path: Path) -> None:
    report = demo_report()
    path = tmp_path / "report.json"
    path.write_text(report_text(report))
    assert read_report(path).outcome_commitment.ok is True
    data = json.loads(path.read_text())
    data["outcome_commitment"]["expected"] = "e" * 64
    path.write_text(json.dumps(data))
    with pytest.raises(IntegrityError, match="the report was changed after it was written"):
        read_report(path)
    mismatch = replace(report, outcome_commitment=OutcomeCommitment(
        expected="e" * 64, observed=report.outcome_commitment.observed, ok=False))
    assert "outcome commitment check: `MISMATCH`" in render_markdown(mismatch)
