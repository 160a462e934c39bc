"""Gate logic (spec credit.md §7, §13): a decided all-of failure fails the gate whatever else
could not decide; every default gate can pass, fail and be inconclusive; every decision rule
is tested on both sides of its boundary (`<` vs `<=`)."""

from __future__ import annotations

from typing import Any

import pytest

from foreseen.credit.analysis.gates import (
    Estimate,
    GateResult,
    evaluate_gate,
    gate_outcome,
    predictive_value_gate,
    replication_gate,
)
from foreseen.credit.studies.openml.gates import openml_joint_gate
from foreseen.credit.studies.tox21.gates import tox21_harm_gate

MIN_TASKS, MIN_INTEGRITY = 6, 0.9


def good(estimate: float = 0.02, low: float = 0.01, ci90: tuple[float, float] = (-0.001, 0.001),
         n: int = 12, integrity: float | None = 1.0) -> Estimate:
    return Estimate(estimate=estimate, lower_bound_one_sided=low, ci90=ci90,
                    ci95=(low - 0.01, estimate + 0.02), n_clusters=n, integrity=integrity)


def too_few(estimate: float = 0.02, n: int = 4) -> Estimate:
    return Estimate(estimate=estimate, n_clusters=n, integrity=1.0, reason="too_few_clusters")


def run(spec: dict[str, Any], estimates: dict[str, Estimate],
        reference: dict[str, Estimate] | None = None) -> GateResult:
    return evaluate_gate(spec, estimates, minimum_tasks=MIN_TASKS,
                         integrity_minimum=MIN_INTEGRITY, reference=reference)


def gate(*conditions: dict[str, Any], join: str = "all") -> dict[str, Any]:
    return {"name": "g", "join": join, "on_pass": "yes", "on_fail": "no",
            "conditions": list(conditions)}


LB = {"estimate": "a", "test": "lower_bound_positive"}
LB_B = {"estimate": "b", "test": "lower_bound_positive"}


@pytest.mark.parametrize("join,decided,expected", [
    ("all", [True, True], True), ("all", [True, False], False), ("all", [False, None], False),
    ("all", [None, False], False), ("all", [True, None], None), ("all", [None], None),
    ("any", [False, False], False), ("any", [False, True], True), ("any", [True, None], True),
    ("any", [False, None], None), ("any", [None], None),
])
def test_gate_outcome_truth_table(join: str, decided: list[bool | None],
                                  expected: bool | None) -> None:
    assert gate_outcome(join, decided) is expected


@pytest.mark.parametrize("blocked", [
    {},  # the estimate is missing
    {"b": good(n=MIN_TASKS - 1)},  # too few tasks
    {"b": good(integrity=0.89)},  # integrity below the minimum
    {"b": too_few()},  # too few clusters for its interval
    {"b": Estimate(estimate=0.0, n_clusters=12, integrity=1.0, reason="zero_by_construction")},
])
def test_a_decided_all_of_failure_fails_the_gate_whatever_else_is_blocked(
        blocked: dict[str, Estimate]) -> None:
    failing = {"a": good(low=-0.01)}
    result = run(gate(LB, LB_B), {**failing, **blocked})
    assert (result.status, result.passed, result.reasons) == ("no", False, None)
    assert result.conditions[1].passed is None or blocked.get("b") is not None
    # the same blocked condition beside a passing one: the gate cannot decide
    undecided = run(gate(LB, LB_B), {"a": good(), **blocked})
    assert (undecided.status, undecided.passed) == ("inconclusive", None)
    assert undecided.reasons


def test_a_failing_condition_that_is_itself_blocked_does_not_decide() -> None:
    """A failure on too few tasks (or low integrity) is not a decided failure."""
    for entry in (good(low=-0.01, n=MIN_TASKS - 1), good(low=-0.01, integrity=0.5)):
        result = run(gate(LB, LB_B), {"a": entry, "b": good()})
        assert result.status == "inconclusive" and result.conditions[0].passed is False


def test_an_any_of_gate_passes_on_one_decided_pass_whatever_else_is_blocked() -> None:
    assert run(gate(LB, LB_B, join="any"), {"a": good()}).status == "yes"
    assert run(gate(LB, LB_B, join="any"), {"a": good(low=-0.01)}).status == "inconclusive"
    assert run(gate(LB, LB_B, join="any"),
               {"a": good(low=-0.01), "b": good(low=0.0)}).status == "no"


@pytest.mark.parametrize("condition,entry,passed", [
    (LB, good(low=0.0), False),  # lower bound > 0: 0 fails
    (LB, good(low=1e-12), True),
    ({"estimate": "a", "test": "ci90_inside", "margin": 0.005}, good(ci90=(-0.005, 0.005)),
     True),  # the edges are inside
    ({"estimate": "a", "test": "ci90_inside", "margin": 0.005}, good(ci90=(-0.005, 0.0050001)),
     False),
    ({"estimate": "a", "test": "ci90_inside", "margin": 0.005}, good(ci90=(-0.0050001, 0.0)),
     False),
    ({"estimate": "a", "test": "estimate_at_least", "value": 0.005}, good(estimate=0.005), True),
    ({"estimate": "a", "test": "estimate_at_least", "value": 0.005}, good(estimate=0.0049999),
     False),
    ({"estimate": "a", "test": "rate_at_least", "value": 0.95}, Estimate.rate(0.95), True),
    ({"estimate": "a", "test": "rate_at_least", "value": 0.95}, Estimate.rate(0.9499), False),
])
def test_each_test_on_both_sides_of_its_boundary(condition: dict[str, Any], entry: Estimate,
                                                 passed: bool) -> None:
    result = run(gate(condition), {"a": entry})
    assert result.conditions[0].passed is passed
    assert result.status == ("yes" if passed else "no")


