"""Tests of gate evaluation on constructed estimate tables (credit.analysis.gates)."""

from __future__ import annotations

import pytest

from foreseen.core.errors import ConfigError, UserInputError
from foreseen.core.schema import to_json
from foreseen.credit.analysis.gates import (
    MARGINS_NOTE,
    Estimate,
    evaluate_gate,
    replication_gate,
)
from foreseen.credit.studies.openml.gates import openml_joint_gate
from foreseen.credit.studies.tox21.gates import tox21_harm_gate

DESC = "delta_desc/probe/matched_card/interval_score/itt"
DONOR = "delta_donor/probe/donor_card@seed_swap/interval_score/itt"


def entry(estimate, lower, ci90=None, n=12, integrity=1.0):
    return Estimate(estimate=estimate, lower_bound_one_sided=lower,
                    ci90=ci90 or (lower, estimate * 2), ci95=None, n_clusters=n,
                    integrity=integrity)


def run(spec, estimates, reference=None):
    return evaluate_gate(spec, estimates, minimum_tasks=6, integrity_minimum=0.9,
                         reference=reference)


def test_tox21_gate_pass_fail_and_margin_note() -> None:
    spec = tox21_harm_gate()
    assert spec["margins_source"] == MARGINS_NOTE
    passed = run(spec, {DESC: entry(0.01, 0.002), DONOR: entry(0.006, 0.001)})
    assert passed.status == "confirmed" and passed.passed is True
    assert passed.margins_source == MARGINS_NOTE and passed.reasons is None
    small = run(spec, {DESC: entry(0.004, 0.001), DONOR: entry(0.006, 0.001)})
    assert small.status == "confirmation_no_go"
    zero_bound = run(spec, {DESC: entry(0.01, 0.0), DONOR: entry(0.006, 0.001)})
    assert zero_bound.status == "confirmation_no_go"
    assert [c.passed for c in zero_bound.conditions] == [True, False, True, True]
    first = to_json(zero_bound.conditions[0])
    assert list(first) == ["estimate", "test", "value", "required", "observed", "passed"]
    assert first["required"] == "estimate ≥ 0.005"
    assert first["value"] == 0.005 and first["observed"]["n_clusters"] == 12


def test_inconclusive_when_too_few_tasks_low_integrity_or_missing() -> None:
    spec = tox21_harm_gate()
    few = run(spec, {DESC: entry(0.01, 0.002, n=5), DONOR: entry(0.006, 0.001)})
    assert few.status == "inconclusive" and few.reasons is not None
    assert f"too_few_tasks:{DESC}" in few.reasons and few.passed is None
    low = run(spec, {DESC: entry(0.01, 0.002, integrity=0.85), DONOR: entry(0.006, 0.001)})
    assert low.status == "inconclusive" and low.reasons is not None
    assert f"integrity_below_minimum:{DESC}" in low.reasons
    missing = run(spec, {DESC: entry(0.01, 0.002)})
    assert missing.status == "inconclusive" and missing.reasons is not None
    assert f"estimate_missing:{DONOR}" in missing.reasons
    absent = to_json(missing.conditions[2])
    assert list(absent) == ["estimate", "test", "value", "required", "passed", "reason"]
    assert absent["reason"] == "estimate_missing"
    null = run(spec, {DESC: entry(0.01, 0.002),
                      DONOR: Estimate(estimate=None, n_clusters=12, integrity=None)})
    assert null.status == "inconclusive"


def test_openml_joint_gate_equivalence_condition() -> None:
    spec = openml_joint_gate("probe")
    names = [c["estimate"] for c in spec["conditions"]]
    estimates = {names[0]: entry(0.13, 0.07), names[1]: entry(0.001, -0.003, (-0.003, 0.004)),
                 names[2]: entry(0.3, 0.1)}
    assert run(spec, estimates).status == "confirmed"
    estimates[names[1]] = entry(0.001, -0.003, (-0.003, 0.0051))
    assert run(spec, estimates).status == "confirmation_no_go"


