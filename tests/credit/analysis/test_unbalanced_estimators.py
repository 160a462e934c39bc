"""Estimators of the five checks on unbalanced designs, against independent references.

* Commitment: tasks that lack one elicitation condition, unequal state
  counts, incomplete elicited cards. The elicited − ordinary complete-rate
  difference ``r_e − r_o`` with ``r_c = Σ_k w_k h_ck r_ck / Σ_k w_k h_ck`` is
  recomputed in plain Python, for the estimate and for every bootstrap
  replicate (same task weights), and the percentile interval from those.
* Known-signal slope: the task-weighted OLS slope equals weighted least squares
  with observation weights 1 / n_k (every task weighs the same), checked with
  statsmodels WLS; pooled OLS (statsmodels OLS) differs on this design.
"""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from foreseen.credit.analysis.analyze import AnalysisConfig, analyze
from foreseen.credit.analysis.checks import SignalUptake, commitment
from foreseen.credit.analysis.contrasts import Resampler
from foreseen.credit.model import Card, Explanation, State, Target

from support.analysis_fixtures import make_outcomes, make_slots, make_study, slot

COMPLETE_CARD = Card(direction="improve", target=Target(point=0.01), observable="o", regime="r",
                     falsification="f", counterfactual="c")
FIVE_SLOTS = Card(direction="improve", target=Target(point=0.01), observable="o", regime="r",
                  falsification="f")

# task → [(condition, complete?)]: t1 lacks "ordinary", t3 lacks "elicited",
# t0 and t2 have both with unequal counts and incomplete elicited cards
DESIGN: dict[str, list[tuple[str, bool]]] = {
    "t0": [("elicited", True), ("elicited", False), ("elicited", True), ("ordinary", False)],
    "t1": [("elicited", True), ("elicited", False)],
    "t2": [("elicited", False), ("ordinary", True), ("ordinary", False), ("ordinary", False),
           ("ordinary", False)],
    "t3": [("ordinary", True), ("ordinary", True), ("ordinary", False)],
    "t4": [("elicited", True), ("ordinary", False)],
}


def _commitment_inputs() -> tuple[list[State], dict[str, Explanation]]:
    states, explanations = [], {}
    for task, rows in DESIGN.items():
        for index, (condition, complete) in enumerate(rows):
            state = State(id=f"{task}-{index}", task_id=task, cell=f"{task}-c", seed=index,
                          budget=1.0, budget_index=0, intervention_id="i",
                          condition=condition)  # type: ignore[arg-type]
            states.append(state)
            explanations[state.id] = Explanation(
                state.id, condition, "g",  # type: ignore[arg-type]
                card=COMPLETE_CARD if complete else FIVE_SLOTS)
    return states, explanations


def _rates(condition: str) -> dict[str, float]:
    """Per-task complete rate of one condition, for the tasks that have it (plain Python)."""
    rates = {}
    for task, rows in DESIGN.items():
        mine = [complete for c, complete in rows if c == condition]
        if mine:
            rates[task] = sum(mine) / len(mine)
    return rates


def _difference(weights: dict[str, float]) -> float:
    elicited, ordinary = _rates("elicited"), _rates("ordinary")
    r_e = sum(weights[t] * r for t, r in elicited.items()) / sum(weights[t] for t in elicited)
    r_o = sum(weights[t] * r for t, r in ordinary.items()) / sum(weights[t] for t in ordinary)
    return r_e - r_o


