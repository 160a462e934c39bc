"""Exact zeros stay zero: round-off is removed relative to the operands, and no gate passes on it.

A per-state difference within 1e-12 of the larger operand is exactly 0
(credit.analysis.contrasts.paired_differences); a contrast whose paired
differences are all 0 is reported as 0 with reason ``zero_by_construction``,
no interval, and every gate condition on it is undetermined.
"""

from __future__ import annotations

import numpy as np
import pytest

from foreseen.core.schema import to_json
from foreseen.credit.analysis.analyze import AnalysisConfig, analyze
from foreseen.credit.analysis.contrasts import (
    ROUND_OFF,
    ZERO_BY_CONSTRUCTION,
    Resampler,
    drift_reduction,
    loss_contrast,
    pair_arms,
    paired_differences,
)
from foreseen.credit.analysis.gates import Estimate, evaluate_gate
from foreseen.credit.analysis.metrics import arm_states

from support.analysis_fixtures import make_explanations, make_outcomes, make_study, slot

RESAMPLER = Resampler(500, 7)


def test_round_off_is_relative_to_the_operands_at_its_boundary() -> None:
    one = np.array([1.0, 1.0, 1e-3])
    inside = 1.0 - 2.0 ** -40  # 9.1e-13 below 1: within 1e-12 of the operand
    outside = 1.0 - 2.0 ** -39  # 1.8e-12 below 1: a real difference
    assert 2.0 ** -40 <= ROUND_OFF < 2.0 ** -39
    diff = paired_differences(one, np.array([inside, outside, 1e-3 + 1e-18]))
    assert diff[0] == 0.0 and diff[1] == pytest.approx(2.0 ** -39)
    assert diff[2] == 0.0  # 1e-18 next to operands of 1e-3
    # a difference of 1e-18 between operands of 1e-17 is real (relative, not absolute)
    assert paired_differences(np.array([2e-17]), np.array([1e-17]))[0] == pytest.approx(1e-17)
    assert np.isnan(paired_differences(np.array([np.nan]), np.array([1.0]))[0])


def _arm(points: dict[str, tuple[float, float]], context: str = "matched_card"
         ) -> list:
    return [slot(state, context, repeat, value)
            for state, values in points.items() for repeat, value in enumerate(values, 1)]


STATES = {f"t{k}-s{s}": (0.01 * k + 0.003 * s, 0.01 * k + 0.003 * s + 0.004)
          for k in range(8) for s in range(2)}
TASKS = {state: state.split("-")[0] for state in STATES}
OUTCOMES = {state: 0.002 * k for k, state in enumerate(STATES)}


def _states(slots: list, outcomes: dict[str, float] = OUTCOMES):  # type: ignore[no-untyped-def]
    scales = {t: 0.01 for t in set(TASKS.values())}
    return arm_states(slots, outcomes, TASKS, scales, 0.2)


def test_an_arm_against_itself_is_zero_by_construction_with_no_interval() -> None:
    arm = _states(_arm(STATES))
    paired = pair_arms(arm, arm)
    result = loss_contrast(paired, "point_mae", RESAMPLER, 0.005)
    assert result.estimate == 0.0 and result.reason == ZERO_BY_CONSTRUCTION
    assert result.ci95 is None and result.lower_bound_one_sided is None
    assert result.n_clusters == 8 and result.n_states == 16
    assert result.equivalence is not None and result.equivalence.equivalent is None
    written = to_json(result)
    assert "ci95" not in written and "lower_bound_one_sided" not in written
    drift = drift_reduction(paired, RESAMPLER)
    assert drift.estimate == 0.0 and drift.reason == ZERO_BY_CONSTRUCTION
    assert drift.ci95 is None and drift.arm_drift == drift.comparator_drift


