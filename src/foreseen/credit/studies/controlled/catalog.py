"""The parent recipe and the public intervention catalog of the controlled study (credit §9).

Parent recipe: ``LogisticRegression(C=1.0, solver="lbfgs", max_iter=100)`` on
the raw features. Each catalog entry is one real scikit-learn change to that
recipe; :func:`fit_predict` trains parent or child and returns the predicted
probability of the positive class.

The metric is the log-loss ``L = −mean(y log p + (1 − y) log(1 − p))`` with
``p`` clipped to ``[1e-15, 1 − 1e-15]``; the outcome is ``y = L(parent) −
L(child)`` on the held-out set, so ``y > 0`` is an improvement.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from foreseen.core.extras import optional_import
from foreseen.credit.model import Intervention
from foreseen.credit.studies.controlled.mechanisms import FloatArray, IntArray

PARENT_RECIPE = "LogisticRegression(C=1.0, solver='lbfgs', max_iter=100) on the raw features"
PROBABILITY_CLIP = 1e-15


@dataclass(frozen=True, slots=True)
class PilotPrior:
    """An intervention's public prior measured on the pilot arm (:func:`.build.pilot_prior`):
    median effect, median |effect|, the 80 % half-width around the median, and how many
    pilot states it summarises."""

    typical_effect: float
    typical_magnitude: float
    half_width: float
    pilot_states: int

    def to_json(self) -> dict[str, Any]:
        """The prior as the catalog notes and each state's ``intervention_prior`` show it."""
        return {"typical_effect": self.typical_effect,
                "typical_magnitude": self.typical_magnitude, "half_width": self.half_width,
                "pilot_states": self.pilot_states}


@dataclass(frozen=True)
class CatalogEntry:
    """One public intervention: id, short name and the exact change to the parent recipe."""

    id: str
    name: str
    change: str

    def intervention(self, prior: PilotPrior | None = None) -> Intervention:
        text = f"{self.change} (parent: {PARENT_RECIPE})."
        if prior is not None:
            text += (f" Public prior from the pilot: typical effect {prior.typical_effect:+.4f},"
                     f" typical magnitude {prior.typical_magnitude:.4f},"
                     f" 80% half-width {prior.half_width:.4f} (log-loss reduction).")
        return Intervention(id=self.id, name=self.name, text=text)


CATALOG: tuple[CatalogEntry, ...] = (
    CatalogEntry("l2_stronger", "stronger L2 penalty", "set C from 1.0 to 0.05"),
    CatalogEntry("l2_weaker", "weaker L2 penalty", "set C from 1.0 to 20.0"),
    CatalogEntry("quadratic_features", "add quadratic features",
                 "prepend PolynomialFeatures(degree=2, include_bias=False)"),
    CatalogEntry("spline_features", "add spline features",
                 "prepend SplineTransformer(n_knots=5, degree=3)"),
    CatalogEntry("select_features", "remove noise features",
                 "prepend SelectKBest(f_classif, k=max(2, round(d/4)))"),
    CatalogEntry("class_weight", "balanced class weights", "set class_weight='balanced'"),
    CatalogEntry("standardize", "standardise features", "prepend StandardScaler()"),
    CatalogEntry("double_data", "double the training budget",
                 "train on 2n rows of the same training pool instead of n"),
    CatalogEntry("early_stop", "stop training early", "set max_iter from 100 to 5"),
)
CATALOG_IDS: tuple[str, ...] = tuple(entry.id for entry in CATALOG)


def _sklearn() -> Any:
    return tuple(optional_import(f"sklearn.{name}", "learn")
                 for name in ("feature_selection", "linear_model", "pipeline", "preprocessing"))


def make_model(intervention_id: str | None, n_features: int) -> Any:
    """The parent pipeline (``None``) or the child pipeline of a catalog intervention."""
    feature_selection, linear_model, pipeline, preprocessing = _sklearn()
    options: dict[str, Any] = {"C": 1.0, "solver": "lbfgs", "max_iter": 100}
    steps: list[tuple[str, Any]] = []
    if intervention_id == "l2_stronger":
        options["C"] = 0.05
    elif intervention_id == "l2_weaker":
        options["C"] = 20.0
    elif intervention_id == "quadratic_features":
        steps.append(("poly", preprocessing.PolynomialFeatures(degree=2, include_bias=False)))
    elif intervention_id == "spline_features":
        steps.append(("spline", preprocessing.SplineTransformer(n_knots=5, degree=3)))
    elif intervention_id == "select_features":
        k = max(2, round(n_features / 4))
        steps.append(("select", feature_selection.SelectKBest(feature_selection.f_classif, k=k)))
    elif intervention_id == "class_weight":
        options["class_weight"] = "balanced"
    elif intervention_id == "standardize":
        steps.append(("scale", preprocessing.StandardScaler()))
    elif intervention_id == "early_stop":
        options["max_iter"] = 5
    elif intervention_id not in (None, "double_data"):
        raise ValueError(f"unknown intervention {intervention_id!r}")
    steps.append(("logistic", linear_model.LogisticRegression(**options)))
    return pipeline.Pipeline(steps)


def training_rows(intervention_id: str | None, budget: int) -> int:
    """Rows of the training pool the model trains on (``double_data`` takes 2n)."""
    return 2 * budget if intervention_id == "double_data" else budget


def fit_predict(intervention_id: str | None, x_train: FloatArray, y_train: IntArray,
                x_eval: FloatArray) -> FloatArray:
    """Train parent/child on ``(x_train, y_train)``; P(y = 1) on ``x_eval``.

    A training set with a single class cannot fit a logistic model; it
    predicts that class's empirical rate (clipped later by :func:`log_loss`).
    Convergence warnings are expected (``early_stop``, unscaled data) and muted.
    """
    if np.unique(y_train).size < 2:
        return np.full(x_eval.shape[0], float(y_train.mean()) if y_train.size else 0.5)
    model = make_model(intervention_id, x_train.shape[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(x_train, y_train)
        probabilities: NDArray[np.float64] = model.predict_proba(x_eval)[:, 1]
    return np.asarray(probabilities, dtype=np.float64)


def log_loss(y_true: IntArray, probability: FloatArray) -> float:
    """Mean binary log-loss with probabilities clipped to [1e-15, 1 − 1e-15]."""
    p = np.clip(probability, PROBABILITY_CLIP, 1.0 - PROBABILITY_CLIP)
    losses = -(y_true * np.log(p) + (1 - y_true) * np.log1p(-p))
    return float(np.mean(losses))


def accuracy(y_true: IntArray, probability: FloatArray) -> float:
    """Share of rows whose thresholded (p ≥ 0.5) prediction equals the label."""
    return float(np.mean((probability >= 0.5).astype(np.int64) == y_true))
