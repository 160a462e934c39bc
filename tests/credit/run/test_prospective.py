"""Prospective plans: outcomes executed only after the forecast ledger closes, then revealed.

A prospective plan of the tiny spine study commits to the digest of a real
module's source (``foreseen.credit.model``); the code is "changed" by editing
that module in a copy of the package the digest reads (``PACKAGE_ROOT``).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path

import pytest

import foreseen.core.digest as digest_module
from foreseen.core.digest import sha256_file
from foreseen.core.errors import ConfigError, IntegrityError, UserInputError
from foreseen.core.ledger import Ledger, LedgerEvent, read_ledger
from foreseen.credit.plan.child_plans import freeze_signal_plan
from foreseen.credit.plan.freeze import (
    ExecutionConfig,
    ForecasterSpec,
    FrozenPlan,
    check_outcome_code,
    freeze_plan,
    outcome_execution_commitment,
    write_plan,
)
from foreseen.credit.plan.reveal import reveal
from foreseen.credit.run.calibrated import run_with_signal_plan
from foreseen.credit.run.events import OutcomesExecuted, entry
from foreseen.credit.run.pipeline import analyze_run, record_reveal
from foreseen.credit.run.prospective import executed_outcomes, record_outcome_execution
from foreseen.credit.run.run_ledger import open_run_ledger, read_run_ledger
from foreseen.credit.run.runner import run_plan

import support.spine as spine_support

MODULES = ("foreseen.credit.model",)


@pytest.fixture
def package_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the package's source the code digest reads (so a test may edit it)."""
    copy = tmp_path / "package" / "foreseen"
    shutil.copytree(digest_module.PACKAGE_ROOT, copy,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "data"))
    monkeypatch.setattr(digest_module, "PACKAGE_ROOT", copy)
    return copy


def _plan(folder: Path) -> tuple[FrozenPlan, dict[str, float]]:
    study, outcomes, explanations = spine_support.tiny_study()
    folder.mkdir(parents=True, exist_ok=True)
    plan = freeze_plan(
        study, explanations, design=spine_support.DESIGN, repeats=2,
        forecaster=ForecasterSpec(spine_support.NAME, {"sleep_ms": 0.0}),
        forecaster_configuration=spine_support.make_backend().configuration(),
        analysis={"fallback_point": 0.0, "fallback_interval": [0.0, 0.0], "bootstrap_b": 200},
        outcomes_path=None, seed=7,
        execution=ExecutionConfig(concurrency=3, max_attempts=3, backoff_base_s=0.0,
                                  backoff_max_s=0.0),
        contexts_module=spine_support.NAME,
        outcome_execution=outcome_execution_commitment(MODULES, {"seeds": {"build": 3}}))
    write_plan(plan, folder / "plan.json")
    return plan, outcomes


class Executor:
    """The outcome execution: counts its calls."""

    def __init__(self, outcomes: Mapping[str, float]) -> None:
        self.outcomes = dict(outcomes)
        self.calls = 0

    def __call__(self) -> Mapping[str, float]:
        self.calls += 1
        return self.outcomes


def test_a_prospective_plan_commits_to_the_code_and_inputs_not_to_a_file(
        tmp_path: Path) -> None:
    plan, _ = _plan(tmp_path)
    commitment = plan.body["outcome_commitment"]
    assert plan.prospective and plan.body["format"] == "foreseen.credit.plan.freeze/2"
    assert commitment == {"kind": "outcome_execution",
                          "code_sha256": digest_module.code_digest(MODULES),
                          "modules": list(MODULES), "inputs": {"seeds": {"build": 3}}}
    assert not (tmp_path / "outcomes.sealed.json").exists()
    assert check_outcome_code(plan) == commitment["code_sha256"]


