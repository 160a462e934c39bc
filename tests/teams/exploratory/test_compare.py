"""``compare``: rows recomputed independently, conditional rows exercised, CLI end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from foreseen.cli.app import main
from foreseen.teams.curves import coverage_grid, population_curve
from foreseen.teams.exploratory.calibration import draw_pilot_indices
from foreseen.teams.exploratory.compare import compare_forecasters
from foreseen.teams.forecasters.conditional import conditional_forecast
from foreseen.teams.forecasters.models import FORECASTERS


def run(argv: list[str]) -> int:
    try:
        main(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return 0


def test_rows_match_an_independent_recomputation(small_matrix) -> None:  # type: ignore[no-untyped-def]
    report = compare_forecasters(small_matrix, ks=(5, 30), pilots=3, seed=2, replicates=10)
    assert report["status"].startswith("exploratory")
    assert "skipped" in report["by_k"]["30"]
    block = report["by_k"]["5"]
    solved = small_matrix.competent().solved
    grid = coverage_grid(solved.shape[0])
    truth = population_curve(solved, grid)
    pilots = draw_pilot_indices(solved.shape[0], 5, 3, 2)
    for name in ("beta_binomial", "beta_binomial_ml", "rasch"):
        curves = FORECASTERS[name].fit(solved[pilots]).curve(grid)
        row = block["rows"][name]
        assert row["curve_mae"] == pytest.approx(np.abs(curves - truth).mean(), abs=1e-12)
        assert row["population_coverage_mae"] == pytest.approx(
            np.abs(curves[:, -1] - truth[-1]).mean(), abs=1e-12)
    assert set(FORECASTERS) <= set(block["rows"])
    assert block["rows"]["irt_2pl"]["family"] == "issue 7"
    assert block["rows"]["kish"]["family"] == "E046"
    conditional = block["rows"]["conditional_beta_binomial"]
    assert conditional["curve_mae"] is None and conditional["curve_mae_reason"]
    expected = np.mean([abs(conditional_forecast(solved[p], solved.shape[0]).coverage - truth[-1])
                        for p in pilots])
    assert conditional["population_coverage_mae"] == pytest.approx(expected, abs=1e-12)
    best = block["best_new_versus_beta_binomial"]
    assert best["beats_beta_binomial"] == (best["difference"] < 0)
    json.dumps(report, allow_nan=False)


def _write_csv(path: Path, solved: np.ndarray) -> None:
    tasks = [f"t{j:03d}" for j in range(solved.shape[1])]
    lines = ["," + ",".join(tasks)]
    lines += [f"agent{i:02d}," + ",".join(str(int(v)) for v in row) for i, row in enumerate(solved)]
    path.write_text("\n".join(lines) + "\n")


def test_cli_writes_identical_reports_and_says_exploratory(
    tmp_path: Path, small_matrix, capsys: pytest.CaptureFixture[str]  # type: ignore[no-untyped-def]
) -> None:
    source = tmp_path / "toy.csv"
    _write_csv(source, small_matrix.solved)
    args = ["teams", "compare", str(source), "--k", "5", "--pilots", "2", "--replicates", "8"]
    assert run([*args, "--out", str(tmp_path / "a.json")]) == 0
    out = capsys.readouterr().out
    assert "Exploratory on data that has been seen" in out and "irt_2pl" in out
    assert run([*args, "--out", str(tmp_path / "b.json")]) == 0
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    report = json.loads((tmp_path / "a.json").read_text())
    assert report["status"] == "exploratory on data that has been seen"
    assert report["splits"]["toy"]["by_k"]["5"]["rows"]["conditional_beta_binomial_ml"]


def test_cli_refuses_bad_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "toy.csv"
    _write_csv(source, np.eye(4, 30, dtype=bool))
    assert run(["teams", "compare", str(source), "--k", "1"]) == 2
    assert "at least 2" in capsys.readouterr().err
    assert run(["teams", "compare", str(source), "--pilots", "0"]) == 2
