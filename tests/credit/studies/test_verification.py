"""The typed outcome re-execution check: the rule that passes it, and the JSON record the
report sections have always carried (key order and optional keys, credit §9)."""

from __future__ import annotations

import json

import pytest

from foreseen.core.errors import UserInputError
from foreseen.credit.model import Outcome, State
from foreseen.credit.studies.verification import (
    OutcomeCheck,
    OutcomeMismatch,
    ReproducedSample,
    ZeroOutcomeCount,
    check_fraction,
    compare_outcomes,
    count_zero_outcomes,
    reproduce_sample,
    sample_size,
    zero_counts_json,
)

from support.cards_study import make_study


def _sample(mismatches: tuple[OutcomeMismatch, ...] = ()) -> ReproducedSample:
    return ReproducedSample(0.5, 3, 4, ("a", "b"), mismatches)


def test_the_record_keeps_the_keys_and_order_the_sections_wrote() -> None:
    zeros = {"iv0": ZeroOutcomeCount(2, 1, 0.5), "iv1": ZeroOutcomeCount(0, 0, None, "none")}
    check = OutcomeCheck(_sample((OutcomeMismatch("b", 0.1, 0.2),)), zeros,
                         code_digest_matches=True, data_sha256_matches=False)
    record = check.to_json()
    assert list(record) == ["fraction", "seed", "total", "checked", "reproduced", "ok",
                            "state_ids", "mismatches", "data_sha256_matches",
                            "code_digest_matches", "zero_outcome_share"]
    assert json.dumps(record) == json.dumps({
        "fraction": 0.5, "seed": 3, "total": 4, "checked": 2, "reproduced": 1, "ok": False,
        "state_ids": ["a", "b"],
        "mismatches": [{"state_id": "b", "sealed": 0.1, "recomputed": 0.2}],
        "data_sha256_matches": False, "code_digest_matches": True,
        "zero_outcome_share": {"iv0": {"states": 2, "zero": 1, "share": 0.5},
                               "iv1": {"states": 0, "zero": 0, "share": None,
                                       "reason": "none"}}})
    # a study that compares no digest writes neither key
    assert "code_digest_matches" not in OutcomeCheck(_sample(), {}).to_json()
    assert "data_sha256_matches" not in OutcomeCheck(_sample(), {},
                                                     code_digest_matches=True).to_json()


@pytest.mark.parametrize(("mismatches", "code", "data", "ok"), [
    ((), None, None, True), ((), True, True, True), ((), False, None, False),
    ((), True, False, False), ((OutcomeMismatch("a", 1.0, 2.0),), True, True, False)])
def test_the_check_passes_only_when_the_sample_and_every_compared_digest_agree(
        mismatches: tuple[OutcomeMismatch, ...], code: bool | None, data: bool | None,
        ok: bool) -> None:
    check = OutcomeCheck(_sample(mismatches), {}, code, data)
    verification = check.verification()
    assert check.ok is ok and verification.ok is ok
    assert (verification.checked, verification.reproduced) == (2, 2 - len(mismatches))
    assert verification.record == check.to_json()
    # the record's own "ok" is the sample's alone (as before): a digest does not change it
    assert verification.record["ok"] is (not mismatches)


def test_a_mismatch_is_any_difference_in_the_bits() -> None:
    sealed = {"a": 0.0, "b": 0.25, "c": 1.0}
    recomputed = {"a": -0.0, "b": 0.25, "c": 1.0 + 2**-52}
    assert [m.state_id for m in compare_outcomes(["a", "b", "c"], sealed, recomputed)] == [
        "a", "c"]


def test_the_sample_size_and_fraction_boundaries() -> None:
    assert sample_size(0.1, 10) == 1 and sample_size(0.11, 10) == 2
    assert sample_size(1e-9, 10) == 1 and sample_size(1.0, 10) == 10
    check_fraction(1.0)
    for bad in (0.0, 1.0 + 1e-12, -0.1):
        with pytest.raises(UserInputError):
            check_fraction(bad)


def test_reproduce_sample_finds_the_one_changed_state() -> None:
    study = make_study(2)
    outcomes = [Outcome(s.id, float(i)) for i, s in enumerate(study.states)]
    by_id = {o.state_id: o.y for o in outcomes}

    def recompute(state: State) -> float:
        return by_id[state.id] + (1.0 if state.id == study.states[0].id else 0.0)

    sample = reproduce_sample(study, outcomes, 1.0, 0, recompute)
    assert sample.checked == len(study.states) and list(sample.state_ids) == sorted(by_id)
    assert [m.state_id for m in sample.mismatches] == [study.states[0].id]
    assert sample.reproduced == sample.checked - 1 and not sample.ok
    with pytest.raises(UserInputError):
        reproduce_sample(study, outcomes[1:], 1.0, 0, recompute)


def test_zero_counts_per_intervention_and_the_empty_reason() -> None:
    study = make_study(1, budgets=1, interventions_per_budget=1)
    only = study.states[0]
    counts = count_zero_outcomes(study, [Outcome(only.id, 0.0)], "nothing here")
    used = only.intervention_id
    assert counts[used] == ZeroOutcomeCount(1, 1, 1.0)
    unused = [iv.id for iv in study.interventions if iv.id != used]
    assert unused and all(counts[iv] == ZeroOutcomeCount(0, 0, None, "nothing here")
                          for iv in unused)
    assert zero_counts_json(counts)[unused[0]]["reason"] == "nothing here"
