"""Tests of the seeded cluster bootstrap (foreseen.core.bootstrap)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from foreseen.core.bootstrap import (
    bootstrap_mean,
    cluster_indices,
    cluster_weights,
    equivalent,
    hierarchical_weights,
    nested_mean_weights,
    quantile,
    summarize,
    weighted_means,
)


def test_same_seed_gives_identical_bytes_and_other_seed_differs() -> None:
    a = cluster_weights(12, 500, seed=7)
    b = cluster_weights(12, 500, seed=7)
    c = cluster_weights(12, 500, seed=8)
    assert a.tobytes() == b.tobytes()
    assert a.tobytes() != c.tobytes()
    values = np.linspace(-1, 1, 12)
    replicates = cluster_weights(12, 500, seed=3) @ values  # the same draw, by hand
    summary = bootstrap_mean(values, 500, 3)
    assert summary.ci95 == pytest.approx(tuple(np.quantile(replicates, [0.025, 0.975])))
    assert summary.lower_bound_one_sided == pytest.approx(float(np.quantile(replicates, 0.05)))


def test_weights_are_draw_counts_over_k() -> None:
    indices = cluster_indices(5, 300, seed=1)
    weights = cluster_weights(5, 300, seed=1)
    for row in range(300):
        expected = np.bincount(indices[row], minlength=5) / 5
        assert np.array_equal(weights[row], expected)
    assert np.allclose(weights.sum(axis=1), 1.0)


def test_stratified_draw_keeps_per_stratum_counts() -> None:
    strata = ["a", "b", "a", "c", "b", "a", "c", "c", "c"]
    indices = cluster_indices(len(strata), 400, seed=5, strata=strata)
    labels = np.array(strata)[indices]
    for label in set(strata):
        assert np.all((labels == label).sum(axis=1) == strata.count(label))
    # every stratum's draws vary (it is a resample, not a copy)
    assert len({tuple(row) for row in indices}) > 300


def test_quantile_matches_type7_order_statistics() -> None:
    rng = np.random.default_rng(0)
    reps = rng.normal(size=999)
    ordered = np.sort(reps)
    for q in (0.025, 0.05, 0.5, 0.95, 0.975):
        h = (reps.size - 1) * q
        j = math.floor(h)
        manual = ordered[j] + (h - j) * (ordered[min(j + 1, reps.size - 1)] - ordered[j])
        assert float(quantile(reps, q)) == pytest.approx(manual, abs=1e-15)


def test_summarize_percentile_intervals_and_one_sided_bound() -> None:
    reps = np.arange(1001, dtype=float)  # type-7 quantile q of 0..1000 is exactly 1000 q
    summary = summarize(500.0, reps, 10, b=1001, seed=0)
    assert summary.ci95 == pytest.approx((25.0, 975.0))
    assert summary.ci90 == pytest.approx((50.0, 950.0))
    assert summary.lower_bound_one_sided == pytest.approx(50.0)
    assert summary.n_clusters == 10


def test_corrections_follow_their_formulas() -> None:
    rng = np.random.default_rng(4)
    reps = rng.normal(1.0, 0.5, size=2000)
    k = 6
    expanded = summarize(1.0, reps, k, b=2000, seed=0, correction="expand")
    manual = quantile(1.0 + math.sqrt(k / (k - 1)) * (reps - 1.0), [0.025, 0.975])
    assert expanded.ci95 == pytest.approx(tuple(manual))
    student = summarize(1.0, reps, k, b=2000, seed=0, correction="student_t")
    se = np.std(reps, ddof=1)
    assert student.ci95 == pytest.approx((1 - stats.t.ppf(0.975, 5) * se,
                                          1 + stats.t.ppf(0.975, 5) * se))
    assert student.lower_bound_one_sided == pytest.approx(1 - stats.t.ppf(0.95, 5) * se)
    plain = summarize(1.0, reps, k, b=2000, seed=0)
    assert expanded.ci95[1] - expanded.ci95[0] > plain.ci95[1] - plain.ci95[0]


def test_non_finite_replicates_give_null_intervals_with_reason() -> None:
    reps = np.array([1.0, np.inf, 2.0])
    summary = summarize(1.0, reps, 3, b=3, seed=0)
    assert summary.ci95 is None and summary.reason == "non_finite_replicates"


def test_equivalence_is_ci90_inside_margin() -> None:
    assert equivalent((-0.004, 0.004), 0.005) is True
    assert equivalent((-0.004, 0.006), 0.005) is False
    assert equivalent((-0.006, 0.0), 0.005) is False
    assert equivalent(None, 0.005) is None


def test_round_off_around_zero_is_snapped() -> None:
    values = np.array([0.1, 0.2, -0.3])
    weights = np.array([[1 / 3, 1 / 3, 1 / 3]])
    assert weighted_means(weights, values)[0] == 0.0


def test_nested_mean_weights_brute_force() -> None:
    paths = [("t1", "c1", "s1"), ("t1", "c1", "s2"), ("t1", "c2", "s3"),
             ("t2", "c3", "s4")]
    weights = nested_mean_weights(paths)
    assert weights == pytest.approx([0.125, 0.125, 0.25, 0.5])


def test_hierarchical_weights_rows_sum_to_one_and_are_unbiased() -> None:
    paths = [("t1", "c1", "s1"), ("t1", "c1", "s2"), ("t1", "c2", "s3"),
             ("t2", "c3", "s4"), ("t2", "c3", "s5"), ("t3", "c4", "s6")]
    weights = hierarchical_weights(paths, 20_000, seed=3)
    assert np.allclose(weights.sum(axis=1), 1.0)
    assert np.array_equal(weights, hierarchical_weights(paths, 20_000, seed=3))
    # E[weight] equals the nested-mean weight; Monte Carlo SE < 0.005 at B = 20,000
    assert weights.mean(axis=0) == pytest.approx(nested_mean_weights(paths), abs=0.01)
    # a unit has weight only when its task was drawn: states of one cell get equal
    # expected weight, and the resampled within-cell split varies
    assert len(np.unique(weights[:, 0])) > 3


def test_hierarchical_two_levels_matches_state_resampling() -> None:
    paths = [("t1", "a"), ("t1", "b"), ("t2", "c")]
    weights = hierarchical_weights(paths, 5000, seed=9)
    assert set(np.round(weights[:, 2], 12)) <= {0.0, 0.5, 1.0}
    assert set(np.round(weights[:, 0], 12)) <= {0.0, 0.25, 0.5, 0.75, 1.0}


def _coverage(k: int, runs: int, b: int, effect: float, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    covered = false_positive = 0
    for run in range(runs):
        task_effect = effect + rng.normal(0.0, 1.0, size=k)  # between-task SD 1
        values = task_effect + rng.normal(0.0, 0.5, size=(k, 4)).mean(axis=1)  # within SD .5
        summary = bootstrap_mean(values, b, seed=run)
        assert summary.ci95 is not None and summary.lower_bound_one_sided is not None
        covered += summary.ci95[0] <= effect <= summary.ci95[1]
        false_positive += summary.lower_bound_one_sided > 0
    return covered / runs, false_positive / runs


def test_ci_sized_coverage_simulation_at_24_tasks() -> None:
    """300 runs, K = 24, B = 499, null case.

    Monte Carlo SE of a 0.95 coverage over 300 runs is sqrt(.95·.05/300) = 0.0126;
    the percentile bootstrap's known small-sample undercoverage at K = 24 is about
    0.01-0.02 (see benchmarks/bootstrap_coverage.py). Accept |coverage − 0.95| ≤ 0.05
    (≈ 4 SE) and a one-sided false-positive rate ≤ 0.05 + 4·sqrt(.05·.95/300) ≈ 0.10.
    """
    coverage, false_positive = _coverage(24, 300, 499, effect=0.0, seed=2026)
    assert abs(coverage - 0.95) <= 0.05
    assert false_positive <= 0.10


def test_bootstrap_mean_passes_strata_correction_and_its_metadata() -> None:
    values = np.array([0.1, 0.4, -0.2, 0.3, 0.0, 0.5])
    strata = ["a", "a", "b", "b", "b", "b"]
    summary = bootstrap_mean(values, 400, 9, strata=strata, correction="expand")
    replicates = cluster_weights(6, 400, seed=9, strata=strata) @ values
    expected = summarize(float(values.mean()), replicates, 6, b=400, seed=9,
                         correction="expand")
    assert summary.ci95 == pytest.approx(expected.ci95)
    assert summary.lower_bound_one_sided == pytest.approx(expected.lower_bound_one_sided)
    assert (summary.n_clusters, summary.b, summary.seed) == (6, 400, 9)
    assert summary.method == "task_cluster_percentile+expand"
    unstratified = bootstrap_mean(values, 400, 9, correction="expand")
    assert unstratified.ci95 != summary.ci95


def test_stratified_cluster_weights_are_the_stratified_draw_counts() -> None:
    strata = ["a", "b", "b", "a", "b"]
    indices = cluster_indices(5, 200, seed=6, strata=strata)
    weights = cluster_weights(5, 200, seed=6, strata=strata)
    for row in range(200):
        assert np.array_equal(weights[row], np.bincount(indices[row], minlength=5) / 5)
    assert not np.array_equal(weights, cluster_weights(5, 200, seed=6))


def test_quantile_runs_along_the_replicate_axis() -> None:
    reps = np.column_stack([np.arange(101.0), 10 * np.arange(101.0)])
    assert quantile(reps, 0.25).tolist() == [25.0, 250.0]
    assert quantile(reps, [0.1, 0.9]).tolist() == [[10.0, 100.0], [90.0, 900.0]]


def test_summarize_refusals_and_a_non_finite_estimate() -> None:
    with pytest.raises(ValueError) as caught:
        summarize(0.0, np.zeros(3), 3, b=3, seed=0, correction="jackknife")
    assert str(caught.value) == ("unknown correction 'jackknife'; expected one of "
                                 "('none', 'expand', 'student_t', 'student_t_expanded')")
    null = summarize(math.nan, np.zeros(3), 7, b=3, seed=1)
    assert (null.estimate, null.ci95, null.n_clusters, null.b, null.seed) == (None, None, 7, 3, 1)
    assert null.reason == "non_finite_estimate" and null.method == "task_cluster_percentile"


def test_cluster_indices_accepts_one_cluster_and_one_replicate_and_refuses_none() -> None:
    assert cluster_indices(1, 1, seed=0).tolist() == [[0]]
    for clusters, b in ((0, 5), (5, 0)):
        with pytest.raises(ValueError) as caught:
            cluster_indices(clusters, b, seed=0)
        assert str(caught.value) == ("cluster_indices needs at least one cluster and one "
                                     "replicate")
    with pytest.raises(ValueError) as caught:
        cluster_indices(3, 5, seed=0, strata=["a", "b"])
    assert str(caught.value) == "strata must give one label per cluster"
    assert cluster_indices(3, 50, seed=1).dtype == np.int64


def test_every_null_summary_keeps_its_metadata_and_names_its_reason() -> None:
    for reps in (np.array([]), np.array([1.0, np.nan])):
        null = summarize(0.5, reps, 4, b=2, seed=3)
        assert (null.estimate, null.ci95, null.ci90, null.lower_bound_one_sided) == (
            0.5, None, None, None)
        assert (null.n_clusters, null.b, null.seed) == (4, 2, 3)
        assert (null.method, null.reason) == ("task_cluster_percentile", "non_finite_replicates")
    single = summarize(0.5, np.array([0.7]), 4, b=1, seed=3)
    assert single.ci95 == (0.7, 0.7) and single.reason is None
    for correction in ("student_t", "expand"):
        few = summarize(0.5, np.array([0.1, 0.9]), 1, b=2, seed=3, correction=correction)
        assert (few.estimate, few.ci95, few.ci90, few.lower_bound_one_sided) == (
            0.5, None, None, None)
        assert (few.n_clusters, few.b, few.seed, few.reason) == (1, 2, 3, "too_few_clusters")
        assert few.method == f"task_cluster_percentile+{correction}"
        two = summarize(0.5, np.array([0.1, 0.9]), 2, b=2, seed=3, correction=correction)
        assert two.ci95 is not None and two.reason is None


def test_student_t_intervals_field_by_field() -> None:
    reps = np.array([0.2, 0.4, 0.9, 1.1, 1.4])
    se = float(np.std(reps, ddof=1))
    t975, t95 = stats.t.ppf(0.975, 3), stats.t.ppf(0.95, 3)
    result = summarize(1.0, reps, 4, b=5, seed=8, correction="student_t")
    assert result.ci95 == pytest.approx((1 - t975 * se, 1 + t975 * se))
    assert result.ci90 == pytest.approx((1 - t95 * se, 1 + t95 * se))
    assert result.lower_bound_one_sided == pytest.approx(1 - t95 * se)
    assert (result.estimate, result.n_clusters, result.b, result.seed) == (1.0, 4, 5, 8)
    assert result.method == "task_cluster_percentile+student_t"


def test_round_off_snapping_is_relative_to_the_largest_value_and_inclusive() -> None:
    # exactly the tolerance times the scale (2 · 1e-12, exact in binary) is snapped
    at = weighted_means(np.array([[1e-12, 0.0]]), np.array([2.0, 0.0]))
    assert at[0] == 0.0
    above = weighted_means(np.array([[3e-12, 0.0]]), np.array([2.0, 0.0]))
    assert above[0] == pytest.approx(6e-12)
    # relative: 5e-10 is round-off next to values of 1000, not next to values of 1
    big = weighted_means(np.array([[0.5, 0.5]]), np.array([1000.0, -1000.0 + 1e-9]))
    assert big[0] == 0.0
    small = weighted_means(np.array([[0.5, 0.5]]), np.array([1.0, -1.0 + 1e-9]))
    assert small[0] == pytest.approx(5e-10, rel=1e-3)
    assert weighted_means(np.zeros((2, 0)), np.zeros(0)).tolist() == [0.0, 0.0]


def test_equivalence_boundaries_are_inclusive_on_both_ends() -> None:
    assert equivalent((-0.005, 0.005), 0.005) is True
    assert equivalent((math.nextafter(-0.005, -1.0), 0.0), 0.005) is False
    assert equivalent((0.0, math.nextafter(0.005, 1.0)), 0.005) is False


def test_a_percentile_summary_keeps_its_estimate() -> None:
    summary = summarize(0.25, np.arange(11.0), 5, b=11, seed=2)
    assert (summary.estimate, summary.n_clusters, summary.b, summary.seed) == (0.25, 5, 11, 2)
    assert summary.ci95 == pytest.approx((0.25, 9.75)) and summary.reason is None


def test_expanded_student_t_is_the_classical_t_interval_of_a_mean() -> None:
    """θ̂ ± t_{K−1}·√(K/(K−1))·SE*; with the exact bootstrap variance of a mean,
    (K−1)/K·s²/K, this is x̄ ± t_{K−1}·s/√K."""
    reps = np.array([0.2, 0.4, 0.9, 1.1, 1.4])
    k = 4
    se = float(np.std(reps, ddof=1)) * math.sqrt(k / (k - 1))
    t975, t95 = stats.t.ppf(0.975, k - 1), stats.t.ppf(0.95, k - 1)
    result = summarize(1.0, reps, k, b=5, seed=8, correction="student_t_expanded")
    assert result.ci95 == pytest.approx((1 - t975 * se, 1 + t975 * se))
    assert result.ci90 == pytest.approx((1 - t95 * se, 1 + t95 * se))
    assert result.lower_bound_one_sided == pytest.approx(1 - t95 * se)
    assert result.method == "task_cluster_student_t_expanded"
    assert summarize(1.0, reps, 4, b=5, seed=8, correction="student_t_expanded",
                     method="hierarchical_percentile").method == (
        "hierarchical_student_t_expanded")
    values = np.array([0.3, -0.1, 0.5, 0.2, 0.9, -0.4])
    weights = cluster_weights(6, 200_000, seed=1)
    mean = summarize(float(values.mean()), weighted_means(weights, values), 6, b=200_000,
                     seed=1, correction="student_t_expanded")
    half = stats.t.ppf(0.975, 5) * values.std(ddof=1) / math.sqrt(6)
    assert mean.ci95 == pytest.approx((values.mean() - half, values.mean() + half), rel=5e-3)


@pytest.mark.parametrize("correction", ["none", "expand", "student_t", "student_t_expanded"])
def test_below_the_minimum_number_of_clusters_no_interval_is_estimable(
        correction: str) -> None:
    reps = np.array([0.2, 0.4, 0.9, 1.1, 1.4])
    below = summarize(1.0, reps, 4, b=5, seed=8, correction=correction, minimum_clusters=5)
    assert (below.estimate, below.ci95, below.ci90, below.lower_bound_one_sided) == (
        1.0, None, None, None)
    assert (below.n_clusters, below.reason) == (4, "too_few_clusters")
    at = summarize(1.0, reps, 5, b=5, seed=8, correction=correction, minimum_clusters=5)
    assert at.ci95 is not None and at.lower_bound_one_sided is not None and at.reason is None
    values = np.array([0.1, 0.3, 0.2, 0.5])
    assert bootstrap_mean(values, 100, 1, minimum_clusters=5).reason == "too_few_clusters"
    assert bootstrap_mean(values, 100, 1, minimum_clusters=4).ci95 is not None


def test_expanded_student_t_covers_at_six_tasks_where_the_percentile_interval_does_not() -> None:
    """300 runs, K = 6, B = 199, normal task effects (benchmarks/bootstrap_coverage.py at
    1,000+ runs: 0.956 vs 0.856). MC SE at 300 runs ≈ 0.0126: the t interval must be within
    0.04 of 0.95, the percentile one below 0.92 (it covers ≈ 0.86)."""
    rng = np.random.default_rng(2027)
    covered = {"none": 0, "student_t_expanded": 0}
    for run in range(300):
        values = rng.normal(0.0, 1.0, size=6) + rng.normal(0.0, 0.5, size=(6, 4)).mean(axis=1)
        replicates = weighted_means(cluster_weights(6, 199, seed=run), values)
        for correction in covered:
            s = summarize(float(values.mean()), replicates, 6, b=199, seed=run,
                          correction=correction)
            assert s.ci95 is not None
            covered[correction] += s.ci95[0] <= 0.0 <= s.ci95[1]
    assert abs(covered["student_t_expanded"] / 300 - 0.95) <= 0.04
    assert covered["none"] / 300 < 0.92
