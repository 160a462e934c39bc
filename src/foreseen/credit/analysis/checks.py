"""The five checks of predictive credit (credit §8).

Each check, and each part of one, is a value or null with a machine-readable
reason; inside, results are given for intention to treat (``itt``) and for
the delivered subset (``delivered``).

1. **commitment** — completeness per elicitation condition (a card slot
   extracted from a note counts only when evidence-backed in that note); the
   elicited − ordinary difference of the task-weighted complete-card rate,
   ``r_e − r_o`` with ``r_c = Σ_k w_k h_ck r_ck / Σ_k w_k h_ck`` over tasks
   having condition ``c`` (``h_ck`` = 1 when task ``k`` has it), bootstrapped
   by task (one-sided lower bound = 5th percentile); claim-level accuracy per
   condition. Null with ``single_elicitation_condition`` when the design has
   one condition. The delivered subset is the states a matched arm delivered.
2. **delivery** — share of assigned (non-description) slots that delivered.
3. **predictive_gain** — Δ_desc for every loss, beside the baselines.
4. **alignment** — Δ_donor for every loss.
5. **known_signal** — from the post-outcome calibration child plan: the
   task-weighted OLS slope of ŷ on the signal,
   ``(E[xy] − E[x]E[y]) / (E[x²] − E[x]²)`` with ``E`` the equal-task-weight
   mean of per-task slot means (bootstrapped by task inside each replicate),
   and the point-error change versus description, Δ_desc(point MAE) =
   MAE(description) − MAE(signal); the description arm is the calibration
   plan's own when it has one, else the main plan's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from foreseen.credit.analysis.baselines import Baselines, ClaimMetrics, claim_metrics
from foreseen.credit.analysis.contrasts import (
    BootstrapResult,
    ContrastEstimate,
    ContrastKind,
    ContrastRow,
    Equivalence,
    Resampler,
    loss_contrast,
    pair_arms,
    task_means,
)
from foreseen.credit.analysis.metrics import ArmStates, FloatArray
from foreseen.credit.analysis.record import OPTIONAL, Interval, Record, written_with
from foreseen.credit.model import CONDITIONS, Explanation, SlotRecord, State

COMPLETE = 6
"""Slots of a complete card."""
ERROR_CHANGE_DEFINITION = "delta_desc point_mae = MAE(description) − MAE(signal)"


# -- 1. commitment

@dataclass(frozen=True, kw_only=True)
class ConditionCompleteness(Record):
    """Completeness of the explanations of one elicitation condition."""

    n_states: int
    mean_completeness: float
    n_complete: int
    complete_rate: float
    n_tasks: int
    claims: ClaimMetrics


@dataclass(frozen=True, kw_only=True)
class CommitmentValue(Record):
    """Completeness per condition and, with two conditions, the complete-rate difference."""

    by_condition: Mapping[str, ConditionCompleteness]
    complete_rate_difference: BootstrapResult | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class CommitmentResult(Record):
    """Commitment over one set of states; null with a reason (and ``detail``) when undefined."""

    value: CommitmentValue | None
    reason: str | None = field(default=None, metadata=OPTIONAL)
    detail: CommitmentValue | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class CommitmentVariants(Record):
    """Commitment for intention to treat and for the delivered subset."""

    itt: CommitmentResult
    delivered: CommitmentResult


@dataclass(frozen=True, kw_only=True)
class ExplainerCommitment(Record):
    """One explainer's commitment check; null with the ITT reason when ITT is undefined."""

    value: CommitmentVariants | None
    reason: str | None = field(default=None, metadata=OPTIONAL)
    detail: CommitmentValue | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class CommitmentCheck(Record):
    """Check 1 per explainer; null with ``no_explanations`` when the plan has none."""

    value: Mapping[str, ExplainerCommitment] | None
    reason: str | None = field(default=None, metadata=OPTIONAL)


def explanation_completeness(explanation: Explanation) -> int:
    """Card completeness; with a note, only slots evidence-backed in that note count.

    A card with a note counts its slots whose spans occur verbatim in the note
    (:meth:`~foreseen.credit.model.Card.evidence_backed_slots`): a card without
    spans has none. A card without a note is its own text (a card written
    directly) and counts every filled slot.
    """
    card = explanation.card
    if card is None:
        return 0
    if explanation.note is not None:
        return len(card.evidence_backed_slots(explanation.note))
    return card.completeness


def _complete_rate_difference(rows: Sequence[tuple[str, str, bool]],
                              resampler: Resampler) -> BootstrapResult:
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
    return BootstrapResult.of(resampler.summary(estimate, replicates, len(tasks)))


