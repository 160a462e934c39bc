"""``compare``: rows recomputed independently, families from the registry, CLI end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from foreseen.core.errors import ConfigError
from foreseen.core.schema import to_json
from foreseen.teams.curves import coverage_grid, population_curve
from foreseen.teams.exploratory.calibration import SkippedPilotSize, draw_pilot_indices
from foreseen.teams.exploratory.compare import Comparison, ComparisonAtK, compare_forecasters
from foreseen.teams.forecasters.conditional import conditional_forecast
from foreseen.teams.forecasters.registry import FORECASTERS
from foreseen.teams.matrix import OutcomeMatrix, Provenance

from support.teams_cli import run, validated_json
from support.teams_matrices import write_wide_csv


def test_rows_match_an_independent_recomputation(small_matrix: OutcomeMatrix) -> None:
    report = compare_forecasters(small_matrix, ks=(5, 30), pilots=3, seed=2, replicates=10)
    assert report.status.startswith("exploratory")
    assert isinstance(report.by_k["30"], SkippedPilotSize)
    block = report.by_k["5"]
    assert isinstance(block, ComparisonAtK)
    solved = small_matrix.competent().solved
    grid = coverage_grid(solved.shape[0])
    truth = population_curve(solved, grid)
    pilots = draw_pilot_indices(solved.shape[0], 5, 3, 2)
    for name in ("beta_binomial", "beta_binomial_ml", "rasch"):
        curves = FORECASTERS[name].fit(solved[pilots]).curve(grid)
        row = block.rows[name]
        assert row.curve_mae == pytest.approx(np.abs(curves - truth).mean(), abs=1e-12)
        assert row.population_coverage_mae == pytest.approx(
            np.abs(curves[:, -1] - truth[-1]).mean(), abs=1e-12)
    assert list(block.rows)[: len(FORECASTERS)] == list(FORECASTERS)
    for name, forecaster in FORECASTERS.items():
        assert block.rows[name].family == forecaster.family
    assert block.rows["irt_2pl"].family == "exploratory"
    assert block.rows["kish"].family == "preregistered"
    conditional = block.rows["conditional_beta_binomial"]
    assert conditional.family == "conditional"
    assert conditional.curve_mae is None and conditional.curve_mae_reason
    expected = np.mean([abs(conditional_forecast(solved[p], solved.shape[0]).coverage - truth[-1])
                        for p in pilots])
    assert conditional.population_coverage_mae == pytest.approx(expected, abs=1e-12)
    best = block.best_exploratory_versus_beta_binomial
    exploratory = {name: block.rows[name].population_coverage_mae
                   for name in ("beta_binomial_ml", "zero_inflated_beta_binomial", "irt_2pl")}
    assert best.best == min(exploratory, key=exploratory.__getitem__)
    assert best.difference == pytest.approx(
        min(exploratory.values()) - block.rows["beta_binomial"].population_coverage_mae)
    assert best.beats_beta_binomial == (min(exploratory.values())
                                        < block.rows["beta_binomial"].population_coverage_mae)
    json.dumps(to_json(report), allow_nan=False)


def test_cli_writes_identical_reports_and_says_exploratory(
    tmp_path: Path, small_matrix: OutcomeMatrix, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_wide_csv(small_matrix, tmp_path / "toy.csv")
    args = ["teams", "compare", str(source), "--k", "5", "--pilots", "2", "--replicates", "8"]
    assert run([*args, "--out", str(tmp_path / "a.json")]) == 0
    out = capsys.readouterr().out
    assert "Exploratory on data that has been seen" in out and "irt_2pl" in out
    assert "preregistered" in out and "issue" not in out and "E046 " not in out
    assert run([*args, "--out", str(tmp_path / "b.json")]) == 0
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    report = validated_json(tmp_path / "a.json", Comparison)
    assert report["status"] == "exploratory on data that has been seen"
    rows = report["splits"]["toy"]["by_k"]["5"]["rows"]
    assert rows["conditional_beta_binomial_ml"]["family"] == "conditional"
    assert {row["family"] for row in rows.values()} == {"preregistered", "exploratory",
                                                         "conditional"}


def test_bad_settings_are_one_line_configuration_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "toy.csv"
    source.write_text(",t1,t2\na,1,0\nb,0,1\n")
    for extra, message in ((["--k", "1"], "at least 2"), (["--pilots", "0"], "at least 1"),
                           (["--seed", "-1"], "greater than or equal to 0")):
        assert run(["teams", "compare", str(source), *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and "\n" not in err
    matrix = OutcomeMatrix(("a", "b"), ("t1", "t2"), np.eye(2, dtype=bool),
                           Provenance("toy", None, 2, "0" * 64))
    with pytest.raises(ConfigError, match="at least 2"):
        compare_forecasters(matrix, ks=(1,))


def test_compare_splits_gives_the_same_report_on_local_processes(small_matrix: OutcomeMatrix
                                                                 ) -> None:
    from foreseen.core.parallel import LocalProcessExecutor
    from foreseen.teams.exploratory.compare import compare_splits

    serial = compare_splits([small_matrix], (5, 30), 3, 2, replicates=10)
    pooled = compare_splits([small_matrix], (5, 30), 3, 2, replicates=10,
                            executor=LocalProcessExecutor(2))
    assert to_json(pooled) == to_json(serial)
    single = compare_forecasters(small_matrix, ks=(5, 30), pilots=3, seed=2, replicates=10)
    assert to_json(serial.splits[small_matrix.provenance.split]) == to_json(single)


def test_interval_coverage_is_reported_at_each_point_beyond_the_pilot(
        small_matrix: OutcomeMatrix) -> None:
    from foreseen.teams.exploratory.calibration import hit_shares, run_pilots

    report = compare_forecasters(small_matrix, ks=(5,), pilots=4, seed=3, replicates=10,
                                 forecasters=["beta_binomial", "kish"])
    block = report.by_k["5"]
    assert isinstance(block, ComparisonAtK)
    run = run_pilots(small_matrix.competent().solved, 5, pilots=4, seed=3, replicates=10,
                     forecasters=["beta_binomial", "kish"])
    beyond_sizes = [m for m in run.grid if m > 5]
    assert 5 in run.grid and beyond_sizes  # the grid holds k itself, which is left out
    for name in ("beta_binomial", "kish"):
        beyond = block.rows[name].interval_coverage_beyond_pilot
        assert beyond is not None
        for level in (0.8, 0.95):
            shares = hit_shares(run, name, level)
            expected = {str(m): float(s) for m, s in zip(run.grid, shares, strict=True) if m > 5}
            assert beyond[f"{100 * level:g}%"] == expected
    conditional = block.rows["conditional_beta_binomial"].interval_coverage_beyond_pilot
    assert conditional == {"80%": {str(m): None for m in beyond_sizes},
                           "95%": {str(m): None for m in beyond_sizes}}


def test_a_compare_file_written_before_per_point_coverage_still_loads(
        small_matrix: OutcomeMatrix) -> None:
    from foreseen.core.schema import from_json

    report = compare_forecasters(small_matrix, ks=(5,), pilots=2, seed=3, replicates=5,
                                 forecasters=["kish"])
    data = json.loads(json.dumps(to_json(report)))
    for row in data["by_k"]["5"]["rows"].values():
        del row["interval_coverage_beyond_pilot"]
    from foreseen.teams.exploratory.compare import SplitComparison

    old = from_json(SplitComparison, data, strict=True)
    block = old.by_k["5"]
    assert isinstance(block, ComparisonAtK)
    assert block.rows["kish"].interval_coverage_beyond_pilot is None


def test_the_terminal_shows_coverage_per_point_not_averaged(
        tmp_path: Path, small_matrix: OutcomeMatrix, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_wide_csv(small_matrix, tmp_path / "toy.csv")
    assert run(["teams", "compare", str(source), "--k", "5", "--pilots", "2",
                "--replicates", "5"]) == 0
    out = capsys.readouterr().out
    grid = coverage_grid(small_matrix.competent().n_agents)
    assert f"80% at m = {', '.join(str(m) for m in grid if m > 5)}" in " ".join(out.split())
    assert "80% int." not in out
