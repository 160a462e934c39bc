"""The OpenML mirror reader: encodings, and refusals that name the dataset."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from foreseen.core.errors import UserInputError
from foreseen.credit.studies.openml.mirror import (
    entry_folder,
    load_dataset,
    read_index,
    resolve_mirror,
)

from support.openml_mirror import SHIPPED_MIRROR, copy_mirror, write_dataset

ROWS = [["a", "1", "None", "yes"], ["b", "2", "", "no"], ["a", "", "x", "yes"],
        ["c", "4", "None", "no"]]


def test_encoding_keeps_string_categories_and_missing_cells(tmp_path: Path) -> None:
    folder = write_dataset(tmp_path, "toy", ["colour", "size", "tag", "label"], ROWS,
                           categorical=["colour", "tag"])
    data = load_dataset(folder)
    assert data.feature_names == ("colour", "size", "tag")
    assert data.categorical_indices == (0, 2)
    assert data.classes == ("no", "yes")
    np.testing.assert_array_equal(data.target, [1.0, 0.0, 1.0, 0.0])
    np.testing.assert_array_equal(data.features[:, 0], [0.0, 1.0, 0.0, 2.0])
    # "None" is a category (pandas would read it as missing); only the empty cell is missing
    assert data.features[0, 2] == data.features[3, 2] == 0.0
    assert math.isnan(data.features[1, 2]) and math.isnan(data.features[2, 1])
    assert data.features[3, 1] == 4.0


def test_numeric_looking_class_labels_stay_strings(tmp_path: Path) -> None:
    rows = [["1.5", "1"], ["2.5", "2"], ["0.5", "10"], ["3", "2"]]
    data = load_dataset(write_dataset(tmp_path, "codes", ["x", "class"], rows))
    assert data.classes == ("1", "10", "2")  # string order, not numeric


def _refusal(tmp_path: Path, **kwargs: object) -> str:
    folder = write_dataset(tmp_path, "bad-set", ["colour", "size", "tag", "label"],
                           kwargs.pop("rows", ROWS), categorical=["colour", "tag"],
                           **kwargs)  # type: ignore[arg-type]
    with pytest.raises(UserInputError) as error:
        load_dataset(folder)
    return str(error.value)


def test_bad_meta_json_is_refused_naming_the_dataset(tmp_path: Path) -> None:
    folder = write_dataset(tmp_path, "broken", ["x", "label"], [["1", "a"], ["2", "b"]])
    (folder / "meta.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(UserInputError, match=r"dataset broken: meta\.json is not valid JSON"):
        load_dataset(folder)
    meta = {"name": "broken", "suite": "OpenML-CC18"}
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(UserInputError, match=r"dataset broken: meta\.json: field 'task_type'"):
        load_dataset(folder)


def test_wrong_task_type_for_suite_is_refused(tmp_path: Path) -> None:
    message = _refusal(tmp_path, meta_overrides={"task_type": "regression"})
    assert "bad-set" in message and "does not fit suite" in message


def test_missing_target_column_is_refused(tmp_path: Path) -> None:
    message = _refusal(tmp_path, meta_overrides={"target": "outcome"})
    assert message == "dataset bad-set: target column 'outcome' is missing"


def test_missing_target_values_are_refused(tmp_path: Path) -> None:
    rows = [*ROWS[:3], ["c", "4", "None", ""]]
    assert "target 'label' has missing values" in _refusal(tmp_path, rows=rows)


def test_constant_classification_target_is_refused(tmp_path: Path) -> None:
    rows = [[*r[:3], "yes"] for r in ROWS]
    assert _refusal(tmp_path, rows=rows) == (
        "dataset bad-set: the target 'label' is constant (one class)")


def test_constant_regression_target_is_refused(tmp_path: Path) -> None:
    folder = write_dataset(tmp_path, "flat", ["x", "y"], [["1", "3"], ["2", "3"], ["5", "3"]],
                           suite="OpenML-CTR23")
    with pytest.raises(UserInputError, match="dataset flat: the target 'y' is constant"):
        load_dataset(folder)


def test_tampered_data_file_is_refused(tmp_path: Path) -> None:
    message = _refusal(tmp_path, meta_overrides={"sha256": "0" * 64})
    assert "bad-set" in message and "does not match the sha256" in message


def test_mirror_is_the_flag_then_the_environment_then_the_shipped_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORESEEN_OPENML_MIRROR", raising=False)
    assert resolve_mirror(None) == SHIPPED_MIRROR
    monkeypatch.setenv("FORESEEN_OPENML_MIRROR", "")
    assert resolve_mirror(None) == SHIPPED_MIRROR
    with pytest.raises(UserInputError, match=r"no index\.tsv"):
        resolve_mirror(tmp_path)
    monkeypatch.setenv("FORESEEN_OPENML_MIRROR", str(copy_mirror(tmp_path / "m")))
    assert resolve_mirror(None) == tmp_path / "m"
    assert resolve_mirror(SHIPPED_MIRROR) == SHIPPED_MIRROR
    monkeypatch.setenv("FORESEEN_OPENML_MIRROR", str(tmp_path / "absent"))
    with pytest.raises(UserInputError, match=r"absent: no index\.tsv"):
        resolve_mirror(None)


def test_copied_shipped_datasets_load_with_their_declared_shapes(tmp_path: Path) -> None:
    mirror = copy_mirror(tmp_path)
    entries = read_index(mirror)
    assert [e.name for e in entries] == ["dresses-sales", "QSAR_fish_toxicity"]
    for entry in entries:
        data = load_dataset(entry_folder(mirror, entry))
        assert data.features.shape == (entry.n_rows, entry.n_features)
        meta = json.loads((entry_folder(mirror, entry) / "meta.json").read_text())
        assert len(data.categorical_indices) == len(meta["categorical"])
        if entry.task_type == "classification":
            assert data.n_classes == meta["n_classes"]


def test_shipped_index_is_complete() -> None:
    entries = read_index(SHIPPED_MIRROR)
    assert len(entries) == 82
    assert {e.suite for e in entries} == {"OpenML-CC18", "OpenML-CTR23"}
