"""The credit analysis: integrity, metrics, baselines, contrasts, gates and the five checks.

:func:`analyze` is a pure function of the study, the explanations, the slot
records read back from the ledger, the revealed outcomes and the frozen
:class:`~foreseen.credit.analysis.config.AnalysisConfig` (credit §5–§8). Its
result is a :class:`CreditAnalysis` of frozen records, written as strict JSON
only at the edge (undefined values are ``null`` with a reason).

Arms are (explainer, context); the ``description`` arm is shared by every
explainer. Δ_desc is computed for every non-description arm and every loss
in :data:`~foreseen.credit.analysis.metrics.LOSSES`; Δ_donor for every donor arm
against its matched counterpart (``donor_card@m`` → ``matched_card``,
``donor_note@m`` → ``matched_note``, ``crossover@m`` → ``crossover``: the
same numbers with the state's own screened prose; ``crossover_numbers@m`` →
``crossover``: the same own screened prose with the state's own numbers). Intention to treat
(all assigned slots, fallbacks included) is primary and carries the full
diagnostics; valid-only estimates stand beside it; the delivered subset is
descriptive and never enters the estimate table that gates read.

Estimate names (for gates): ``delta_desc/<explainer>/<context>/<loss>/<variant>``,
``delta_donor/<explainer>/<donor context>/<loss>/<variant>``,
``drift_reduction/<explainer>/<context>/<variant>``,
``commitment/<explainer>/complete_rate_difference``, ``integrity/<arm>``;
variants ``itt`` and ``valid_only``.

**Scopes** (``scopes``: explainer → the state ids its slots cover, e.g. the
controlled study's proposal states): task scales, the baselines, their
per-state losses and the shared ``description`` arm (``-|description``) are
computed on the **base** states (in no scope), so adding a scoped explainer
changes no other explainer's numbers. A description slot on a state of
explainer E's scope belongs to the arm ``E|description``, E's own comparator
for Δ_desc; E's baseline losses are computed on the base states plus E's
scope (the leave-one-cell-out prior pools a scoped state with its cell).

Beside them: every arm paired against the constant baselines
(:mod:`~foreseen.credit.analysis.baseline_contrasts`), the design's declared
secondary estimates (``secondary``; the rest of the table is exploratory and
unadjusted for multiplicity), the design's named exploratory estimates
(``exploratory``: listed apart and labelled exploratory and unadjusted), and a
verdict for each of the five checks
(:mod:`~foreseen.credit.analysis.verdicts`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from foreseen.core.errors import UserInputError
from foreseen.credit.analysis.answer_quality import AnswerQualityRow, answer_quality
from foreseen.credit.analysis.baseline_contrasts import (
    BaselineContrastRow,
    baseline_contrasts,
    baseline_state_losses,
)
from foreseen.credit.analysis.baselines import Baselines, ClaimMetrics, baselines, claim_metrics
from foreseen.credit.analysis.checks import (
    CommitmentCheck,
    FiveChecks,
    commitment_by_explainer,
    contrast_check,
    delivery,
    known_signal,
)
from foreseen.credit.analysis.config import AnalysisConfig, explainer_roles
from foreseen.credit.analysis.contrasts import (
    ContrastKey,
    ContrastKind,
    ContrastRow,
    Resampler,
    drift_reduction,
    loss_contrast,
    pair_arms,
)
from foreseen.credit.analysis.gates import Estimate, GateResult, evaluate_gate
from foreseen.credit.analysis.metrics import (
    LOSSES,
    ArmMetrics,
    ArmStates,
    arm_states,
    arm_summary,
    task_scales,
)
from foreseen.credit.analysis.record import OPTIONAL, Record
from foreseen.credit.analysis.verdicts import CheckVerdicts, check_verdicts
from foreseen.credit.model import Explanation, SlotRecord, State, Study

__all__ = ["AnalysisConfig", "CreditAnalysis", "analyze", "arm_label", "matched_counterpart"]

VARIANTS: tuple[Literal["itt", "valid_only"], ...] = ("itt", "valid_only")
DELIVERED_NOTE = "descriptive only; never feeds a gate"
_COUNTERPART = {"donor_card": "matched_card", "donor_note": "matched_note",
                # the fixed-number mechanism contrast: the state's own numbers with the donor's
                # screened prose, against the state's own numbers with its own screened prose
                "crossover": "crossover",
                # its mirror cell: the donor's numbers with the state's own screened prose,
                # against the same own prose with the state's own numbers (fixed mechanism)
                "crossover_numbers": "crossover"}

ArmSlots = tuple[str | None, str, list[SlotRecord]]
"""An arm's explainer (None for description), context and slot records."""


