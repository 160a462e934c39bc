"""The Tox21 parent recipe, its public catalog of changes, and the (convergence-checked) fit.

Parent recipe (public): Morgan fingerprint bits, radius 2, 2048 bits → L2
logistic regression, C = 1, no class weights, solver lbfgs, tol 1e-4,
max_iter 10,000. A fit has **converged** iff ``n_iter_ < max_iter`` (and no
ConvergenceWarning was raised); every fit's iteration count and convergence
are recorded.

Catalog (8 chemically motivated changes, each one edit of the recipe),
assigned cyclically over the 36 endpoint × budget cells in the order
(endpoint, budget) so both seeds of a cell share one change:
:data:`CATALOG`.

Metric: ROC AUC (``sklearn.metrics.roc_auc_score``); higher is better.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from foreseen.core.errors import UserInputError
from foreseen.core.extras import optional_import
from foreseen.credit.model import Intervention
from foreseen.credit.studies.tox21.data import IntArray
from foreseen.credit.studies.tox21.features import design_matrix

MAX_ITER = 10_000
TOL = 1e-4


@dataclass(frozen=True)
class Recipe:
    """A model recipe: feature blocks + L2 logistic regression settings."""

    features: tuple[str, ...] = ("morgan2_2048",)
    c: float = 1.0
    class_weight: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"features": list(self.features), "model": "logistic_regression",
                "penalty": "l2", "C": self.c, "class_weight": self.class_weight,
                "solver": "lbfgs", "tol": TOL, "max_iter": MAX_ITER}


PARENT = Recipe()


@dataclass(frozen=True)
class Change:
    """One catalog entry: its id, name, public text, mechanism text, and the child recipe."""

    id: str
    name: str
    text: str
    mechanism: str
    recipe: Recipe

    def intervention(self) -> Intervention:
        return Intervention(self.id, self.name, self.text)


CATALOG: tuple[Change, ...] = (
    Change("morgan_radius3", "Morgan radius 3",
           "Replace the radius-2 Morgan bits by radius-3 Morgan bits (2048 bits).",
           "larger circular environments encode bigger substructures such as fused ring "
           "systems, at the cost of sparser, more specific bits",
           Recipe(features=("morgan3_2048",))),
    Change("morgan_counts", "Morgan counts",
           "Use radius-2 Morgan counts (log(1 + count), 2048 bins) instead of bits.",
           "counts tell how often a substructure repeats, e.g. several halogens or "
           "phenolic groups, which bits collapse",
           Recipe(features=("morgan2_count_2048",))),
    Change("fold_1024", "Fold to 1024 bits",
           "Fold the radius-2 Morgan fingerprint to 1024 bits.",
           "folding merges bits by collision, which reduces the parameter count but "
           "confounds unrelated substructures",
           Recipe(features=("morgan2_1024",))),
    Change("add_maccs", "Add MACCS keys",
           "Append the 167 MACCS structural keys to the Morgan bits.",
           "MACCS keys name pharmacophore-like groups (e.g. nitro, sulfonyl, halogen "
           "patterns) that several Morgan bits only encode implicitly",
           Recipe(features=("morgan2_2048", "maccs"))),
    Change("add_descriptors", "Add 2D descriptors",
           "Append 11 standardised RDKit 2D descriptors (weight, logP, TPSA, H-bond "
           "donors/acceptors, rotatable bonds, rings, aromatic rings, Fsp3, heavy atoms, "
           "heteroatoms).",
           "whole-molecule properties such as lipophilicity and size drive membrane "
           "permeability and nonspecific activity, which local bits miss",
           Recipe(features=("morgan2_2048", "descriptors"))),
    Change("class_weight_balanced", "Balanced class weights",
           "Weight the classes inversely to their frequency (class_weight='balanced').",
           "actives are rare, so reweighting makes the fit attend to them, which can "
           "sharpen the ranking of actives or overfit the few positives",
           Recipe(class_weight="balanced")),
    Change("l2_stronger", "Stronger L2 (C = 0.1)",
           "Strengthen the L2 penalty tenfold (C = 0.1).",
           "with few positives and 2048 sparse bits, stronger shrinkage reduces variance "
           "of the rare-bit weights",
           Recipe(c=0.1)),
    Change("l2_weaker", "Weaker L2 (C = 10)",
           "Weaken the L2 penalty tenfold (C = 10).",
           "weaker shrinkage lets informative rare substructures get large weights, which "
           "helps with many labels and overfits with few",
           Recipe(c=10.0)),
)
CATALOG_BY_ID: dict[str, Change] = {change.id: change for change in CATALOG}


def change(change_id: str) -> Change:
    if change_id not in CATALOG_BY_ID:
        raise UserInputError(f"unknown Tox21 change {change_id!r}")
    return CATALOG_BY_ID[change_id]


def assigned_change(endpoint_index: int, budget_index: int, n_budgets: int = 3) -> Change:
    """Cyclic assignment over cells in (endpoint, budget) order: cell k gets CATALOG[k mod 8]."""
    return CATALOG[(endpoint_index * n_budgets + budget_index) % len(CATALOG)]


@dataclass(frozen=True)
class FitResult:
    """Scores of one fit: ROC AUC on the evaluation rows, iterations and convergence."""

    auc: float
    log_loss: float
    n_iter: int
    converged: bool


def fit_and_score(blocks: dict[str, Any], recipe: Recipe, train_rows: IntArray,
                  y_train: IntArray, eval_rows: IntArray, y_eval: IntArray) -> FitResult:
    """Fit ``recipe`` on the training rows; ROC AUC and log-loss on the evaluation rows."""
    convergence_warning = optional_import("sklearn.exceptions", "chem").ConvergenceWarning
    logistic_regression = optional_import("sklearn.linear_model", "chem").LogisticRegression
    metrics = optional_import("sklearn.metrics", "chem")
    log_loss, roc_auc_score = metrics.log_loss, metrics.roc_auc_score

    if np.unique(y_train).size < 2 or np.unique(y_eval).size < 2:
        raise UserInputError("a Tox21 fit needs both classes in its training and evaluation rows")
    x_train = design_matrix(blocks, recipe.features, train_rows, train_rows)
    x_eval = design_matrix(blocks, recipe.features, train_rows, eval_rows)
    model = logistic_regression(C=recipe.c, class_weight=recipe.class_weight, solver="lbfgs",
                               tol=TOL, max_iter=MAX_ITER)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", convergence_warning)
        model.fit(x_train, y_train)
    n_iter = int(np.max(model.n_iter_))
    warned = any(issubclass(w.category, convergence_warning) for w in caught)
    scores = model.predict_proba(x_eval)[:, 1]
    return FitResult(auc=float(roc_auc_score(y_eval, scores)),
                     log_loss=float(log_loss(y_eval, scores, labels=[0, 1])),
                     n_iter=n_iter, converged=n_iter < MAX_ITER and not warned)