def test_a_plan_needs_exactly_one_commitment(tmp_path: Path) -> None:
    study, outcomes, explanations = spine_support.tiny_study()
    sealed = tmp_path / "outcomes.json"
    from foreseen.credit.plan.freeze import write_outcomes

    write_outcomes(sealed, study, outcomes)
    common = dict(design=spine_support.DESIGN, repeats=1,
                  forecaster=ForecasterSpec(spine_support.NAME, {}),
                  forecaster_configuration={}, analysis={}, seed=1,
                  contexts_module=spine_support.NAME)
    with pytest.raises(ConfigError, match="exactly one"):
        freeze_plan(study, explanations, outcomes_path=None, **common)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="exactly one"):
        freeze_plan(study, explanations, outcomes_path=sealed,  # type: ignore[arg-type]
                    outcome_execution=outcome_execution_commitment(MODULES, {}), **common)


def test_outcome_execution_before_the_ledger_closes_is_refused(tmp_path: Path) -> None:
    plan, outcomes = _plan(tmp_path)
    ledger = tmp_path / "ledger.jsonl"
    open_run_ledger(plan, ledger)
    execute = Executor(outcomes)
    with pytest.raises(IntegrityError, match="outcome execution refused: the forecast ledger"
                                             " is not closed"):
        record_outcome_execution(plan, ledger, tmp_path / "outcomes.sealed.json", execute)
    assert execute.calls == 0 and not (tmp_path / "outcomes.sealed.json").exists()
    assert [e.type for e in read_ledger(ledger)] == ["plan_frozen"]


def test_outcome_execution_with_one_slot_open_is_refused(tmp_path: Path) -> None:
    """The boundary: every slot but one has its result."""
    plan, outcomes = _plan(tmp_path)
    ledger = tmp_path / "ledger.jsonl"
    run_plan(plan, ledger, backend=spine_support.make_backend())
    last = plan.slots[-1].slot_id
    partial = tmp_path / "partial.jsonl"
    writer = Ledger.open(partial)
    for event in read_ledger(ledger):
        if event.payload.get("slot_id") != last:
            writer.append(event.type, dict(event.payload))
    execute = Executor(outcomes)
    with pytest.raises(IntegrityError, match=r"1 of \d+ slots have no result yet"):
        record_outcome_execution(plan, partial, tmp_path / "outcomes.sealed.json", execute)
    assert execute.calls == 0
    with pytest.raises(IntegrityError, match="no result yet"):
        record_reveal(plan, partial, tmp_path / "outcomes.sealed.json")


def test_a_reveal_before_the_ledger_closes_or_before_the_execution_is_refused(
        tmp_path: Path) -> None:
    plan, outcomes = _plan(tmp_path)
    ledger = tmp_path / "ledger.jsonl"
    open_run_ledger(plan, ledger)
    sealed = tmp_path / "outcomes.sealed.json"
    from foreseen.credit.plan.freeze import write_outcomes

    write_outcomes(sealed, plan.study, outcomes)  # a file exists; the order still refuses it
    with pytest.raises(IntegrityError, match="prospective plan"):
        record_reveal(plan, ledger, sealed)
    with pytest.raises(IntegrityError, match="revealed only after the ledger records"):
        reveal(plan, sealed)
    run_plan(plan, ledger, backend=spine_support.make_backend())
    with pytest.raises(IntegrityError, match="records no outcome execution"):
        record_reveal(plan, ledger, sealed)
    assert "outcomes_revealed" not in {e.type for e in read_ledger(ledger)}


