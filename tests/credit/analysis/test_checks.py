"""Tests of the five checks (credit.analysis.checks, commitment, known_signal) via analyze."""

from __future__ import annotations

import numpy as np
import pytest

from foreseen.core.schema import to_json
from foreseen.credit.analysis.analyze import AnalysisConfig, analyze
from foreseen.credit.analysis.checks import SignalUptake, explanation_completeness
from foreseen.credit.model import Card, Explanation, Span

from support.analysis_fixtures import make_explanations, make_outcomes, make_slots, make_study, slot

CONFIG = AnalysisConfig(replicates=300, bootstrap_seed=5)


def _report(conditions=("ordinary", "elicited"), calibration=(), contexts=None):
    study = make_study(8, conditions=conditions)
    y = make_outcomes(study)
    kwargs = {} if contexts is None else {"contexts": contexts}
    slots = make_slots(study, y, **kwargs)
    return study, y, analyze(study, {"probe": make_explanations(study, y)}, slots, y, CONFIG,
                             calibration)


def test_commitment_difference_and_single_condition_reason() -> None:
    _, _, report = _report()
    by_explainer = report.checks.commitment.value
    assert by_explainer is not None
    variants = by_explainer["probe"].value
    assert variants is not None and variants.itt.value is not None
    value = variants.itt.value
    assert value.by_condition["elicited"].n_complete == 16
    assert value.by_condition["ordinary"].n_complete == 0
    diff = value.complete_rate_difference
    assert diff is not None
    assert diff.estimate == 1.0 and diff.lower_bound_one_sided == 1.0
    assert diff.n_clusters == 8
    assert report.estimates["commitment/probe/complete_rate_difference"].estimate == 1.0
    _, _, single = _report(conditions=("elicited",))
    assert single.checks.commitment.value is not None
    entry = single.checks.commitment.value["probe"]
    assert entry.value is None and entry.reason == "single_elicitation_condition"
    assert entry.detail is not None and set(entry.detail.by_condition) == {"elicited"}
    assert "commitment/probe/complete_rate_difference" not in single.estimates


def test_evidence_backed_completeness_for_extracted_cards() -> None:
    note = "It will improve because of the gap."
    card = Card(direction="improve", observable="the gap",
                spans={"direction": (Span(8, 15, "improve"),),
                       "observable": (Span(0, 7, "nothing"),)})
    assert explanation_completeness(Explanation("s", "ordinary", "g", note=note,
                                                card=card)) == 1
    assert explanation_completeness(Explanation("s", "elicited", "g", card=card)) == 2


def test_known_signal_null_without_calibration_and_slope_with_it() -> None:
    study, y, report = _report()
    assert to_json(report.checks.known_signal) == {"value": None,
                                                   "reason": "no_calibration_plan"}
    rng = np.random.default_rng(0)
    calibration = []
    for state in study.states:
        signal = y[state.id] + rng.normal(0, 0.01)
        calibration.append(slot(state.id, "signal@noisy", 1, 0.5 * signal + 0.001,
                                explainer="signal", signal=signal))
    report = analyze(study, {}, make_slots(study, y), y, CONFIG, calibration)
    assert report.checks.known_signal.value is not None
    check = report.checks.known_signal.value.by_signal["signal@noisy"]
    assert isinstance(check, SignalUptake) and check.post_outcome is True
    assert check.slope.value is not None
    assert check.slope.value.estimate == pytest.approx(0.5)
    assert check.error_change.value is not None
    assert check.error_change.value.itt.n_clusters == 8


def test_known_signal_slope_is_task_weighted_ols() -> None:
    study = make_study(6)
    y = make_outcomes(study)
    rng = np.random.default_rng(1)
    calibration, xs, ys, tasks = [], [], [], []
    for state in study.states:
        x = float(rng.normal())
        point = float(0.3 * x + rng.normal(0, 0.1))
        calibration.append(slot(state.id, "signal@exact", 1, point, explainer="signal",
                                signal=x))
        xs.append(x), ys.append(point), tasks.append(state.task_id)
    report = analyze(study, {}, make_slots(study, y), y, CONFIG, calibration)
    assert report.checks.known_signal.value is not None
    uptake = report.checks.known_signal.value.by_signal["signal@exact"]
    assert isinstance(uptake, SignalUptake) and uptake.slope.value is not None
    # every task has the same number of slots, so task weighting equals pooled OLS
    assert uptake.slope.value.estimate == pytest.approx(np.polyfit(xs, ys, 1)[0])


def test_delivery_alignment_and_predictive_gain() -> None:
    _, _, report = _report()
    delivery = report.checks.delivery.value
    assert delivery is not None and delivery.itt.value is not None
    share = delivery.itt.value["probe|matched_card"].value
    assert share is not None and share.share == 1.0
    assert delivery.delivered.value is None
    assert delivery.delivered.reason == "delivered_subset_is_defined_by_delivery"
    gain = report.checks.predictive_gain.value
    assert gain is not None and gain.itt.value is not None
    assert {r.loss for r in gain.itt.value} >= {"point_mae", "interval_score"}
    assert gain.baselines == report.baselines
    alignment = report.checks.alignment.value
    assert alignment is not None and alignment.baselines is None
    assert "baselines" not in to_json(alignment)
    _, _, no_donor = _report(contexts=("description", "matched_card"))
    assert to_json(no_donor.checks.alignment) == {"value": None, "reason": "no_donor_arm"}
