"""Decision gates declared in the plan (credit §7).

A gate is JSON::

    {"name": "...", "join": "all" | "any",
     "conditions": [{"estimate": "<name>", "test": "<test>", ...}, ...],
     "on_pass": "confirmed", "on_fail": "confirmation_no_go", "margins_source": "...",
     "role": "primary" | "control" | "machinery"}    # role optional (GATE_ROLES)

Tests on a named estimate (see ``analysis`` for the names):

* ``estimate_at_least`` (``value``): estimate ≥ value;
* ``rate_at_least`` (``value``): same comparison, for rates;
* ``lower_bound_positive``: one-sided 95 % lower bound (5th percentile) > 0;
* ``ci90_inside`` (``margin``): the 90 % interval inside ``[−margin, margin]``;
* ``within_reference_interval``: the estimate lies inside the reference run's
  95 % interval of the same estimate (replication, credit §13);
* ``sign_agrees``: the estimate's sign equals the same estimate's sign in a
  reference run (the replication test of plans frozen before intervals were
  compared; kept so they re-analyse).

A condition cannot decide when its estimate is missing or null, is zero by
construction (reason ``zero_by_construction``: a gate never passes on an
exact zero or on rounding noise), its test rests on an interval the plan's
minimum number of clusters does not support (``too_few_clusters``), it rests
on fewer than ``minimum_tasks`` clusters, or on arms whose integrity is below
``integrity_minimum``. An all-of gate **fails** as soon as one condition
decided a failure, whatever else could not decide; an any-of gate passes as
soon as one decided a pass; otherwise an undecided condition makes the gate
``inconclusive`` (credit §7: the study cannot decide; credit §13: Gate logic).
Delivered-subset estimates never feed a gate (they are not in the estimate
table).

Each condition is written with what it required (``required``, e.g. "one-sided
95 % lower bound > 0"), what was observed and whether it passed, so a reader
sees why a gate decided as it did.

The default gates below carry the spec's margins, which are **ours**: the
paper's Appendix A, which held its margins, is lost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from foreseen.core.bootstrap import TOO_FEW_CLUSTERS
from foreseen.core.errors import ConfigError
from foreseen.credit.analysis.contrasts import (
    ZERO_BY_CONSTRUCTION,
    BootstrapResult,
    ContrastEstimate,
)
from foreseen.credit.analysis.record import OPTIONAL, Interval, Record, written_with

MARGINS_NOTE = "margins are ours; the paper's Appendix A (its margins) is lost"
TESTS: tuple[str, ...] = (
    "estimate_at_least", "rate_at_least", "lower_bound_positive", "ci90_inside", "sign_agrees",
    "within_reference_interval",
)
#: tests that compare an estimate with the reference run's (replication)
REFERENCE_TESTS: tuple[str, ...] = ("sign_agrees", "within_reference_interval")
CONDITION_KEYS: tuple[str, ...] = ("estimate", "test", "value", "margin")
#: a gate's optional ``role``: ``primary`` (judges the primary explainer; the default),
#: ``control`` (a positive or negative control beside it) or ``machinery`` (a stand-in
#: explainer's gate in a run whose primary explainer is a model: it checks the machinery,
#: never the model's explanations)
GATE_ROLES: tuple[str, ...] = ("primary", "control", "machinery")


@dataclass(frozen=True, kw_only=True)
class Estimate(Record):
    """One entry of the estimate table that gates read (credit §7).

    A bootstrapped estimate (a contrast, a drift reduction, a commitment
    difference) carries its one-sided lower bound, intervals and cluster count;
    a rate (``integrity/<arm>``) carries only its value. ``integrity`` is the
    lower integrity of the arms the estimate rests on (null when none applies).
    ``reason`` says why the intervals are null (e.g. ``zero_by_construction``).
    """

    estimate: float | None
    lower_bound_one_sided: float | None = field(default=None, metadata=written_with("n_clusters"))
    ci90: Interval | None = field(default=None, metadata=written_with("n_clusters"))
    ci95: Interval | None = field(default=None, metadata=written_with("n_clusters"))
    n_clusters: int | None = field(default=None, metadata=OPTIONAL)
    integrity: float | None
    reason: str | None = field(default=None, metadata=OPTIONAL)

    @classmethod
    def of(cls, result: ContrastEstimate | BootstrapResult,
           integrity: float | None) -> Estimate:
        return cls(estimate=result.estimate, lower_bound_one_sided=result.lower_bound_one_sided,
                   ci90=result.ci90, ci95=result.ci95, n_clusters=result.n_clusters,
                   integrity=integrity, reason=result.reason)

    @classmethod
    def rate(cls, value: float | None) -> Estimate:
        return cls(estimate=value, integrity=value)


@dataclass(frozen=True, kw_only=True)
class ObservedEstimate(Record):
    """What a gate condition saw of its estimate."""

    estimate: float | None
    lower_bound_one_sided: float | None
    ci90: Interval | None
    n_clusters: int | None
    integrity: float | None


@dataclass(frozen=True, kw_only=True)
class GateCondition(Record):
    """One condition of a gate as declared, with what was observed and its outcome.

    ``required`` is the rule in words; ``passed`` is null with a ``reason`` when
    the test could not be applied; ``observed`` is absent when the estimate is
    missing from the table; ``reference_estimate`` and ``reference_ci95`` are the
    reference run's value and 95 % interval of the estimate (replication tests only).
    """

    estimate: str
    test: str
    value: float | None = field(default=None, metadata=OPTIONAL)
    margin: float | None = field(default=None, metadata=OPTIONAL)
    required: str | None = field(default=None, metadata=OPTIONAL)
    observed: ObservedEstimate | None = field(default=None, metadata=OPTIONAL)
    reference_estimate: float | None = field(default=None, metadata=OPTIONAL)
    reference_ci95: Interval | None = field(default=None, metadata=OPTIONAL)
    passed: bool | None
    reason: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class GateResult(Record):
    """A gate's verdict: its status (``on_pass``, ``on_fail`` or ``inconclusive``) and conditions.

    ``inconclusive`` (with ``reasons``) when a condition could not decide — its
    estimate missing or null, too few clusters for its interval, fewer than the
    minimum number of tasks, arms whose integrity is below the minimum — and no
    decided condition settles the gate (:func:`gate_outcome`).
    """

    name: str
    join: str
    conditions: tuple[GateCondition, ...]
    margins_source: str | None
    status: str
    passed: bool | None
    reasons: tuple[str, ...] | None = field(default=None, metadata=OPTIONAL)
    role: str | None = field(default=None, metadata=OPTIONAL)


def validate_gate(spec: Mapping[str, Any]) -> None:
    """Raise :class:`~foreseen.core.errors.ConfigError` (one line) when a gate spec is malformed."""
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError("gate: 'name' must be a non-empty string")
    if spec.get("join", "all") not in ("all", "any"):
        raise ConfigError(f"gate {name}: 'join' must be 'all' or 'any'")
    conditions = spec.get("conditions")
    if not isinstance(conditions, list) or not conditions:
        raise ConfigError(f"gate {name}: 'conditions' must be a non-empty list")
    for condition in conditions:
        if not isinstance(condition, Mapping) or condition.get("test") not in TESTS:
            raise ConfigError(f"gate {name}: each condition needs a test among {TESTS}")
        if not isinstance(condition.get("estimate"), str):
            raise ConfigError(f"gate {name}: each condition needs an 'estimate' name")
        unknown = sorted(set(condition) - set(CONDITION_KEYS))
        if unknown:
            raise ConfigError(f"gate {name}: unknown condition key {unknown[0]!r} "
                              f"(known: {', '.join(CONDITION_KEYS)})")
        test = condition["test"]
        key = {"estimate_at_least": "value", "rate_at_least": "value",
               "ci90_inside": "margin"}.get(test)
        if key is not None and not _is_number(condition.get(key)):
            raise ConfigError(f"gate {name}: test {test} needs a numeric {key!r}")
        for optional_key in ("value", "margin"):
            if optional_key in condition and not _is_number(condition[optional_key]):
                raise ConfigError(f"gate {name}: {optional_key!r} must be a number")
    for key in ("on_pass", "on_fail"):
        if not isinstance(spec.get(key), str):
            raise ConfigError(f"gate {name}: {key!r} must be a string")
    source = spec.get("margins_source")
    if source is not None and not isinstance(source, str):
        raise ConfigError(f"gate {name}: 'margins_source' must be a string")
    if "role" in spec and spec["role"] not in GATE_ROLES:
        raise ConfigError(f"gate {name}: 'role' must be one of {', '.join(GATE_ROLES)}")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def required_text(condition: Mapping[str, Any]) -> str:
    """What a condition requires, in words (``required`` of :class:`GateCondition`)."""
    test = condition["test"]
    if test in ("estimate_at_least", "rate_at_least"):
        return f"estimate ≥ {float(condition['value']):g}"
    if test == "lower_bound_positive":
        return "one-sided 95 % lower bound > 0"
    if test == "ci90_inside":
        margin = float(condition["margin"])
        return f"90 % interval inside [−{margin:g}, {margin:g}]"
    if test == "within_reference_interval":
        return "estimate inside the reference run's 95 % interval"
    return "same sign as the reference run's estimate"


INTERVAL_TESTS: tuple[str, ...] = ("lower_bound_positive", "ci90_inside",
                                    "within_reference_interval")
"""Tests that rest on an interval: below the plan's minimum number of clusters they cannot
be applied (reason ``too_few_clusters``)."""


def _check(condition: Mapping[str, Any], entry: Estimate,
           reference: Mapping[str, Estimate] | None) -> tuple[bool | None, str | None]:
    test = condition["test"]
    estimate = entry.estimate
    if entry.reason == ZERO_BY_CONSTRUCTION:
        return None, ZERO_BY_CONSTRUCTION
    if test in INTERVAL_TESTS and entry.reason == TOO_FEW_CLUSTERS:
        return None, TOO_FEW_CLUSTERS
    if test in ("estimate_at_least", "rate_at_least"):
        return (None, "estimate_unavailable") if estimate is None else (
            estimate >= float(condition["value"]), None)
    if test == "lower_bound_positive":
        bound = entry.lower_bound_one_sided
        return (None, "lower_bound_unavailable") if bound is None else (bound > 0, None)
    if test == "ci90_inside":
        ci90 = entry.ci90
        if ci90 is None:
            return None, "ci90_unavailable"
        margin = float(condition["margin"])
        return bool(-margin <= ci90[0] and ci90[1] <= margin), None
    if reference is None:
        return None, "no_reference_run"
    other = reference.get(condition["estimate"])
    if test == "within_reference_interval":
        return _within_reference(estimate, other)
    theirs = None if other is None else other.estimate
    if estimate is None or theirs is None:
        return None, "estimate_unavailable"
    return bool((estimate > 0) == (theirs > 0) and (estimate < 0) == (theirs < 0)), None


def _within_reference(estimate: float | None,
                      other: Estimate | None) -> tuple[bool | None, str | None]:
    """``within_reference_interval``: low ≤ estimate ≤ high of the reference's 95 % interval.

    Spec credit.md §13 (Replication): the rule compares intervals, not signs
    only. Undecided when either estimate is missing, or the reference has no
    interval (e.g. it rested on fewer clusters than its minimum).
    """
    if estimate is None or other is None or other.estimate is None:
        return None, "estimate_unavailable"
    if other.ci95 is None:
        return None, (TOO_FEW_CLUSTERS if other.reason == TOO_FEW_CLUSTERS
                      else "reference_interval_unavailable")
    return bool(other.ci95[0] <= estimate <= other.ci95[1]), None


def _condition_blockers(name: str, entry: Estimate, reason: str | None, *,
                        minimum_tasks: int, integrity_minimum: float) -> list[str]:
    """Why a condition cannot decide: its test's reason, too few tasks, low integrity."""
    blockers = [] if reason is None else [f"{reason}:{name}"]
    if entry.n_clusters is not None and entry.n_clusters < minimum_tasks:
        blockers.append(f"too_few_tasks:{name}")
    if entry.integrity is not None and entry.integrity < integrity_minimum:
        blockers.append(f"integrity_below_minimum:{name}")
    return blockers


