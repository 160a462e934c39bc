"""``foreseen credit plan|run|reveal|verify|analyze|signal-plan``: happy path and user errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import support.spine as spine_support
from support.credit_cli import call_credit as _call


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*.tmp"))


@pytest.fixture
def study_dir(tmp_path: Path) -> Path:
    spine_support.write_study_dir(tmp_path / "study")
    return tmp_path / "study"


def test_plan_run_reveal_verify_analyze(tmp_path: Path, study_dir: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    plan, ledger, out = tmp_path / "plan.json", tmp_path / "l.jsonl", tmp_path / "report"
    code, stdout, _ = _call(capsys, "plan", str(study_dir), "--out", str(plan))
    assert code == 0 and plan.exists() and stdout.startswith("plan ")
    code, stdout, err = _call(capsys, "run", str(plan), "--ledger", str(ledger),
                              "--concurrency", "2")
    assert code == 0, err
    assert "192 slots, 0 already done, 192 valid, 0 fallbacks" in stdout
    code, stdout, _ = _call(capsys, "run", str(plan), "--ledger", str(ledger))
    assert code == 0 and "192 already done" in stdout
    sealed = study_dir / "outcomes.sealed.json"
    code, stdout, _ = _call(capsys, "reveal", str(plan), str(sealed), "--ledger", str(ledger))
    assert code == 0 and "commitment ok" in stdout
    code, stdout, _ = _call(capsys, "verify", str(ledger), "--plan", str(plan))
    assert code == 0 and stdout.startswith("ok: ") and "outcomes_revealed=1" in stdout
    child = tmp_path / "child.json"
    code, _, err = _call(capsys, "signal-plan", str(plan), str(sealed), "--out", str(child))
    assert code == 2 and "ledger.jsonl" in err  # no parent ledger beside the plan
    code, _, err = _call(capsys, "signal-plan", str(plan), str(sealed), "--out", str(child),
                         "--ledger", str(ledger))
    assert code == 0, err
    code, _, err = _call(capsys, "run", str(child), "--ledger", str(tmp_path / "c.jsonl"))
    assert code == 0, err
    code, _, err = _call(capsys, "analyze", str(plan), "--ledger", str(ledger),
                         "--outcomes", str(sealed), "--out", str(out),
                         "--calibration-plan", str(child),
                         "--calibration-ledger", str(tmp_path / "c.jsonl"))
    assert code == 0, err
    report = json.loads((out / "report.json").read_text())
    for key in ("plan_id", "parent_plan_id", "analysis_code_sha256", "outcome_commitment",
                "ledger", "integrity", "contrasts", "gates", "checks", "run_metadata"):
        assert key in report
    assert set(report["checks"]) >= {"commitment", "delivery", "predictive_gain", "alignment",
                                     "known_signal"}
    assert report["outcome_commitment"]["ok"] is True
    assert report["calibration_plan"]["parent_plan_id"] == report["plan_id"]
    assert "NaN" not in (out / "report.json").read_text()
    assert (out / "report.md").read_text().startswith("#")
    events = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert events[-1]["type"] == "analysis_written"


def _one_error_line(code: int, err: str, fragment: str) -> None:
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("foreseen: error:"), err
    assert fragment in err, err


def test_bad_inputs_exit_2_with_one_line_and_nothing_half_written(
        tmp_path: Path, study_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan, ledger, out = tmp_path / "plan.json", tmp_path / "l.jsonl", tmp_path / "report"
    assert _call(capsys, "plan", str(study_dir), "--out", str(plan))[0] == 0
    sealed = study_dir / "outcomes.sealed.json"

    (tmp_path / "junk.json").write_text("{not json")
    code, _, err = _call(capsys, "run", str(tmp_path / "junk.json"), "--ledger", str(ledger))
    _one_error_line(code, err, "not valid JSON")
    assert not ledger.exists()

    code, _, err = _call(capsys, "run", str(plan), "--ledger", str(ledger), "--forecaster",
                         "card_reader")
    _one_error_line(code, err, "frozen for forecaster")

    assert _call(capsys, "run", str(plan), "--ledger", str(ledger))[0] == 0
    wrong = tmp_path / "wrong.json"
    wrong.write_text(sealed.read_text().replace('"y": ', '"y": 1', 1))
    code, _, err = _call(capsys, "analyze", str(plan), "--ledger", str(ledger),
                         "--outcomes", str(wrong), "--out", str(out))
    _one_error_line(code, err, "does not match the plan's commitment")
    assert not out.exists()

    code, _, err = _call(capsys, "reveal", str(plan), str(tmp_path / "nope.json"),
                         "--ledger", str(ledger))
    _one_error_line(code, err, "does not exist")

    other_dir = tmp_path / "other"
    spine_support.write_study_dir(other_dir)
    design = json.loads((other_dir / "design.json").read_text())
    design["seed"] = 99
    (other_dir / "design.json").write_text(json.dumps(design))
    other_plan = tmp_path / "other.json"
    assert _call(capsys, "plan", str(other_dir), "--out", str(other_plan))[0] == 0
    before = ledger.read_bytes()
    code, _, err = _call(capsys, "run", str(other_plan), "--ledger", str(ledger))
    _one_error_line(code, err, "belongs to plan")
    assert ledger.read_bytes() == before
    code, _, err = _call(capsys, "analyze", str(other_plan), "--ledger", str(ledger),
                         "--outcomes", str(other_dir / "outcomes.sealed.json"), "--out",
                         str(out))
    _one_error_line(code, err, "belongs to plan")
    assert not out.exists()

    (tmp_path / "bad.jsonl").write_text("hello\n")
    code, _, err = _call(capsys, "verify", str(tmp_path / "bad.jsonl"))
    _one_error_line(code, err, "line 1 of 1: not valid JSON")

    (study_dir / "design.json").write_text(json.dumps({"contexts": {}}))
    code, _, err = _call(capsys, "plan", str(study_dir), "--out", str(tmp_path / "p2.json"))
    _one_error_line(code, err, "has 3 problems: design.json: $: expected the required field"
                    " 'repeats' (an integer)")
    assert not (tmp_path / "p2.json").exists()
    (study_dir / "study.json").write_text("[]")
    code, _, err = _call(capsys, "plan", str(study_dir), "--out", str(tmp_path / "p2.json"))
    _one_error_line(code, err, "study")
    assert _leftovers(tmp_path) == []


def test_incomplete_run_is_refused_by_analyze(tmp_path: Path, study_dir: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from foreseen.core.ledger import Ledger
    from foreseen.credit.plan.freeze import load_plan

    plan_path, ledger = tmp_path / "plan.json", tmp_path / "l.jsonl"
    assert _call(capsys, "plan", str(study_dir), "--out", str(plan_path))[0] == 0
    Ledger.open(ledger).append("plan_frozen", {"plan_id": load_plan(plan_path).plan_id})
    code, _, err = _call(capsys, "analyze", str(plan_path), "--ledger", str(ledger),
                         "--outcomes", str(study_dir / "outcomes.sealed.json"), "--out",
                         str(tmp_path / "r"))
    _one_error_line(code, err, "192 of 192 slots have no result yet")


def test_amend_and_reveal_before_the_run_finishes(tmp_path: Path, study_dir: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from foreseen.credit.plan.freeze import load_plan

    plan_path, amended = tmp_path / "plan.json", tmp_path / "amended.json"
    assert _call(capsys, "plan", str(study_dir), "--out", str(plan_path))[0] == 0
    code, _, err = _call(capsys, "amend", str(plan_path), "--out", str(amended),
                              "--set", "analysis.replicates=300", "--set",
                              "execution.concurrency=1", "--reason", "smaller B")
    assert code == 0, err
    parent, child = load_plan(plan_path), load_plan(amended)
    assert child.parent == parent.plan_id and child.plan_id != parent.plan_id
    assert child.body["analysis"]["replicates"] == 300
    assert child.body["execution"]["concurrency"] == 1
    assert child.body["amendments"] == [{
        "parent": parent.plan_id, "reason": "smaller B", "changed": ["analysis", "execution"],
        "previous": {"analysis": parent.body["analysis"],
                     "execution": parent.body["execution"]}}]
    assert child.slots == parent.slots
    code, _, err = _call(capsys, "amend", str(plan_path), "--out", str(tmp_path / "x.json"),
                         "--set", "seed=3", "--reason", "r")
    _one_error_line(code, err, "may not change 'seed'")
    code, _, err = _call(capsys, "amend", str(plan_path), "--out", str(tmp_path / "x.json"),
                         "--set", "analysis.replicates=oops", "--reason", "r")
    _one_error_line(code, err, "not JSON")
    assert not (tmp_path / "x.json").exists()

    from foreseen.core.ledger import Ledger

    ledger = tmp_path / "l.jsonl"
    Ledger.open(ledger).append("plan_frozen", {"plan_id": child.plan_id})
    code, _, err = _call(capsys, "reveal", str(amended), str(study_dir / "outcomes.sealed.json"),
                         "--ledger", str(ledger))
    _one_error_line(code, err, "have no result yet")


def test_study_executor_option_refuses_an_unknown_engine_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, err = _call(capsys, "study", "controlled", "--tasks", "1", "--out",
                              str(tmp_path / "run"), "--executor", "ray:10.0.0.1")
    assert code == 2 and stdout == ""
    assert err.strip().count("\n") == 0 and "expected local:N or dask[:ADDRESS]" in err
    assert not (tmp_path / "run").exists()
