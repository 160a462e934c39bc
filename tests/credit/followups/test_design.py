"""The follow-ups' frozen design: the four classes, the preselection, the plan block."""

from __future__ import annotations

import hashlib
import json

import pytest

from foreseen.core.errors import ConfigError
from foreseen.credit.plan.followups import (
    CLASSES,
    PAPER_FOLLOWUPS,
    PAPER_STATES,
    FollowupDesign,
    classify_change,
    followup_outcome_id,
    plan_followups,
    preselect,
    selection_size,
)

TAU = 0.005


@pytest.mark.parametrize("y,y_f,expected", [
    # unchanged: |y_f - y| <= tau, checked first (even across a sign change)
    (0.1, 0.105, "unchanged"),           # exactly at tau (0.105 - 0.1 == tau up to rounding)
    (0.002, -0.002, "unchanged"),        # opposite signs but within tau: the first rule wins
    (0.0, 0.005, "unchanged"),           # y = 0, |y_f - y| = tau
    # just above tau
    (0.1, 0.1051, "grows"),
    (0.1, 0.0949, "shrinks"),
    # reverses: y * y_f < 0 beyond tau
    (0.01, -0.01, "reverses"),
    (-0.02, 0.03, "reverses"),
    # y_f = 0: the product is 0, not < 0: |0| > |y| is false -> shrinks
    (0.02, 0.0, "shrinks"),
    (-0.02, 0.0, "shrinks"),
    # y = 0 and y_f beyond tau: the product is 0 (no reversal); |y_f| > 0 -> grows
    (0.0, -0.02, "grows"),
    # same sign, larger / smaller magnitude
    (-0.02, -0.04, "grows"),
    (-0.04, -0.02, "shrinks"),
])
def test_classes_are_checked_in_the_declared_order(y: float, y_f: float, expected: str) -> None:
    assert classify_change(y, y_f, TAU) == expected


def test_the_threshold_boundary_is_inclusive() -> None:
    # exactly representable numbers: |y_f - y| == tau exactly
    assert classify_change(0.25, 0.375, 0.125) == "unchanged"
    assert classify_change(0.25, 0.375 + 2 ** -20, 0.125) == "grows"
    assert classify_change(0.25, 0.125, 0.125) == "unchanged"
    assert classify_change(0.25, 0.125 - 2 ** -20, 0.125) == "shrinks"


def test_every_pair_gets_exactly_one_class() -> None:
    values = [-0.03, -0.01, -0.004, 0.0, 0.004, 0.01, 0.03]
    seen = {classify_change(a, b, TAU) for a in values for b in values}
    assert seen == set(CLASSES)


@pytest.mark.parametrize("states,share,expected", [
    (PAPER_STATES, 0.25, PAPER_FOLLOWUPS),  # the paper: 30 of 120
    (192, 0.25, 48),
    (16, 0.25, 4),
    (1, 0.25, 1),      # at least one
    (2, 0.25, 1),      # 0.5 rounds half up to 1
    (6, 0.25, 2),      # 1.5 -> 2
    (5, 0.25, 1),      # 1.25 -> 1
    (7, 0.25, 2),      # 1.75 -> 2
    (3, 0.01, 1),      # below one rounds up to the minimum of one
    (10, 1.0, 10),
])
def test_selection_size(states: int, share: float, expected: int) -> None:
    assert selection_size(states, share) == expected


def test_preselection_is_the_sha256_ranking_of_the_seeded_ids() -> None:
    ids = [f"s{i:03d}" for i in range(PAPER_STATES)]

    def key(sid: str) -> str:  # the documented rule, written independently
        text = json.dumps([11, "followup", sid], separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()

    expected = sorted(sorted(ids, key=key)[:30])
    assert preselect(ids, 11, 0.25) == tuple(expected)
    assert len(preselect(ids, 11, 0.25)) == 30
    # order of the input does not matter; another seed selects other states
    assert preselect(list(reversed(ids)), 11, 0.25) == tuple(expected)
    assert preselect(ids, 12, 0.25) != tuple(expected)


def test_preselection_refuses_an_empty_study() -> None:
    with pytest.raises(ConfigError, match="no state"):
        preselect([], 1, 0.25)


@pytest.mark.parametrize("share", [0.0, -0.1, 1.01, float("nan")])
def test_share_outside_zero_one_is_refused(share: float) -> None:
    with pytest.raises(ConfigError, match="share"):
        FollowupDesign("doubled budget", share=share)


@pytest.mark.parametrize("threshold", [-1e-9, float("inf"), float("nan")])
def test_bad_threshold_is_refused(threshold: float) -> None:
    with pytest.raises(ConfigError, match="threshold"):
        FollowupDesign("doubled budget", threshold=threshold)


def test_a_definition_is_required() -> None:
    with pytest.raises(ConfigError, match="definition"):
        FollowupDesign("  ")
    with pytest.raises(ConfigError, match="malformed"):
        FollowupDesign.from_json({"share": 0.25})


def test_the_block_round_trips_and_an_absent_block_means_no_followups() -> None:
    declared = FollowupDesign("doubled budget", share=0.5, threshold=0.01)
    assert set(declared.to_json()) == {"definition", "share", "threshold"}
    frozen = declared.frozen(["a", "b", "c", "d"], 3, "mechanism")
    again = FollowupDesign.from_json(json.loads(json.dumps(frozen.to_json())))
    assert again == frozen and len(frozen.selected) == 2 and frozen.explainer == "mechanism"
    assert plan_followups({"slots": []}) is None
    assert plan_followups({"followups": frozen.to_json()}) == frozen
    assert "0.01" in frozen.question() and "doubled budget" in frozen.question()
    assert followup_outcome_id("s1") == "s1#followup"
