"""Exact McNemar against statsmodels; the bootstrap percentile interval's indices."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from statsmodels.stats.contingency_tables import mcnemar

from foreseen.core.stats import mcnemar_exact_p, percentile_interval


@pytest.mark.parametrize(
    ("b", "c"),
    [(13, 3), (3, 13), (0, 0), (0, 1), (1, 0), (5, 5), (9, 3), (12, 1), (40, 25), (0, 17),
     (200, 170), (1000, 1100)],
)
def test_mcnemar_matches_statsmodels(b: int, c: int) -> None:
    reference = mcnemar([[0, b], [c, 0]], exact=True).pvalue
    assert mcnemar_exact_p(b, c) == pytest.approx(min(1.0, reference), rel=1e-9, abs=1e-300)


def test_mcnemar_published_lite_value() -> None:
    assert round(mcnemar_exact_p(13, 3), 6) == 0.021271


def test_mcnemar_is_symmetric_and_capped() -> None:
    for b in range(12):
        for c in range(12):
            p = mcnemar_exact_p(b, c)
            assert p == mcnemar_exact_p(c, b)
            assert 0.0 < p <= 1.0
    assert mcnemar_exact_p(4, 4) == 1.0


def test_mcnemar_refuses_negative_counts() -> None:
    with pytest.raises(ValueError):
        mcnemar_exact_p(-1, 2)


def test_percentile_interval_indices_for_200_replicates() -> None:
    values = [float((37 * i) % 200) for i in range(200)]  # a permutation of 0..199
    low, high = percentile_interval(values)
    assert (low, high) == (5.0, 195.0)
    assert math.floor(0.025 * 200) == 5 and min(199, math.floor(0.975 * 200)) == 195


def test_percentile_interval_80_percent_uses_the_intended_indices() -> None:
    """(1 − 0.8)/2 · 200 is 19.999… in floating point; the index must still be 20 (and 180)."""
    values = [float(i) for i in range(200)]
    assert percentile_interval(values, level=0.8) == (20.0, 180.0)
    assert percentile_interval(values, level=0.9) == (10.0, 190.0)


def test_percentile_interval_small_sample_clamps_the_upper_index() -> None:
    assert percentile_interval([3.0, 1.0, 2.0]) == (1.0, 3.0)
    assert percentile_interval([7.0]) == (7.0, 7.0)
    with pytest.raises(ValueError):
        percentile_interval([])


def test_percentile_interval_floors_the_tail_index() -> None:
    # 0.025 · 30 = 0.75 → index 0; 0.975 · 30 = 29.25 → index 29
    assert percentile_interval([float(v) for v in range(30)]) == (0.0, 29.0)
    # (1 − 0.8)/2 · 200 is 19.999999999999996 in floating point; the index meant is 20
    assert percentile_interval([float(v) for v in range(200)], level=0.8) == (20.0, 180.0)


def test_stats_refusals_have_their_messages() -> None:
    with pytest.raises(ValueError) as caught:
        percentile_interval([])
    assert str(caught.value) == "percentile_interval needs at least one value"
    with pytest.raises(ValueError) as caught:
        mcnemar_exact_p(-1, 2)
    assert str(caught.value) == "discordant counts must be non-negative, got b=-1, c=2"
    assert mcnemar_exact_p(0, 0) == 1.0


@pytest.mark.parametrize(("b", "c"), [(0, 0), (1, 2), (13, 3), (57, 80), (300, 299), (2, 900)])
def test_mcnemar_tail_is_the_exact_binomial_sum(b: int, c: int) -> None:
    """The running-product tail equals Σ_{i ≤ min(b, c)} C(n, i) to the last bit."""
    n = b + c
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    expected = float(min(Fraction(1), Fraction(2 * tail, 2**n))) if n else 1.0
    assert mcnemar_exact_p(b, c) == expected


@pytest.mark.parametrize(("b", "c"), [(29, 33), (30, 32), (40, 50)])
def test_mcnemar_takes_numpy_integers_exactly(b: int, c: int) -> None:
    import numpy as np

    assert mcnemar_exact_p(np.int64(b), np.int64(c)) == mcnemar_exact_p(b, c)  # type: ignore[arg-type]
