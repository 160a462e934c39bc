"""The diagnostics of a loss contrast by hand: per-task loss ratios with their geometric
mean, leave-one-task-out influence, and the check tables built from contrast rows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from foreseen.credit.analysis.analyze import AnalysisConfig, analyze
from foreseen.credit.analysis.checks import ContrastSummary, contrast_check
from foreseen.credit.analysis.contrasts import Resampler, loss_contrast, pair_arms
from foreseen.credit.analysis.metrics import arm_states
from foreseen.credit.model import Forecast, SlotRecord

from support.analysis_fixtures import make_explanations, make_outcomes, make_slots, make_study

TASK = {"a1": "A", "a2": "A", "b1": "B", "c1": "C"}
Y = {s: 0.0 for s in TASK}


def _arm(context: str, points: dict[str, float]) -> list[SlotRecord]:
    return [SlotRecord(slot_id=f"{context}|{s}", state_id=s, context_id=context, repeat=1,
                       forecast=Forecast(p, p, p), fallback=False,
                       explainer=None if context == "description" else "probe",
                       delivered=None if context == "description" else True)
            for s, p in points.items()]


def _contrast(description: dict[str, float], matched: dict[str, float]):
    scales = {"A": 1.0, "B": 1.0, "C": 1.0}
    paired = pair_arms(arm_states(_arm("description", description), Y, TASK, scales, 0.2),
                       arm_states(_arm("matched_card", matched), Y, TASK, scales, 0.2))
    return loss_contrast(paired, "point_mae", Resampler(200, 3), 0.05)


def test_taskwise_ratios_and_leave_one_task_out_by_hand() -> None:
    # point errors |ŷ − 0|: description A (0.2, 0.4) → 0.3, B 0.5, C 0.1;
    #                       matched     A (0.1, 0.2) → 0.15, B 0.1, C 0.2
    result = _contrast({"a1": 0.2, "a2": -0.4, "b1": 0.5, "c1": 0.1},
                       {"a1": 0.1, "a2": 0.2, "b1": -0.1, "c1": 0.2})
    ratios = result.taskwise_ratios
    assert ratios is not None
    assert [(r.task, r.ratio, r.reason) for r in ratios.per_task] == [
        ("A", pytest.approx(0.5), None), ("B", pytest.approx(0.2), None),
        ("C", pytest.approx(2.0), None)]
    assert ratios.geometric_mean == pytest.approx(math.exp(np.mean(np.log([0.5, 0.2, 2.0]))))
    assert (ratios.median, ratios.minimum, ratios.maximum) == pytest.approx((0.5, 0.2, 2.0))
    assert ratios.geometric_mean_reason is None
    # Δ per task: A 0.15, B 0.4, C −0.1; mean 0.15
    assert result.estimate == pytest.approx(0.15)
    loto = result.leave_one_task_out
    assert loto is not None
    assert [(r.task, r.estimate_without, r.influence) for r in loto] == [
        ("A", pytest.approx(0.15), pytest.approx(0.0)),
        ("B", pytest.approx(0.025), pytest.approx(0.125)),
        ("C", pytest.approx(0.275), pytest.approx(-0.125))]


def test_ratio_reasons_zero_denominator_and_non_positive() -> None:
    zero = _contrast({"a1": 0.2, "b1": 0.0}, {"a1": 0.1, "b1": 0.3}).taskwise_ratios
    assert zero is not None and zero.geometric_mean is None
    assert zero.geometric_mean_reason == "zero_denominator"
    assert [(r.task, r.ratio, r.reason) for r in zero.per_task] == [
        ("A", pytest.approx(0.5), None), ("B", None, "zero_denominator")]
    perfect = _contrast({"a1": 0.2, "b1": 0.3}, {"a1": 0.0, "b1": 0.1}).taskwise_ratios
    assert perfect is not None and perfect.geometric_mean is None
    assert perfect.geometric_mean_reason == "non_positive_ratio"
    assert perfect.minimum is None
    two = _contrast({"a1": 0.2, "b1": 0.3}, {"a1": 0.1, "b1": 0.1})
    assert two.leave_one_task_out is not None and len(two.leave_one_task_out) == 2
    one = _contrast({"a1": 0.2}, {"a1": 0.1})
    assert one.leave_one_task_out == ()


def test_check_tables_take_the_itt_rows_of_their_kind_and_copy_every_field() -> None:
    study = make_study(5)  # the default minimum number of clusters: intervals are estimated
    y = make_outcomes(study)
    report = analyze(study, {"probe": make_explanations(study, y)}, make_slots(study, y), y,
                     AnalysisConfig(replicates=200))
    check = contrast_check(report.contrasts, report.delivered_subset.contrasts, "delta_desc",
                           "no_description_arm")
    assert check.value is not None and check.value.itt.value is not None
    rows = [r for r in report.contrasts if r.kind == "delta_desc" and r.variant == "itt"]
    assert check.value.itt.value == tuple(ContrastSummary.of(r) for r in rows)
    first, summary = rows[0], check.value.itt.value[0]
    assert (summary.explainer, summary.context, summary.comparator, summary.loss,
            summary.estimate, summary.ci95, summary.ci90, summary.lower_bound_one_sided,
            summary.n_clusters, summary.n_states, summary.equivalence, summary.reason) == (
        first.explainer, first.context, first.comparator, first.loss, first.estimate,
        first.ci95, first.ci90, first.lower_bound_one_sided, first.n_clusters,
        first.n_states, first.equivalence, first.reason)
    assert summary.ci95 is not None and summary.n_states is not None
    delivered = [r for r in report.delivered_subset.contrasts if r.kind == "delta_desc"]
    assert check.value.delivered.value == tuple(ContrastSummary.of(r) for r in delivered)
    assert len(delivered) > 0
    bare = contrast_check(report.contrasts, (), "delta_desc", "x")
    assert bare.value is not None and bare.value.delivered.value is None
    assert bare.value.delivered.reason == "no_delivered_states"
    none = contrast_check(report.contrasts, (), "delta_donor_missing", "no_donor_arm")  # type: ignore[arg-type]
    assert none.value is None and none.reason == "no_donor_arm"
