"""What a gate records: reasons when a test cannot be applied, the observed values,
every condition after a missing one, the declared default gates (spec credit.md §7),
and the full one-line message of every malformed gate."""

from __future__ import annotations

import pytest

from foreseen.core.errors import ConfigError
from foreseen.credit.analysis.gates import (
    MARGINS_NOTE,
    Estimate,
    GateResult,
    ObservedEstimate,
    evaluate_gate,
    predictive_value_gate,
    replication_gate,
    validate_gate,
)
from foreseen.credit.studies.openml.gates import openml_joint_gate
from foreseen.credit.studies.tox21.gates import tox21_harm_gate

ENTRY = Estimate(estimate=0.02, lower_bound_one_sided=0.01, ci90=(0.005, 0.03),
                 ci95=(0.0, 0.04), n_clusters=9, integrity=0.95)


def _gate(*conditions: dict[str, object]) -> dict[str, object]:
    return {"name": "g", "on_pass": "pass", "on_fail": "fail", "conditions": list(conditions)}


def _run(spec: dict[str, object], estimates: dict[str, Estimate],
         reference: dict[str, Estimate] | None = None) -> GateResult:
    return evaluate_gate(spec, estimates, minimum_tasks=6, integrity_minimum=0.9,
                         reference=reference)


def test_the_observed_estimate_is_recorded_field_by_field() -> None:
    result = _run(_gate({"estimate": "e", "test": "ci90_inside", "margin": 0.05}), {"e": ENTRY})
    row = result.conditions[0]
    assert row.observed == ObservedEstimate(estimate=0.02, lower_bound_one_sided=0.01,
                                            ci90=(0.005, 0.03), n_clusters=9, integrity=0.95)
    assert (row.estimate, row.test, row.value, row.margin) == ("e", "ci90_inside", None, 0.05)
    assert row.passed is True and row.reason is None
    assert result.join == "all" and result.name == "g" and result.margins_source is None


@pytest.mark.parametrize("condition,entry,reference,reason", [
    ({"test": "ci90_inside", "margin": 0.1}, Estimate(estimate=0.1, n_clusters=9,
                                                      integrity=1.0), None, "ci90_unavailable"),
    ({"test": "sign_agrees"}, ENTRY, None, "no_reference_run"),
    ({"test": "sign_agrees"}, ENTRY, {}, "estimate_unavailable"),
    ({"test": "sign_agrees"}, ENTRY, {"e": Estimate(estimate=None, integrity=None)},
     "estimate_unavailable"),
    ({"test": "sign_agrees"}, Estimate(estimate=None, n_clusters=9, integrity=1.0),
     {"e": ENTRY}, "estimate_unavailable"),
    ({"test": "rate_at_least", "value": 0.5}, Estimate(estimate=None, integrity=None), None,
     "estimate_unavailable"),
])
def test_a_test_that_cannot_be_applied_records_its_reason(
        condition: dict[str, object], entry: Estimate,
        reference: dict[str, Estimate] | None, reason: str) -> None:
    result = _run(_gate({"estimate": "e", **condition}), {"e": entry}, reference)
    assert result.status == "inconclusive" and result.passed is None
    assert result.reasons == (f"{reason}:e",)
    assert result.conditions[0].passed is None and result.conditions[0].reason == reason


def test_every_condition_after_a_missing_estimate_is_still_evaluated() -> None:
    spec = _gate({"estimate": "absent", "test": "lower_bound_positive"},
                 {"estimate": "e", "test": "estimate_at_least", "value": 0.01},
                 {"estimate": "e", "test": "ci90_inside", "margin": 0.01})
    result = _run(spec, {"e": ENTRY})
    assert [c.estimate for c in result.conditions] == ["absent", "e", "e"]
    assert [c.passed for c in result.conditions] == [None, True, False]
    assert result.conditions[0].observed is None
    assert result.conditions[0].reason == "estimate_missing"
    assert result.conditions[2].margin == 0.01 and result.conditions[1].value == 0.01
    # the decided failure of the all-of ci90 condition fails the gate despite the missing one
    assert (result.status, result.passed, result.reasons) == ("fail", False, None)


