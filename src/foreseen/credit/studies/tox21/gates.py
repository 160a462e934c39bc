"""The Tox21 study's confirmation gate (a rule set; :mod:`foreseen.credit.analysis.gates`
evaluates it)."""

from __future__ import annotations

from typing import Any

from foreseen.credit.analysis.gates import MARGINS_NOTE


def tox21_harm_gate(explainer: str = "probe", donor_map: str = "seed_swap",
                    minimum_gain: float = 0.005) -> dict[str, Any]:
    """Tox21 harm gate: Δ_desc and Δ_donor of the ROC-AUC interval score ≥ 0.005, bounds > 0
    (the gate's JSON, as :attr:`AnalysisConfig.gates` holds it)."""
    desc = f"delta_desc/{explainer}/matched_card/interval_score/itt"
    donor = f"delta_donor/{explainer}/donor_card@{donor_map}/interval_score/itt"
    return {
        "name": "tox21_harm", "join": "all",
        "conditions": [
            {"estimate": desc, "test": "estimate_at_least", "value": minimum_gain},
            {"estimate": desc, "test": "lower_bound_positive"},
            {"estimate": donor, "test": "estimate_at_least", "value": minimum_gain},
            {"estimate": donor, "test": "lower_bound_positive"},
        ],
        "on_pass": "confirmed", "on_fail": "confirmation_no_go", "margins_source": MARGINS_NOTE,
    }
