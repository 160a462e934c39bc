"""The credit analysis: integrity, metrics, baselines, contrasts, gates and the five checks.

:func:`analyze` is a pure function of the study, the explanations, the slot
records read back from the ledger, the revealed outcomes and the frozen
:class:`~foreseen.credit.analysis.config.AnalysisConfig` (spec credit.md §5–§8). Its
result is strict-JSON-able (undefined values are ``null`` with a reason).

Arms are (explainer, context); the ``description`` arm is shared by every
explainer. Δ_desc is computed for every non-description arm and every loss
in :data:`~foreseen.credit.analysis.metrics.LOSSES`; Δ_donor for every donor arm
against its matched counterpart (``donor_card@m`` → ``matched_card``,
``donor_note@m`` → ``matched_note``, ``crossover@m`` → ``crossover``: the
same numbers with the state's own screened prose). Intention to treat
(all assigned slots, fallbacks included) is primary and carries the full
diagnostics; valid-only estimates stand beside it; the delivered subset is
descriptive and never enters the estimate table that gates read.

Estimate names (for gates): ``delta_desc/<explainer>/<context>/<loss>/<variant>``,
``delta_donor/<explainer>/<donor context>/<loss>/<variant>``,
``drift_reduction/<explainer>/<context>/<variant>``,
``commitment/<explainer>/complete_rate_difference``, ``integrity/<arm>``;
variants ``itt`` and ``valid_only``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from foreseen.core.errors import UserInputError
from foreseen.credit.analysis.baselines import baselines, claim_metrics
from foreseen.credit.analysis.checks import commitment, contrast_check, delivery, known_signal, null
from foreseen.credit.analysis.config import AnalysisConfig
from foreseen.credit.analysis.contrasts import Resampler, drift_reduction, loss_contrast, pair_arms
from foreseen.credit.analysis.gates import evaluate_gate
from foreseen.credit.analysis.metrics import LOSSES, ArmStates, arm_states, arm_summary, task_scales
from foreseen.credit.model import Explanation, SlotRecord, Study

__all__ = ["AnalysisConfig", "analyze", "arm_label", "matched_counterpart"]

VARIANTS: tuple[str, ...] = ("itt", "valid_only")
_COUNTERPART = {"donor_card": "matched_card", "donor_note": "matched_note",
                # the fixed-number mechanism contrast: the state's own numbers with the donor's
                # screened prose, against the state's own numbers with its own screened prose
                "crossover": "crossover"}


def arm_label(explainer: str | None, context: str) -> str:
    """``"<explainer>|<context>"`` (``-`` for the shared description arm)."""
    return f"{explainer or '-'}|{context}"


def matched_counterpart(context: str) -> str | None:
    """The matched context a donor-type context is contrasted with (None if not donor-type).

    Donor-type contexts carry a donor map (``donor_card@m``, ``donor_note@m``,
    ``crossover@m``); the unqualified ``crossover`` is the matched arm of the
    crossover contrast, not a donor arm.
    """
    kind, _, qualifier = context.partition("@")
    if not qualifier:
        return None
    return _COUNTERPART.get(kind)


def _group_slots(slots: Sequence[SlotRecord]
                 ) -> dict[str, tuple[str | None, str, list[SlotRecord]]]:
    arms: dict[str, tuple[str | None, str, list[SlotRecord]]] = {}
    for slot in slots:
        explainer = None if slot.context_id == "description" else slot.explainer
        label = arm_label(explainer, slot.context_id)
        arms.setdefault(label, (explainer, slot.context_id, []))[2].append(slot)
    return arms


def _integrity(arms: Mapping[str, tuple[str | None, str, list[SlotRecord]]],
               task_of_state: Mapping[str, str]) -> dict[str, Any]:
    def tally(slots: Sequence[SlotRecord]) -> dict[str, Any]:
        valid = sum(s.forecast.valid and not s.fallback for s in slots)
        return {"assigned": len(slots), "valid": valid,
                "fallback": sum(s.fallback for s in slots),
                "rate": valid / len(slots) if slots else None}

    per_task: dict[str, list[SlotRecord]] = {}
    everything: list[SlotRecord] = []
    for _, _, slots in arms.values():
        everything.extend(slots)
        for slot in slots:
            per_task.setdefault(task_of_state.get(slot.state_id, "?"), []).append(slot)
    return {
        "overall": tally(everything),
        "per_context": {label: tally(slots) for label, (_, _, slots) in sorted(arms.items())},
        "per_task": {task: tally(slots) for task, slots in sorted(per_task.items())},
    }


def _validate(study: Study, outcomes: Mapping[str, float], slots: Sequence[SlotRecord],
              config: AnalysisConfig) -> None:
    known = {s.id for s in study.states}
    unknown = sorted(set(outcomes) - known)
    if unknown:
        raise UserInputError(f"outcomes name unknown state(s), e.g. {unknown[0]!r}")
    stray = sorted({s.state_id for s in slots} - known)
    if stray:
        raise UserInputError(f"slot records name unknown state(s), e.g. {stray[0]!r}")
    if not outcomes:
        raise UserInputError("no outcomes to analyse: reveal the sealed outcomes first")
    ids = [s.slot_id for s in slots]
    if len(set(ids)) != len(ids):
        raise UserInputError("slot records contain a duplicated slot id")


def analyze(study: Study, explanations: Mapping[str, Mapping[str, Explanation]],
            slots: Sequence[SlotRecord], outcomes: Mapping[str, float], config: AnalysisConfig,
            calibration: Sequence[SlotRecord] = (), *,
            reference_estimates: Mapping[str, Mapping[str, Any]] | None = None
            ) -> dict[str, Any]:
    """The analysis part of the report (see the module docstring for its structure)."""
    _validate(study, outcomes, slots, config)
    task_of_state = {s.id: s.task_id for s in study.states}
    scales = task_scales(outcomes, task_of_state)
    strata = {t.id: t.kind for t in study.tasks} if config.stratify_by_kind else None
    paths = None
    if config.hierarchical:
        with_cell = "cell" in config.hierarchical
        paths = {s.id: (s.task_id, f"{s.task_id}/{s.cell}", s.id) if with_cell
                 else (s.task_id, s.id) for s in study.states}
    resampler = Resampler(config.bootstrap_b, config.bootstrap_seed, strata, paths,
                          config.small_cluster_correction)
    arms = _group_slots(slots)

    def build(group: Sequence[SlotRecord], valid_only: bool = False) -> ArmStates:
        return arm_states(group, outcomes, task_of_state, scales, config.alpha,
                          valid_only=valid_only)

    states = {label: {v: build(group, v == "valid_only") for v in VARIANTS}
              for label, (_, _, group) in arms.items()}
    integrity = _integrity(arms, task_of_state)
    rates = {label: row["rate"] for label, row in integrity["per_context"].items()}
    metrics = {label: {v: arm_summary(states[label][v], config.movement_thresholds)
                       for v in VARIANTS} for label in sorted(arms)}

    contrasts: list[dict[str, Any]] = []
    delivered_rows: list[dict[str, Any]] = []
    estimates: dict[str, dict[str, Any]] = {}
    description = arm_label(None, "description")
    for label, (explainer, context, _) in sorted(arms.items()):
        if explainer is None:
            continue
        comparisons: list[tuple[str, str]] = []
        if description in arms:
            comparisons.append(("delta_desc", description))
        counterpart = matched_counterpart(context)
        if counterpart is not None and arm_label(explainer, counterpart) in arms:
            comparisons.append(("delta_donor", arm_label(explainer, counterpart)))
        for kind, other in comparisons:
            # Δ_desc: comparator description, arm = this context.
            # Δ_donor: comparator = this donor arm, arm = its matched counterpart.
            comp_label, arm_lbl = (other, label) if kind == "delta_desc" else (label, other)
            head = {"kind": kind, "explainer": explainer, "context": context,
                    "comparator": arms[comp_label][1], "arm": arms[arm_lbl][1]}
            integrity_min = min(r for r in (rates[comp_label], rates[arm_lbl]) if r is not None)
            for variant in VARIANTS:
                paired = pair_arms(states[comp_label][variant], states[arm_lbl][variant])
                for loss in LOSSES:
                    row = {**head, "loss": loss, "variant": variant,
                           **loss_contrast(paired, loss, resampler,
                                           config.equivalence_margins.get(loss),
                                           details=variant == "itt")}
                    contrasts.append(row)
                    estimates[f"{kind}/{explainer}/{context}/{loss}/{variant}"] = {
                        **_estimate_fields(row), "integrity": integrity_min}
                if kind == "delta_desc":
                    row = {**head, "kind": "drift_reduction", "loss": "drift",
                           "variant": variant, **drift_reduction(paired, resampler)}
                    contrasts.append(row)
                    estimates[f"drift_reduction/{explainer}/{context}/{variant}"] = {
                        **_estimate_fields(row), "integrity": integrity_min}
            paired_delivered = pair_arms(states[comp_label]["itt"], states[arm_lbl]["itt"],
                                         delivered_only=True,
                                         comparator_must_deliver=kind == "delta_donor")
            for loss in LOSSES:
                delivered_rows.append({**head, "loss": loss, "variant": "delivered",
                                       **loss_contrast(paired_delivered, loss, resampler,
                                                       config.equivalence_margins.get(loss),
                                                       details=False)})
    for label, rate in rates.items():
        estimates[f"integrity/{label}"] = {"estimate": rate, "integrity": rate}

    by_explainer = _commitment_by_explainer(study, explanations, outcomes, states, resampler)
    for explainer, check in by_explainer.items():
        value = check.get("value")
        if value is not None:
            estimates[f"commitment/{explainer}/complete_rate_difference"] = {
                **_estimate_fields(value["itt"]["value"]["complete_rate_difference"]),
                "integrity": None}
    baseline = baselines(study.states, outcomes, scales, config.alpha, config.baseline_interval)
    description_arm = states[description]["itt"] if description in states else None
    checks = {
        "commitment": {"value": by_explainer} if by_explainer else null("no_explanations"),
        "delivery": delivery(arms),
        "predictive_gain": contrast_check(contrasts, delivered_rows, "delta_desc",
                                          "no_description_arm", {"baselines": baseline}),
        "alignment": contrast_check(contrasts, delivered_rows, "delta_donor", "no_donor_arm"),
        "known_signal": known_signal(calibration, build, description_arm, task_of_state,
                                     resampler, config.equivalence_margins),
    }
    gates = [evaluate_gate(spec, estimates, minimum_tasks=config.minimum_tasks,
                           integrity_minimum=config.integrity_minimum,
                           reference=reference_estimates) for spec in config.gates]
    return {
        "config": config.to_json(),
        "study": {"name": study.name, "version": study.version, "metric": study.metric,
                  "n_tasks": len(study.tasks), "n_states": len(study.states),
                  "n_outcomes": len(outcomes),
                  "n_y_zero": sum(1 for y in outcomes.values() if y == 0)},
        "integrity": integrity,
        "metrics": metrics,
        "claims": {name: claim_metrics(expl, study.states, outcomes)
                   for name, expl in sorted(explanations.items())},
        "baselines": baseline,
        "contrasts": contrasts,
        "delivered_subset": {"note": "descriptive only; never feeds a gate",
                             "contrasts": delivered_rows},
        "estimates": dict(sorted(estimates.items())),
        "gates": gates,
        "checks": checks,
    }


def _estimate_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: row.get(k) for k in ("estimate", "lower_bound_one_sided", "ci90", "ci95",
                                    "n_clusters")}


def _commitment_by_explainer(study: Study,
                             explanations: Mapping[str, Mapping[str, Explanation]],
                             outcomes: Mapping[str, float],
                             states: Mapping[str, Mapping[str, ArmStates]],
                             resampler: Resampler) -> dict[str, dict[str, Any]]:
    result: dict[str, dict[str, Any]] = {}
    for explainer, mapping in sorted(explanations.items()):
        itt = commitment(mapping, study.states, outcomes, resampler)
        if itt["value"] is None:
            result[explainer] = itt
            continue
        delivered_ids: set[str] = set()
        recorded = False
        for context in ("matched_card", "matched_note"):
            arm = states.get(arm_label(explainer, context), {}).get("itt")
            if arm is not None:
                recorded = True
                delivered_ids |= {s for s, d in zip(arm.state_ids, arm.delivered,
                                                    strict=True) if d}
        if not recorded:
            delivered = null("no_matched_arm")
        else:
            delivered = commitment({s: e for s, e in mapping.items() if s in delivered_ids},
                                   study.states, outcomes, resampler)
        result[explainer] = {"value": {"itt": itt, "delivered": delivered}}
    return result
