"""The five checks of predictive credit (spec credit.md §8).

Each check, and each part of one, is a value or null with a machine-readable
reason; inside, results are given for intention to treat (``itt``) and for
the delivered subset (``delivered``).

1. **commitment** — :mod:`foreseen.credit.analysis.commitment`;
2. **delivery** — share of assigned (non-description) slots that delivered;
3. **predictive_gain** — Δ_desc for every loss, beside the baselines;
4. **alignment** — Δ_donor for every loss;
5. **known_signal** — :mod:`foreseen.credit.analysis.known_signal`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from foreseen.credit.analysis.baselines import Baselines
from foreseen.credit.analysis.commitment import CommitmentCheck
from foreseen.credit.analysis.contrasts import ContrastKind, ContrastRow, Equivalence
from foreseen.credit.analysis.known_signal import KnownSignalCheck
from foreseen.credit.analysis.record import OPTIONAL, Interval, Record, written_with
from foreseen.credit.model import SlotRecord


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


@dataclass(frozen=True, kw_only=True)
class FiveChecks(Record):
    """The five checks of predictive credit (spec §8)."""

    commitment: CommitmentCheck
    delivery: DeliveryCheck
    predictive_gain: ContrastCheck
    alignment: ContrastCheck
    known_signal: KnownSignalCheck


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