def commitment(explanations: Mapping[str, Explanation], states: Sequence[State],
               outcomes: Mapping[str, float], resampler: Resampler) -> CommitmentResult:
    """Completeness per condition, the elicited − ordinary complete-rate difference, claims."""
    explained = [s for s in states if s.id in explanations]
    if not explained:
        return CommitmentResult(value=None, reason="no_explanations")
    conditions = sorted({s.condition for s in explained})
    per_condition: dict[str, ConditionCompleteness] = {}
    rows: list[tuple[str, str, bool]] = []
    for condition in conditions:
        group = [s for s in explained if s.condition == condition]
        scores = np.array([explanation_completeness(explanations[s.id]) for s in group])
        complete = scores == COMPLETE
        rows.extend((s.task_id, condition, bool(c)) for s, c in zip(group, complete,
                                                                      strict=True))
        tasks, rates = task_means(complete.astype(np.float64), [s.task_id for s in group])
        per_condition[condition] = ConditionCompleteness(
            n_states=len(group),
            mean_completeness=float(scores.mean()),
            n_complete=int(complete.sum()),
            complete_rate=float(rates.mean()),
            n_tasks=len(tasks),
            claims=claim_metrics(explanations, group, outcomes),
        )
    if len(conditions) < 2:
        return CommitmentResult(value=None, reason="single_elicitation_condition",
                                detail=CommitmentValue(by_condition=per_condition))
    return CommitmentResult(value=CommitmentValue(
        by_condition=per_condition,
        complete_rate_difference=_complete_rate_difference(rows, resampler)))


def commitment_by_explainer(explanations: Mapping[str, Mapping[str, Explanation]],
                            states: Sequence[State], outcomes: Mapping[str, float],
                            matched_arms: Mapping[str, Sequence[ArmStates]],
                            resampler: Resampler) -> dict[str, ExplainerCommitment]:
    """The commitment check per explainer, ITT and delivered subset.

    ``matched_arms`` gives an explainer's ITT matched arms (``matched_card``,
    ``matched_note``); the delivered subset is the states any of them delivered.
    """
    result: dict[str, ExplainerCommitment] = {}
    for explainer, mapping in sorted(explanations.items()):
        itt = commitment(mapping, states, outcomes, resampler)
        if itt.value is None:
            result[explainer] = ExplainerCommitment(value=None, reason=itt.reason,
                                                    detail=itt.detail)
            continue
        arms = matched_arms.get(explainer, ())
        if not arms:
            delivered = CommitmentResult(value=None, reason="no_matched_arm")
        else:
            delivered_ids = {s for arm in arms
                             for s, d in zip(arm.state_ids, arm.delivered, strict=True) if d}
            delivered = commitment({s: e for s, e in mapping.items() if s in delivered_ids},
                                   states, outcomes, resampler)
        result[explainer] = ExplainerCommitment(
            value=CommitmentVariants(itt=itt, delivered=delivered))
    return result


# -- 2. delivery; 3. predictive gain and 4. alignment

@dataclass(frozen=True, kw_only=True)
class DeliveryShare(Record):
    """Slots of one arm whose content was delivered: ``n_delivered / n_assigned``."""

    n_assigned: int
    n_delivered: int
    share: float


@dataclass(frozen=True, kw_only=True)
class ArmDelivery(Record):
    """One arm's delivery share; null with ``delivery_not_recorded`` when no slot says."""

    value: DeliveryShare | None
    reason: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class ArmDeliveries(Record):
    """Delivery per arm (``<explainer>|<context>``), or null with a reason."""

    value: Mapping[str, ArmDelivery] | None
    reason: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class DeliveryVariants(Record):
    """Delivery for intention to treat; the delivered subset is defined by delivery (null)."""

    itt: ArmDeliveries
    delivered: ArmDeliveries


@dataclass(frozen=True, kw_only=True)
class DeliveryCheck(Record):
    """Check 2; null with ``no_explanation_arms`` when the plan has only description slots."""

    value: DeliveryVariants | None
    reason: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class ContrastSummary(Record):
    """A contrast as a check lists it: which arms, the estimate, intervals and equivalence.

    The intervals are written beside ``equivalence`` (a contrast that was
    estimated); a contrast without paired states has only its ``reason``.
    """

    explainer: str
    context: str
    comparator: str
    loss: str
    estimate: float | None
    ci95: Interval | None = field(default=None, metadata=written_with("equivalence"))
    ci90: Interval | None = field(default=None, metadata=written_with("equivalence"))
    lower_bound_one_sided: float | None = field(default=None, metadata=written_with("equivalence"))
    n_clusters: int
    n_states: int | None = field(default=None, metadata=OPTIONAL)
    equivalence: Equivalence | None = field(default=None, metadata=OPTIONAL)
    reason: str | None = field(default=None, metadata=OPTIONAL)

    @classmethod
    def of(cls, row: ContrastRow) -> ContrastSummary:
        return cls(explainer=row.explainer, context=row.context, comparator=row.comparator,
                   loss=row.loss, estimate=row.estimate, ci95=row.ci95, ci90=row.ci90,
                   lower_bound_one_sided=row.lower_bound_one_sided,
                   n_clusters=row.n_clusters, n_states=row.n_states,
                   equivalence=row.equivalence, reason=row.reason)