@dataclass(frozen=True, kw_only=True)
class StudySummary(Record):
    """The analysed study: name, version, metric, counts (``n_y_zero``: states with y = 0)."""

    name: str
    version: str
    metric: str
    n_tasks: int
    n_states: int
    n_outcomes: int
    n_y_zero: int


@dataclass(frozen=True, kw_only=True)
class IntegrityTally(Record):
    """Assigned slots, valid ones (valid, not a fallback), fallbacks; ``rate = valid/assigned``."""

    assigned: int
    valid: int
    fallback: int
    rate: float | None

    @classmethod
    def of(cls, slots: Sequence[SlotRecord]) -> IntegrityTally:
        valid = sum(s.forecast.valid and not s.fallback for s in slots)
        return cls(assigned=len(slots), valid=valid, fallback=sum(s.fallback for s in slots),
                   rate=valid / len(slots) if slots else None)


@dataclass(frozen=True, kw_only=True)
class Integrity(Record):
    """Integrity overall, per arm (``<explainer>|<context>``) and per task (credit §5)."""

    overall: IntegrityTally
    per_context: Mapping[str, IntegrityTally]
    per_task: Mapping[str, IntegrityTally]


@dataclass(frozen=True, kw_only=True)
class ArmVariants(Record):
    """An arm's metrics under intention to treat and over valid forecasts only."""

    itt: ArmMetrics
    valid_only: ArmMetrics


@dataclass(frozen=True, kw_only=True)
class DeliveredSubset(Record):
    """Contrasts over the states whose explanation was delivered: descriptive, never gated."""

    note: str = field(default=DELIVERED_NOTE)
    contrasts: tuple[ContrastRow, ...]


@dataclass(frozen=True, kw_only=True)
class SecondaryEstimate(Record):
    """A declared secondary analysis: its estimate name and entry (null when missing)."""

    name: str
    estimate: Estimate | None
    reason: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class CreditAnalysis(Record):
    """The analysis part of a credit report (credit §5–§8, §11).

    ``estimates`` is the table gates read (names in the module docstring);
    ``contrasts`` holds every ITT and valid-only contrast, ``delivered_subset``
    the descriptive delivered-only ones; ``baseline_contrasts`` pairs every arm
    with the constant baselines; ``secondary`` the declared secondary
    estimates; ``verdicts`` the five checks' verdicts.
    """

    config: AnalysisConfig
    study: StudySummary
    integrity: Integrity
    metrics: Mapping[str, ArmVariants]
    claims: Mapping[str, ClaimMetrics]
    baselines: Baselines
    contrasts: tuple[ContrastRow, ...]
    delivered_subset: DeliveredSubset
    estimates: Mapping[str, Estimate]
    gates: tuple[GateResult, ...]
    checks: FiveChecks
    baseline_contrasts: tuple[BaselineContrastRow, ...] | None = field(
        default=None, metadata=OPTIONAL)
    secondary: tuple[SecondaryEstimate, ...] | None = field(default=None, metadata=OPTIONAL)
    #: the design's named exploratory estimates (unadjusted); None when it names none
    exploratory: tuple[SecondaryEstimate, ...] | None = field(default=None, metadata=OPTIONAL)
    verdicts: CheckVerdicts | None = field(default=None, metadata=OPTIONAL)
    explainer_roles: Mapping[str, str] | None = field(default=None, metadata=OPTIONAL)
    #: per arm: unreadable answers, points outside their own interval, off-scale points
    answer_quality: tuple[AnswerQualityRow, ...] | None = field(default=None,
                                                                metadata=OPTIONAL)


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


