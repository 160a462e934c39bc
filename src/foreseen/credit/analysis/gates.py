"""Decision gates declared in the plan (spec credit.md §7).

A gate is JSON::

    {"name": "...", "join": "all" | "any",
     "conditions": [{"estimate": "<name>", "test": "<test>", ...}, ...],
     "on_pass": "confirmed", "on_fail": "confirmation_no_go", "margins_source": "..."}

Tests on a named estimate (see ``analysis`` for the names):

* ``estimate_at_least`` (``value``): estimate ≥ value;
* ``rate_at_least`` (``value``): same comparison, for rates;
* ``lower_bound_positive``: one-sided 95 % lower bound (5th percentile) > 0;
* ``ci90_inside`` (``margin``): the 90 % interval inside ``[−margin, margin]``;
* ``sign_agrees``: the estimate's sign equals the same estimate's sign in a
  reference run (replication).

The gate is ``inconclusive`` (spec §7: the study cannot decide) when a
referenced estimate is missing or null, rests on fewer than
``minimum_tasks`` clusters, or on arms whose integrity is below
``integrity_minimum``. Delivered-subset estimates never feed a gate (they
are not in the estimate table).

The default gates below carry the spec's margins, which are **ours**: the
paper's Appendix A, which held its margins, is lost.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from foreseen.core.errors import UserInputError

MARGINS_NOTE = "margins are ours; the paper's Appendix A (its margins) is lost"
TESTS: tuple[str, ...] = (
    "estimate_at_least", "rate_at_least", "lower_bound_positive", "ci90_inside", "sign_agrees",
)


def validate_gate(spec: Mapping[str, Any]) -> None:
    """Raise :class:`UserInputError` (one line) when a gate spec is malformed."""
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise UserInputError("gate: 'name' must be a non-empty string")
    if spec.get("join", "all") not in ("all", "any"):
        raise UserInputError(f"gate {name}: 'join' must be 'all' or 'any'")
    conditions = spec.get("conditions")
    if not isinstance(conditions, list) or not conditions:
        raise UserInputError(f"gate {name}: 'conditions' must be a non-empty list")
    for condition in conditions:
        if not isinstance(condition, Mapping) or condition.get("test") not in TESTS:
            raise UserInputError(f"gate {name}: each condition needs a test among {TESTS}")
        if not isinstance(condition.get("estimate"), str):
            raise UserInputError(f"gate {name}: each condition needs an 'estimate' name")
        test = condition["test"]
        key = {"estimate_at_least": "value", "rate_at_least": "value",
               "ci90_inside": "margin"}.get(test)
        if key is not None and not isinstance(condition.get(key), (int, float)):
            raise UserInputError(f"gate {name}: test {test} needs a numeric {key!r}")
    for key in ("on_pass", "on_fail"):
        if not isinstance(spec.get(key), str):
            raise UserInputError(f"gate {name}: {key!r} must be a string")


def _check(condition: Mapping[str, Any], entry: Mapping[str, Any],
           reference: Mapping[str, Mapping[str, Any]] | None) -> tuple[bool | None, str | None]:
    test = condition["test"]
    estimate = entry.get("estimate")
    if test in ("estimate_at_least", "rate_at_least"):
        return (None, "estimate_unavailable") if estimate is None else (
            estimate >= float(condition["value"]), None)
    if test == "lower_bound_positive":
        bound = entry.get("lower_bound_one_sided")
        return (None, "lower_bound_unavailable") if bound is None else (bound > 0, None)
    if test == "ci90_inside":
        ci90 = entry.get("ci90")
        if ci90 is None:
            return None, "ci90_unavailable"
        margin = float(condition["margin"])
        return bool(-margin <= ci90[0] and ci90[1] <= margin), None
    if reference is None:
        return None, "no_reference_run"
    other = reference.get(condition["estimate"], {}).get("estimate")
    if estimate is None or other is None:
        return None, "estimate_unavailable"
    return bool((estimate > 0) == (other > 0) and (estimate < 0) == (other < 0)), None


def evaluate_gate(spec: Mapping[str, Any], estimates: Mapping[str, Mapping[str, Any]], *,
                  minimum_tasks: int, integrity_minimum: float,
                  reference: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Evaluate one gate on the estimate table; returns its status and every condition."""
    validate_gate(spec)
    rows: list[dict[str, Any]] = []
    blockers: list[str] = []
    for condition in spec["conditions"]:
        name = condition["estimate"]
        entry = estimates.get(name)
        row: dict[str, Any] = dict(condition)
        if entry is None:
            row.update(passed=None, reason="estimate_missing")
            blockers.append(f"estimate_missing:{name}")
            rows.append(row)
            continue
        row["observed"] = {k: entry.get(k) for k in
                           ("estimate", "lower_bound_one_sided", "ci90", "n_clusters",
                            "integrity")}
        passed, reason = _check(condition, entry, reference)
        row["passed"] = passed
        if reason is not None:
            row["reason"] = reason
            blockers.append(f"{reason}:{name}")
        n_clusters = entry.get("n_clusters")
        if isinstance(n_clusters, int) and n_clusters < minimum_tasks:
            blockers.append(f"too_few_tasks:{name}")
        integrity = entry.get("integrity")
        if isinstance(integrity, (int, float)) and integrity < integrity_minimum:
            blockers.append(f"integrity_below_minimum:{name}")
        rows.append(row)
    result: dict[str, Any] = {"name": spec["name"], "join": spec.get("join", "all"),
                              "conditions": rows,
                              "margins_source": spec.get("margins_source")}
    if blockers:
        result.update(status="inconclusive", passed=None, reasons=sorted(set(blockers)))
        return result
    outcomes = [bool(r["passed"]) for r in rows]
    passed = all(outcomes) if result["join"] == "all" else any(outcomes)
    result.update(status=spec["on_pass"] if passed else spec["on_fail"], passed=passed)
    return result


