"""The five checks of predictive credit (spec credit.md §8).

Each check is ``{"value": {...}}`` or ``{"value": null, "reason": "<code>"}``;
inside, results are given for intention to treat (``itt``) and for the
delivered subset (``delivered``), each again a value or null with a reason.

1. **commitment** — completeness per elicitation condition (a card slot
   extracted from a note counts only when evidence-backed in that note); the
   elicited − ordinary difference of the task-weighted complete-card rate,
   ``r_e − r_o`` with ``r_c = Σ_k w_k h_ck r_ck / Σ_k w_k h_ck`` over tasks
   having condition ``c``, bootstrapped by task (one-sided lower bound = 5th
   percentile); claim-level accuracy per condition. Null with
   ``single_elicitation_condition`` when the design has one condition.
2. **delivery** — share of assigned (non-description) slots that delivered.
3. **predictive_gain** — Δ_desc for every loss, beside the baselines.
4. **alignment** — Δ_donor for every loss.
5. **known_signal** — from the post-outcome calibration child plan: the
   task-weighted OLS slope of ŷ on the signal,
   ``(E[xy] − E[x]E[y]) / (E[x²] − E[x]²)`` with ``E`` the equal-task-weight
   mean of per-task slot means (bootstrapped by task inside each replicate),
   and the point-error change versus description, Δ_desc(point MAE).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from foreseen.core.bootstrap import summarize
from foreseen.credit.analysis.baselines import claim_metrics
from foreseen.credit.analysis.contrasts import Resampler, loss_contrast, pair_arms, task_means
from foreseen.credit.analysis.metrics import ArmStates
from foreseen.credit.model import CONDITIONS, Explanation, SlotRecord, State


def null(reason: str) -> dict[str, Any]:
    """A check (or part of one) that could not be computed, with its machine-readable reason."""
    return {"value": None, "reason": reason}


def explanation_completeness(explanation: Explanation) -> int:
    """Card completeness; slots of a card extracted from a note count only when evidence-backed."""
    card = explanation.card
    if card is None:
        return 0
    if explanation.note is not None and card.spans:
        return len(card.evidence_backed_slots(explanation.note))
    return card.completeness


def _complete_rate_difference(rows: Sequence[tuple[str, str, bool]],
                              resampler: Resampler) -> dict[str, Any]:
    tasks = tuple(sorted({task for task, _, _ in rows}))
    position = {t: i for i, t in enumerate(tasks)}
    rate = {c: np.zeros(len(tasks)) for c in CONDITIONS}
    count = {c: np.zeros(len(tasks)) for c in CONDITIONS}
    for task, condition, complete in rows:
        count[condition][position[task]] += 1
        rate[condition][position[task]] += complete
    has = {c: (count[c] > 0).astype(np.float64) for c in CONDITIONS}
    mean = {c: rate[c] / np.maximum(count[c], 1) for c in CONDITIONS}
    estimate = float(mean["elicited"][has["elicited"] > 0].mean()
                     - mean["ordinary"][has["ordinary"] > 0].mean())
    weights = resampler.task_weights(tasks)
    with np.errstate(divide="ignore", invalid="ignore"):
        replicates = ((weights @ (mean["elicited"] * has["elicited"])) / (weights @ has["elicited"])
                      - (weights @ (mean["ordinary"] * has["ordinary"]))
                      / (weights @ has["ordinary"]))
    result = summarize(estimate, replicates, len(tasks), b=resampler.b,
                       seed=resampler.seed).to_json()
    if result["reason"] is None:
        del result["reason"]
    return result


def commitment(explanations: Mapping[str, Explanation], states: Sequence[State],
               outcomes: Mapping[str, float], resampler: Resampler) -> dict[str, Any]:
    """Completeness per condition, the elicited − ordinary complete-rate difference, claims."""
    explained = [s for s in states if s.id in explanations]
    if not explained:
        return null("no_explanations")
    conditions = sorted({s.condition for s in explained})
    per_condition: dict[str, Any] = {}
    rows: list[tuple[str, str, bool]] = []
    for condition in conditions:
        group = [s for s in explained if s.condition == condition]
        scores = np.array([explanation_completeness(explanations[s.id]) for s in group])
        complete = scores == 6
        rows.extend((s.task_id, condition, bool(c)) for s, c in zip(group, complete,
                                                                      strict=True))
        tasks, rates = task_means(complete.astype(np.float64), [s.task_id for s in group])
        per_condition[condition] = {
            "n_states": len(group),
            "mean_completeness": float(scores.mean()),
            "n_complete": int(complete.sum()),
            "complete_rate": float(rates.mean()),
            "n_tasks": len(tasks),
            "claims": claim_metrics(explanations, group, outcomes),
        }
    value: dict[str, Any] = {"by_condition": per_condition}
    if len(conditions) < 2:
        return {"value": None, "reason": "single_elicitation_condition", "detail": value}
    value["complete_rate_difference"] = _complete_rate_difference(rows, resampler)
    return {"value": value}


def delivery(arms: Mapping[str, tuple[str | None, str, Sequence[SlotRecord]]]) -> dict[str, Any]:
    """Share of assigned slots that delivered content, per explainer × context."""
    per_arm: dict[str, Any] = {}
    for label, (_, context, slots) in sorted(arms.items()):
        if context == "description":
            continue
        assessed = [s for s in slots if s.delivered is not None]
        if not assessed:
            per_arm[label] = null("delivery_not_recorded")
            continue
        delivered = sum(bool(s.delivered) for s in assessed)
        per_arm[label] = {"value": {"n_assigned": len(assessed), "n_delivered": delivered,
                                    "share": delivered / len(assessed)}}
    if not per_arm:
        return null("no_explanation_arms")
    return {"value": {"itt": {"value": per_arm},
                      "delivered": null("delivered_subset_is_defined_by_delivery")}}


def contrast_check(itt: Sequence[Mapping[str, Any]], delivered: Sequence[Mapping[str, Any]],
                   kind: str, missing_reason: str,
                   extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Collect one kind of contrast (``delta_desc`` or ``delta_donor``) for ITT and delivered."""
    keys = ("explainer", "context", "comparator", "loss", "estimate", "ci95", "ci90",
            "lower_bound_one_sided", "n_clusters", "n_states", "equivalence", "reason")

    def pick(entries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        return [{k: e[k] for k in keys if k in e} for e in entries if e["kind"] == kind]

    chosen = pick([e for e in itt if e.get("variant") == "itt"])
    if not chosen:
        return null(missing_reason)
    delivered_rows = pick(delivered)
    value: dict[str, Any] = {
        "itt": {"value": chosen},
        "delivered": {"value": delivered_rows} if delivered_rows
        else null("no_delivered_states"),
    }
    if extra:
        value.update(extra)
    return {"value": value}


def _slope_summary(points: np.ndarray, signals: np.ndarray, task_ids: Sequence[str],
                   resampler: Resampler) -> dict[str, Any]:
    moments = np.column_stack([signals, points, signals * signals, signals * points])
    tasks = tuple(sorted(set(task_ids)))
    means = np.column_stack([task_means(moments[:, j], task_ids)[1] for j in range(4)])

    def slope(m: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray((m[..., 3] - m[..., 0] * m[..., 1]) / (m[..., 2] - m[..., 0] ** 2))

    estimate = float(slope(means.mean(axis=0)))
    if not np.isfinite(estimate):
        return null("signal_has_no_variance")
    replicates = slope(resampler.task_weights(tasks) @ means)
    result = summarize(estimate, replicates, len(tasks), b=resampler.b,
                       seed=resampler.seed).to_json()
    result["n_slots"] = int(points.size)
    return {"value": result}


def known_signal(calibration: Sequence[SlotRecord],
                 build_arm: Callable[[Sequence[SlotRecord]], ArmStates],
                 description: ArmStates | None, task_of_state: Mapping[str, str],
                 resampler: Resampler, margins: Mapping[str, float]) -> dict[str, Any]:
    """Uptake of a known signal: slope of ŷ on the signal and Δ_desc(point MAE), per signal arm."""
    if not calibration:
        return null("no_calibration_plan")
    by_context: dict[str, list[SlotRecord]] = {}
    for slot in calibration:
        by_context.setdefault(slot.context_id, []).append(slot)
    calibration_description = by_context.pop("description", None)
    if calibration_description:
        description = build_arm(calibration_description)
    per_signal: dict[str, Any] = {}
    for context, slots in sorted(by_context.items()):
        with_signal = [s for s in slots if s.signal is not None and s.state_id in task_of_state]
        if not with_signal:
            per_signal[context] = null("no_signal_values")
            continue
        points = np.array([s.forecast.point for s in with_signal])
        signals = np.array([s.signal for s in with_signal], dtype=np.float64)
        tasks = [task_of_state[s.state_id] for s in with_signal]
        arm = build_arm(slots)
        entry: dict[str, Any] = {"slope": _slope_summary(points, signals, tasks, resampler),
                                 "post_outcome": True}
        if description is None:
            entry["error_change"] = null("no_description_arm")
        else:
            paired = pair_arms(description, arm)
            itt = loss_contrast(paired, "point_mae", resampler, margins.get("point_mae"),
                                details=False)
            delivered_pair = pair_arms(description, arm, delivered_only=True)
            delivered = (loss_contrast(delivered_pair, "point_mae", resampler,
                                       margins.get("point_mae"), details=False)
                         if delivered_pair.state_ids else None)
            entry["error_change"] = {
                "value": {"definition": "delta_desc point_mae = MAE(description) − MAE(signal)",
                          "itt": itt,
                          "delivered": delivered if delivered is not None
                          else null("no_delivered_states")}}
        per_signal[context] = entry
    return {"value": {"post_outcome": True, "by_signal": per_signal}}
