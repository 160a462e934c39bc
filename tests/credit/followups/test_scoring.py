"""Scoring the follow-ups: exact tests against scipy and brute force, baselines, accuracy."""

from __future__ import annotations

import itertools
import math

import pytest
from scipy.stats import binomtest  # test-only oracle

from foreseen.credit.analysis.followups import (
    binomial_two_sided,
    leave_one_out_majority,
    mcnemar_exact,
    score_explainer,
)


@pytest.mark.parametrize("n", [1, 2, 5, 11, 30])
@pytest.mark.parametrize("p", [0.25, 0.5])
def test_binomial_two_sided_matches_scipy(n: int, p: float) -> None:
    for k in range(n + 1):
        assert binomial_two_sided(k, n, p) == pytest.approx(
            binomtest(k, n, p, alternative="two-sided").pvalue, rel=1e-12, abs=1e-15), (k, n)


def test_binomial_two_sided_by_brute_force_on_a_small_case() -> None:
    """n = 4, p = 1/4: enumerate all 4^4 answer sequences (one of four classes right)."""
    n = 4
    outcomes = list(itertools.product(range(4), repeat=n))  # class 0 is "correct"
    probability = {k: sum(1 for o in outcomes if o.count(0) == k) / len(outcomes)
                   for k in range(n + 1)}
    for k in range(n + 1):
        brute = sum(q for j, q in probability.items() if q <= probability[k] * (1 + 1e-7))
        assert binomial_two_sided(k, n, 0.25) == pytest.approx(min(1.0, brute), rel=1e-12)
    # the paper's count: 11 of 30 against chance
    assert binomial_two_sided(11, 30, 0.25) == pytest.approx(
        binomtest(11, 30, 0.25).pvalue, rel=1e-12)


def test_mcnemar_is_the_binomial_on_discordant_pairs() -> None:
    # b = 5, c = 0: p = 2 * 0.5^5
    assert mcnemar_exact(5, 0) == pytest.approx(2 * 0.5 ** 5)
    assert mcnemar_exact(0, 5) == pytest.approx(2 * 0.5 ** 5)
    for b, c in [(3, 1), (7, 2), (4, 4), (1, 9)]:
        assert mcnemar_exact(b, c) == pytest.approx(binomtest(b, b + c, 0.5).pvalue)
    assert mcnemar_exact(0, 0) == 1.0  # no discordant pair: no evidence either way
    assert mcnemar_exact(1, 0) == 1.0  # one discordant pair: p = min(1, 2 * 0.5)


def test_binomial_refuses_impossible_inputs() -> None:
    with pytest.raises(ValueError):
        binomial_two_sided(3, 2, 0.25)
    with pytest.raises(ValueError):
        binomial_two_sided(1, 2, 1.0)


def test_leave_one_out_majority_and_its_tie_break() -> None:
    realised = ["shrinks", "shrinks", "grows", "unchanged"]
    # state 0: others shrinks, grows, unchanged -> three-way tie -> first declared: unchanged
    # state 1: the same
    # state 2: others shrinks, shrinks, unchanged -> shrinks
    # state 3: others shrinks, shrinks, grows -> shrinks
    assert leave_one_out_majority(realised) == ["unchanged", "unchanged", "shrinks", "shrinks"]
    assert leave_one_out_majority(["grows"]) == ["unchanged"]  # nobody else: first class


def test_score_counts_fallbacks_wrong_and_reports_every_baseline() -> None:
    outcomes = {"a": 0.02, "b": 0.02, "c": 0.02, "d": 0.02, "e": -0.01}
    followup = {"a": 0.01, "b": 0.012, "c": 0.05, "d": 0.021, "e": 0.02}
    # realised: a shrinks, b shrinks, c grows, d unchanged, e reverses
    answers: dict[str, str | None] = {"a": "shrinks", "b": None, "c": "grows",
                                      "d": "shrinks", "e": "reverses"}
    score = score_explainer("x", answers, 1, outcomes, followup, 0.005)
    assert [row.realised for row in score.states] == [
        "shrinks", "shrinks", "grows", "unchanged", "reverses"]
    assert (score.n, score.correct, score.fallbacks) == (5, 3, 1)
    assert score.accuracy == pytest.approx(0.6)
    baselines = {b.name: b.correct for b in score.baselines}
    assert baselines == {"majority_leave_one_out": 0, "constant_unchanged": 1,
                         "constant_reverses": 1, "constant_grows": 1, "constant_shrinks": 2}
    # majority per state: a -> unchanged (tie), b -> unchanged (tie), c/d/e -> shrinks
    assert [row.majority for row in score.states] == [
        "unchanged", "unchanged", "shrinks", "shrinks", "shrinks"]
    assert (score.forecaster_only, score.baseline_only) == (3, 0)
    assert score.mcnemar_p == pytest.approx(binomtest(3, 3, 0.5).pvalue)
    assert score.binomial_p == pytest.approx(binomtest(3, 5, 0.25).pvalue)
    assert score.predicted_counts == {"unchanged": 0, "reverses": 1, "grows": 1, "shrinks": 2}
    assert math.isclose(sum(score.realised_counts.values()), score.n)
