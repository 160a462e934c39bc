"""Tests of the five checks (credit.checks) through analyze and directly."""

from __future__ import annotations

import numpy as np
import pytest

from foreseen.credit.analysis.analyze import AnalysisConfig, analyze
from foreseen.credit.analysis.checks import explanation_completeness
from foreseen.credit.model import Card, Explanation, Span

from support.analysis_fixtures import make_explanations, make_outcomes, make_slots, make_study, slot

CONFIG = AnalysisConfig(bootstrap_b=300, bootstrap_seed=5)


def _report(conditions=("ordinary", "elicited"), calibration=(), contexts=None):
    study = make_study(8, conditions=conditions)
    y = make_outcomes(study)
    kwargs = {} if contexts is None else {"contexts": contexts}
    slots = make_slots(study, y, **kwargs)
    return study, y, analyze(study, {"probe": make_explanations(study, y)}, slots, y, CONFIG,
                             calibration)


def test_commitment_difference_and_single_condition_reason() -> None:
    _, _, report = _report()
    value = report["checks"]["commitment"]["value"]["probe"]["value"]["itt"]["value"]
    assert value["by_condition"]["elicited"]["n_complete"] == 16
    assert value["by_condition"]["ordinary"]["n_complete"] == 0
    diff = value["complete_rate_difference"]
    assert diff["estimate"] == 1.0 and diff["lower_bound_one_sided"] == 1.0
    assert diff["n_clusters"] == 8
    _, _, single = _report(conditions=("elicited",))
    entry = single["checks"]["commitment"]["value"]["probe"]
    assert entry["value"] is None and entry["reason"] == "single_elicitation_condition"


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
    assert report["checks"]["known_signal"] == {"value": None, "reason": "no_calibration_plan"}
    rng = np.random.default_rng(0)
    calibration = []
    for state in study.states:
        signal = y[state.id] + rng.normal(0, 0.01)
        calibration.append(slot(state.id, "signal@noisy", 1, 0.5 * signal + 0.001,
                                explainer="signal", signal=signal))
    report = analyze(study, {}, make_slots(study, y), y, CONFIG, calibration)
    check = report["checks"]["known_signal"]["value"]["by_signal"]["signal@noisy"]
    assert check["post_outcome"] is True
    assert check["slope"]["value"]["estimate"] == pytest.approx(0.5)
    assert check["error_change"]["value"]["itt"]["n_clusters"] == 8


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
    slope = report["checks"]["known_signal"]["value"]["by_signal"]["signal@exact"]["slope"]
    # every task has the same number of slots, so task weighting equals pooled OLS
    assert slope["value"]["estimate"] == pytest.approx(np.polyfit(xs, ys, 1)[0])


def test_delivery_alignment_and_predictive_gain() -> None:
    _, _, report = _report()
    delivery = report["checks"]["delivery"]["value"]["itt"]["value"]
    assert delivery["probe|matched_card"]["value"]["share"] == 1.0
    assert report["checks"]["delivery"]["value"]["delivered"]["value"] is None
    gain = report["checks"]["predictive_gain"]["value"]
    assert {r["loss"] for r in gain["itt"]["value"]} >= {"point_mae", "interval_score"}
    assert "constant_zero" in gain["baselines"]
    _, _, no_donor = _report(contexts=("description", "matched_card"))
    assert no_donor["checks"]["alignment"] == {"value": None, "reason": "no_donor_arm"}
