"""The experiment: states, their public part, and each state's outcome (the outcome code).

Data: scikit-learn's wine data (178 wines, 13 features, 3 cultivars), split
once (seed ``SPLIT_SEED``) into a training pool and held-out rows nobody sees.
A **task** is a feature subset; a **state** is (task, budget, planned change,
seed): the parent, a logistic regression, is trained on ``budget`` rows drawn
from the pool with the state's seed. The **outcome** y is the held-out
log-loss of the parent minus that of the child (the parent with the change):
y > 0 means the change helped. The public part of a state holds only what is
computed from its training rows (sizes, feature scales, the parent's
validation log-loss on a split of the training rows).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

SPLIT_SEED = 20261202
HELD_OUT_SHARE = 0.4
BUDGETS = (40, 80)
SEEDS = (0, 1)
#: task id → feature columns of the wine data
TASKS: dict[str, tuple[int, ...]] = {
    "first_half": tuple(range(0, 7)), "second_half": tuple(range(6, 13)),
    "even": tuple(range(0, 13, 2)), "odd": tuple(range(1, 13, 2)),
    "chemistry": (0, 1, 2, 3, 4, 7), "colour": (5, 6, 8, 9, 10, 11, 12),
}
#: planned change id → (name, text a forecaster reads)
CHANGES: dict[str, tuple[str, str]] = {
    "scale": ("standardise", "Standardise every feature (zero mean, unit variance) before"
              " fitting the same logistic regression."),
    "strong_l2": ("strong regularisation", "Refit with twenty times stronger L2"
                  " regularisation (C = 0.05)."),
    "weak_l2": ("weak regularisation", "Refit with twenty times weaker L2 regularisation"
                " (C = 20)."),
    "knn": ("nearest neighbours", "Replace the model with 7-nearest-neighbours on"
            " standardised features."),
}


@cache
def _data() -> tuple[Any, Any]:
    """The wine data, each feature divided by its largest value (a fixed rescaling, so
    the logistic regressions converge in a few iterations)."""
    from sklearn.datasets import load_wine

    features, labels = load_wine(return_X_y=True)
    return features / features.max(axis=0), labels


def split() -> tuple[Any, Any]:
    """Row indices of the training pool and of the held-out rows (fixed seed)."""
    _, labels = _data()
    order = np.random.default_rng(SPLIT_SEED).permutation(len(labels))
    cut = round(len(labels) * HELD_OUT_SHARE)
    return np.sort(order[cut:]), np.sort(order[:cut])


def training_rows(task: str, budget: int, seed: int) -> Any:
    """The state's budgeted training rows, drawn from the pool with its own seed."""
    pool, _ = split()
    index = list(TASKS).index(task)
    rng = np.random.default_rng([SPLIT_SEED, index, budget, seed])
    return np.sort(rng.choice(pool, size=budget, replace=False))


def model(change: str | None) -> Any:
    """The parent (``change`` None) or the child with the planned change."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    builders: dict[str | None, Callable[[], Any]] = {
        None: lambda: LogisticRegression(C=1.0, max_iter=1000),
        "scale": lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
        "strong_l2": lambda: LogisticRegression(C=0.05, max_iter=1000),
        "weak_l2": lambda: LogisticRegression(C=20.0, max_iter=1000),
        "knn": lambda: make_pipeline(StandardScaler(), KNeighborsClassifier(7)),
    }
    return builders[change]()


def _log_loss(fitted: Any, features: Any, labels: Any) -> float:
    from sklearn.metrics import log_loss

    return float(log_loss(labels, fitted.predict_proba(features), labels=[0, 1, 2]))


def _validation_split(rows: Any, seed: int) -> tuple[Any, Any]:
    rng = np.random.default_rng([seed, len(rows)])
    shuffled = rng.permutation(rows)
    cut = int(len(rows) * 0.7)
    return np.sort(shuffled[:cut]), np.sort(shuffled[cut:])


def _rows(task: str, budget: int, seed: int, part: str) -> Any:
    """The rows a model is fitted on: all the state's training rows, or the 70 % ``fit``
    part of them (the rest is the public validation split)."""
    rows = training_rows(task, budget, seed)
    return rows if part == "all" else _validation_split(rows, seed)[0]


def fit(change: str | None, task: str, budget: int, seed: int, part: str) -> Any:
    """The parent (``change`` None) or child fitted on the state's rows (``part``)."""
    features, labels = _data()
    rows = _rows(task, budget, seed, part)
    return model(change).fit(features[np.ix_(rows, TASKS[task])], labels[rows])


#: one fit per (model, rows) within a process: a build's public part, probe and outcomes
#: share them; a verification calls :func:`fit` afresh
cached_fit = cache(fit)


def _change_effect(change: str, task: str, budget: int, seed: int, part: str, test: Any,
                   fitter: Callable[..., Any]) -> float:
    """Log-loss of the parent minus the child's on ``test`` rows, both fitted on ``part``."""
    features, labels = _data()
    x_test, y_test = features[np.ix_(test, TASKS[task])], labels[test]
    parent = fitter(None, task, budget, seed, part)
    child = fitter(change, task, budget, seed, part)
    return round(_log_loss(parent, x_test, y_test) - _log_loss(child, x_test, y_test), 6)


def public_part(task: str, budget: int, seed: int) -> dict[str, Any]:
    """What explainers and forecasters may see: computed from the training rows only."""
    features, labels = _data()
    columns = TASKS[task]
    rows = training_rows(task, budget, seed)
    validation = _validation_split(rows, seed)[1]
    parent = cached_fit(None, task, budget, seed, "fit")
    spread = features[np.ix_(rows, columns)].std(axis=0)
    return {"task": task, "features": list(columns), "n_train": int(budget),
            "classes": 3, "feature_scale_ratio": round(float(spread.max() / spread.min()), 3),
            "parent": {"model": "logistic regression (C = 1)",
                       "validation_log_loss": round(_log_loss(
                           parent, features[np.ix_(validation, columns)],
                           labels[validation]), 4)}}


def probe_estimate(task: str, budget: int, change: str, seed: int) -> float:
    """The change's effect on a validation split of the training rows (public; no held-out
    row is used): what the offline ``probe`` explainer reports."""
    validation = _validation_split(training_rows(task, budget, seed), seed)[1]
    return _change_effect(change, task, budget, seed, "fit", validation, cached_fit)


def outcome(task: str, budget: int, change: str, seed: int, *, fresh: bool = False) -> float:
    """The state's outcome: held-out log-loss(parent) − log-loss(child), both trained on
    the state's budgeted training rows (``fresh``: refit, never reuse a fit). SEALED:
    never shown to an explainer."""
    _, held_out = split()
    return _change_effect(change, task, budget, seed, "all", held_out,
                          fit if fresh else cached_fit)
