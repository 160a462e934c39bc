"""ln Γ and ln B without scipy.special, checked against scipy.special (a test-only oracle)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import betaln, gammaln

from foreseen.teams.curves import log_beta, log_gamma, miss_probabilities


def test_log_gamma_matches_scipy_and_keeps_the_shape() -> None:
    values = np.array([[0.5, 1.0, 2.0], [3.5, 79.0, 1e4]])
    mine = log_gamma(values)
    assert mine.shape == (2, 3) and mine.dtype == np.float64
    np.testing.assert_allclose(mine, gammaln(values), rtol=1e-13, atol=1e-14)
    assert log_gamma(5.0).shape == ()


def test_log_beta_broadcasts_like_scipy() -> None:
    a = np.array([[0.3], [2.5], [40.0]])
    b = np.array([[1.0], [7.25], [900.0]]) + np.array([0.0, 2.0, 5.0, 20.0])
    mine = log_beta(a, b)
    assert mine.shape == (3, 4)
    np.testing.assert_allclose(mine, betaln(a, b), rtol=1e-12, atol=1e-12)


def test_the_cached_miss_table_is_handed_out_as_a_copy() -> None:
    first = miss_probabilities(10, [2, 5, 10])
    expected = first.copy()
    first[:] = -1.0
    np.testing.assert_array_equal(miss_probabilities(10, [2, 5, 10]), expected)
    # a task no agent solves (c = 0) is always missed, one all solve (c = M) never
    assert expected[0].tolist() == [1.0, 1.0, 1.0] and expected[10].tolist() == [0.0, 0.0, 0.0]
    assert expected[1, 0] == pytest.approx(0.8)  # binom(9, 2) / binom(10, 2)
    with pytest.raises(ValueError, match=r"team sizes must lie in \[0, 10\]"):
        miss_probabilities(10, [11])