@dataclass(frozen=True, kw_only=True)
class ContrastSummaries(Record):
    """The contrasts of one kind and variant, or null with a reason."""

    value: tuple[ContrastSummary, ...] | None
    reason: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class ContrastCheckValue(Record):
    """A contrast check for ITT and the delivered subset (predictive gain: and the baselines)."""

    itt: ContrastSummaries
    delivered: ContrastSummaries
    baselines: Baselines | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class ContrastCheck(Record):
    """Check 3 (Δ_desc) or 4 (Δ_donor); null when the plan has no such arm."""

    value: ContrastCheckValue | None
    reason: str | None = field(default=None, metadata=OPTIONAL)


def delivery(arms: Mapping[str, tuple[str | None, str, Sequence[SlotRecord]]]) -> DeliveryCheck:
    """Share of assigned slots that delivered content, per explainer × context."""
    per_arm: dict[str, ArmDelivery] = {}
    for label, (_, context, slots) in sorted(arms.items()):
        if context == "description":
            continue
        assessed = [s for s in slots if s.delivered is not None]
        if not assessed:
            per_arm[label] = ArmDelivery(value=None, reason="delivery_not_recorded")
            continue
        delivered = sum(bool(s.delivered) for s in assessed)
        per_arm[label] = ArmDelivery(value=DeliveryShare(
            n_assigned=len(assessed), n_delivered=delivered,
            share=delivered / len(assessed)))
    if not per_arm:
        return DeliveryCheck(value=None, reason="no_explanation_arms")
    return DeliveryCheck(value=DeliveryVariants(
        itt=ArmDeliveries(value=per_arm),
        delivered=ArmDeliveries(value=None, reason="delivered_subset_is_defined_by_delivery")))


def contrast_check(itt: Sequence[ContrastRow], delivered: Sequence[ContrastRow],
                   kind: ContrastKind, missing_reason: str,
                   baselines: Baselines | None = None) -> ContrastCheck:
    """Collect one kind of contrast (``delta_desc`` or ``delta_donor``) for ITT and delivered."""
    chosen = tuple(ContrastSummary.of(r) for r in itt
                   if r.kind == kind and r.variant == "itt")
    if not chosen:
        return ContrastCheck(value=None, reason=missing_reason)
    delivered_rows = tuple(ContrastSummary.of(r) for r in delivered if r.kind == kind)
    return ContrastCheck(value=ContrastCheckValue(
        itt=ContrastSummaries(value=chosen),
        delivered=ContrastSummaries(value=delivered_rows) if delivered_rows
        else ContrastSummaries(value=None, reason="no_delivered_states"),
        baselines=baselines))


# -- 5. known signal

@dataclass(frozen=True, kw_only=True)
class Unavailable(Record):
    """A result that could not be computed, with its machine-readable reason."""

    value: None = None
    reason: str


@dataclass(frozen=True, kw_only=True)
class SignalSlope(Record):
    """The task-weighted OLS slope of ŷ on the signal with its task-cluster bootstrap."""

    estimate: float | None
    ci95: Interval | None
    ci90: Interval | None
    lower_bound_one_sided: float | None
    n_clusters: int
    b: int
    seed: int
    method: str
    reason: str | None
    n_slots: int


@dataclass(frozen=True, kw_only=True)
class SlopeCheck(Record):
    """The slope, or null with ``signal_has_no_variance``."""

    value: SignalSlope | None
    reason: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class ErrorChangeValue(Record):
    """Δ_desc(point MAE) of a signal arm, ITT and delivered subset."""

    definition: str
    itt: ContrastEstimate
    delivered: ContrastEstimate | Unavailable


@dataclass(frozen=True, kw_only=True)
class ErrorChange(Record):
    """The error change, or null with ``no_description_arm``."""

    value: ErrorChangeValue | None
    reason: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class SignalUptake(Record):
    """Uptake of one signal context (computed after the outcomes: ``post_outcome``)."""

    slope: SlopeCheck
    post_outcome: bool
    error_change: ErrorChange


