"""End-to-end tests of credit.analysis.analyze on small synthetic studies."""

from __future__ import annotations

import json

import numpy as np
import pytest

from foreseen.core.digest import dumps_strict
from foreseen.core.errors import UserInputError
from foreseen.core.schema import to_json
from foreseen.credit.analysis.analyze import AnalysisConfig, CreditAnalysis, analyze
from foreseen.credit.analysis.contrasts import ContrastRow
from foreseen.credit.analysis.metrics import LOSSES

from support.analysis_fixtures import make_explanations, make_outcomes, make_slots, make_study, slot

CONFIG = AnalysisConfig(replicates=400, bootstrap_seed=11)


def _setup(n_tasks: int = 8):
    study = make_study(n_tasks)
    y = make_outcomes(study)
    return study, y, {"probe": make_explanations(study, y)}, make_slots(study, y)


def _find(report: CreditAnalysis, kind: str, context: str, loss: str,
          variant: str = "itt") -> ContrastRow:
    return next(c for c in report.contrasts if c.kind == kind and
                c.context == context and c.loss == loss and c.variant == variant)


def test_delta_desc_point_mae_matches_brute_force_and_is_reproducible() -> None:
    study, y, explanations, slots = _setup()
    report = analyze(study, explanations, slots, y, CONFIG)
    per_task: dict[str, list[float]] = {}
    for state in study.states:
        def mae(context: str, sid: str = state.id) -> float:
            return float(np.mean([abs(s.forecast.point - y[sid]) for s in slots
                                  if s.state_id == sid and s.context_id == context]))
        per_task.setdefault(state.task_id, []).append(mae("description") - mae("matched_card"))
    brute = np.mean([np.mean(v) for v in per_task.values()])
    row = _find(report, "delta_desc", "matched_card", "point_mae")
    assert row.estimate == pytest.approx(brute)
    assert row.n_clusters == 8 and row.n_states == 32
    assert row.ci95 is not None and row.ci90 is not None
    assert row.ci95[0] <= row.estimate <= row.ci95[1]
    assert row.lower_bound_one_sided == row.ci90[0]
    assert row.leave_one_task_out is not None
    loto = {r.task: r.estimate_without for r in row.leave_one_task_out}
    for task in per_task:
        others = [np.mean(v) for t, v in per_task.items() if t != task]
        assert loto[task] == pytest.approx(np.mean(others))
    again = analyze(study, explanations, slots, y, CONFIG)
    assert again == report
    assert dumps_strict(to_json(again)) == dumps_strict(to_json(report))
    other_seed = analyze(study, explanations, slots, y,
                         AnalysisConfig(replicates=400, bootstrap_seed=12))
    assert _find(other_seed, "delta_desc", "matched_card", "point_mae").ci95 != row.ci95


def test_every_arm_and_loss_has_contrasts_and_strict_json() -> None:
    study, y, explanations, slots = _setup()
    report = analyze(study, explanations, slots, y, CONFIG)
    text = dumps_strict(to_json(report))
    assert "NaN" not in text and "Infinity" not in text
    json.loads(text)
    for loss in LOSSES:
        for variant in ("itt", "valid_only"):
            _find(report, "delta_desc", "matched_card", loss, variant)
            _find(report, "delta_desc", "donor_card@seed_swap", loss, variant)
            _find(report, "delta_donor", "donor_card@seed_swap", loss, variant)
    donor = _find(report, "delta_donor", "donor_card@seed_swap", "point_mae")
    assert (donor.comparator, donor.arm) == ("donor_card@seed_swap", "matched_card")
    assert donor.estimate is not None
    assert donor.estimate > 0  # matched noise is smaller than donor noise in the fixture
    drift = _find(report, "drift_reduction", "matched_card", "drift")
    assert drift.arm_drift is not None and drift.comparator_drift is not None
    assert drift.estimate == pytest.approx(1 - drift.arm_drift / drift.comparator_drift)
    assert "delta_desc/probe/matched_card/point_mae/itt" in report.estimates
    assert not any(name.endswith("/delivered") for name in report.estimates)


def test_fallbacks_are_counted_and_itt_differs_from_valid_only() -> None:
    study, y, explanations, slots = _setup()
    first = study.states[0].id
    slots = [slot(s.state_id, s.context_id, s.repeat, 0.0, fallback=True)
             if s.state_id == first and s.context_id == "matched_card" else s for s in slots]
    report = analyze(study, explanations, slots, y, CONFIG)
    integrity = report.integrity.per_context["probe|matched_card"]
    assert to_json(integrity) == {"assigned": 64, "valid": 62, "fallback": 2, "rate": 62 / 64}
    itt = _find(report, "delta_desc", "matched_card", "point_mae")
    valid = _find(report, "delta_desc", "matched_card", "point_mae", "valid_only")
    assert itt.n_states == 32 and valid.n_states == 31
    assert report.metrics["probe|matched_card"].itt.n_fallback == 2


