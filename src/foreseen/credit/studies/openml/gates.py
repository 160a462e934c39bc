"""The OpenML study's confirmation gate (a rule set; :mod:`foreseen.credit.analysis.gates`
evaluates it)."""

from __future__ import annotations

from typing import Any

from foreseen.credit.analysis.gates import MARGINS_NOTE


def openml_joint_gate(explainer: str = "plain_note", context: str = "matched_card",
                      point_margin: float = 0.005) -> dict[str, Any]:
    """OpenML joint gate: formation ∧ point equivalence (±0.005) ∧ repeatability (the gate's
    JSON, as :attr:`AnalysisConfig.gates` holds it)."""
    return {
        "name": "openml_joint", "join": "all",
        "conditions": [
            {"estimate": f"commitment/{explainer}/complete_rate_difference",
             "test": "lower_bound_positive"},
            {"estimate": f"delta_desc/{explainer}/{context}/point_mae/itt",
             "test": "ci90_inside", "margin": point_margin},
            {"estimate": f"drift_reduction/{explainer}/{context}/itt",
             "test": "lower_bound_positive"},
        ],
        "on_pass": "confirmed", "on_fail": "confirmation_no_go", "margins_source": MARGINS_NOTE,
    }