def tox21_harm_gate(explainer: str = "probe", donor_map: str = "seed_swap",
                    minimum_gain: float = 0.005) -> dict[str, Any]:
    """Tox21 harm gate: Δ_desc and Δ_donor of the ROC-AUC interval score ≥ 0.005, bounds > 0."""
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


def openml_joint_gate(explainer: str = "plain_note", context: str = "matched_card",
                      point_margin: float = 0.005) -> dict[str, Any]:
    """OpenML joint gate: formation ∧ point equivalence (±0.005) ∧ repeatability."""
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


def replication_gate(explainer: str = "probe", donor_map: str = "seed_swap",
                     interval_margin: float = 0.005) -> dict[str, Any]:
    """Replication gate: signs agree with the reference run; Δ_donor interval score inside ±δ."""
    desc = f"delta_desc/{explainer}/matched_card/interval_score/itt"
    donor = f"delta_donor/{explainer}/donor_card@{donor_map}/interval_score/itt"
    point = f"delta_desc/{explainer}/matched_card/point_mae/itt"
    return {
        "name": "replication", "join": "all",
        "conditions": [
            {"estimate": desc, "test": "sign_agrees"},
            {"estimate": donor, "test": "sign_agrees"},
            {"estimate": point, "test": "sign_agrees"},
            {"estimate": donor, "test": "ci90_inside", "margin": interval_margin},
        ],
        "on_pass": "replication_supported", "on_fail": "replication_not_supported",
        "margins_source": MARGINS_NOTE,
    }


def predictive_value_gate(explainer: str = "plain_note", context: str = "matched_card",
                          donor_context: str = "donor_card@other_intervention"
                          ) -> dict[str, Any]:
    """Controlled-study gate: point-MAE Δ_desc and Δ_donor with positive lower bounds."""
    return {
        "name": "predictive_value", "join": "all",
        "conditions": [
            {"estimate": f"delta_desc/{explainer}/{context}/point_mae/itt",
             "test": "lower_bound_positive"},
            {"estimate": f"delta_donor/{explainer}/{donor_context}/point_mae/itt",
             "test": "lower_bound_positive"},
        ],
        "on_pass": "confirmed", "on_fail": "inconclusive", "margins_source": MARGINS_NOTE,
    }
