"""No verdict from too few clusters: below the plan's minimum every interval is not estimable
and every interval-based contrast, check and gate condition is inconclusive; at the minimum
the verdicts appear. Checked at K = m − 1 and K = m, for each clustering a study uses
(plain tasks — the controlled study's tasks and Tox21's endpoints —, tasks stratified by
kind as OpenML's, and the hierarchical sensitivity)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from foreseen.credit.analysis.analyze import CreditAnalysis, analyze
from foreseen.credit.analysis.config import DEFAULT_MINIMUM_CLUSTERS, AnalysisConfig
from foreseen.credit.analysis.gates import Estimate
from foreseen.credit.presentation.markdown import render_markdown

from support.analysis_fixtures import make_explanations, make_outcomes, make_study
from support.report_fixtures import EXPLAINERS, _calibration, _slots

MINIMUM = DEFAULT_MINIMUM_CLUSTERS
DESC = "delta_desc/plain_note/matched_card/point_mae/itt"
DONOR = "delta_donor/plain_note/donor_card@seed_swap/point_mae/itt"
INTERVAL_CONDITIONS: list[dict[str, Any]] = [
    {"estimate": DESC, "test": "lower_bound_positive"},
    {"estimate": DESC, "test": "ci90_inside", "margin": 10.0},
    {"estimate": DONOR, "test": "lower_bound_positive"},
    {"estimate": "commitment/plain_note/complete_rate_difference",
     "test": "lower_bound_positive"},
    {"estimate": "drift_reduction/plain_note/matched_card/itt", "test": "ci90_inside",
     "margin": 10.0},
    {"estimate": DESC, "test": "within_reference_interval"},
]
POINT_CONDITIONS: list[dict[str, Any]] = [
    {"estimate": DESC, "test": "estimate_at_least", "value": -10.0},
    {"estimate": "integrity/plain_note|matched_card", "test": "rate_at_least", "value": 0.5},
]
CLUSTERINGS: dict[str, dict[str, Any]] = {
    "tasks": {},
    "stratified_tasks": {"stratify_by_kind": True},
    "hierarchical": {"hierarchical": ("task", "cell", "seed")},
}
REFERENCE = {DESC: Estimate(estimate=0.0, ci95=(-10.0, 10.0), ci90=(-10.0, 10.0),
                            lower_bound_one_sided=-10.0, n_clusters=24, integrity=1.0)}


def _analysis(k: int, clustering: str) -> CreditAnalysis:
    study = make_study(k)
    outcomes = make_outcomes(study)
    gates = tuple({"name": f"{c['test']}|{c['estimate']}", "on_pass": "ok", "on_fail": "no",
                   "conditions": [c]} for c in [*INTERVAL_CONDITIONS, *POINT_CONDITIONS])
    config = AnalysisConfig(replicates=200, minimum_tasks=1, gates=gates,
                            **CLUSTERINGS[clustering])
    explanations = {name: make_explanations(study, outcomes) for name in EXPLAINERS}
    return analyze(study, explanations, _slots(study, outcomes, EXPLAINERS, repeats=2, seed=4),
                   outcomes, config, _calibration(study, outcomes, seed=5),
                   reference_estimates=REFERENCE)


@pytest.fixture(scope="module", params=sorted(CLUSTERINGS))
def pair(request: pytest.FixtureRequest) -> tuple[CreditAnalysis, CreditAnalysis]:
    return _analysis(MINIMUM - 1, request.param), _analysis(MINIMUM, request.param)


def test_the_default_minimum_comes_from_the_coverage_simulation() -> None:
    assert MINIMUM == 5  # benchmarks/bootstrap_coverage.py: smallest K ≥ 5 covering ≥ 0.93


def test_below_the_minimum_no_contrast_has_an_interval(
        pair: tuple[CreditAnalysis, CreditAnalysis]) -> None:
    below, at = pair
    estimated = [r for r in below.contrasts if r.estimate is not None
                 and r.reason != "zero_by_construction"]
    assert estimated
    for row in estimated:
        assert row.reason == "too_few_clusters", row
        assert (row.ci95, row.ci90, row.lower_bound_one_sided) == (None, None, None)
        assert row.n_clusters == MINIMUM - 1
        if row.kind != "drift_reduction":  # a ratio has no equivalence statement
            assert row.equivalence is not None and row.equivalence.equivalent is None
            assert row.equivalence.reason == ("too_few_clusters" if row.equivalence.margin
                                              else "no_margin_declared")
        if row.sensitivity is not None and row.sensitivity.hierarchical is not None:
            assert row.sensitivity.hierarchical.ci95 is None
    for row in at.contrasts:
        if row.estimate is not None and row.reason is None:
            assert row.ci95 is not None and row.lower_bound_one_sided is not None
            assert row.n_clusters == MINIMUM
    assert all(r.reason != "too_few_clusters" for r in at.contrasts)
    for row in below.baseline_contrasts:
        assert row.ci95 is None
    assert any(r.ci95 is not None for r in at.baseline_contrasts)


def test_every_interval_based_gate_condition_waits_for_the_minimum(
        pair: tuple[CreditAnalysis, CreditAnalysis]) -> None:
    below, at = pair
    for gate in below.gates:
        condition = gate.conditions[0]
        if condition.test in ("estimate_at_least", "rate_at_least"):
            assert gate.passed is not None, gate  # not interval-based: keeps its verdict
            continue
        assert (gate.status, condition.reason) == ("inconclusive", "too_few_clusters"), gate
        assert gate.reasons == (f"too_few_clusters:{condition.estimate}",)
    for gate in at.gates:
        assert gate.passed is not None and gate.conditions[0].reason is None, gate


def test_every_interval_based_check_waits_for_the_minimum(
        pair: tuple[CreditAnalysis, CreditAnalysis]) -> None:
    below, at = pair
    assert below.verdicts is not None and at.verdicts is not None
    why = f"inconclusive: too few clusters (K = {MINIMUM - 1}, minimum {MINIMUM})"
    for name in ("commitment", "predictive_gain", "alignment", "known_signal"):
        verdict = getattr(below.verdicts, name)
        assert (verdict.verdict, verdict.why) == ("inconclusive", why), verdict
        assert all(s.verdict == "inconclusive" for s in verdict.subjects), verdict
        assert "[" not in verdict.observed and "not estimable" in verdict.observed
        decided = getattr(at.verdicts, name)
        assert "too few clusters" not in decided.why, decided
    assert at.verdicts.predictive_gain.verdict == "pass"
    assert at.verdicts.commitment.verdict == "pass"
    # delivery is a share, not an interval: decided at any K
    assert below.verdicts.delivery.verdict == at.verdicts.delivery.verdict == "pass"


def test_the_markdown_says_pilot_first_and_shows_no_collapsed_interval(
        pair: tuple[CreditAnalysis, CreditAnalysis]) -> None:
    below, at = pair
    text = render_markdown(below)
    first_number = text.index("## Headline")
    pilot = text.index(f"Pilot of the machinery: {MINIMUM - 1} task clusters, below the plan's"
                       f" minimum of {MINIMUM}")
    assert pilot < first_number
    assert "| not estimable |" in text
    assert f"too few clusters (K = {MINIMUM - 1}, minimum {MINIMUM})" in text
    assert "Pilot of the machinery" not in render_markdown(at)


def test_a_plan_without_the_fields_keeps_percentile_intervals_at_any_k() -> None:
    """An old plan (no ``minimum_clusters``/``interval_method``) re-analyses as before."""
    study = make_study(2)
    outcomes = make_outcomes(study)
    old = AnalysisConfig.from_json({"bootstrap_b": 200})
    explanations = {name: make_explanations(study, outcomes) for name in EXPLAINERS}
    analysis = analyze(study, explanations, _slots(study, outcomes, EXPLAINERS, repeats=2,
                                                   seed=4), outcomes, old)
    row = next(r for r in analysis.contrasts if r.kind == "delta_desc" and r.reason is None)
    assert row.ci95 is not None and row.method == "task_cluster_percentile"
    assert "Pilot of the machinery" not in render_markdown(analysis)
    new = analyze(study, explanations, _slots(study, outcomes, EXPLAINERS, repeats=2, seed=4),
                  outcomes, replace(old, interval_method="student_t_expanded"))
    row = next(r for r in new.contrasts if r.kind == "delta_desc" and r.reason is None)
    assert row.method == "task_cluster_student_t_expanded"