def gate_outcome(join: str, decided: Sequence[bool | None]) -> bool | None:
    """The gate's outcome from its conditions' decided outcomes (None: could not decide).

    ``all``: any decided failure fails the gate whatever else could not decide
    (credit §13, Gate logic); else any undecided condition makes it
    inconclusive (None); else it passes. ``any``: any decided pass passes it
    whatever else could not decide; else any undecided condition makes it
    inconclusive; else it fails.
    """
    decisive = join != "all"  # the outcome one decided condition settles the gate with
    if decisive in decided:
        return decisive
    if None in decided:
        return None
    return not decisive


def evaluate_gate(spec: Mapping[str, Any], estimates: Mapping[str, Estimate], *,
                  minimum_tasks: int, integrity_minimum: float,
                  reference: Mapping[str, Estimate] | None = None) -> GateResult:
    """Evaluate one gate on the estimate table; returns its status and every condition.

    A condition *decides* when its test applied (``passed`` is not null) and it
    has no blocker (enough tasks, integrity at the minimum); the gate's status
    follows :func:`gate_outcome`. ``reasons`` lists every blocker of an
    inconclusive gate.
    """
    validate_gate(spec)
    rows: list[GateCondition] = []
    blockers: list[str] = []
    decided: list[bool | None] = []
    for condition in spec["conditions"]:
        name = condition["estimate"]
        declared = {"estimate": name, "test": condition["test"],
                    "value": condition.get("value"), "margin": condition.get("margin"),
                    "required": required_text(condition)}
        entry = estimates.get(name)
        if entry is None:
            rows.append(GateCondition(**declared, passed=None, reason="estimate_missing"))
            blockers.append(f"estimate_missing:{name}")
            decided.append(None)
            continue
        observed = ObservedEstimate(
            estimate=entry.estimate, lower_bound_one_sided=entry.lower_bound_one_sided,
            ci90=entry.ci90, n_clusters=entry.n_clusters, integrity=entry.integrity)
        passed, reason = _check(condition, entry, reference)
        own = _condition_blockers(name, entry, reason, minimum_tasks=minimum_tasks,
                                  integrity_minimum=integrity_minimum)
        blockers.extend(own)
        decided.append(None if own else passed)
        other = (reference or {}).get(name) if condition["test"] in REFERENCE_TESTS else None
        rows.append(GateCondition(**declared, observed=observed,
                                  reference_estimate=None if other is None else other.estimate,
                                  reference_ci95=None if other is None or condition[
                                      "test"] != "within_reference_interval" else other.ci95,
                                  passed=passed, reason=reason))
    join = str(spec.get("join", "all"))
    head: dict[str, Any] = {"name": spec["name"], "join": join, "conditions": tuple(rows),
                            "margins_source": spec.get("margins_source"),
                            "role": spec.get("role")}
    outcome = gate_outcome(join, decided)
    if outcome is None:
        return GateResult(**head, status="inconclusive", passed=None,
                          reasons=tuple(sorted(set(blockers))))
    return GateResult(**head, status=spec["on_pass"] if outcome else spec["on_fail"],
                      passed=outcome)