def test_the_whole_order_executes_once_and_reveals_what_was_executed(tmp_path: Path) -> None:
    plan, outcomes = _plan(tmp_path)
    execute = Executor(outcomes)
    run = run_with_signal_plan(plan, tmp_path, tmp_path / "outcomes.sealed.json",
                               backend=spine_support.make_backend(),
                               child_backend=spine_support.make_backend(),
                               execute_outcomes=execute)
    assert execute.calls == 1 and run.outcomes == outcomes
    events = read_ledger(tmp_path / "ledger.jsonl")
    types = [e.type for e in events]
    executed = types.index("outcomes_executed")
    terminal = [i for i, e in enumerate(events) if e.type in ("call_completed",
                                                              "fallback_assigned")]
    assert len(terminal) == len(plan.slots) and max(terminal) < executed
    assert types.index("outcomes_revealed") > executed
    record = events[executed].payload
    assert record["sha256"] == sha256_file(tmp_path / "outcomes.sealed.json")
    assert record["code_sha256"] == plan.body["outcome_commitment"]["code_sha256"]
    assert record["states"] == len(plan.study.states)
    assert run.child.parent == plan.plan_id and not run.child.prospective
    # a rerun finds the execution in the ledger and executes nothing again
    run_with_signal_plan(plan, tmp_path, tmp_path / "outcomes.sealed.json",
                         backend=spine_support.make_backend(),
                         child_backend=spine_support.make_backend(), execute_outcomes=execute)
    assert execute.calls == 1
    report = analyze_run(plan, tmp_path / "ledger.jsonl", tmp_path / "outcomes.sealed.json",
                         tmp_path, calibration=(run.child, tmp_path / "signal_ledger.jsonl"))
    commitment = report.outcome_commitment
    assert commitment.kind == "prospective" and commitment.ok
    assert commitment.expected == record["sha256"] and commitment.executed_after_forecasts
    assert commitment.outcome_code_sha256 == plan.body["outcome_commitment"]["code_sha256"]
    assert "prospective" in (tmp_path / "report.md").read_text(encoding="utf-8")


def test_a_prospective_plan_without_its_execution_is_refused(tmp_path: Path) -> None:
    plan, _ = _plan(tmp_path)
    with pytest.raises(ConfigError, match="outcome execution"):
        run_with_signal_plan(plan, tmp_path, tmp_path / "outcomes.sealed.json",
                             backend=spine_support.make_backend())


def test_a_changed_outcome_file_is_refused_at_the_reveal(tmp_path: Path) -> None:
    plan, outcomes = _plan(tmp_path)
    ledger, sealed = tmp_path / "ledger.jsonl", tmp_path / "outcomes.sealed.json"
    run_plan(plan, ledger, backend=spine_support.make_backend())
    record_outcome_execution(plan, ledger, sealed, Executor(outcomes))
    data = json.loads(sealed.read_text(encoding="utf-8"))
    data["outcomes"][0]["y"] += 0.5
    sealed.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(IntegrityError, match="does not match the plan's commitment"):
        record_reveal(plan, ledger, sealed)


def test_a_changed_outcome_code_digest_is_refused(tmp_path: Path, package_copy: Path) -> None:
    plan, outcomes = _plan(tmp_path / "run")
    ledger, sealed = tmp_path / "run" / "ledger.jsonl", tmp_path / "run" / "outcomes.sealed.json"
    run_plan(plan, ledger, backend=spine_support.make_backend())
    source = package_copy / "credit" / "model.py"
    original = source.read_bytes()
    source.write_bytes(original + b"\n# an edit after the plan was frozen\n")
    execute = Executor(outcomes)
    with pytest.raises(IntegrityError, match="outcome-execution code changed"):
        record_outcome_execution(plan, ledger, sealed, execute)
    assert execute.calls == 0 and not sealed.exists()
    source.write_bytes(original)  # the committed code again: the execution proceeds
    record_outcome_execution(plan, ledger, sealed, execute)
    assert execute.calls == 1
    source.write_bytes(original + b"\n")  # changed after the execution: the reveal refuses
    with pytest.raises(IntegrityError, match="outcome-execution code changed"):
        record_reveal(plan, ledger, sealed)
    with pytest.raises(IntegrityError, match="outcome-execution code changed"):
        freeze_signal_plan(plan, sealed,
                           executed_sha256=sha256_file(sealed))


def _event(seq: int, kind: str, payload: dict[str, object]) -> LedgerEvent:
    return LedgerEvent(seq, kind, payload, "0" * 64, "0" * 64)