def test_any_join_and_rate_condition() -> None:
    spec = {"name": "either", "join": "any", "on_pass": "ok", "on_fail": "no",
            "conditions": [{"estimate": "a", "test": "rate_at_least", "value": 0.9},
                           {"estimate": "b", "test": "estimate_at_least", "value": 1.0}]}
    assert run(spec, {"a": entry(0.95, 0.9), "b": entry(0.5, 0.1)}).status == "ok"
    assert run(spec, {"a": entry(0.85, 0.8), "b": entry(0.5, 0.1)}).status == "no"


def test_replication_gate_compares_with_the_reference_intervals() -> None:
    """Each estimate must lie inside the reference's 95 % interval (spec §13), not merely
    share its sign: an estimate of the reference's sign outside its interval fails."""
    spec = replication_gate()
    point = "delta_desc/probe/matched_card/point_mae/itt"
    current = {DESC: entry(0.002, -0.001), DONOR: entry(0.001, -0.002, (-0.002, 0.004)),
               point: entry(-0.001, -0.003)}

    def ref(estimate: float, low: float, high: float) -> Estimate:
        return Estimate(estimate=estimate, lower_bound_one_sided=low, ci90=(low, high),
                        ci95=(low, high), n_clusters=12, integrity=1.0)

    same = {DESC: ref(0.003, 0.0, 0.006), DONOR: ref(0.002, 0.0, 0.004),
            point: ref(-0.002, -0.004, 0.0)}
    supported = run(spec, current, same)
    assert supported.status == "replication_supported"
    assert supported.conditions[0].reference_ci95 == (0.0, 0.006)
    assert supported.conditions[0].reference_estimate == 0.003
    same_sign_outside = {**same, DESC: ref(0.03, 0.02, 0.04)}
    assert run(spec, current, same_sign_outside).status == "replication_not_supported"
    at_the_edges = {**same, DESC: ref(0.003, 0.002, 0.002), point: ref(-0.002, -0.001, -0.001)}
    assert run(spec, current, at_the_edges).conditions[0].passed is True  # low ≤ estimate
    assert run(spec, current, at_the_edges).conditions[2].passed is True  # estimate ≤ high
    just_outside = {**same, DESC: ref(0.003, 0.0020001, 0.006)}
    assert run(spec, current, just_outside).conditions[0].passed is False
    assert run(spec, current).status == "inconclusive"


def test_a_reference_without_an_interval_cannot_support_a_replication() -> None:
    spec = {"name": "r", "on_pass": "ok", "on_fail": "no",
            "conditions": [{"estimate": DESC, "test": "within_reference_interval"}]}
    current = {DESC: entry(0.002, -0.001)}
    few = {DESC: Estimate(estimate=0.002, n_clusters=2, integrity=1.0,
                          reason="too_few_clusters")}
    result = run(spec, current, few)
    assert (result.status, result.conditions[0].reason) == ("inconclusive", "too_few_clusters")
    bare = {DESC: Estimate(estimate=0.002, n_clusters=12, integrity=1.0)}
    assert run(spec, current, bare).conditions[0].reason == "reference_interval_unavailable"
    assert run(spec, current, {}).conditions[0].reason == "estimate_unavailable"


def test_old_plans_sign_agrees_test_still_compares_signs() -> None:
    spec = {"name": "r", "on_pass": "ok", "on_fail": "no",
            "conditions": [{"estimate": DESC, "test": "sign_agrees"}]}
    current = {DESC: entry(0.002, -0.001)}
    agreeing = run(spec, current, {DESC: entry(0.5, 0.1)})
    assert agreeing.status == "ok" and agreeing.conditions[0].reference_estimate == 0.5
    assert agreeing.conditions[0].reference_ci95 is None  # written as before
    assert run(spec, current, {DESC: entry(-0.5, -0.6)}).status == "no"


def test_malformed_gate_is_a_user_error() -> None:
    with pytest.raises(UserInputError, match="conditions"):
        run({"name": "x", "on_pass": "a", "on_fail": "b", "conditions": []}, {})
    with pytest.raises(UserInputError, match="margin"):
        run({"name": "x", "on_pass": "a", "on_fail": "b",
             "conditions": [{"estimate": "e", "test": "ci90_inside"}]}, {})
    with pytest.raises(ConfigError, match="unknown condition key 'note'"):
        run({"name": "x", "on_pass": "a", "on_fail": "b",
             "conditions": [{"estimate": "e", "test": "lower_bound_positive", "note": "?"}]},
            {})
