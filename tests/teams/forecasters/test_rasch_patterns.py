"""Rasch column patterns: packed integer keys give exactly ``np.unique(pilot.T, axis=0)``.

The reference is numpy's row-wise unique (lexicographic over rows, False < True),
computed here on the transposed pilot; the packed path must give the same
patterns in the same order and the same counts, at every packing boundary
(k = 1, 7, 8, 9, 63, 64) and past it (k = 65 takes the reference path).
"""

from __future__ import annotations

import numpy as np
import pytest

from foreseen.teams.forecasters.rasch import column_patterns


@pytest.mark.parametrize("k", [1, 2, 7, 8, 9, 16, 17, 40, 63, 64, 65])
@pytest.mark.parametrize("rate", [0.02, 0.5, 0.97])
def test_patterns_and_counts_equal_the_row_wise_unique(k: int, rate: float) -> None:
    rng = np.random.default_rng(k * 1000 + int(rate * 100))
    base = rng.random((k, 300)) < rate
    pilot = base[:, rng.integers(0, 300, 5000)]  # many repeated columns
    patterns, counts = column_patterns(pilot)
    reference, reference_counts = np.unique(pilot.T, axis=0, return_counts=True)
    assert patterns.dtype == np.float64 and counts.dtype == np.float64
    assert np.array_equal(patterns, reference.T.astype(np.float64))
    assert np.array_equal(counts, reference_counts.astype(np.float64))
    assert counts.sum() == pilot.shape[1]


def test_the_order_is_lexicographic_with_row_zero_first() -> None:
    pilot = np.array([[True, False, False, True], [False, True, False, True]])
    patterns, counts = column_patterns(pilot)
    assert patterns.T.tolist() == [[0, 0], [0, 1], [1, 0], [1, 1]]
    assert counts.tolist() == [1, 1, 1, 1]


def test_an_empty_pilot_has_no_patterns() -> None:
    patterns, counts = column_patterns(np.zeros((3, 0), dtype=bool))
    assert patterns.shape == (3, 0) and counts.shape == (0,)