def test_drift_equal_up_to_round_off_is_an_exact_zero_but_a_real_change_is_not() -> None:
    # the same repeat shift on another card point: drift equal up to the last bits
    shifted = {s: (a + 0.1234567, b + 0.1234567) for s, (a, b) in STATES.items()}
    base, other = _states(_arm(STATES, "description")), _states(_arm(shifted))
    raw = base.losses["drift"] - other.losses["drift"]
    assert np.any(raw != 0.0)  # the round-off a plain subtraction leaves
    paired = pair_arms(base, other)
    assert loss_contrast(paired, "drift", RESAMPLER, None).reason == ZERO_BY_CONSTRUCTION
    assert drift_reduction(paired, RESAMPLER).estimate == 0.0
    # one state's drift really smaller: a computed contrast with an interval
    smaller = dict(shifted)
    first = next(iter(smaller))
    smaller[first] = (smaller[first][0], smaller[first][0] + 0.001)
    real = pair_arms(base, _states(_arm(smaller)))
    contrast = loss_contrast(real, "drift", RESAMPLER, None)
    assert contrast.reason is None and contrast.estimate is not None and contrast.estimate > 0
    assert contrast.ci95 is not None
    assert drift_reduction(real, RESAMPLER).reason is None


@pytest.mark.parametrize("test,declared", [
    ("lower_bound_positive", {}), ("estimate_at_least", {"value": 0.0}),
    ("ci90_inside", {"margin": 0.005}), ("sign_agrees", {})])
def test_no_gate_condition_passes_on_an_exact_zero(test: str,
                                                   declared: dict[str, float]) -> None:
    zero = Estimate(estimate=0.0, n_clusters=12, integrity=1.0, reason=ZERO_BY_CONSTRUCTION)
    spec = {"name": "g", "join": "any", "on_pass": "pass", "on_fail": "fail",
            "conditions": [{"estimate": "e", "test": test, **declared}]}
    result = evaluate_gate(spec, {"e": zero}, minimum_tasks=6, integrity_minimum=0.9,
                           reference={"e": Estimate(estimate=0.0, integrity=1.0)})
    assert result.status == "inconclusive" and result.passed is None
    assert result.reasons == (f"{ZERO_BY_CONSTRUCTION}:e",)
    assert result.conditions[0].passed is None
    assert result.conditions[0].reason == ZERO_BY_CONSTRUCTION
    computed = Estimate(estimate=0.0, lower_bound_one_sided=0.0, ci90=(0.0, 0.0),
                        ci95=(0.0, 0.0), n_clusters=12, integrity=1.0)
    if test == "estimate_at_least":  # the same number with a real interval does decide
        assert evaluate_gate(spec, {"e": computed}, minimum_tasks=6,
                             integrity_minimum=0.9).status == "pass"


def test_the_analysis_reports_identical_drift_as_zero_in_its_estimate_table() -> None:
    study = make_study(8)
    outcomes = make_outcomes(study)
    explanations = {"probe": make_explanations(study, outcomes)}
    rng = np.random.default_rng(3)
    records = []
    for state in study.states:
        jitter = rng.normal(0.0, 0.01, size=2)
        for context, centre in (("description", 0.02), ("matched_card", outcomes[state.id])):
            for repeat in (1, 2):  # the card reader: the same jitter in every context
                records.append(slot(state.id, context, repeat,
                                    float(centre + 0.3 + jitter[repeat - 1])))
    config = AnalysisConfig(replicates=200, gates=({
        "name": "repeatability", "join": "all", "on_pass": "confirmed",
        "on_fail": "confirmation_no_go",
        "conditions": [{"estimate": "drift_reduction/probe/matched_card/itt",
                        "test": "lower_bound_positive"}]},))
    result = analyze(study, explanations, records, outcomes, config)
    entry = result.estimates["drift_reduction/probe/matched_card/itt"]
    assert entry.estimate == 0.0 and entry.reason == ZERO_BY_CONSTRUCTION
    assert entry.lower_bound_one_sided is None
    assert result.estimates["delta_desc/probe/matched_card/drift/itt"].estimate == 0.0
    assert result.gates[0].status == "inconclusive"
    point = result.estimates["delta_desc/probe/matched_card/point_mae/itt"]
    assert point.reason is None and point.lower_bound_one_sided is not None