def test_the_default_gates_are_the_specified_ones() -> None:
    desc = "delta_desc/probe/matched_card/interval_score/itt"
    donor = "delta_donor/probe/donor_card@seed_swap/interval_score/itt"
    assert tox21_harm_gate() == {
        "name": "tox21_harm", "join": "all",
        "conditions": [
            {"estimate": desc, "test": "estimate_at_least", "value": 0.005},
            {"estimate": desc, "test": "lower_bound_positive"},
            {"estimate": donor, "test": "estimate_at_least", "value": 0.005},
            {"estimate": donor, "test": "lower_bound_positive"}],
        "on_pass": "confirmed", "on_fail": "confirmation_no_go",
        "margins_source": MARGINS_NOTE}
    assert openml_joint_gate() == {
        "name": "openml_joint", "join": "all",
        "conditions": [
            {"estimate": "commitment/plain_note/complete_rate_difference",
             "test": "lower_bound_positive"},
            {"estimate": "delta_desc/plain_note/matched_card/point_mae/itt",
             "test": "ci90_inside", "margin": 0.005},
            {"estimate": "drift_reduction/plain_note/matched_card/itt",
             "test": "lower_bound_positive"}],
        "on_pass": "confirmed", "on_fail": "confirmation_no_go",
        "margins_source": MARGINS_NOTE}
    assert replication_gate() == {
        "name": "replication", "join": "all",
        "conditions": [
            {"estimate": desc, "test": "within_reference_interval"},
            {"estimate": donor, "test": "within_reference_interval"},
            {"estimate": "delta_desc/probe/matched_card/point_mae/itt",
             "test": "within_reference_interval"},
            {"estimate": donor, "test": "ci90_inside", "margin": 0.005}],
        "on_pass": "replication_supported", "on_fail": "replication_not_supported",
        "margins_source": MARGINS_NOTE}
    assert predictive_value_gate() == {
        "name": "predictive_value", "join": "all",
        "conditions": [
            {"estimate": "delta_desc/plain_note/matched_card/point_mae/itt",
             "test": "lower_bound_positive"},
            {"estimate": "delta_donor/plain_note/donor_card@other_intervention/point_mae/itt",
             "test": "lower_bound_positive"}],
        "on_pass": "confirmed", "on_fail": "confirmation_no_go",
        "margins_source": MARGINS_NOTE}
    assert MARGINS_NOTE == "margins are ours; the paper's Appendix A (its margins) is lost"
    for spec in (tox21_harm_gate(), openml_joint_gate(), replication_gate(),
                 predictive_value_gate()):
        validate_gate(spec)


GOOD = {"name": "g", "on_pass": "a", "on_fail": "b",
        "conditions": [{"estimate": "e", "test": "lower_bound_positive"}]}


@pytest.mark.parametrize("change,message", [
    ({"name": ""}, "gate: 'name' must be a non-empty string"),
    ({"name": 3}, "gate: 'name' must be a non-empty string"),
    ({"join": "most"}, "gate g: 'join' must be 'all' or 'any'"),
    ({"conditions": []}, "gate g: 'conditions' must be a non-empty list"),
    ({"conditions": "e"}, "gate g: 'conditions' must be a non-empty list"),
    ({"conditions": ["e"]}, "gate g: each condition needs a test among ('estimate_at_least', "
                            "'rate_at_least', 'lower_bound_positive', 'ci90_inside', "
                            "'sign_agrees', 'within_reference_interval')"),
    ({"conditions": [{"estimate": "e", "test": "bigger"}]},
     "gate g: each condition needs a test among ('estimate_at_least', 'rate_at_least', "
     "'lower_bound_positive', 'ci90_inside', 'sign_agrees', 'within_reference_interval')"),
    ({"conditions": [{"estimate": 1, "test": "sign_agrees"}]},
     "gate g: each condition needs an 'estimate' name"),
    ({"conditions": [{"estimate": "e", "test": "sign_agrees", "x": 1}]},
     "gate g: unknown condition key 'x' (known: estimate, test, value, margin)"),
    ({"conditions": [{"estimate": "e", "test": "estimate_at_least"}]},
     "gate g: test estimate_at_least needs a numeric 'value'"),
    ({"conditions": [{"estimate": "e", "test": "rate_at_least", "value": True}]},
     "gate g: test rate_at_least needs a numeric 'value'"),
    ({"conditions": [{"estimate": "e", "test": "ci90_inside", "margin": "1"}]},
     "gate g: test ci90_inside needs a numeric 'margin'"),
    ({"conditions": [{"estimate": "e", "test": "sign_agrees", "value": "1"}]},
     "gate g: 'value' must be a number"),
    ({"conditions": [{"estimate": "e", "test": "sign_agrees", "margin": None}]},
     "gate g: 'margin' must be a number"),
    ({"on_pass": None}, "gate g: 'on_pass' must be a string"),
    ({"on_fail": 1}, "gate g: 'on_fail' must be a string"),
    ({"margins_source": 5}, "gate g: 'margins_source' must be a string"),
])
def test_every_malformed_gate_has_its_own_one_line_message(change: dict[str, object],
                                                           message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        validate_gate({**GOOD, **change})
    assert str(caught.value) == message


def test_well_formed_variants_are_accepted() -> None:
    validate_gate(GOOD)
    validate_gate({**GOOD, "join": "any", "margins_source": "ours"})
    validate_gate({**GOOD, "conditions": [{"estimate": "e", "test": "estimate_at_least",
                                           "value": 1}]})
    validate_gate({**GOOD, "conditions": [{"estimate": "e", "test": "ci90_inside",
                                           "margin": 0.5, "value": 0.1}]})
    result = evaluate_gate({**GOOD, "margins_source": "ours"}, {"e": ENTRY}, minimum_tasks=1,
                           integrity_minimum=0.0)
    assert result.margins_source == "ours" and result.status == "a"
