"""Training-data-only computations of the controlled study: public state and probes.

Everything here sees only a state's ``n`` training rows — never the held-out
evaluation set (credit §2, §9):

* :func:`public_summary` — the public state (credit §9): data summary (n, d,
  class balance, spread of feature scales), the parent's K-fold internal
  validation metrics, its training log-loss, and a learning curve on the
  first internal split (25 %, 50 %, 100 % of its training part);
* :func:`probe_changes` — the probe (credit §10): for each internal fold k,
  ``Δ_k = L_val(parent_k) − L_val(child_k)`` (log-loss reduction on the fold's
  validation rows; for ``double_data`` the parent is fitted on the first half
  of the fold's training rows and the child on all of them, the in-sample
  analogue of doubling n).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from foreseen.core.extras import optional_import
from foreseen.credit.studies.controlled.catalog import (
    PARENT_RECIPE,
    accuracy,
    fit_predict,
    log_loss,
)
from foreseen.credit.studies.controlled.mechanisms import FloatArray, IntArray
from foreseen.credit.studies.fold_changes import FoldChanges

FOLDS = 4
CURVE_FRACTIONS = (0.25, 0.5, 1.0)


@dataclass(frozen=True)
class Probe(FoldChanges):
    """Per-fold validation changes of one state's intervention (training data only).

    Every explainer of the controlled study that reads a probe reads all of its
    folds (:attr:`mean`): the mechanism control and the plain note measure with
    the same folds.
    """


def internal_folds(y: IntArray, seed: int) -> list[tuple[IntArray, IntArray]]:
    """Stratified K-fold (shuffled with ``random_state=seed``) over the training rows."""
    stratified_k_fold = optional_import("sklearn.model_selection", "learn").StratifiedKFold
    splits = min(FOLDS, max(2, int(min(np.bincount(y, minlength=2)))))
    folder = stratified_k_fold(n_splits=splits, shuffle=True, random_state=seed)
    x_dummy = np.zeros((y.shape[0], 1))
    return [(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
            for a, b in folder.split(x_dummy, y)]


def public_summary(x: FloatArray, y: IntArray, folds: list[tuple[IntArray, IntArray]]
                   ) -> tuple[dict[str, Any], list[float]]:
    """The public state of a (task, budget, seed) and the parent's per-fold validation losses."""
    fold_losses, fold_accuracies = [], []
    for train, valid in folds:
        p = fit_predict(None, x[train], y[train], x[valid])
        fold_losses.append(log_loss(y[valid], p))
        fold_accuracies.append(accuracy(y[valid], p))
    p_train = fit_predict(None, x, y, x)
    train0, valid0 = folds[0]
    curve = []
    for fraction in CURVE_FRACTIONS:
        rows = train0[: max(2, round(fraction * train0.size))]
        both = fit_predict(None, x[rows], y[rows], np.vstack([x[rows], x[valid0]]))
        p_fit, p_val = both[: rows.size], both[rows.size :]
        curve.append({"n": int(rows.size), "train_log_loss": round(log_loss(y[rows], p_fit), 6),
                      "validation_log_loss": round(log_loss(y[valid0], p_val), 6)})
    stds = x.std(axis=0)
    scale_ratio = float(stds.max() / max(float(stds.min()), 1e-12))
    public = {
        "data": {"n_train": int(x.shape[0]), "n_features": int(x.shape[1]),
                 "positive_rate": round(float(y.mean()), 6),
                 "feature_scale_ratio": round(scale_ratio, 3)},
        "parent": {"recipe": PARENT_RECIPE, "internal_folds": len(folds),
                   "validation_log_loss": round(float(np.mean(fold_losses)), 6),
                   "validation_accuracy": round(float(np.mean(fold_accuracies)), 6),
                   "train_log_loss": round(log_loss(y, p_train), 6)},
        "learning_curve": curve,
    }
    return public, fold_losses


def probe_changes(intervention_id: str, x: FloatArray, y: IntArray,
                  folds: list[tuple[IntArray, IntArray]], parent_losses: list[float]) -> Probe:
    """Run the intervention on every internal fold; Δ_k = parent − child validation log-loss."""
    changes = []
    for (train, valid), parent_loss in zip(folds, parent_losses, strict=True):
        if intervention_id == "double_data":
            half = train[: max(2, train.size // 2)]
            base = log_loss(y[valid], fit_predict(None, x[half], y[half], x[valid]))
            changes.append(base - parent_loss)
        else:
            child = fit_predict(intervention_id, x[train], y[train], x[valid])
            changes.append(parent_loss - log_loss(y[valid], child))
    return Probe(tuple(changes))
