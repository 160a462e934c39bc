"""Claim-level metrics of cards by hand, and the hierarchical resampler of the contrasts.

Claims (credit.analysis.baselines.claim_metrics, spec §6): an improve/worsen
claim is correct iff it matches sign(y) (y = 0 matches neither); no_change is
a no call, always wrong, and counted; each card scores the share of its
intervals that cover y (closed intervals); both beside the "always improve"
claim (correct iff y > 0); task-weighted means.
"""

from __future__ import annotations

import numpy as np
import pytest

from foreseen.core.bootstrap import hierarchical_weights, nested_mean_weights
from foreseen.credit.analysis.baselines import claim_metrics
from foreseen.credit.analysis.contrasts import Resampler
from foreseen.credit.model import Card, Explanation, State, Target


def _state(state_id: str, task: str) -> State:
    return State(id=state_id, task_id=task, cell=f"{task}-c", seed=0, budget=1.0,
                 budget_index=0, intervention_id="i", condition="ordinary")


def test_claim_metrics_by_hand() -> None:
    cards = {
        "s5": None,  # an explanation without a card
        "s7": Card(direction="improve"),  # no outcome
        "s1": Card(direction="improve", target=Target(intervals=((0.3, 0.5),))),
        "s2": Card(direction="worsen", target=Target(intervals=((-0.5, -0.2), (0.0, 0.1)))),
        "s3": Card(direction="no_change"),
        "s4": Card(direction="improve", target=Target(intervals=((0.0, 0.0),))),
        "s6": Card(target=Target(point=0.2)),  # neither a direction nor an interval
    }
    tasks = {"s5": "A", "s7": "A", "s1": "A", "s2": "A", "s3": "B", "s4": "B", "s6": "B"}
    outcomes = {"s5": 0.4, "s1": 0.3, "s2": -0.2, "s3": 0.1, "s4": 0.0, "s6": 0.2}
    states = [_state(s, tasks[s]) for s in cards]
    explanations = {s: Explanation(s, "ordinary", "g", note="n" if c is None else None, card=c)
                    for s, c in cards.items()}
    claims = claim_metrics(explanations, states, outcomes)
    direction, interval = claims.direction, claims.interval
    # s1 right, s2 right, s3 (no call) wrong, s4 wrong (y = 0)
    assert (direction.n_claims, direction.n_correct, direction.n_no_change_claims) == (4, 2, 1)
    assert direction.accuracy.value == pytest.approx((1.0 + 0.0) / 2)  # A: 2/2, B: 0/2
    assert direction.always_improve_accuracy.value == pytest.approx((0.5 + 0.5) / 2)
    # s1 covers (low end), s2 one of two (high end of the first), s4 the point interval
    assert (interval.n_cards_with_interval, interval.n_intervals, interval.n_covered) == (3, 4, 3)
    assert interval.coverage.value == pytest.approx(((1.0 + 0.5) / 2 + 1.0) / 2)
    assert interval.always_improve_coverage.value == pytest.approx(((1.0 + 0.0) / 2 + 0.0) / 2)
    assert direction.accuracy.reason is None and interval.coverage.reason is None


def test_claims_without_any_direction_or_interval_are_null_with_reasons() -> None:
    states = [_state("s1", "A")]
    explanations = {"s1": Explanation("s1", "ordinary", "g", card=Card(observable="o"))}
    claims = claim_metrics(explanations, states, {"s1": 0.1})
    assert (claims.direction.n_claims, claims.interval.n_intervals) == (0, 0)
    assert claims.direction.accuracy.value is None
    assert claims.direction.accuracy.reason == "no_direction_claims"
    assert claims.direction.always_improve_accuracy.reason == "no_direction_claims"
    assert claims.interval.coverage.reason == "no_card_intervals"
    assert claims.interval.always_improve_coverage.reason == "no_card_intervals"


def test_a_no_change_claim_is_wrong_even_when_y_is_near_zero() -> None:
    states = [_state("s1", "A"), _state("s2", "A")]
    explanations = {s.id: Explanation(s.id, "ordinary", "g", card=Card(direction="no_change"))
                    for s in states}
    claims = claim_metrics(explanations, states, {"s1": 0.2, "s2": -0.0001})
    assert (claims.direction.n_correct, claims.direction.n_no_change_claims) == (0, 2)
    assert claims.direction.accuracy.value == 0.0


PATHS = {"a-1": ("a", "a/c1", "a-1"), "a-2": ("a", "a/c1", "a-2"), "a-3": ("a", "a/c2", "a-3"),
         "b-1": ("b", "b/c1", "b-1"), "c-1": ("c", "c/c1", "c-1"), "c-2": ("c", "c/c2", "c-2")}


def test_state_weights_are_the_nested_draw_of_the_declared_paths_and_strata() -> None:
    states = tuple(PATHS)
    strata = {"a": "x", "b": "y", "c": "x"}
    resampler = Resampler(500, 13, strata, PATHS)
    point, weights = resampler.state_weights(states)
    paths = [PATHS[s] for s in states]
    assert np.array_equal(point, nested_mean_weights(paths))
    assert np.array_equal(weights, hierarchical_weights(paths, 500, 13, ["x", "y", "x"]))
    # stratum y (task b) keeps its one draw in every replicate: weight 1/3 on b-1
    assert np.allclose(weights[:, 3], 1 / 3)
    plain = Resampler(500, 13, None, PATHS).state_weights(states)[1]
    assert np.array_equal(plain, hierarchical_weights(paths, 500, 13, None))
    assert not np.allclose(plain[:, 3], 1 / 3)


def test_state_weights_need_declared_paths() -> None:
    with pytest.raises(ValueError) as caught:
        Resampler(100, 0).state_weights(("s",))
    assert str(caught.value) == "no hierarchical paths declared"
