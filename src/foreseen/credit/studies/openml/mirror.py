"""Reader and validator of the offline OpenML mirror format (credit §9, OpenML study).

A mirror is a folder with ``index.tsv`` (columns ``suite, name, did, task_type,
n_rows, n_features, family, folder``) and one folder per dataset holding
``data.csv.gz`` (UTF-8 CSV, header row, features then the target; empty cells are
the only missing values) and ``meta.json`` (``name``, ``suite``,
``openml_data_id``, ``task_type``, ``target``, ``categorical``, ``n_rows``,
``n_features``, ``n_classes``, ``family``, ``sha256`` of ``data.csv.gz``, …).

Loading follows the mirror's provenance notes: ``pd.read_csv(path,
keep_default_na=False, na_values=[""])``, then ``categorical`` columns and a
classification target are cast to strings. Encoding for the models:

* a categorical column → integer codes of its sorted distinct strings (as
  float), missing → NaN, and its index is listed in ``categorical_indices``;
* a numeric column → float64 (a cell that does not parse is refused);
* a classification target → codes of the sorted class labels; a regression
  target → float64.

The mirror used when none is given is the one shipped with the package
(``foreseen/data/openml``: the full index of 82 datasets and the 24 dataset
folders the default lottery draws; see its ``PROVENANCE.md``). An index entry
whose folder is absent is fine until it is drawn; then :func:`entry_folder`
refuses it with one line saying how to fetch it.

Every problem a user can cause (no ``index.tsv``, a bad or incomplete
``meta.json``, a data file whose SHA-256 differs, a missing target column,
missing target values, a constant target, fewer than two classes) raises
:class:`~foreseen.core.errors.UserInputError` naming the dataset folder.
"""

from __future__ import annotations

import csv
import json
import math
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
import numpy.typing as npt

from foreseen.core.digest import sha256_file
from foreseen.core.errors import UserInputError
from foreseen.core.extras import optional_import

SUITES: tuple[str, ...] = ("OpenML-CC18", "OpenML-CTR23")
SUITE_TASK_TYPE: dict[str, str] = {"OpenML-CC18": "classification",
                                   "OpenML-CTR23": "regression"}
INDEX_COLUMNS: tuple[str, ...] = ("suite", "name", "did", "task_type", "n_rows", "n_features",
                                  "family", "folder")
MIRROR_ENV = "FORESEEN_OPENML_MIRROR"
DATA_FILE = "data.csv.gz"
META_FILE = "meta.json"

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class MirrorEntry:
    """One row of ``index.tsv``."""

    suite: str
    name: str
    data_id: int
    task_type: str
    n_rows: int
    n_features: int
    family: str
    folder: str

    def to_json(self) -> dict[str, Any]:
        """The entry as ``lottery.json`` lists it."""
        return {"suite": self.suite, "name": self.name, "data_id": self.data_id,
                "task_type": self.task_type, "n_rows": self.n_rows,
                "n_features": self.n_features, "family": self.family, "folder": self.folder}


@dataclass(frozen=True)
class DatasetMeta:
    """The validated fields of a dataset's ``meta.json``."""

    name: str
    suite: str
    data_id: int
    task_type: str
    target: str
    categorical: tuple[str, ...]
    n_rows: int
    n_features: int
    n_classes: int | None
    family: str
    sha256: str


@dataclass(frozen=True)
class LoadedDataset:
    """A dataset encoded for the models (see the module docstring)."""

    meta: DatasetMeta
    features: FloatArray
    feature_names: tuple[str, ...]
    categorical_indices: tuple[int, ...]
    target: FloatArray
    classes: tuple[str, ...]

    @property
    def is_classification(self) -> bool:
        return self.meta.task_type == "classification"

    @property
    def n_classes(self) -> int:
        return len(self.classes)


FETCH_COMMAND = "foreseen credit openml mirror --suite SUITE --out DIR"


def shipped_mirror() -> Path:
    """The mirror shipped as package data (``foreseen/data/openml``)."""
    return Path(str(resources.files("foreseen") / "data" / "openml"))


def resolve_mirror(path: str | os.PathLike[str] | None) -> Path:
    """The mirror folder: ``path``, else ``$FORESEEN_OPENML_MIRROR``, else the shipped mirror.

    An empty ``$FORESEEN_OPENML_MIRROR`` counts as unset. The folder is refused
    (one line) when it has no ``index.tsv``.
    """
    chosen = path if path is not None else os.environ.get(MIRROR_ENV)
    folder = shipped_mirror() if chosen is None or str(chosen) == "" else Path(chosen)
    if not (folder / "index.tsv").is_file():
        raise UserInputError(f"OpenML mirror {folder}: no index.tsv there")
    return folder