def _group_slots(slots: Sequence[SlotRecord], scope_of: Mapping[str, str] | None = None
                 ) -> dict[str, ArmSlots]:
    """Slots by arm; a description slot on a scoped state joins ``<scope owner>|description``."""
    arms: dict[str, ArmSlots] = {}
    owners = scope_of or {}
    for slot in slots:
        explainer = owners.get(slot.state_id) if slot.context_id == "description" \
            else slot.explainer
        label = arm_label(explainer, slot.context_id)
        arms.setdefault(label, (explainer, slot.context_id, []))[2].append(slot)
    return arms


def _integrity(arms: Mapping[str, ArmSlots], task_of_state: Mapping[str, str]) -> Integrity:
    per_task: dict[str, list[SlotRecord]] = {}
    everything: list[SlotRecord] = []
    for _, _, slots in arms.values():
        everything.extend(slots)
        for slot in slots:
            per_task.setdefault(task_of_state.get(slot.state_id, "?"), []).append(slot)
    return Integrity(
        overall=IntegrityTally.of(everything),
        per_context={label: IntegrityTally.of(slots)
                     for label, (_, _, slots) in sorted(arms.items())},
        per_task={task: IntegrityTally.of(slots) for task, slots in sorted(per_task.items())},
    )


def _validate(study: Study, outcomes: Mapping[str, float], slots: Sequence[SlotRecord]) -> None:
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


def _baseline_losses(study: Study, base_states: Sequence[State],
                     scopes: Mapping[str, Sequence[str]], outcomes: Mapping[str, float],
                     scales: Mapping[str, float], config: AnalysisConfig
                     ) -> dict[tuple[str, str], dict[str, float]]:
    """Per-state baseline losses: base states from the base states alone; a scope's states
    from the base states plus that scope (module docstring)."""
    losses = baseline_state_losses(base_states, outcomes, scales, config.alpha,
                                   config.baseline_interval)
    for ids in scopes.values():
        wanted = set(ids)
        pooled = [*base_states, *(s for s in study.states if s.id in wanted)]
        scoped = baseline_state_losses(pooled, outcomes, scales, config.alpha,
                                       config.baseline_interval)
        for key, values in scoped.items():
            losses.setdefault(key, {}).update(
                {sid: v for sid, v in values.items() if sid in wanted})
    return losses


def _resampler(study: Study, config: AnalysisConfig) -> Resampler:
    strata = {t.id: t.kind for t in study.tasks} if config.stratify_by_kind else None
    paths = None
    if config.hierarchical:
        with_cell = "cell" in config.hierarchical
        paths = {s.id: (s.task_id, f"{s.task_id}/{s.cell}", s.id) if with_cell
                 else (s.task_id, s.id) for s in study.states}
    resampling = config.resampling
    return Resampler(resampling.replicates, resampling.seed, strata, paths,
                     config.small_cluster_correction, interval=resampling.correction,
                     minimum_clusters=config.minimum_clusters)


@dataclass(frozen=True)
class _Contrasts:
    rows: list[ContrastRow]
    delivered: list[ContrastRow]
    estimates: dict[str, Estimate]