def test_the_execution_must_follow_the_last_forecast(tmp_path: Path) -> None:
    """The order rule at its boundary: just before / just after the last terminal event."""
    plan, outcomes = _plan(tmp_path)
    ledger = tmp_path / "ledger.jsonl"
    run_plan(plan, ledger, backend=spine_support.make_backend())
    kept = list(read_run_ledger(ledger).kept)
    last = max(e.seq for e in kept if e.type in ("call_completed", "fallback_assigned"))
    payload = entry(OutcomesExecuted("a" * 64, "b" * 64, len(outcomes)))[1]
    before = sorted([*kept, _event(last - 1, "outcomes_executed", payload)],
                    key=lambda e: e.seq)
    with pytest.raises(IntegrityError, match="executed before the last forecast"):
        executed_outcomes(plan, before)
    after = [*kept, _event(last + 1, "outcomes_executed", payload)]
    record = executed_outcomes(plan, after)
    assert record is not None and record.sha256 == "a" * 64
    twice = [*after, _event(last + 2, "outcomes_executed", payload)]
    with pytest.raises(IntegrityError, match="more than once"):
        executed_outcomes(plan, twice)


def test_no_slot_may_be_forecast_after_the_execution(tmp_path: Path) -> None:
    plan, _ = _plan(tmp_path)
    ledger_path = tmp_path / "ledger.jsonl"
    ledger = open_run_ledger(plan, ledger_path)
    ledger.append(*entry(OutcomesExecuted("a" * 64, "b" * 64, 3)))
    with pytest.raises(UserInputError, match="executed or revealed before the run finished"):
        run_plan(plan, ledger_path, backend=spine_support.make_backend())


def test_executing_a_sealed_plan_is_refused(tmp_path: Path) -> None:
    plan = spine_support.make_plan(tmp_path)
    assert not plan.prospective
    with pytest.raises(ConfigError, match="only for a prospective plan"):
        record_outcome_execution(plan, tmp_path / "ledger.jsonl", tmp_path / "x.json",
                                 Executor({}))


def test_the_committed_library_versions_are_checked_before_executing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A prospective plan commits to numpy's installed version; another version is refused."""
    from importlib import metadata

    import foreseen.credit.plan.freeze as freeze_module

    study, outcomes, explanations = spine_support.tiny_study()
    commitment = outcome_execution_commitment(MODULES, {}, ("numpy", "numpy"))
    assert commitment["libraries"] == {"numpy": metadata.version("numpy")}
    plan = freeze_plan(
        study, explanations, design=spine_support.DESIGN, repeats=1,
        forecaster=ForecasterSpec(spine_support.NAME, {"sleep_ms": 0.0}),
        forecaster_configuration=spine_support.make_backend().configuration(),
        analysis={"fallback_point": 0.0, "fallback_interval": [0.0, 0.0], "bootstrap_b": 200},
        outcomes_path=None, seed=7, contexts_module=spine_support.NAME,
        outcome_execution=commitment)
    ledger, sealed = tmp_path / "ledger.jsonl", tmp_path / "outcomes.sealed.json"
    run_plan(plan, ledger, backend=spine_support.make_backend())
    installed, original = metadata.version("numpy"), metadata.version
    monkeypatch.setattr(freeze_module.metadata, "version",
                        lambda name: "0.0.1" if name == "numpy" else original(name))
    execute = Executor(outcomes)
    with pytest.raises(IntegrityError, match=f"numpy is 0.0.1, the plan commits to {installed}:"
                                             f" install numpy=={installed}"):
        record_outcome_execution(plan, ledger, sealed, execute)
    assert execute.calls == 0 and not sealed.exists()
    monkeypatch.undo()
    record_outcome_execution(plan, ledger, sealed, execute)
    assert execute.calls == 1
    # a library upgraded after the execution does not change what was executed: reveal works
    monkeypatch.setattr(freeze_module.metadata, "version", lambda name: "99.0")
    assert record_reveal(plan, ledger, sealed) == outcomes


def test_an_uninstalled_library_cannot_be_committed_to() -> None:
    with pytest.raises(ConfigError, match="no-such-distribution-here is not installed"):
        outcome_execution_commitment(MODULES, {}, ("no-such-distribution-here",))
