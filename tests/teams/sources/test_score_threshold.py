"""Long tables of scores with a threshold: solved when score ≥ threshold, refusals, the CLI."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from foreseen.core.errors import ConfigError, SourceError
from foreseen.teams.sources.dispatch import load_source
from foreseen.teams.sources.long_table import LongColumns, parse_score

from support.teams_cli import run
from support.teams_matrices import synthetic_matrix, write_wide_csv

AT_HALF = LongColumns(solved="score", threshold=0.5)


def _csv(path: Path, rows: list[tuple[str, str, str]], header: str = "agent,task,score") -> Path:
    path.write_text(header + "\n" + "".join(f"{a},{t},{s}\n" for a, t, s in rows),
                    encoding="utf-8")
    return path


def test_a_score_at_the_threshold_is_solved_and_just_below_is_not(tmp_path: Path) -> None:
    path = _csv(tmp_path / "s.csv", [("A", "t1", "0.5"), ("A", "t2", " 0.4999999 "),
                                     ("B", "t1", "1"), ("B", "t2", "-3e-1")])
    matrix = load_source(path, columns=AT_HALF)
    assert matrix.agents == ("A", "B") and matrix.tasks == ("t1", "t2")
    assert matrix.solved.tolist() == [[True, False], [True, False]]
    stricter = load_source(path, columns=LongColumns(solved="score", threshold=1.0))
    assert stricter.solved.tolist() == [[False, False], [True, False]]


@pytest.mark.parametrize("bad", ["", "abc", "nan", "inf", "-inf", "true"])
def test_a_value_that_is_no_finite_score_is_refused_with_its_row(tmp_path: Path,
                                                                 bad: str) -> None:
    path = _csv(tmp_path / "s.csv", [("A", "t1", "0.7"), ("A", "t2", bad)])
    with pytest.raises(SourceError, match="row 3 has score"):
        load_source(path, columns=AT_HALF)


def test_parse_score_refuses_booleans_and_none() -> None:
    assert parse_score(True) is None and parse_score(None) is None
    assert parse_score(float("nan")) is None
    assert parse_score(2) == 2.0 and parse_score(" 0.25") == 0.25


def test_parquet_scores_read_the_same(tmp_path: Path) -> None:
    path = tmp_path / "s.parquet"
    pq.write_table(pa.table({"agent": ["A", "A", "B", "B"], "task": ["t1", "t2", "t1", "t2"],
                             "acc": [0.5, 0.2, 0.9, float("nan")]}), path)
    with pytest.raises(SourceError, match="row 4 has score nan"):
        load_source(path, columns=LongColumns(solved="acc", threshold=0.5))
    pq.write_table(pa.table({"agent": ["A", "A", "B"], "task": ["t1", "t2", "t1"],
                             "acc": [0.5, 0.2, 0.9]}), path)
    matrix = load_source(path, columns=LongColumns(solved="acc", threshold=0.5))
    assert matrix.solved.tolist() == [[True, False], [True, False]]  # absent pair: unsolved


def test_a_threshold_for_a_wide_matrix_or_a_directory_is_refused(tmp_path: Path) -> None:
    wide = write_wide_csv(synthetic_matrix(4, 6, seed=1), tmp_path / "w.csv")
    with pytest.raises(ConfigError, match="long table only"):
        load_source(wide, columns=AT_HALF)
    with pytest.raises(ConfigError, match="long table only"):
        load_source(wide, file_format="wide", columns=AT_HALF)
    parquet = tmp_path / "w.parquet"
    pq.write_table(pa.table({"": ["a"], "t1": [1]}), parquet)
    with pytest.raises(ConfigError, match="long table only"):
        load_source(parquet, columns=AT_HALF)
    folder = tmp_path / "split"
    folder.mkdir()
    with pytest.raises(ConfigError, match="long table only"):
        load_source(folder, columns=AT_HALF)


def test_the_cli_reads_scores_with_threshold_and_score_column(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [(f"agent{a}", f"task{t}", f"{((a * 7 + t * 3) % 10) / 10:.1f}")
            for a in range(6) for t in range(12)]
    path = _csv(tmp_path / "evals.csv", rows, header="agent,task,acc")
    assert run(["teams", "curve", str(path), "--threshold", "0.5", "--score-column", "acc"]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "evals: population curve of 6 agents" in printed and "tasks 12" in printed
    assert run(["teams", "curve", str(path), "--score-column", "acc"]) == 2  # scores, no threshold
    assert "a column of scores needs --threshold" in capsys.readouterr().err
    assert run(["teams", "curve", str(path), "--threshold", "0.5"]) == 2  # no column "score"
    assert "columns agent, task, score" in capsys.readouterr().err
    assert run(["teams", "compare", "--threshold", "0.5"]) == 2  # built-in data: no table
