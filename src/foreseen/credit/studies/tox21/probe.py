"""The Tox21 probe explainer (credit §10, ``source="probe"``).

The probe sees a state's budgeted training labels only. It splits them into
:data:`PROBE_FOLDS` stratified internal folds (``StratifiedKFold``, shuffled,
seeded per state) and, on each fold k, fits parent and child on the other
folds and scores ROC AUC on fold k: ``Δ_k = AUC_k(child) − AUC_k(parent)``.
The same parent fits give the public parent validation metrics.

Card written from the fold changes (outcome units: ROC AUC change):

* target point ``t = mean_k Δ_k``;
* ``SE = sd(Δ_k, ddof=1) / sqrt(K)``; spread ``s = max(SE, 0.005)``;
  80 % interval ``t ± 1.2816 · s`` (normal quantile z₀.₉);
* benefit probability ``Φ(t / s)``;
* direction: ``improve`` if ``t > 0.002``, ``worsen`` if ``t < −0.002``, else
  ``no_change``;
* observable, regime, falsification and counterfactual: templated text from
  the change's chemical rationale and the public state.

The card is rendered with :func:`foreseen.credit.cards.render.render_card` and its
slots carry spans located verbatim in that rendering (the explanation's
note), so the delivery check can find evidence-backed content.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from foreseen.core.extras import optional_import
from foreseen.core.stats import normal_cdf
from foreseen.credit.model import Card, Direction, Explanation, State, Study, Target
from foreseen.credit.studies.card_texts import CardTexts
from foreseen.credit.studies.fold_changes import FoldChanges
from foreseen.credit.studies.tox21.catalog import change

PROBE_FOLDS = 4
Z80 = 1.2815515655446004  # Φ^{-1}(0.9)
NO_CHANGE_BAND = 0.002
MIN_SPREAD = 0.005
GENERATOR = "tox21_probe/v1"


@dataclass(frozen=True)
class ProbeResult(FoldChanges):
    """Per-fold ROC AUC changes of one state's change on its training labels only."""

    @property
    def standard_error(self) -> float:
        """As :class:`FoldChanges`, but 0.0 for fewer than two folds."""
        return super().standard_error if len(self.fold_changes) > 1 else 0.0


def probe_direction(point: float) -> Direction:
    if point > NO_CHANGE_BAND:
        return "improve"
    if point < -NO_CHANGE_BAND:
        return "worsen"
    return "no_change"


def probe_target(probe: ProbeResult) -> Target:
    """Target point, 80 % interval and benefit probability (formulas in the module docstring)."""
    point = probe.mean
    spread = max(probe.standard_error, MIN_SPREAD)
    return Target(point=round(point, 4),
                  intervals=((round(point - Z80 * spread, 4), round(point + Z80 * spread, 4)),),
                  benefit_probability=round(normal_cdf(point / spread), 2))


def _texts(state: State, direction: Direction) -> CardTexts:
    entry = change(state.intervention_id)
    data = state.public["data"]
    endpoint = str(state.public["endpoint"])
    n, positives = int(data["n_train_labels"]), int(data["positives"])
    parent_auc = float(state.public["parent"]["validation_roc_auc"])
    verb = {"improve": "is not higher", "worsen": "is not lower",
            "no_change": "moves by more than 0.01"}[direction]
    return CardTexts(
        observable=f"held-out ROC AUC on {endpoint} of the child ({entry.name}) minus "
                   "the parent's",
        regime=f"{entry.mechanism}; here with {n} training labels and {positives} actives",
        falsification=f"the account is wrong if the child's held-out ROC AUC {verb} "
                      "than the parent's",
        counterfactual=f"without the change the parent keeps Morgan radius-2 bits and an "
                       f"internal validation ROC AUC near {parent_auc:.3f}",
    )


def probe_card(state: State, probe: ProbeResult) -> Card:
    """The probe's six-slot card for one state (without spans)."""
    target = probe_target(probe)
    direction = probe_direction(probe.mean)
    return _texts(state, direction).card(direction, target)


def probe_explanations(study: Study, probes: Mapping[str, ProbeResult]
                       ) -> dict[str, Explanation]:
    """One rendered probe card per state (note = its rendering; spans into the note)."""
    from foreseen.credit.cards.render import render_card, with_spans

    result: dict[str, Explanation] = {}
    for state in study.states:
        card = probe_card(state, probes[state.id])
        note = render_card(card)
        result[state.id] = Explanation(state.id, "probe", GENERATOR, note,
                                       with_spans(card, note))
    return result


def probe_folds(y: Sequence[int] | np.ndarray, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Stratified, shuffled internal folds of the training labels (positions into ``y``)."""
    stratified_k_fold = optional_import("sklearn.model_selection", "chem").StratifiedKFold
    labels = np.asarray(y)
    splitter = stratified_k_fold(n_splits=PROBE_FOLDS, shuffle=True, random_state=seed)
    return [(train, val) for train, val in splitter.split(np.zeros(labels.size), labels)]
