"""Splits, budgets, skill and the LightGBM fits of the OpenML study (checked independently)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import log_loss, mean_squared_error

from foreseen.credit.studies.openml.mirror import LoadedDataset, load_dataset
from foreseen.credit.studies.openml.pipeline import (
    BUDGETS,
    CHANGE_IDS,
    HELDOUT_FRACTION,
    budget_rows,
    constant_prediction,
    fit,
    internal_split,
    outcome,
    skill,
    split_dataset,
    strata_of,
)

from support.openml_mirror import copy_mirror


@pytest.fixture(scope="module")
def datasets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, LoadedDataset]:
    mirror = copy_mirror(tmp_path_factory.mktemp("mirror"))
    return {"classification": load_dataset(mirror / "OpenML-CC18" / "dresses-sales"),
            "regression": load_dataset(mirror / "OpenML-CTR23" / "QSAR_fish_toxicity")}


@pytest.mark.parametrize("kind", ["classification", "regression"])
def test_heldout_is_disjoint_fixed_and_budgets_nested_stratified(
        datasets: dict[str, LoadedDataset], kind: str) -> None:
    data = datasets[kind]
    split = split_dataset(data, 11)
    assert not set(split.pool) & set(split.heldout)
    assert split.pool.size + split.heldout.size == data.target.size
    assert abs(split.heldout.size / data.target.size - HELDOUT_FRACTION) < 0.02
    np.testing.assert_array_equal(split_dataset(data, 11).heldout, split.heldout)
    all_strata = set(strata_of(data, split.pool).tolist())
    for seed in (0, 1):
        subsets = budget_rows(data, split.pool, 11, seed)
        assert [s.size for s in subsets] == sorted(s.size for s in subsets)
        for small, large in itertools.pairwise(subsets):
            assert set(small) <= set(large)
        assert set(subsets[-1]) == set(split.pool)
        for fraction, subset in zip(BUDGETS, subsets, strict=True):
            assert set(strata_of(data, subset).tolist()) == all_strata  # every class/bin
            assert abs(subset.size / split.pool.size - fraction) < 0.05
    other = budget_rows(data, split.pool, 11, 1)[0]
    assert set(other) != set(budget_rows(data, split.pool, 11, 0)[0])


def test_row_cap_subsamples_stratified(datasets: dict[str, LoadedDataset]) -> None:
    data = datasets["regression"]
    split = split_dataset(data, 3, row_cap=400)
    assert split.rows_used == 400 and split.pool.size + split.heldout.size == 400
    assert len(set(split.pool) | set(split.heldout)) == 400


def test_skill_matches_sklearn_losses(datasets: dict[str, LoadedDataset]) -> None:
    for kind, data in datasets.items():
        split = split_dataset(data, 5)
        train = budget_rows(data, split.pool, 5, 0)[1]
        model = fit(data, None, train, 0)
        x_eval, y_eval, y_train = (data.features[split.heldout], data.target[split.heldout],
                                   data.target[train])
        prediction = model.predict(x_eval)
        constant = constant_prediction(data, y_train)
        if kind == "classification":
            labels = list(range(data.n_classes))
            reference = 1 - log_loss(y_eval, prediction, labels=labels) / log_loss(
                y_eval, np.tile(constant, (y_eval.size, 1)), labels=labels)
        else:
            reference = 1 - mean_squared_error(y_eval, prediction) / mean_squared_error(
                y_eval, np.full(y_eval.size, y_train.mean()))
        assert skill(data, y_eval, prediction, y_train) == pytest.approx(reference, abs=1e-12)
        assert skill(data, y_eval, constant, y_train) == 0.0


def test_log_loss_clips_probabilities(datasets: dict[str, LoadedDataset]) -> None:
    data = datasets["classification"]
    y = np.array([0.0, 1.0])
    hard = np.array([[1.0, 0.0], [1.0, 0.0]])  # second row: true class has probability 0
    value = skill(data, y, hard, np.array([0.0, 1.0]))
    expected_loss = (-np.log(1 - 1e-15) - np.log(1e-15)) / 2
    assert value == pytest.approx(1 - expected_loss / np.log(2), rel=1e-12)


@pytest.mark.parametrize("change", CHANGE_IDS)
def test_every_change_refits_bit_identically(datasets: dict[str, LoadedDataset],
                                             change: str) -> None:
    data = datasets["classification"] if CHANGE_IDS.index(change) % 2 else datasets[
        "regression"]
    split = split_dataset(data, 9)
    train = budget_rows(data, split.pool, 9, 1)[1]
    first = outcome(data, change, train, split.heldout, 1)
    second = outcome(data, change, train, split.heldout, 1)
    assert [v.hex() for v in first] == [v.hex() for v in second]
    assert first[0] == first[2] - first[1]


def test_internal_split_stays_inside_the_budget(datasets: dict[str, LoadedDataset]) -> None:
    data = datasets["classification"]
    split = split_dataset(data, 2)
    train = budget_rows(data, split.pool, 2, 0)[0]
    inner_train, inner_valid = internal_split(data, train, 0)
    assert set(inner_train) | set(inner_valid) == set(train)
    assert not set(inner_train) & set(inner_valid)
    assert not set(inner_valid) & set(split.heldout)
    assert set(strata_of(data, inner_train).tolist()) == set(strata_of(data, train).tolist())


def test_regression_target_transform_maps_back(datasets: dict[str, LoadedDataset],
                                               tmp_path: Path) -> None:
    data = datasets["regression"]
    split = split_dataset(data, 4)
    model = fit(data, "balanced_or_target_transform", split.pool, 0)
    prediction = model.predict(data.features[split.heldout])
    lo, hi = data.target.min(), data.target.max()
    assert prediction.min() > lo - (hi - lo) and prediction.max() < hi + (hi - lo)
    assert skill(data, data.target[split.heldout], prediction, data.target[split.pool]) > 0.2