def test_commitment_difference_on_tasks_missing_a_condition() -> None:
    states, explanations = _commitment_inputs()
    resampler = Resampler(2000, 17, None, None, "none")
    result = commitment(explanations, states, {s.id: 0.0 for s in states}, resampler)
    assert result.value is not None
    by_condition = result.value.by_condition
    # per-task rates: elicited t0 2/3, t1 1/2, t2 0, t4 1; ordinary t0 0, t2 1/4, t3 2/3, t4 0
    assert by_condition["elicited"].n_tasks == 4 and by_condition["ordinary"].n_tasks == 4
    assert by_condition["elicited"].complete_rate == pytest.approx((2 / 3 + 1 / 2 + 0 + 1) / 4)
    assert by_condition["ordinary"].complete_rate == pytest.approx((0 + 1 / 4 + 2 / 3 + 0) / 4)
    assert by_condition["elicited"].n_complete == 4 and by_condition["elicited"].n_states == 7
    assert by_condition["elicited"].mean_completeness == pytest.approx((4 * 6 + 3 * 5) / 7)
    difference = result.value.complete_rate_difference
    assert difference is not None
    equal = {t: 1.0 for t in DESIGN}
    assert difference.estimate == pytest.approx(_difference(equal))
    assert difference.estimate == pytest.approx(13 / 24 - 11 / 48)
    # every replicate by hand, with the same task weights
    tasks = tuple(sorted(DESIGN))
    weights = resampler.task_weights(tasks)
    # a replicate that draws no task of one condition has no rate for it (0 / 0): with
    # 5 tasks that happens with probability about 2 · 5^-5 per replicate, and here to some
    # of the 2000; then the interval is null with its reason, never a made-up number
    undefined = [row for row in weights
                 if not any(dict(zip(tasks, row, strict=True))[t] for t in _rates("elicited"))
                 or not any(dict(zip(tasks, row, strict=True))[t] for t in _rates("ordinary"))]
    assert len(undefined) > 0 and difference.n_clusters == 5
    assert difference.ci95 is None and difference.lower_bound_one_sided is None
    assert difference.reason == "non_finite_replicates"


def test_commitment_replicates_match_on_a_design_where_every_replicate_is_defined() -> None:
    """Every kept task has both conditions (unequal counts), so every replicate is finite."""
    states, explanations = _commitment_inputs()
    keep = {"t0", "t2", "t4"}
    states = [s for s in states if s.task_id in keep]
    resampler = Resampler(1000, 3, None, None, "none")
    result = commitment(explanations, states, {s.id: 0.0 for s in states}, resampler)
    assert result.value is not None and result.value.complete_rate_difference is not None
    difference = result.value.complete_rate_difference
    tasks = tuple(sorted(keep))
    elicited = {t: r for t, r in _rates("elicited").items() if t in keep}
    ordinary = {t: r for t, r in _rates("ordinary").items() if t in keep}
    replicates = []
    for row in resampler.task_weights(tasks):
        w = dict(zip(tasks, row, strict=True))
        replicates.append(sum(w[t] * elicited[t] for t in tasks) / sum(w.values())
                          - sum(w[t] * ordinary[t] for t in tasks) / sum(w.values()))
    assert difference.estimate == pytest.approx((2 / 3 + 0 + 1) / 3 - (0 + 1 / 4 + 0) / 3)
    assert difference.ci95 == pytest.approx(tuple(np.quantile(replicates, [0.025, 0.975])))
    assert difference.ci90 == pytest.approx(tuple(np.quantile(replicates, [0.05, 0.95])))


def test_known_signal_slope_is_wls_with_equal_task_weight_not_pooled_ols() -> None:
    study = make_study(5)
    y = make_outcomes(study)
    rng = np.random.default_rng(7)
    calibration, xs, ys, tasks = [], [], [], []
    # unbalanced: task k keeps its first (k + 1) states' slots, with a task-specific slope
    for state in study.states:
        k = int(state.task_id[1:])
        if int(state.id.rsplit("-s", 1)[1]) + 2 * state.budget_index > k:
            continue
        for repeat in (1, 2):
            x = float(rng.normal(k, 1.0))
            point = float((0.2 + 0.3 * k) * x + rng.normal(0, 0.05))
            calibration.append(slot(state.id, "signal@exact", repeat, point, explainer="signal",
                                    signal=x))
            xs.append(x), ys.append(point), tasks.append(state.task_id)
    counts = {t: tasks.count(t) for t in set(tasks)}
    assert len(set(counts.values())) > 1  # unbalanced
    design = sm.add_constant(np.array(xs))
    wls = sm.WLS(np.array(ys), design, weights=[1 / counts[t] for t in tasks]).fit().params[1]
    ols = sm.OLS(np.array(ys), design).fit().params[1]
    assert abs(wls - ols) > 0.05
    report = analyze(study, {}, make_slots(study, y), y,
                     AnalysisConfig(replicates=300, bootstrap_seed=2), calibration)
    assert report.checks.known_signal.value is not None
    uptake = report.checks.known_signal.value.by_signal["signal@exact"]
    assert isinstance(uptake, SignalUptake) and uptake.slope.value is not None
    assert uptake.slope.value.estimate == pytest.approx(wls, rel=1e-9)
    assert uptake.slope.value.n_clusters == len(counts)
    assert uptake.slope.value.n_slots == len(xs)