@pytest.mark.parametrize("n,integrity,decides", [
    (MIN_TASKS, MIN_INTEGRITY, True), (MIN_TASKS - 1, MIN_INTEGRITY, False),
    (MIN_TASKS, MIN_INTEGRITY - 1e-9, False), (MIN_TASKS, None, True),
])
def test_the_minimum_tasks_and_integrity_boundaries(n: int, integrity: float | None,
                                                    decides: bool) -> None:
    result = run(gate(LB), {"a": good(n=n, integrity=integrity)})
    assert (result.status == "yes") is decides
    assert (result.status == "inconclusive") is not decides


@pytest.mark.parametrize("test", ["lower_bound_positive", "ci90_inside",
                                  "within_reference_interval"])
def test_interval_conditions_wait_for_the_minimum_number_of_clusters(test: str) -> None:
    condition = {"estimate": "a", "test": test, **({"margin": 1.0} if test == "ci90_inside"
                                                    else {})}
    reference = {"a": good(low=-1.0)}
    below = evaluate_gate(gate(condition), {"a": too_few(n=4)}, minimum_tasks=1,
                          integrity_minimum=0.9, reference=reference)
    assert (below.status, below.conditions[0].reason) == ("inconclusive", "too_few_clusters")
    at = evaluate_gate(gate(condition), {"a": good(n=5)}, minimum_tasks=1,
                       integrity_minimum=0.9, reference=reference)
    assert at.status == "yes" and at.conditions[0].reason is None
    point = evaluate_gate(gate({"estimate": "a", "test": "estimate_at_least", "value": 0.0}),
                          {"a": too_few(n=4)}, minimum_tasks=1, integrity_minimum=0.9)
    assert point.status == "yes"  # not interval-based: decided at any K


TOX_DESC = "delta_desc/probe/matched_card/interval_score/itt"
TOX_DONOR = "delta_donor/probe/donor_card@seed_swap/interval_score/itt"
PV_DESC = "delta_desc/plain_note/matched_card/point_mae/itt"
PV_DONOR = "delta_donor/plain_note/donor_card@other_intervention/point_mae/itt"
OM_COMMIT = "commitment/plain_note/complete_rate_difference"
OM_DRIFT = "drift_reduction/plain_note/matched_card/itt"
REP_POINT = "delta_desc/probe/matched_card/point_mae/itt"


def _reference(*names: str) -> dict[str, Estimate]:
    return {name: Estimate(estimate=0.02, ci95=(0.0, 0.04), ci90=(0.005, 0.035),
                           lower_bound_one_sided=0.005, n_clusters=12, integrity=1.0)
            for name in names}


CASES: list[tuple[str, dict[str, Any], dict[str, Estimate], dict[str, Estimate],
                  dict[str, Estimate], dict[str, Estimate] | None]] = [
    ("tox21_harm", tox21_harm_gate(),
     {TOX_DESC: good(), TOX_DONOR: good()},
     {TOX_DESC: good(), TOX_DONOR: good(low=-0.001)},
     {TOX_DESC: good(), TOX_DONOR: too_few()}, None),
    ("openml_joint", openml_joint_gate(),
     {OM_COMMIT: good(), PV_DESC: good(), OM_DRIFT: good()},
     {OM_COMMIT: good(), PV_DESC: good(ci90=(-0.001, 0.006)), OM_DRIFT: good()},
     {OM_COMMIT: good(), PV_DESC: good(), OM_DRIFT: too_few()}, None),
    ("predictive_value", predictive_value_gate(),
     {PV_DESC: good(), PV_DONOR: good()},
     {PV_DESC: good(low=0.0), PV_DONOR: too_few()},  # decided failure beside a blocked one
     {PV_DESC: good(), PV_DONOR: too_few()}, None),
    ("replication", replication_gate(),
     {TOX_DESC: good(), TOX_DONOR: good(), REP_POINT: good()},
     {TOX_DESC: good(estimate=0.05), TOX_DONOR: good(), REP_POINT: good()},
     {TOX_DESC: good(), TOX_DONOR: good(), REP_POINT: too_few()},
     _reference(TOX_DESC, TOX_DONOR, REP_POINT)),
]


@pytest.mark.parametrize("name,spec,passing,failing,blocked,reference", CASES,
                         ids=[c[0] for c in CASES])
def test_every_default_gate_can_pass_fail_and_be_inconclusive(
        name: str, spec: dict[str, Any], passing: dict[str, Estimate],
        failing: dict[str, Estimate], blocked: dict[str, Estimate],
        reference: dict[str, Estimate] | None) -> None:
    assert run(spec, passing, reference).status == spec["on_pass"]
    failed = run(spec, failing, reference)
    assert failed.status == spec["on_fail"] and failed.passed is False
    assert spec["on_fail"] not in ("inconclusive", spec["on_pass"])
    assert run(spec, blocked, reference).status == "inconclusive"


def test_the_predictive_value_gate_fails_as_the_spec_s_other_confirmation_gates() -> None:
    assert predictive_value_gate()["on_fail"] == tox21_harm_gate()["on_fail"] == (
        "confirmation_no_go")