def test_delivered_subset_drops_undelivered_states() -> None:
    study, y, explanations, slots = _setup()
    undelivered = {s.id for s in study.states[:4]}
    slots = [slot(s.state_id, s.context_id, s.repeat, s.forecast.point, delivered=False)
             if s.state_id in undelivered and s.context_id == "donor_card@seed_swap" else s
             for s in slots]
    report = analyze(study, explanations, slots, y, CONFIG)
    rows = report.delivered_subset.contrasts
    donor = next(r for r in rows if r.kind == "delta_donor" and r.loss == "point_mae")
    desc = next(r for r in rows if r.kind == "delta_desc" and r.loss == "point_mae"
                and r.context == "matched_card")
    assert donor.n_states == 28 and desc.n_states == 32


def test_taskwise_ratio_null_when_denominator_zero() -> None:
    study, y, explanations, _ = _setup(6)
    slots = []
    for state in study.states:
        for repeat in (1, 2):
            exact = y[state.id] if state.task_id == "t00" else y[state.id] + 0.01 * repeat
            slots.append(slot(state.id, "description", repeat, exact))
            slots.append(slot(state.id, "matched_card", repeat, y[state.id] + 0.005))
    report = analyze(study, explanations, slots, y, CONFIG)
    ratios = _find(report, "delta_desc", "matched_card", "point_mae").taskwise_ratios
    assert ratios is not None
    zero = next(r for r in ratios.per_task if r.task == "t00")
    assert to_json(zero) == {"task": "t00", "ratio": None, "reason": "zero_denominator"}
    assert ratios.geometric_mean is None
    assert ratios.geometric_mean_reason == "zero_denominator"
    assert "min" not in to_json(ratios) and "median" not in to_json(ratios)


def test_stratified_and_hierarchical_sensitivities_are_reported() -> None:
    study, y, explanations, slots = _setup()
    config = AnalysisConfig(replicates=300, stratify_by_kind=True,
                            hierarchical=("task", "cell", "seed"),
                            small_cluster_correction="student_t")
    row = _find(analyze(study, explanations, slots, y, config), "delta_desc", "matched_card",
                "point_mae")
    assert row.sensitivity is not None
    hier, small = row.sensitivity.hierarchical, row.sensitivity.small_cluster
    assert hier is not None and small is not None
    assert hier.estimate == pytest.approx(row.estimate)  # balanced design
    assert hier.method == "hierarchical_percentile" and hier.n_clusters == 8
    assert small.method.endswith("student_t")


def test_user_errors_are_one_line() -> None:
    study, y, explanations, slots = _setup()
    with pytest.raises(UserInputError, match="unknown state"):
        analyze(study, explanations, slots, {**y, "ghost": 0.1}, CONFIG)
    with pytest.raises(UserInputError, match="no outcomes"):
        analyze(study, explanations, slots, {}, CONFIG)
    with pytest.raises(UserInputError, match="duplicated slot"):
        analyze(study, explanations, [*slots, slots[0]], y, CONFIG)


GATE = {"name": "x", "join": "all", "on_pass": "confirmed", "on_fail": "inconclusive",
        "conditions": [{"estimate": "delta_desc/e/matched_card/point_mae/itt",
                        "test": "lower_bound_positive"}]}


def test_config_round_trip_and_validation() -> None:
    config = AnalysisConfig(replicates=500, hierarchical=("task", "seed"),
                            baseline_interval=(-0.1, 0.1), gates=(GATE,))
    assert AnalysisConfig.from_json(json.loads(dumps_strict(config.to_json()))) == config
    with pytest.raises(UserInputError, match="gate x: 'conditions' must be a non-empty list"):
        AnalysisConfig.from_json({"gates": [{**GATE, "conditions": []}]})
    with pytest.raises(UserInputError, match="unknown field"):
        AnalysisConfig.from_json({"bootstrap": 3})
    with pytest.raises(UserInputError, match="hierarchical"):
        AnalysisConfig(hierarchical=("cell",))
    with pytest.raises(UserInputError, match="alpha"):
        AnalysisConfig.from_json({"alpha": 1.5})
