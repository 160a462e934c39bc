"""Tests of the Markdown summary (credit.report_md)."""

from __future__ import annotations

from foreseen.credit.analysis.analyze import AnalysisConfig, analyze
from foreseen.credit.analysis.gates import tox21_harm_gate
from foreseen.credit.analysis.markdown import fmt, fmt_interval, render_markdown

from support.analysis_fixtures import make_explanations, make_outcomes, make_slots, make_study


def _report():
    study = make_study(6)
    y = make_outcomes(study)
    config = AnalysisConfig(bootstrap_b=200, gates=(tox21_harm_gate(),))
    return analyze(study, {"probe": make_explanations(study, y)}, make_slots(study, y), y,
                   config)


def test_every_contrast_is_rendered_with_interval_and_clusters() -> None:
    analysis = _report()
    text = render_markdown(analysis)
    lines = text.splitlines()
    for row in analysis["contrasts"]:
        matching = [line for line in lines
                    if f"| {row['kind']} | probe | {row['context']} |" in line
                    and f"| {row['loss']} | {row['variant']} | {fmt(row['estimate'])}" in line]
        assert matching, row
        assert any(fmt_interval(row["ci95"]) in line and
                   line.rstrip().endswith(f"| {row['n_clusters']} |") for line in matching)
    assert "tox21_harm" in text and "Appendix A" in text


def test_provenance_and_null_reasons_are_printed() -> None:
    analysis = _report()
    text = render_markdown({"analysis": analysis, "plan_id": "abc123", "ledger_head": "f00"})
    assert "plan id: `abc123`" in text and "ledger head: `f00`" in text
    assert "known_signal**: not computed — reason `no_calibration_plan`" in text
    assert render_markdown(analysis) == render_markdown(analysis)
