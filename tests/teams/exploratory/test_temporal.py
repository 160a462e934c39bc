"""Temporal holdout: cutoffs, observed coverage, forecasts, errors and the ``history`` command."""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from foreseen.core.errors import ConfigError, SourceError
from foreseen.core.schema import to_json
from foreseen.teams.exploratory.history import HistoryReport
from foreseen.teams.exploratory.temporal import (
    EXPLORATORY_NOTE,
    KINDS,
    default_cutoffs,
    temporal_holdout,
)
from foreseen.teams.forecasters.conditional import conditional_coverages
from foreseen.teams.forecasters.registry import FORECASTERS
from foreseen.teams.matrix import OutcomeMatrix, Provenance
from foreseen.teams.provenance.submissions import SubmissionInfo, load_provenance
from foreseen.teams.sources.dispatch import builtin_splits

from support.teams_cli import run, validated_json
from support.teams_matrices import write_wide_csv

Builder = Callable[..., OutcomeMatrix]
FAST = ["beta_binomial", "incidence", "rasch", "independence"]
DAY0 = datetime.date(2023, 1, 1)


def _dated(matrix: OutcomeMatrix, undated: int = 0) -> dict[str, SubmissionInfo]:
    """Agent i dated DAY0 + 10·i days (the last ``undated`` agents have no date)."""
    info = {}
    for i, agent in enumerate(matrix.agents):
        date = DAY0 + datetime.timedelta(days=10 * i) if i < matrix.n_agents - undated else None
        info[agent] = SubmissionInfo(agent, (), (), (), None, None, date, None, {})
    return info


def test_default_cutoffs_are_quartile_dates() -> None:
    rng = np.random.default_rng(0)
    dates = [DAY0 + datetime.timedelta(days=int(d)) for d in rng.integers(0, 900, 41)]
    ordered = sorted(dates)
    expected = sorted({ordered[math.ceil(q * (len(dates) - 1))] for q in (0.25, 0.5, 0.75)})
    assert default_cutoffs(dates) == expected
    assert default_cutoffs([DAY0] * 5) == [DAY0]
    assert default_cutoffs([]) == []


def test_observed_and_forecast_coverage_match_independent_computation(
    make_matrix: Builder,
) -> None:
    matrix = make_matrix(30, 150, seed=4)
    info = _dated(matrix, undated=2)
    cutoffs = [DAY0 + datetime.timedelta(days=95), DAY0 + datetime.timedelta(days=200)]
    report = temporal_holdout(matrix, info, cutoffs, FAST, competent_only=False)
    json.dumps(to_json(report), allow_nan=False)
    assert report.exploratory is True and report.note == EXPLORATORY_NOTE
    assert report.undated_agents == matrix.agents[-2:]
    dated = [a for a in matrix.agents if info[a].date is not None]
    population = len(dated)
    for cutoff, block in zip(cutoffs, report.cutoffs, strict=True):
        earlier = [a for a in dated if info[a].date < cutoff]  # type: ignore[operator]
        assert block.earlier_agents == len(earlier) and block.feasible
        assert block.population_agents == population
        rows = [matrix.agents.index(a) for a in earlier]
        all_rows = [matrix.agents.index(a) for a in dated]
        solved_before = sum(any(matrix.solved[r, t] for r in rows) for t in range(150)) / 150
        solved_all = sum(any(matrix.solved[r, t] for r in all_rows) for t in range(150)) / 150
        observed = block.observed
        assert observed is not None and block.forecasts is not None
        assert observed.earlier_coverage == pytest.approx(solved_before, abs=1e-12)
        assert observed.population_coverage == pytest.approx(solved_all, abs=1e-12)
        assert observed.added_coverage == pytest.approx(solved_all - solved_before, abs=1e-12)
        pilot = matrix.solved[rows]
        for name in FAST:
            forecast = block.forecasts[name]
            plain = float(FORECASTERS[name].fit(pilot).curve([population])[0])
            assert forecast.unconditional.coverage == pytest.approx(plain, abs=1e-12)
            conditional = float(conditional_coverages(pilot, population, name))
            assert forecast.conditional.coverage == pytest.approx(conditional, abs=1e-9)
            for kind in KINDS:
                value = forecast.of(kind).coverage
                assert value is not None
                assert forecast.of(kind).error == pytest.approx(value - solved_all, abs=1e-12)
                assert forecast.of(kind).added_coverage == pytest.approx(
                    value - solved_before, abs=1e-12)
    for name in FAST:
        for kind in KINDS:
            errors = [abs(c.forecasts[name].of(kind).error or 0.0) for c in report.cutoffs
                      if c.forecasts is not None]
            assert len(errors) == 2
            assert report.mean_absolute_error[name].of(kind).mae == pytest.approx(
                sum(errors) / len(errors), abs=1e-12)


def test_infeasible_cutoffs_and_the_competence_screen(make_matrix: Builder) -> None:
    matrix = make_matrix(10, 80, seed=8)
    solved = matrix.solved.copy()
    solved[0] = False  # the earliest agent solves nothing: not competent
    matrix = OutcomeMatrix(matrix.agents, matrix.tasks, solved, matrix.provenance)
    info = _dated(matrix)
    early, late = DAY0 + datetime.timedelta(days=15), DAY0 + datetime.timedelta(days=1000)
    report = temporal_holdout(matrix, info, [late, early], ["beta_binomial"])
    assert report.agents == 9 and report.competence_screen is True
    first, second = report.cutoffs
    assert first.cutoff == early.isoformat() and not first.feasible
    assert first.reason is not None and "at least 2 earlier" in first.reason
    assert first.earlier_agents == 1 and first.observed is None
    assert not second.feasible and second.later_agents == 0
    error = report.mean_absolute_error["beta_binomial"].conditional
    assert error.mae is None and error.reason == "no feasible cutoff"
    everyone = temporal_holdout(matrix, info, [early], ["beta_binomial"], competent_only=False)
    assert everyone.agents == 10 and everyone.cutoffs[0].earlier_agents == 2
    assert everyone.cutoffs[0].feasible