def _int_field(value: str, what: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise UserInputError(f"{what}: expected an integer, got {value!r}") from None


def read_index(mirror: str | os.PathLike[str]) -> tuple[MirrorEntry, ...]:
    """Parse ``index.tsv`` (all eight columns required; names unique)."""
    path = Path(mirror) / "index.tsv"
    if not path.is_file():
        raise UserInputError(f"OpenML mirror {Path(mirror)}: no index.tsv there")
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle, delimiter="\t"))
    except UnicodeDecodeError as error:
        raise UserInputError(f"{path}: not UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise UserInputError(f"cannot read {path}: {error.strerror}") from None
    if not rows:
        raise UserInputError(f"{path}: the index lists no datasets")
    missing = [c for c in INDEX_COLUMNS if c not in rows[0]]
    if missing:
        raise UserInputError(f"{path}: missing column {missing[0]!r}")
    entries = []
    for number, row in enumerate(rows, start=2):
        what = f"{path.name} line {number}"
        cells = [row.get(c) for c in INDEX_COLUMNS]
        if any(cell is None for cell in cells) or None in row:
            raise UserInputError(f"{what}: expected {len(INDEX_COLUMNS)} tab-separated"
                                 f" cells, got {len([c for c in cells if c is not None])}"
                                 f"{' or more' if None in row else ''}")
        folder = PurePosixPath(row["folder"])
        if folder.is_absolute() or ".." in folder.parts or not row["folder"]:
            raise UserInputError(f"{what}: folder {row['folder']!r} must be a path inside"
                                 " the mirror")
        if row["suite"] not in SUITES:
            raise UserInputError(f"{what}: unknown suite {row['suite']!r}")
        entries.append(MirrorEntry(
            suite=row["suite"], name=row["name"], data_id=_int_field(row["did"], what),
            task_type=row["task_type"], n_rows=_int_field(row["n_rows"], what),
            n_features=_int_field(row["n_features"], what), family=row["family"],
            folder=row["folder"]))
    names = [e.name for e in entries]
    if len(set(names)) != len(names):
        duplicate = next(n for n in names if names.count(n) > 1)
        raise UserInputError(f"{path}: dataset {duplicate!r} is listed twice")
    return tuple(entries)


def index_digest(mirror: str | os.PathLike[str]) -> str:
    """SHA-256 of the bytes of ``index.tsv`` (frozen into the plan with the lottery)."""
    return sha256_file(Path(mirror) / "index.tsv")


def _meta_str(obj: dict[str, Any], key: str, what: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value:
        raise UserInputError(f"{what}: field {key!r} must be a non-empty string")
    return value


def _meta_int(obj: dict[str, Any], key: str, what: str, *, optional: bool = False) -> int | None:
    value = obj.get(key)
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserInputError(f"{what}: field {key!r} must be an integer")
    return value


def read_meta(folder: str | os.PathLike[str]) -> DatasetMeta:
    """Read and validate ``meta.json`` of one dataset folder."""
    path = Path(folder) / META_FILE
    what = f"dataset {Path(folder).name}: {META_FILE}"
    if not path.is_file():
        raise UserInputError(f"{what} is missing")
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise UserInputError(f"cannot read {what}: {error.strerror}") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise UserInputError(f"{what} is not valid JSON") from None
    if not isinstance(obj, dict):
        raise UserInputError(f"{what} must hold a JSON object")
    suite = _meta_str(obj, "suite", what)
    if suite not in SUITES:
        raise UserInputError(f"{what}: unknown suite {suite!r}")
    task_type = _meta_str(obj, "task_type", what)
    if task_type != SUITE_TASK_TYPE[suite]:
        raise UserInputError(f"{what}: task_type {task_type!r} does not fit suite {suite}")
    categorical = obj.get("categorical")
    if not isinstance(categorical, list) or not all(isinstance(c, str) for c in categorical):
        raise UserInputError(f"{what}: field 'categorical' must be a list of column names")
    digest = _meta_str(obj, "sha256", what)
    if len(digest) != 64:
        raise UserInputError(f"{what}: field 'sha256' must be a hex SHA-256")
    n_rows = _meta_int(obj, "n_rows", what)
    n_features = _meta_int(obj, "n_features", what)
    assert n_rows is not None and n_features is not None
    data_id = _meta_int(obj, "openml_data_id", what)
    assert data_id is not None
    return DatasetMeta(
        name=_meta_str(obj, "name", what), suite=suite, data_id=data_id, task_type=task_type,
        target=_meta_str(obj, "target", what), categorical=tuple(categorical), n_rows=n_rows,
        n_features=n_features,
        n_classes=_meta_int(obj, "n_classes", what, optional=True),
        family=_meta_str(obj, "family", what), sha256=digest)


def _pandas() -> Any:
    return optional_import("pandas", "tabular")


def _encode_categorical(values: Any) -> FloatArray:
    present = sorted({v for v in values if v is not None})
    codes = {value: float(i) for i, value in enumerate(present)}
    return np.array([math.nan if v is None else codes[v] for v in values], dtype=np.float64)


def _read_frame(pd: Any, folder: str | os.PathLike[str], meta: DatasetMeta,
                check_sha256: bool) -> Any:
    """The dataset's table, its file checked against the metadata's sha256 and shape."""
    name = Path(folder).name
    data_path = Path(folder) / DATA_FILE
    if not data_path.is_file():
        raise UserInputError(f"dataset {name}: {DATA_FILE} is missing")
    if check_sha256 and sha256_file(data_path) != meta.sha256:
        raise UserInputError(f"dataset {name}: {DATA_FILE} does not match the sha256 in "
                             f"{META_FILE}")
    try:
        as_text = [*meta.categorical, *([meta.target] if meta.task_type == "classification"
                                        else [])]
        frame = pd.read_csv(data_path, keep_default_na=False, na_values=[""],
                            dtype={column: str for column in as_text})
    except Exception as error:  # a corrupt gzip or CSV: one clear line
        raise UserInputError(f"dataset {name}: cannot read {DATA_FILE} ({error})") from None
    if meta.target not in frame.columns:
        raise UserInputError(f"dataset {name}: target column {meta.target!r} is missing")
    unknown = [c for c in meta.categorical if c not in frame.columns or c == meta.target]
    if unknown:
        raise UserInputError(f"dataset {name}: categorical column {unknown[0]!r} is not a "
                             "feature")
    if len(frame) != meta.n_rows:
        raise UserInputError(f"dataset {name}: {len(frame)} rows, {META_FILE} says "
                             f"{meta.n_rows}")
    return frame


def _encode_target(pd: Any, raw_target: Any, meta: DatasetMeta,
                   name: str) -> tuple[FloatArray, tuple[str, ...]]:
    """Class indices (classes sorted) or the numeric regression target; refused if constant."""
    if bool(raw_target.isna().any()):
        raise UserInputError(f"dataset {name}: the target {meta.target!r} has missing values")
    if meta.task_type == "classification":
        labels = [str(v) for v in raw_target.tolist()]
        classes = tuple(sorted(set(labels)))
        if len(classes) < 2:
            raise UserInputError(f"dataset {name}: the target {meta.target!r} is constant "
                                 f"(one class)")
        lookup = {label: float(i) for i, label in enumerate(classes)}
        return np.array([lookup[label] for label in labels], dtype=np.float64), classes
    try:
        target = np.asarray(pd.to_numeric(raw_target), dtype=np.float64)
    except (TypeError, ValueError):
        raise UserInputError(f"dataset {name}: the regression target {meta.target!r} is "
                             "not numeric") from None
    if not np.all(np.isfinite(target)):
        raise UserInputError(f"dataset {name}: the target has non-finite values")
    if float(np.ptp(target)) == 0.0:
        raise UserInputError(f"dataset {name}: the target {meta.target!r} is constant")
    return target, ()


def _encode_features(pd: Any, frame: Any, meta: DatasetMeta, name: str
                     ) -> tuple[FloatArray, tuple[str, ...], tuple[int, ...]]:
    """The feature matrix (categorical columns as sorted codes), names, categorical indices."""
    feature_names = tuple(str(c) for c in frame.columns if c != meta.target)
    categorical = set(meta.categorical)
    columns: list[FloatArray] = []
    categorical_indices = []
    for index, column in enumerate(feature_names):
        series = frame[column]
        if column in categorical:
            values = [None if isinstance(v, float) and math.isnan(v) else str(v)
                      for v in series.tolist()]
            columns.append(_encode_categorical(values))
            categorical_indices.append(index)
            continue
        try:
            columns.append(np.asarray(pd.to_numeric(series), dtype=np.float64))
        except (TypeError, ValueError):
            raise UserInputError(f"dataset {name}: column {column!r} is not numeric and "
                                 f"not listed as categorical") from None
    features = (np.column_stack(columns) if columns
                else np.zeros((len(frame), 0), dtype=np.float64))
    return np.ascontiguousarray(features), feature_names, tuple(categorical_indices)


def load_dataset(folder: str | os.PathLike[str], *, check_sha256: bool = True) -> LoadedDataset:
    """Load, validate and encode one dataset folder (module docstring)."""
    pd = _pandas()
    meta = read_meta(folder)
    name = Path(folder).name
    frame = _read_frame(pd, folder, meta, check_sha256)
    target, classes = _encode_target(pd, frame[meta.target], meta, name)
    features, feature_names, categorical_indices = _encode_features(pd, frame, meta, name)
    return LoadedDataset(meta, features, feature_names, categorical_indices, target, classes)


def entry_folder(mirror: str | os.PathLike[str], entry: MirrorEntry) -> Path:
    """The dataset folder of an index entry.

    Refused (one line) if it escapes the mirror, or if it is absent: the index
    lists the dataset but its files are not in this mirror (the shipped mirror
    holds only the default lottery's picks), so the line says how to fetch it.
    """
    root = Path(mirror).resolve()
    folder = (root / entry.folder).resolve()
    if root not in folder.parents:
        raise UserInputError(f"index entry {entry.name}: folder {entry.folder!r} is outside "
                             "the mirror")
    if not folder.is_dir():
        raise UserInputError(
            f"OpenML dataset {entry.name} ({entry.suite}) is listed in {root / 'index.tsv'} "
            f"but its folder {entry.folder} is not there: fetch it with "
            f"'{FETCH_COMMAND.replace('SUITE', entry.suite)}' and pass --mirror DIR")
    return folder
