"""Check 1, commitment: how complete the explanations are per elicitation condition (spec §8).

Completeness is the number of filled card slots (of 6); a slot of a card
extracted from a note counts only when evidence-backed in that note. Per
condition: states, mean completeness, complete cards (6 of 6), the
task-weighted complete rate and the claim-level metrics. With both
conditions, the elicited − ordinary difference of the task-weighted complete
rate, ``r_e − r_o`` with ``r_c = Σ_k w_k h_ck r_ck / Σ_k w_k h_ck`` over the
tasks having condition ``c`` (``h_ck`` = 1 when task ``k`` has condition ``c``),
bootstrapped by task (one-sided lower bound = 5th percentile).

Per explainer the check is given for intention to treat (every explained
state) and for the delivered subset (states whose matched arm delivered).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from foreseen.core.bootstrap import summarize
from foreseen.credit.analysis.baselines import ClaimMetrics, claim_metrics
from foreseen.credit.analysis.contrasts import BootstrapResult, Resampler, task_means
from foreseen.credit.analysis.metrics import ArmStates
from foreseen.credit.analysis.record import OPTIONAL, Record
from foreseen.credit.model import CONDITIONS, Explanation, State

COMPLETE = 6
"""Slots of a complete card."""


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
    """Card completeness; slots of a card extracted from a note count only when evidence-backed."""
    card = explanation.card
    if card is None:
        return 0
    if explanation.note is not None and card.spans:
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
    return BootstrapResult.of(summarize(estimate, replicates, len(tasks), b=resampler.b,
                                        seed=resampler.seed))


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