def test_bad_requests_are_one_line_errors(make_matrix: Builder) -> None:
    matrix = make_matrix(6, 30, seed=1)
    with pytest.raises(ConfigError, match="unknown forecaster 'oracle'"):
        temporal_holdout(matrix, _dated(matrix), None, ["oracle"])
    with pytest.raises(SourceError, match="no submission has a date"):
        temporal_holdout(matrix, _dated(matrix, undated=6), None, ["kish"])


def test_lite_default_cutoffs_reach_the_published_floor() -> None:
    lite = builtin_splits()[0]
    info = load_provenance(lite.agents, split="lite")
    report = temporal_holdout(lite, info, None, ["beta_binomial", "incidence"])
    assert report.agents == 78 and report.dated_agents == 78
    dates = [info[a].date for a in lite.competent().agents]
    assert [c.cutoff for c in report.cutoffs] == [
        d.isoformat() for d in default_cutoffs([d for d in dates if d is not None])]
    for block in report.cutoffs:
        assert block.observed is not None
        assert block.observed.population_coverage == pytest.approx(1 - 35 / 300)
    ks = [c.earlier_agents for c in report.cutoffs]
    assert ks == sorted(ks) and 0 < ks[0] < ks[-1] < 78


def test_history_command_writes_identical_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make_matrix: Builder
) -> None:
    base = make_matrix(16, 90, seed=6)
    agents = tuple(sorted([f"2024{month:02d}15_sys{month}" for month in range(1, 13)]
                          + [f"2025{month:02d}01_late{month}" for month in range(1, 5)]))
    tasks = tuple(sorted(f"item/{j}" for j in range(90)))
    matrix = OutcomeMatrix(agents, tasks, base.solved,
                           Provenance("x", None, 16, "0" * 64))
    source = tmp_path / "bench.csv"
    write_wide_csv(matrix, source)
    args = ["teams", "history", str(source), "--cutoff", "2024-06-01", "--cutoff", "2025-01-01",
            "--forecaster", "beta_binomial", "--forecaster", "incidence"]
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    assert run([*args, "--out", str(first)]) == 0
    out = capsys.readouterr().out
    assert "EXPLORATORY" in out and "report written" in out
    assert run([*args, "--out", str(second)]) == 0
    assert first.read_bytes() == second.read_bytes()
    record = validated_json(first, HistoryReport)
    assert record["exploratory"] is True and "data that has been seen" in record["note"]
    report = record["splits"]["bench"]
    assert [c["cutoff"] for c in report["cutoffs"]] == ["2024-06-01", "2025-01-01"]
    assert report["forecasters"] == ["beta_binomial", "incidence"]
    assert report["provenance"]["fields_from"]["date"] == {"name": 16}
    competent = matrix.competent()
    earlier = sum(1 for a in competent.agents if a < "20240601")
    assert report["cutoffs"][0]["earlier_agents"] == earlier


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--cutoff", "2024-13-01"], "--cutoff '2024-13-01' is not a date"),
        (["--forecaster", "nope"], "unknown forecaster 'nope'"),
        (["--population", "some"], "unknown population 'some'"),
        (["--format", "tall"], "unknown format 'tall'"),
    ],
)
def test_history_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make_matrix: Builder,
    extra: list[str], message: str,
) -> None:
    source = tmp_path / "m.csv"
    matrix = make_matrix(5, 20, seed=2)
    renamed = OutcomeMatrix(tuple(f"2024010{i}_a" for i in range(1, 6)), matrix.tasks,
                            matrix.solved, matrix.provenance)
    write_wide_csv(renamed, source)
    out = tmp_path / "never.json"
    assert run(["teams", "history", str(source), "--out", str(out), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
    assert not out.exists()


def test_history_single_attempt_population(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make_matrix: Builder
) -> None:
    matrix = make_matrix(8, 40, seed=3)
    agents = tuple(f"2024{m:02d}01_s{m}" for m in range(1, 9))
    renamed = OutcomeMatrix(agents, matrix.tasks, matrix.solved, matrix.provenance)
    source = tmp_path / "demo.csv"
    write_wide_csv(renamed, source)
    header = ("leaderboard,folder,name,date,resolved_pct,cost_usd,instance_cost_usd,"
              "instance_calls,os_model,os_system,checked,models,orgs,attempts,tags")
    rows = [f"demo,{a},,,,,,,,,,m{i % 3},,{'1' if i % 4 else '2+'}," for i, a in enumerate(agents)]
    board = tmp_path / "board.csv"
    board.write_text("\n".join([header, *rows]) + "\n")
    out = tmp_path / "h.json"
    assert run(["teams", "history", str(source), "--leaderboard", str(board), "--population",
                 "single-attempt", "--forecaster", "kish", "--all-agents", "--out",
                 str(out)]) == 0
    report = validated_json(out, HistoryReport)["splits"]["demo"]
    assert report["population"]["dropped_by_reason"] == {"attempts 2+": 2}
    assert report["agents"] == 6
    assert report["provenance"]["fields_from"]["models"] == {"leaderboard": 8}
