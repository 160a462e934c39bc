"""Tests of the Markdown summary (credit.analysis.markdown) on typed analyses and reports."""

from __future__ import annotations

from dataclasses import replace

from foreseen.credit.analysis.analyze import AnalysisConfig, analyze
from foreseen.credit.analysis.gates import tox21_harm_gate
from foreseen.credit.analysis.markdown import fmt, fmt_interval, render_markdown
from foreseen.credit.analysis.report import CreditReport, OutcomeCommitment

from support.analysis_fixtures import make_explanations, make_outcomes, make_slots, make_study
from support.report_fixtures import demo_report, edge_report


def _analysis():
    study = make_study(6)
    y = make_outcomes(study)
    config = AnalysisConfig(bootstrap_b=200, gates=(tox21_harm_gate(),))
    return analyze(study, {"probe": make_explanations(study, y)}, make_slots(study, y), y,
                   config)


def test_every_contrast_is_rendered_with_interval_and_clusters() -> None:
    analysis = _analysis()
    text = render_markdown(analysis)
    lines = text.splitlines()
    for row in analysis.contrasts:
        matching = [line for line in lines
                    if f"| {row.kind} | probe | {row.context} |" in line
                    and f"| {row.loss} | {row.variant} | {fmt(row.estimate)}" in line]
        assert matching, row
        assert any(fmt_interval(row.ci95) in line and
                   line.rstrip().endswith(f"| {row.n_clusters} |") for line in matching)
    assert "tox21_harm" in text and "Appendix A" in text
    assert "plan id" not in text  # a bare analysis has no provenance


def test_provenance_and_null_reasons_are_printed() -> None:
    report = demo_report()
    text = render_markdown(report)
    assert f"plan id: `{report.plan_id}`" in text
    assert f"parent plan id: `{report.parent_plan_id}`" in text
    assert f"ledger head: `{report.ledger.head_hash}`" in text
    assert "outcome commitment check: `ok`" in text and "post outcome: `no`" in text
    broken = replace(report, outcome_commitment=OutcomeCommitment(
        expected="1" * 64, observed="2" * 64, ok=False))
    assert isinstance(broken, CreditReport)
    assert "outcome commitment check: `MISMATCH`" in render_markdown(broken)
    edge = render_markdown(edge_report())
    assert "known_signal**: computed" in edge
    assert "- probe: — (`single_elicitation_condition`)" in edge
    assert "— (no_paired_states)" in edge and "(fewer_than_two_repeats)" in edge
    assert "**needs_missing**: `inconclusive` (reasons: estimate_missing:" in edge
    assert "known_signal**: not computed — reason `no_calibration_plan`" in render_markdown(
        _analysis())
