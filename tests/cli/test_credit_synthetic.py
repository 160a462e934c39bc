"""``foreseen credit synthetic-truth``: a declared effect recovered from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foreseen.credit.studies.controlled.synthetic_truth import estimate_names

from support.credit_cli import call_credit

TASKS = "6"


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("controlled-cache")


def test_a_run_prints_truth_beside_each_recovered_estimate(
        tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    code, stdout, stderr = call_credit(
        capsys, "synthetic-truth", "--out", str(out), "--delta-point", "0.03",
        "--delta-drift", "0.4", "--seed", "5", "--tasks", TASKS, "--replicates", "300",
        "--cache", str(cache))
    assert code == 0, stderr
    assert stdout.lstrip().startswith("SYNTHETIC TRUTH (offline stand-in)")
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["stand_ins"]["label"]  # the report itself is labelled too
    lines = stdout.splitlines()
    for name, parameter in estimate_names().items():
        entry = report["estimates"][name]
        row = next(line for line in lines if name[:30] in line)
        truth = "0.03" if parameter == "delta_point" else "0.4"
        assert f" {truth} " in row and f"{entry['estimate']:.4f}" in row
        low, high = entry["ci95"]
        assert f"[{low:.4f}, {high:.4f}]" in row
        assert row.rstrip(" │").endswith("yes" if low <= float(truth) <= high else "no")
    gate = next(g for g in report["gates"] if g["name"] == "synthetic_truth_predictive_value")
    assert f"gate synthetic_truth_predictive_value: {gate['status']}" in stdout


def test_a_folder_holding_a_run_is_refused_and_left_alone(
        tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "ledger.jsonl").write_text("paid calls\n", encoding="utf-8")
    code, _, stderr = call_credit(capsys, "synthetic-truth", "--out", str(out), "--tasks",
                                  TASKS, "--cache", str(cache))
    assert code == 2
    assert "already holds a run (ledger.jsonl)" in stderr and len(stderr.strip().splitlines()) == 1
    assert (out / "ledger.jsonl").read_text(encoding="utf-8") == "paid calls\n"
    assert sorted(p.name for p in out.iterdir()) == ["ledger.jsonl"]


@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--delta-drift", "1.5", "delta_drift must be in [0, 1]"),
    ("--delta-drift", "-0.01", "delta_drift must be in [0, 1]"),
    ("--delta-point", "nan", "delta_point must be a finite number"),
    ("--delta-point", "0.2", "base_error must be >="),
])
def test_effects_the_stand_in_cannot_honour_are_refused_before_any_work(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str,
        message: str) -> None:
    out = tmp_path / "run"
    code, _, stderr = call_credit(capsys, "synthetic-truth", "--out", str(out), flag, value)
    assert code == 2 and message in stderr
    assert not out.exists() or not any(out.iterdir())


def test_the_boundaries_of_delta_drift_are_accepted() -> None:
    from foreseen.credit.backends.synthetic import SyntheticTruthForecaster

    for drift in (0.0, 1.0):
        SyntheticTruthForecaster.check_effects(0.0, drift)
