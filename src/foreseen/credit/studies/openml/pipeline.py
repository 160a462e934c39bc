"""LightGBM parent recipe, the six changes, splits, budgets and skill (credit §9, OpenML).

**Rows.** A dataset with more than :data:`ROW_CAP` rows is cut to a seeded,
stratified subsample of :data:`ROW_CAP` rows (so the full build fits 15 minutes
on 2 cores). Of the rows used, a fixed, stratified :data:`HELDOUT_FRACTION` is the
**held-out evaluation set**: it depends only on (build seed, dataset), is shared
by both seeds, and no model fit, probe, explainer or prompt ever sees it. The
rest is the training pool.

**Strata.** Classification: the class. Regression: :data:`REGRESSION_BINS`
quantile bins of the target (``searchsorted`` on the interior quantiles of the
targets of the rows being split, and only those: the held-out split uses all
rows used, a budget only the training pool, an internal split only the budget).

**Budgets** (0.1, 0.3, 1.0 of the training pool), nested and stratified: per
seed, the rows of each stratum are permuted once; budget ``f`` takes the first
``min(n_c, max(1, round(f · n_c)))`` rows of stratum ``c``, so every class is
present at every budget and a smaller budget is a subset of a larger one.

**Parent recipe** (small data; :data:`PARENT_PARAMS`): gradient-boosted trees,
``num_leaves`` 15, ``learning_rate`` 0.05, 200 rounds, ``min_data_in_leaf`` 10,
``lambda_l2`` 1, row subsampling 0.8 per tree (so the seed matters at every
budget), native categorical splits on the categorical columns, and
``deterministic``, ``num_threads`` 1, ``force_row_wise``, ``seed`` = the state's
seed, so a refit is bit-identical. Objectives: ``binary``, ``multiclass`` (with
``num_class`` = the dataset's number of classes) or ``regression`` (L2).

**The six changes** (:data:`CHANGES`), each a full refit from scratch:
``stronger_regularisation`` (``lambda_l2`` 10, ``min_data_in_leaf`` 30),
``more_trees_lower_lr`` (400 rounds at learning rate 0.025), ``shallower_trees``
(``num_leaves`` 4, ``max_depth`` 2), ``feature_subsampling`` (``feature_fraction``
0.5 per tree), ``balanced_or_target_transform`` (classification: class-balanced
weights ``n / (K_present · n_c)``; regression: fit on ``g(t) = sign(t)·log1p(|t|)``
of ``t = (y − median)/scale``, scale = IQR (else SD, else 1), predictions mapped
back by the inverse), ``early_stopping`` (a stratified 20 % internal validation
split of the training rows, up to 1000 rounds, stop after 30 without
improvement of the validation loss; the model is fit on the other 80 %).

**Skill** = 1 − loss / loss of the constant predictor fit on the budgeted
training labels: log-loss with the true class's probability clipped to
``[1e-15, 1 − 1e-15]`` (constant = training class frequencies), or MSE
(constant = training mean). **Outcome** y = skill(child) − skill(parent) on the
held-out set (y > 0 is an improvement).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from foreseen.core.errors import UserInputError
from foreseen.core.extras import optional_import
from foreseen.credit.studies.openml.mirror import FloatArray, IntArray, LoadedDataset

ROW_CAP = 5000
HELDOUT_FRACTION = 0.3
INTERNAL_VALIDATION_FRACTION = 0.25
EARLY_STOPPING_FRACTION = 0.2
REGRESSION_BINS = 10
BUDGETS: tuple[float, ...] = (0.1, 0.3, 1.0)
SEEDS: tuple[int, ...] = (0, 1)
CLIP = 1e-15
LEARNING_CURVE_ROUNDS: tuple[int, ...] = (25, 50, 100, 200)

PARENT_PARAMS: dict[str, Any] = {
    "num_leaves": 15, "learning_rate": 0.05, "num_boost_round": 200,
    "min_data_in_leaf": 10, "lambda_l2": 1.0, "max_bin": 255,
    "bagging_fraction": 0.8, "bagging_freq": 1,
    "deterministic": True, "num_threads": 1, "force_row_wise": True,
    "feature_pre_filter": False, "verbosity": -1,
}


@dataclass(frozen=True)
class Change:
    """One of the six changes: public id, short name, text and its parameter overrides."""

    id: str
    name: str
    text: str
    params: Mapping[str, Any]


CHANGES: tuple[Change, ...] = (
    Change("stronger_regularisation", "stronger regularisation",
           "Raise the L2 leaf penalty from 1 to 10 and the minimum leaf size from 10 to 30.",
           {"lambda_l2": 10.0, "min_data_in_leaf": 30}),
    Change("more_trees_lower_lr", "more trees, lower learning rate",
           "Double the boosting rounds to 400 and halve the learning rate to 0.025.",
           {"num_boost_round": 400, "learning_rate": 0.025}),
    Change("shallower_trees", "shallower trees",
           "Limit trees to depth 2 with at most 4 leaves (parent: 15 leaves, no depth limit).",
           {"num_leaves": 4, "max_depth": 2}),
    Change("feature_subsampling", "feature subsampling",
           "Let each tree see a random half of the features (feature_fraction 0.5).",
           {"feature_fraction": 0.5}),
    Change("balanced_or_target_transform", "class balancing / target transform",
           "Classification: weight rows by inverse class frequency. Regression: fit on a "
           "signed log1p transform of the centred, IQR-scaled target and map predictions back.",
           {}),
    Change("early_stopping", "early stopping",
           "Hold out 20% of the training rows (stratified), boost up to 1000 rounds and stop "
           "after 30 rounds without improvement of the held-out training-split loss.",
           {"num_boost_round": 1000}),
)
CHANGE_IDS: tuple[str, ...] = tuple(c.id for c in CHANGES)
_CHANGE_BY_ID = {c.id: c for c in CHANGES}


def _lightgbm() -> Any:
    return optional_import("lightgbm", "tabular")


def strata_of(data: LoadedDataset, rows: IntArray | None = None) -> IntArray:
    """Stratum per row: the class code, or the quantile bin (0..9) of the target.

    Regression bins use the quantiles of ``rows``' own targets only, so a budget
    or an internal split never depends on labels outside the rows it splits.
    """
    target = data.target if rows is None else data.target[rows]
    if data.is_classification:
        return target.astype(np.int64)
    edges = np.quantile(target, np.linspace(0, 1, REGRESSION_BINS + 1)[1:-1])
    return np.searchsorted(edges, target, side="right").astype(np.int64)


def stratified_pick(strata: IntArray, fraction: float, rng: np.random.Generator,
                    *, keep_one_out: bool) -> tuple[IntArray, IntArray]:
    """Split positions into (picked, rest), ``round(fraction · n_c)`` per stratum.

    ``keep_one_out``: never pick the last member of a stratum (it stays in the
    rest, so the rest — a training set — keeps every class). Both outputs sorted.
    """
    picked: list[int] = []
    for value in np.unique(strata):
        members = np.flatnonzero(strata == value)
        members = members[rng.permutation(members.size)]
        count = math.floor(fraction * members.size + 0.5)
        if keep_one_out:
            count = min(count, members.size - 1)
        picked.extend(int(i) for i in members[:count])
    chosen = np.zeros(strata.size, dtype=bool)
    chosen[np.asarray(picked, dtype=np.int64)] = True
    return np.flatnonzero(chosen).astype(np.int64), np.flatnonzero(~chosen).astype(np.int64)


def _rng(build_seed: int, data_id: int, *keys: int) -> np.random.Generator:
    return np.random.default_rng([build_seed, data_id, *keys])


@dataclass(frozen=True)
class DatasetSplit:
    """Row indices into the loaded dataset: the training pool and the held-out set."""

    pool: IntArray
    heldout: IntArray
    rows_used: int


def split_dataset(data: LoadedDataset, build_seed: int, row_cap: int = ROW_CAP) -> DatasetSplit:
    """Seeded stratified row cap, then the fixed stratified held-out split (module docstring)."""
    n = data.target.size
    everything = np.arange(n, dtype=np.int64)
    if n > row_cap:
        kept, _ = stratified_pick(strata_of(data), row_cap / n, _rng(build_seed,
                                  data.meta.data_id, 1), keep_one_out=False)
        everything = kept
    heldout_pos, pool_pos = stratified_pick(strata_of(data, everything), HELDOUT_FRACTION,
                                            _rng(build_seed, data.meta.data_id, 2),
                                            keep_one_out=True)
    return DatasetSplit(everything[pool_pos], everything[heldout_pos], int(everything.size))


def budget_rows(data: LoadedDataset, pool: IntArray, build_seed: int, seed: int,
                budgets: Sequence[float] = BUDGETS) -> list[IntArray]:
    """Nested stratified budget subsets of the pool, one per budget (module docstring)."""
    strata = strata_of(data, pool)
    rng = _rng(build_seed, data.meta.data_id, 3, seed)
    orders = {int(v): np.flatnonzero(strata == v) for v in np.unique(strata)}
    orders = {v: members[rng.permutation(members.size)] for v, members in orders.items()}
    result = []
    for fraction in budgets:
        parts = [members[:min(members.size, max(1, math.floor(fraction * members.size + 0.5)))]
                 for members in orders.values()]
        result.append(np.sort(pool[np.concatenate(parts)]))
    return result


def constant_prediction(data: LoadedDataset, y_train: FloatArray) -> FloatArray:
    """The constant predictor fit on training labels: class frequencies or the mean."""
    if data.is_classification:
        counts = np.bincount(y_train.astype(np.int64), minlength=data.n_classes)
        return np.asarray(counts / counts.sum(), dtype=np.float64)
    return np.array([float(np.mean(y_train))])


def row_losses(data: LoadedDataset, y: FloatArray, prediction: FloatArray) -> FloatArray:
    """Per-row loss: −log(clip(p_true)) or squared error; ``prediction`` may be one row."""
    if data.is_classification:
        probs = prediction if prediction.ndim == 2 else np.tile(prediction, (y.size, 1))
        true = probs[np.arange(y.size), y.astype(np.int64)]
        return np.asarray(-np.log(np.clip(true, CLIP, 1.0 - CLIP)), dtype=np.float64)
    return np.asarray((y - prediction) ** 2, dtype=np.float64)


def skill(data: LoadedDataset, y: FloatArray, prediction: FloatArray,
          y_train: FloatArray) -> float:
    """1 − loss(prediction) / loss(constant fit on ``y_train``), on the rows ``y``."""
    constant = float(np.mean(row_losses(data, y, constant_prediction(data, y_train))))
    if constant == 0.0:
        raise UserInputError(f"dataset {data.meta.name}: the constant predictor has zero loss "
                             "on an evaluation set; skill is undefined")
    return 1.0 - float(np.mean(row_losses(data, y, prediction))) / constant


def _params(data: LoadedDataset, change_id: str | None, seed: int) -> dict[str, Any]:
    """LightGBM's parameter dict for the parent recipe or a change (the library's input)."""
    params = dict(PARENT_PARAMS)
    if change_id is not None:
        params.update(_CHANGE_BY_ID[change_id].params)
    params["seed"] = seed
    if data.is_classification and data.n_classes > 2:
        params.update(objective="multiclass", num_class=data.n_classes)
    elif data.is_classification:
        params["objective"] = "binary"
    else:
        params["objective"] = "regression"
    return params


def _transform_scale(y: FloatArray) -> tuple[float, float]:
    centre = float(np.median(y))
    q75, q25 = np.quantile(y, [0.75, 0.25])
    scale = float(q75 - q25)
    if scale <= 0.0:
        scale = float(np.std(y))
    return centre, scale if scale > 0.0 else 1.0


@dataclass
class FittedModel:
    """A fitted booster with what is needed to predict on new rows."""

    booster: Any
    data: LoadedDataset
    transform: tuple[float, float] | None = None

    def predict(self, x: FloatArray, rounds: int | None = None) -> FloatArray:
        """Class probabilities (n × K) or regression predictions (n,)."""
        raw = np.asarray(self.booster.predict(x, num_iteration=rounds), dtype=np.float64)
        if self.data.is_classification and self.data.n_classes == 2:
            return np.column_stack([1.0 - raw, raw])
        if self.transform is not None:
            centre, scale = self.transform
            return centre + scale * np.sign(raw) * np.expm1(np.abs(raw))
        return raw


def fit(data: LoadedDataset, change_id: str | None, rows: IntArray, seed: int) -> FittedModel:
    """Fit the parent (``change_id`` None) or a child on ``rows`` (module docstring)."""
    lgb = _lightgbm()
    params = _params(data, change_id, seed)
    rounds = int(params.pop("num_boost_round"))
    x, y = data.features[rows], data.target[rows]
    weights = None
    transform = None
    if change_id == "balanced_or_target_transform":
        if data.is_classification:
            codes = y.astype(np.int64)
            counts = np.bincount(codes, minlength=data.n_classes).astype(np.float64)
            present = int(np.count_nonzero(counts))
            weights = y.size / (present * counts[codes])
        else:
            transform = _transform_scale(y)
            t = (y - transform[0]) / transform[1]
            y = np.sign(t) * np.log1p(np.abs(t))
    categorical = list(data.categorical_indices) or "auto"
    if change_id == "early_stopping":
        inner, outer = stratified_pick(strata_of(data, rows), EARLY_STOPPING_FRACTION,
                                       np.random.default_rng([seed, 5]), keep_one_out=True)
        train_set = lgb.Dataset(x[outer], y[outer], categorical_feature=categorical,
                                free_raw_data=False, params={"verbosity": -1})
        valid_set = lgb.Dataset(x[inner], y[inner], reference=train_set,
                                categorical_feature=categorical, free_raw_data=False)
        booster = lgb.train(params, train_set, num_boost_round=rounds, valid_sets=[valid_set],
                            callbacks=[lgb.early_stopping(30, verbose=False)])
    else:
        train_set = lgb.Dataset(x, y, weight=weights, categorical_feature=categorical,
                                free_raw_data=False, params={"verbosity": -1})
        booster = lgb.train(params, train_set, num_boost_round=rounds)
    return FittedModel(booster, data, transform)


def internal_split(data: LoadedDataset, rows: IntArray, seed: int
                   ) -> tuple[IntArray, IntArray]:
    """(internal training, internal validation) rows of a budget: stratified, 25 % validation."""
    validation_pos, train_pos = stratified_pick(strata_of(data, rows),
                                                INTERNAL_VALIDATION_FRACTION,
                                                np.random.default_rng([seed, 4, rows.size]),
                                                keep_one_out=True)
    return rows[train_pos], rows[validation_pos]


def outcome(data: LoadedDataset, change_id: str, train: IntArray, heldout: IntArray,
            seed: int) -> tuple[float, float, float]:
    """(y, parent skill, child skill) on the held-out rows; y = child − parent skill."""
    y_train, y_eval = data.target[train], data.target[heldout]
    x_eval = data.features[heldout]
    parent = skill(data, y_eval, fit(data, None, train, seed).predict(x_eval), y_train)
    child = skill(data, y_eval, fit(data, change_id, train, seed).predict(x_eval), y_train)
    return child - parent, parent, child


def _round(value: float, digits: int = 6) -> float:
    return float(round(value, digits))


def probe(data: LoadedDataset, change_id: str, train: IntArray, seed: int
          ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Public parent summary and the probe, from the budget's internal split only.

    Returns ``(public_parent, probe)``. The probe refits parent and child on the
    internal training rows and compares them on the internal validation rows:
    ``estimate`` = child − parent skill there; ``standard_error`` = SD of the
    paired per-row loss differences / √n / constant loss (the SE of the
    estimate, treating rows as independent).
    """
    inner_train, inner_valid = internal_split(data, train, seed)
    y_fit, y_val = data.target[inner_train], data.target[inner_valid]
    x_val = data.features[inner_valid]
    parent_model = fit(data, None, inner_train, seed)
    child_model = fit(data, change_id, inner_train, seed)
    parent_pred = parent_model.predict(x_val)
    child_pred = child_model.predict(x_val)
    constant = float(np.mean(row_losses(data, y_val, constant_prediction(data, y_fit))))
    if constant == 0.0:
        raise UserInputError(f"dataset {data.meta.name}: constant internal validation labels; "
                             "the probe's skill is undefined")
    parent_rows = row_losses(data, y_val, parent_pred)
    child_rows = row_losses(data, y_val, child_pred)
    difference = (parent_rows - child_rows) / constant
    se = float(np.std(difference, ddof=1) / math.sqrt(difference.size)) if (
        difference.size > 1) else 0.0
    curve = [{"rounds": r, "validation_skill": _round(skill(
        data, y_val, parent_model.predict(x_val, rounds=r), y_fit))}
        for r in LEARNING_CURVE_ROUNDS]
    train_skill = skill(data, y_fit, parent_model.predict(data.features[inner_train]), y_fit)
    prediction_hash = _prediction_hash(parent_pred)
    public_parent = {
        "internal_train_rows": int(inner_train.size),
        "internal_validation_rows": int(inner_valid.size),
        "validation_skill": _round(1.0 - float(np.mean(parent_rows)) / constant),
        "train_skill": _round(train_skill),
        "validation_loss": _round(float(np.mean(parent_rows))),
        "constant_validation_loss": _round(constant),
        "prediction_sha256": prediction_hash,
        "learning_curve": curve,
    }
    probe_result = {"estimate": float(np.mean(difference)), "standard_error": se,
                    "validation_rows": int(inner_valid.size)}
    return public_parent, probe_result


def _prediction_hash(prediction: FloatArray) -> str:
    from foreseen.core.digest import sha256_text

    return sha256_text(",".join(f"{v:.6f}" for v in np.ravel(prediction)))