def _contrasts(arms: Mapping[str, ArmSlots],
               states: Mapping[str, Mapping[Literal["itt", "valid_only"], ArmStates]],
               rates: Mapping[str, float | None], resampler: Resampler,
               config: AnalysisConfig) -> _Contrasts:
    """Δ_desc, drift reduction and Δ_donor for every explanation arm (credit §7)."""
    out = _Contrasts([], [], {})
    for label, (explainer, context, _) in sorted(arms.items()):
        if explainer is None or context == "description":
            continue
        comparisons: list[tuple[ContrastKind, str]] = []
        own = arm_label(explainer, "description")  # a scoped explainer's description arm
        description = own if own in arms else arm_label(None, "description")
        if description in arms:
            comparisons.append(("delta_desc", description))
        counterpart = matched_counterpart(context)
        if counterpart is not None and arm_label(explainer, counterpart) in arms:
            comparisons.append(("delta_donor", arm_label(explainer, counterpart)))
        for kind, other in comparisons:
            # Δ_desc: comparator description, arm = this context.
            # Δ_donor: comparator = this donor arm, arm = its matched counterpart.
            comp_label, arm_lbl = (other, label) if kind == "delta_desc" else (label, other)
            integrity_min = min(r for r in (rates[comp_label], rates[arm_lbl]) if r is not None)
            head = {"explainer": explainer, "context": context,
                    "comparator": arms[comp_label][1], "arm": arms[arm_lbl][1]}
            for variant in VARIANTS:
                paired = pair_arms(states[comp_label][variant], states[arm_lbl][variant])
                for loss in LOSSES:
                    result = loss_contrast(paired, loss, resampler,
                                           config.equivalence_margins.get(loss),
                                           details=variant == "itt")
                    out.rows.append(ContrastRow.of(
                        ContrastKey(kind=kind, loss=loss, variant=variant, **head), result))
                    out.estimates[f"{kind}/{explainer}/{context}/{loss}/{variant}"] = \
                        Estimate.of(result, integrity_min)
                if kind == "delta_desc":
                    result = drift_reduction(paired, resampler)
                    out.rows.append(ContrastRow.of(ContrastKey(
                        kind="drift_reduction", loss="drift", variant=variant, **head), result))
                    out.estimates[f"drift_reduction/{explainer}/{context}/{variant}"] = \
                        Estimate.of(result, integrity_min)
            paired_delivered = pair_arms(states[comp_label]["itt"], states[arm_lbl]["itt"],
                                         delivered_only=True,
                                         comparator_must_deliver=kind == "delta_donor")
            for loss in LOSSES:
                result = loss_contrast(paired_delivered, loss, resampler,
                                       config.equivalence_margins.get(loss), details=False)
                out.delivered.append(ContrastRow.of(
                    ContrastKey(kind=kind, loss=loss, variant="delivered", **head), result))
    return out


