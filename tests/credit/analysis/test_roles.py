"""Roles: the primary explainer's contrasts are the primary ones, controls are reported apart,
and every gate says whether it judges the primary explainer, a control or the machinery."""

from __future__ import annotations

import pytest

from foreseen.core.errors import ConfigError
from foreseen.core.schema import to_json
from foreseen.credit.analysis.analyze import AnalysisConfig, CreditAnalysis, analyze
from foreseen.credit.analysis.gates import evaluate_gate, predictive_value_gate, validate_gate
from foreseen.credit.presentation.markdown import render_markdown
from foreseen.credit.presentation.rows import contrasts_by_role

from support.analysis_fixtures import make_explanations, make_outcomes, make_study
from support.report_fixtures import EXPLAINERS, _slots

GATES = (
    {**predictive_value_gate("plain_note", "matched_card", "donor_card@seed_swap"),
     "role": "primary"},
    {**predictive_value_gate("mechanism", "matched_card", "donor_card@other_intervention"),
     "name": "predictive_value_mechanism", "role": "control"},
)


def _analysis(**roles: object) -> CreditAnalysis:
    study = make_study(8)
    outcomes = make_outcomes(study)
    explanations = {name: make_explanations(study, outcomes) for name in EXPLAINERS}
    config = AnalysisConfig(replicates=200, bootstrap_seed=3, gates=GATES, **roles)  # type: ignore[arg-type]
    return analyze(study, explanations, _slots(study, outcomes, EXPLAINERS, repeats=2, seed=4),
                   outcomes, config)


def _section(markdown: str, title: str) -> str:
    return markdown.split(f"## {title}\n")[1].split("\n## ")[0]


def test_declared_roles_keep_the_controls_out_of_the_primary_contrasts() -> None:
    report = _analysis(primary_explainer="plain_note", controls=("mechanism", "placebo"))
    assert report.explainer_roles == {"mechanism": "control", "placebo": "control",
                                      "plain_note": "primary"}
    itt = [r for r in report.contrasts if r.loss == "point_mae" and r.variant == "itt"]
    split = contrasts_by_role(report, itt)
    assert {r.explainer for r in split.primary} == {"plain_note"}
    assert {r.explainer for r in split.control} == {"mechanism", "placebo"}
    assert len(split.primary) + len(split.control) == len(itt) and not split.other
    markdown = render_markdown(report)
    primary = _section(markdown, "Primary contrasts")
    assert "| plain_note |" in primary
    assert "| mechanism |" not in primary and "| placebo |" not in primary
    controls = _section(markdown, "Controls (reported apart)")
    assert "| mechanism |" in controls and "| placebo |" in controls
    assert "| plain_note |" not in controls
    assert "predictive_value (primary)" in markdown
    assert "predictive_value_mechanism (control)" in markdown


def test_a_plan_without_roles_reports_every_contrast_as_before() -> None:
    report = _analysis()
    assert report.explainer_roles is None and "explainer_roles" not in to_json(report)
    primary = _section(render_markdown(report), "Primary contrasts")
    assert all(f"| {name} |" in primary for name in EXPLAINERS)
    assert "## Controls" not in render_markdown(report)


def test_an_explainer_neither_primary_nor_control_is_reported_apart_as_other() -> None:
    report = _analysis(primary_explainer="llm", controls=("mechanism",))
    assert report.explainer_roles == {"mechanism": "control", "placebo": "other",
                                      "plain_note": "other"}
    markdown = render_markdown(report)
    assert "| plain_note |" not in _section(markdown, "Primary contrasts")
    assert "| plain_note |" in _section(markdown, "Other explainers")


def test_a_gate_role_is_written_only_when_declared_and_an_unknown_role_is_refused() -> None:
    bare = predictive_value_gate("plain_note")
    result = evaluate_gate(bare, {}, minimum_tasks=6, integrity_minimum=0.9)
    assert "role" not in to_json(result)
    machinery = evaluate_gate({**bare, "role": "machinery"}, {}, minimum_tasks=6,
                              integrity_minimum=0.9)
    assert to_json(machinery)["role"] == "machinery"
    with pytest.raises(ConfigError, match="'role' must be one of primary, control, machinery"):
        validate_gate({**bare, "role": "headline"})
