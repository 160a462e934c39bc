"""The freeze and ``--dry-run`` warn when the study has fewer task clusters than the plan's
minimum for an interval-based verdict (the run is then a pilot of the machinery)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foreseen.cli.app import main
from foreseen.credit.analysis.config import DEFAULT_MINIMUM_CLUSTERS, cluster_shortfall

import support.spine as spine_support


def _call(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_:
        main(list(argv))
    captured = capsys.readouterr()
    return int(exit_.value.code or 0), captured.out, captured.err


def test_the_shortfall_warning_at_the_boundary() -> None:
    m = DEFAULT_MINIMUM_CLUSTERS
    new_plan = {"minimum_clusters": m}
    warning = cluster_shortfall(m - 1, new_plan)
    assert warning is not None and warning.startswith("warning: ")
    assert f"too few clusters (K = {m - 1}, minimum {m})" in warning
    assert "pilot of the machinery" in warning
    assert cluster_shortfall(m, new_plan) is None
    assert cluster_shortfall(1, {}) is None  # a plan frozen before the minimum existed


def test_the_dry_run_warns_before_anything_else_below_the_minimum(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    code, out, _ = _call(capsys, "credit", "study", "controlled", "--tasks", "2",
                         "--replicates", "200", "--cache", cache, "--dry-run")
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith("warning: 2 task clusters, below the plan's minimum of "
                            f"{DEFAULT_MINIMUM_CLUSTERS}")
    code, out, _ = _call(capsys, "credit", "study", "controlled", "--tasks",
                         str(DEFAULT_MINIMUM_CLUSTERS), "--replicates", "200", "--cache", cache,
                         "--dry-run")
    assert code == 0 and "warning:" not in out and out.startswith("dry run of study")


def test_the_freeze_warns_on_stderr_and_still_writes_the_plan(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The spine study has 6 tasks: silent at the default minimum (5); a design that
    freezes a minimum of 7 is warned about (K = 6 = m − 1), and its plan is written."""
    study = tmp_path / "study"
    spine_support.write_study_dir(study)
    code, out, err = _call(capsys, "credit", "plan", str(study), "--out",
                           str(tmp_path / "plan.json"))
    assert code == 0 and err == "" and out.startswith("plan ")
    design = json.loads((study / "design.json").read_text())
    design["analysis"]["minimum_clusters"] = 7
    (study / "design.json").write_text(json.dumps(design))
    code, out, err = _call(capsys, "credit", "plan", str(study), "--out",
                           str(tmp_path / "strict.json"))
    assert code == 0 and (tmp_path / "strict.json").is_file() and out.startswith("plan ")
    assert err.startswith("warning: 6 task clusters, below the plan's minimum of 7")
    assert "too few clusters (K = 6, minimum 7)" in err
