"""Details of the analysis that the headline tests do not pin: the known-signal slope's
interval (against a per-replicate weighted least squares by hand), its null reasons,
the error change's margin and variants, the resampler a config declares, the arm of a
description slot, and the estimate table's copy of a contrast."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from foreseen.credit.analysis.analyze import AnalysisConfig, _group_slots, _resampler, analyze
from foreseen.credit.analysis.checks import ErrorChangeValue, SignalUptake
from foreseen.credit.analysis.contrasts import ContrastEstimate, Resampler, loss_contrast, pair_arms
from foreseen.credit.analysis.gates import Estimate
from foreseen.credit.analysis.metrics import arm_states

from support.analysis_fixtures import make_outcomes, make_slots, make_study, slot

CONFIG = AnalysisConfig(replicates=400, bootstrap_seed=9,
                        equivalence_margins={"point_mae": 0.02, "interval_score": 0.005},
                        interval_method="percentile", minimum_clusters=1)


def _calibration(study, y, *, constant_signal: bool = False, delivered: bool = True):
    rng = np.random.default_rng(3)
    records = []
    for state in study.states:
        x = 0.05 if constant_signal else float(rng.normal(0.0, 0.05))
        records.append(slot(state.id, "signal@exact", 1, 0.6 * x + float(rng.normal(0, 0.01)),
                            explainer="signal", signal=x, delivered=delivered))
    return records


def _uptake(calibration, study, y, slots=None) -> SignalUptake:
    report = analyze(study, {}, make_slots(study, y) if slots is None else slots, y, CONFIG,
                     calibration)
    assert report.checks.known_signal.value is not None
    uptake = report.checks.known_signal.value.by_signal["signal@exact"]
    assert isinstance(uptake, SignalUptake)
    return uptake


def test_slope_interval_is_the_percentile_interval_of_per_replicate_wls() -> None:
    study = make_study(6)
    y = make_outcomes(study)
    calibration = _calibration(study, y)
    slope = _uptake(calibration, study, y).slope.value
    assert slope is not None
    tasks = tuple(sorted({s.task_id for s in study.states}))
    task_of = {s.id: s.task_id for s in study.states}
    per_task = {t: [(r.signal, r.forecast.point) for r in calibration if task_of[r.state_id] == t]
                for t in tasks}

    def wls(task_weight: dict[str, float]) -> float:
        xs = np.array([x for t in tasks for x, _ in per_task[t]])
        ys = np.array([p for t in tasks for _, p in per_task[t]])
        w = np.array([task_weight[t] / len(per_task[t]) for t in tasks for _ in per_task[t]])
        mx, my = np.average(xs, weights=w), np.average(ys, weights=w)
        return float(np.sum(w * (xs - mx) * (ys - my)) / np.sum(w * (xs - mx) ** 2))

    assert slope.estimate == pytest.approx(wls({t: 1.0 for t in tasks}), rel=1e-9)
    weights = Resampler(CONFIG.replicates, CONFIG.bootstrap_seed).task_weights(tasks)
    replicates = [wls(dict(zip(tasks, row, strict=True))) for row in weights]
    assert slope.ci95 == pytest.approx(tuple(np.quantile(replicates, [0.025, 0.975])), rel=1e-7)
    assert slope.ci90 == pytest.approx(tuple(np.quantile(replicates, [0.05, 0.95])), rel=1e-7)
    assert slope.lower_bound_one_sided == pytest.approx(np.quantile(replicates, 0.05), rel=1e-7)
    assert (slope.n_clusters, slope.b, slope.seed, slope.reason) == (6, 400, 9, None)
    assert slope.method == "task_cluster_percentile" and slope.n_slots == len(calibration)


def test_a_constant_signal_has_no_slope_with_its_reason() -> None:
    study = make_study(4)
    y = make_outcomes(study)
    with np.errstate(all="raise"):  # the 0/0 is expected and silenced inside
        uptake = _uptake(_calibration(study, y, constant_signal=True), study, y)
    assert uptake.slope.value is None and uptake.slope.reason == "signal_has_no_variance"


def test_error_change_uses_the_point_margin_and_both_variants() -> None:
    study = make_study(4)
    y = make_outcomes(study)
    change = _uptake(_calibration(study, y), study, y).error_change
    assert isinstance(change.value, ErrorChangeValue)
    itt = change.value.itt
    assert itt.equivalence is not None and itt.equivalence.margin == 0.02
    assert itt.taskwise_ratios is None  # the brief form (no diagnostics)
    assert isinstance(change.value.delivered, ContrastEstimate)
    assert change.value.delivered.equivalence is not None
    assert change.value.delivered.equivalence.margin == 0.02
    assert change.value.delivered.taskwise_ratios is None
    undelivered = _uptake(_calibration(study, y, delivered=False), study, y).error_change
    assert undelivered.value is not None
    assert undelivered.value.delivered.reason == "no_delivered_states"  # type: ignore[union-attr]
    no_description = _uptake(_calibration(study, y), study, y,
                             slots=[s for s in make_slots(study, y)
                                    if s.context_id != "description"]).error_change
    assert no_description.value is None and no_description.reason == "no_description_arm"


def test_the_resampler_follows_the_declared_strata_and_hierarchy() -> None:
    study = make_study(4, kinds=("a", "b"))
    plain = _resampler(study, CONFIG)
    assert (plain.b, plain.seed, plain.strata, plain.paths) == (400, 9, None, None)
    stratified = _resampler(study, replace(CONFIG, stratify_by_kind=True))
    assert stratified.strata == {"t00": "a", "t01": "b", "t02": "a", "t03": "b"}
    cells = _resampler(study, replace(CONFIG, hierarchical=("task", "cell", "seed")))
    seeds = _resampler(study, replace(CONFIG, hierarchical=("task", "seed")))
    state = study.states[0]
    assert cells.paths is not None and seeds.paths is not None
    assert cells.paths[state.id] == (state.task_id, f"{state.task_id}/{state.cell}", state.id)
    assert seeds.paths[state.id] == (state.task_id, state.id)
    assert _resampler(study, replace(CONFIG, small_cluster_correction="expand")).correction == (
        "expand")


def test_a_description_slot_belongs_to_the_shared_description_arm() -> None:
    described = slot("t00-b0-s0", "description", 1, 0.1, explainer=None)
    labelled = replace(described, slot_id="x", explainer="probe")
    arms = _group_slots([described, labelled])
    assert list(arms) == ["-|description"] and arms["-|description"][0] is None
    assert len(arms["-|description"][2]) == 2


def test_the_estimate_table_copies_every_field_of_a_contrast() -> None:
    study = make_study(6)
    y = make_outcomes(study)
    records = make_slots(study, y)
    task_of = {s.id: s.task_id for s in study.states}
    scales = {s.task_id: 1.0 for s in study.states}
    arms = [arm_states([r for r in records if r.context_id == c], y, task_of, scales, 0.2)
            for c in ("description", "matched_card")]
    result = loss_contrast(pair_arms(*arms), "point_mae", Resampler(300, 1), 0.01)
    entry = Estimate.of(result, 0.75)
    assert (entry.estimate, entry.lower_bound_one_sided, entry.ci90, entry.ci95,
            entry.n_clusters, entry.integrity) == (result.estimate, result.lower_bound_one_sided,
                                                   result.ci90, result.ci95, result.n_clusters,
                                                   0.75)
    assert entry.ci95 is not None and entry.ci90 != entry.ci95
