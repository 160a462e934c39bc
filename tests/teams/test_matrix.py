"""The outcome matrix: construction rules and the competence screen at its boundary."""

from __future__ import annotations

import numpy as np
import pytest

from foreseen.core.errors import SourceError
from foreseen.teams.matrix import OutcomeMatrix, Provenance

PROVENANCE = Provenance(split="s", commit=None, files_read=0, files_sha256="0" * 64)


def _matrix(solves: list[int], n_tasks: int) -> OutcomeMatrix:
    solved = np.zeros((len(solves), n_tasks), dtype=bool)
    for row, count in enumerate(solves):
        solved[row, :count] = True
    agents = tuple(f"a{row:02d}" for row in range(len(solves)))
    tasks = tuple(f"t{column:03d}" for column in range(n_tasks))
    return OutcomeMatrix(agents, tasks, solved, PROVENANCE)


@pytest.mark.parametrize("n_tasks", [20, 100, 300])
def test_a_solve_rate_of_exactly_five_percent_is_competent(n_tasks: int) -> None:
    at = n_tasks // 20  # solved / N = 0.05 exactly
    matrix = _matrix([at, at - 1, at + 1, 0], n_tasks)
    assert at / n_tasks == 0.05
    assert matrix.competent().agents == ("a00", "a02")


def test_the_threshold_can_be_given() -> None:
    matrix = _matrix([1, 2, 3], 10)
    assert matrix.competent(0.2).agents == ("a01", "a02")
    assert matrix.competent(0.0).agents == ("a00", "a01", "a02")


def test_rows_and_columns_must_be_sorted_and_distinct() -> None:
    solved = np.zeros((2, 2), dtype=bool)
    with pytest.raises(ValueError, match="sorted"):
        OutcomeMatrix(("b", "a"), ("t1", "t2"), solved, PROVENANCE)
    with pytest.raises(SourceError, match="duplicate task name 't1'"):
        OutcomeMatrix.from_rows({"a": [True, False]}, ["t1", "t1"], PROVENANCE)
    with pytest.raises(SourceError, match="empty"):
        OutcomeMatrix.from_rows({}, ["t1"], PROVENANCE)


@pytest.mark.parametrize(("first", "second"), [
    ("caf\u00e9", "cafe\u0301"),  # composed and decomposed é
    ("K", "\u212a"),  # the Kelvin sign's NFC form is the ASCII letter K
    ("\u212a", "K"),
])
def test_two_spellings_of_one_name_are_refused(first: str, second: str) -> None:
    with pytest.raises(SourceError, match="differ only in Unicode normalisation"):
        OutcomeMatrix.from_rows({"a": [True, False]}, [first, second], PROVENANCE)
    with pytest.raises(SourceError, match="agent names"):
        OutcomeMatrix.from_rows({first: [True], second: [False]}, ["t1"], PROVENANCE)


def test_distinct_non_ascii_names_are_kept() -> None:
    matrix = OutcomeMatrix.from_rows({"a": [True, False, True]},
                                     ["caf\u00e9", "cafe", "\u00e9t\u00e9"], PROVENANCE)
    assert matrix.n_tasks == 3