def replication_gate(explainer: str = "probe", donor_map: str = "seed_swap",
                     interval_margin: float = 0.005) -> dict[str, Any]:
    """Replication gate: each estimate inside the reference run's 95 % interval; Δ_donor
    interval score's 90 % interval inside ±δ (credit §7, §13: intervals, not signs only)."""
    desc = f"delta_desc/{explainer}/matched_card/interval_score/itt"
    donor = f"delta_donor/{explainer}/donor_card@{donor_map}/interval_score/itt"
    point = f"delta_desc/{explainer}/matched_card/point_mae/itt"
    return {
        "name": "replication", "join": "all",
        "conditions": [
            {"estimate": desc, "test": "within_reference_interval"},
            {"estimate": donor, "test": "within_reference_interval"},
            {"estimate": point, "test": "within_reference_interval"},
            {"estimate": donor, "test": "ci90_inside", "margin": interval_margin},
        ],
        "on_pass": "replication_supported", "on_fail": "replication_not_supported",
        "margins_source": MARGINS_NOTE,
    }


def predictive_value_gate(explainer: str = "plain_note", context: str = "matched_card",
                          donor_context: str = "donor_card@other_intervention"
                          ) -> dict[str, Any]:
    """Controlled-study gate: point-MAE Δ_desc and Δ_donor with positive lower bounds.

    Both lower bounds > 0 → ``confirmed``; a decided lower bound ≤ 0 →
    ``confirmation_no_go`` (as the spec's other confirmation gates, §7); a
    study that cannot decide → ``inconclusive``.
    """
    return {
        "name": "predictive_value", "join": "all",
        "conditions": [
            {"estimate": f"delta_desc/{explainer}/{context}/point_mae/itt",
             "test": "lower_bound_positive"},
            {"estimate": f"delta_donor/{explainer}/{donor_context}/point_mae/itt",
             "test": "lower_bound_positive"},
        ],
        "on_pass": "confirmed", "on_fail": "confirmation_no_go", "margins_source": MARGINS_NOTE,
    }