def analyze(study: Study, explanations: Mapping[str, Mapping[str, Explanation]],
            slots: Sequence[SlotRecord], outcomes: Mapping[str, float], config: AnalysisConfig,
            calibration: Sequence[SlotRecord] = (), *,
            reference_estimates: Mapping[str, Estimate] | None = None,
            scopes: Mapping[str, Sequence[str]] | None = None) -> CreditAnalysis:
    """The analysis part of the report (see the module docstring for its structure).

    ``reference_estimates`` is the estimate table of a reference run, for
    gates that compare with a reference run (replication: inside its interval, or
    sign agreement for plans frozen before). ``scopes`` are the plan's
    (module docstring: scales, baselines and the shared description arm use
    the base states).
    """
    _validate(study, outcomes, slots)
    scope_of = {sid: name for name, ids in (scopes or {}).items() for sid in ids}
    base_states = tuple(s for s in study.states if s.id not in scope_of)
    task_of_state = {s.id: s.task_id for s in study.states}
    scales = task_scales({sid: y for sid, y in outcomes.items() if sid not in scope_of},
                         task_of_state)
    resampler = _resampler(study, config)
    arms = _group_slots(slots, scope_of)

    def build(group: Sequence[SlotRecord], valid_only: bool = False) -> ArmStates:
        return arm_states(group, outcomes, task_of_state, scales, config.alpha,
                          valid_only=valid_only)

    states = {label: {v: build(group, v == "valid_only") for v in VARIANTS}
              for label, (_, _, group) in arms.items()}
    integrity = _integrity(arms, task_of_state)
    rates = {label: row.rate for label, row in integrity.per_context.items()}
    metrics = {label: ArmVariants(
        itt=arm_summary(states[label]["itt"], config.movement_thresholds),
        valid_only=arm_summary(states[label]["valid_only"], config.movement_thresholds))
        for label in sorted(arms)}
    contrasts = _contrasts(arms, states, rates, resampler, config)
    estimates = contrasts.estimates
    for label, rate in rates.items():
        estimates[f"integrity/{label}"] = Estimate.rate(rate)

    matched = {explainer: [states[label]["itt"] for label in
                           (arm_label(explainer, c) for c in ("matched_card", "matched_note"))
                           if label in states] for explainer in explanations}
    by_explainer = commitment_by_explainer(explanations, study.states, outcomes, matched,
                                           resampler)
    for explainer, check in by_explainer.items():
        difference = None if check.value is None or check.value.itt.value is None \
            else check.value.itt.value.complete_rate_difference
        if difference is not None:
            estimates[f"commitment/{explainer}/complete_rate_difference"] = Estimate.of(
                difference, None)
    baseline = baselines(base_states, outcomes, scales, config.alpha, config.baseline_interval)
    description = arm_label(None, "description")
    description_arm = states[description]["itt"] if description in states else None
    checks = FiveChecks(
        commitment=CommitmentCheck(value=by_explainer) if by_explainer
        else CommitmentCheck(value=None, reason="no_explanations"),
        delivery=delivery(arms),
        predictive_gain=contrast_check(contrasts.rows, contrasts.delivered, "delta_desc",
                                       "no_description_arm", baseline),
        alignment=contrast_check(contrasts.rows, contrasts.delivered, "delta_donor",
                                 "no_donor_arm"),
        known_signal=known_signal(calibration, build, description_arm, task_of_state,
                                  resampler, config.equivalence_margins),
    )
    gates = tuple(evaluate_gate(spec, estimates, minimum_tasks=config.minimum_tasks,
                                integrity_minimum=config.integrity_minimum,
                                reference=reference_estimates) for spec in config.gates)
    against_baselines = baseline_contrasts(
        {label: states[label]["itt"] for label in sorted(arms)},
        _baseline_losses(study, base_states, scopes or {}, outcomes, scales, config),
        resampler)
    secondary = tuple(
        SecondaryEstimate(name=name, estimate=estimates.get(name),
                          reason=None if name in estimates else "estimate_missing")
        for name in config.secondary)
    exploratory = tuple(
        SecondaryEstimate(name=name, estimate=estimates.get(name),
                          reason=None if name in estimates else "estimate_missing")
        for name in config.exploratory) or None
    return CreditAnalysis(
        config=config,
        study=StudySummary(name=study.name, version=study.version, metric=study.metric,
                           n_tasks=len(study.tasks), n_states=len(study.states),
                           n_outcomes=len(outcomes),
                           n_y_zero=sum(1 for y in outcomes.values() if y == 0)),
        integrity=integrity,
        metrics=metrics,
        claims={name: claim_metrics(expl, study.states, outcomes)
                for name, expl in sorted(explanations.items())},
        baselines=baseline,
        contrasts=tuple(contrasts.rows),
        delivered_subset=DeliveredSubset(contrasts=tuple(contrasts.delivered)),
        estimates=dict(sorted(estimates.items())),
        gates=gates,
        checks=checks,
        baseline_contrasts=against_baselines,
        secondary=secondary,
        exploratory=exploratory,
        verdicts=check_verdicts(checks, estimates, config, sorted(explanations)),
        explainer_roles=explainer_roles(config, sorted(explanations)),
        answer_quality=answer_quality(
            {label: group for label, (_, _, group) in arms.items()}, task_of_state, scales),
    )