@dataclass(frozen=True, kw_only=True)
class KnownSignalValue(Record):
    """Uptake per signal context (null with ``no_signal_values`` for a context without any)."""

    post_outcome: bool
    by_signal: Mapping[str, SignalUptake | Unavailable]


@dataclass(frozen=True, kw_only=True)
class KnownSignalCheck(Record):
    """Check 5; null with ``no_calibration_plan`` without a calibration child plan."""

    value: KnownSignalValue | None
    reason: str | None = field(default=None, metadata=OPTIONAL)


def _slope(points: FloatArray, signals: FloatArray, task_ids: Sequence[str],
           resampler: Resampler) -> SlopeCheck:
    moments = np.column_stack([signals, points, signals * signals, signals * points])
    tasks = tuple(sorted(set(task_ids)))
    means = np.column_stack([task_means(moments[:, j], task_ids)[1] for j in range(4)])

    def slope(m: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray((m[..., 3] - m[..., 0] * m[..., 1]) / (m[..., 2] - m[..., 0] ** 2))

    estimate = float(slope(means.mean(axis=0)))
    if not np.isfinite(estimate):
        return SlopeCheck(value=None, reason="signal_has_no_variance")
    replicates = slope(resampler.task_weights(tasks) @ means)
    summary = resampler.summary(estimate, replicates, len(tasks))
    return SlopeCheck(value=SignalSlope(
        estimate=summary.estimate, ci95=summary.ci95, ci90=summary.ci90,
        lower_bound_one_sided=summary.lower_bound_one_sided, n_clusters=summary.n_clusters,
        b=summary.b, seed=summary.seed, method=summary.method, reason=summary.reason,
        n_slots=int(points.size)))


def _error_change(description: ArmStates | None, arm: ArmStates, resampler: Resampler,
                  margins: Mapping[str, float]) -> ErrorChange:
    if description is None:
        return ErrorChange(value=None, reason="no_description_arm")
    margin = margins.get("point_mae")
    itt = loss_contrast(pair_arms(description, arm), "point_mae", resampler, margin,
                        details=False)
    delivered_pair = pair_arms(description, arm, delivered_only=True)
    delivered: ContrastEstimate | Unavailable = (
        loss_contrast(delivered_pair, "point_mae", resampler, margin, details=False)
        if delivered_pair.state_ids else Unavailable(reason="no_delivered_states"))
    return ErrorChange(value=ErrorChangeValue(definition=ERROR_CHANGE_DEFINITION, itt=itt,
                                              delivered=delivered))


def known_signal(calibration: Sequence[SlotRecord],
                 build_arm: Callable[[Sequence[SlotRecord]], ArmStates],
                 description: ArmStates | None, task_of_state: Mapping[str, str],
                 resampler: Resampler, margins: Mapping[str, float]) -> KnownSignalCheck:
    """Uptake of a known signal: slope of ŷ on the signal and Δ_desc(point MAE), per signal arm."""
    if not calibration:
        return KnownSignalCheck(value=None, reason="no_calibration_plan")
    by_context: dict[str, list[SlotRecord]] = {}
    for slot in calibration:
        by_context.setdefault(slot.context_id, []).append(slot)
    calibration_description = by_context.pop("description", None)
    if calibration_description:
        description = build_arm(calibration_description)
    per_signal: dict[str, SignalUptake | Unavailable] = {}
    for context, slots in sorted(by_context.items()):
        with_signal = [s for s in slots if s.signal is not None and s.state_id in task_of_state]
        if not with_signal:
            per_signal[context] = Unavailable(reason="no_signal_values")
            continue
        points = np.array([s.forecast.point for s in with_signal], dtype=np.float64)
        signals = np.array([s.signal for s in with_signal], dtype=np.float64)
        tasks = [task_of_state[s.state_id] for s in with_signal]
        per_signal[context] = SignalUptake(
            slope=_slope(points, signals, tasks, resampler), post_outcome=True,
            error_change=_error_change(description, build_arm(slots), resampler, margins))
    return KnownSignalCheck(value=KnownSignalValue(post_outcome=True, by_signal=per_signal))


@dataclass(frozen=True, kw_only=True)
class FiveChecks(Record):
    """The five checks of predictive credit (credit §8)."""

    commitment: CommitmentCheck
    delivery: DeliveryCheck
    predictive_gain: ContrastCheck
    alignment: ContrastCheck
    known_signal: KnownSignalCheck
