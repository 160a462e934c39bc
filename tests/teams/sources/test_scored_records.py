"""The shared rules of the log readers: binary scores or a threshold, duplicates, provenance."""

from __future__ import annotations

import pytest

from foreseen.core.errors import SourceError
from foreseen.teams.matrix import OutcomeMatrix
from foreseen.teams.sources.scored_records import (
    ScoredRecord,
    choose_score_name,
    records_to_matrix,
)

FILES = {"inspect/a.eval": "0" * 64}


def _records(*rows: tuple[str, str, float]) -> list[ScoredRecord]:
    return [ScoredRecord(agent, task, score, f"a.eval sample {task}") for agent, task, score
            in rows]


def _matrix(records: list[ScoredRecord], threshold: float | None = None) -> OutcomeMatrix:
    return records_to_matrix(records, threshold, split="s", source="a.eval", file_sha256=FILES)


def test_binary_scores_fill_the_matrix_and_an_absent_pair_is_unsolved() -> None:
    matrix = _matrix(_records(("b", "t2", 1.0), ("a", "t1", 1.0), ("a", "t2", 0.0)))
    assert matrix.agents == ("a", "b") and matrix.tasks == ("t1", "t2")
    assert matrix.solved.tolist() == [[True, False], [False, True]]
    assert matrix.provenance.files_read == 1 and matrix.provenance.file_sha256 == FILES
    assert matrix.provenance.commit is None and matrix.provenance.split == "s"


@pytest.mark.parametrize("score", [0.5, 2.0, -1.0])
def test_a_score_other_than_0_or_1_needs_a_threshold(score: float) -> None:
    with pytest.raises(SourceError, match=r"sample t1 has score .*, not 0 or 1: give --threshold"):
        _matrix(_records(("a", "t1", score)))


def test_the_threshold_is_met_at_equality() -> None:
    records = _records(("a", "t1", 0.7), ("a", "t2", 0.6999999))
    assert _matrix(records, 0.7).solved.tolist() == [[True, False]]


@pytest.mark.parametrize("score", [float("nan"), float("inf")])
def test_a_non_finite_score_is_refused_even_with_a_threshold(score: float) -> None:
    with pytest.raises(SourceError, match="expected a finite number"):
        _matrix(_records(("a", "t1", score)), 0.5)


def test_a_pair_twice_and_no_records_are_refused() -> None:
    twice = [ScoredRecord("a", "t1", 1.0, "x.eval sample 1"),
             ScoredRecord("a", "t1", 1.0, "y.eval sample 1")]
    with pytest.raises(SourceError, match=r"appears twice: x\.eval sample 1 and y\.eval sample 1"):
        _matrix(twice)
    with pytest.raises(SourceError, match="holds no scored samples"):
        _matrix([])


def test_the_score_name_is_the_only_one_or_the_one_asked_for() -> None:
    assert choose_score_name(["acc"], None, "f", "metric") == "acc"
    assert choose_score_name(["acc", "f1"], "f1", "f", "metric") == "f1"
    with pytest.raises(SourceError, match=r"f has 2 metrics \(acc, f1\): choose one"):
        choose_score_name(["f1", "acc"], None, "f", "metric")
    with pytest.raises(SourceError, match=r"f has 0 scorers \(none\)"):
        choose_score_name([], None, "f", "scorer")
    with pytest.raises(SourceError, match=r"f has no metric 'em' \(it has acc\)"):
        choose_score_name(["acc"], "em", "f", "metric")
