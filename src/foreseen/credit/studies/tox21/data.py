"""Tox21 data for the Tox21 credit study (credit §9): loading, parsing, splits, budgets.

* :func:`load_tox21` — reads the shipped gzip (``foreseen/data/tox21``, a byte
  copy of MoleculeNet's Tox21 via chemprop; see its PROVENANCE.md) or a
  ``--data`` path, **verifies its SHA-256** against :data:`TOX21_SHA256`
  (refusing a different file), and parses every SMILES with RDKit. SMILES
  that do not parse are **counted and reported** per endpoint (labelled but
  unparseable molecules are excluded from both the training and the held-out
  side, and the report says how many) — never silently dropped.
* :func:`endpoint_split` — one fixed split per endpoint, identical for the six
  states of the endpoint: among the endpoint's labelled, parseable molecules,
  a stratified random 20 % (rounded per class) is held out, drawn with
  ``numpy.random.default_rng([SPLIT_SEED, endpoint index])``. The held-out set
  is used only for outcomes; no model, probe or prompt sees it.
* :func:`budget_rows` — nested training-label fractions (0.25, 0.5, 0.8):
  per (endpoint, seed) one stratified permutation of the training molecules
  (positives and negatives shuffled separately with
  ``default_rng([BUDGET_SEED, endpoint index, seed])``); budget f keeps the
  first ``ceil(f · n_pos)`` positives and ``ceil(f · n_neg)`` negatives, so
  smaller budgets are subsets of larger ones. The largest fraction is 0.8,
  not 1.0, on purpose: at 1.0 both seeds would train on identical labels, so
  the seed pair of a full-budget cell would be a duplicate (gap exactly 0), not
  a replicate, and the seed-swap donor would be the state's own model.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from foreseen.core.digest import sha256_bytes
from foreseen.core.errors import UserInputError
from foreseen.core.extras import optional_import
from foreseen.core.seeds import CREDIT_SEED

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

TOX21_SHA256 = "63c281b3c98041b0fc501ac71112d7809be1236ced4650334eb16efede4a4f06"
ENDPOINTS: tuple[str, ...] = (
    "NR-AR", "NR-AR-LBD", "NR-AhR", "NR-Aromatase", "NR-ER", "NR-ER-LBD", "NR-PPAR-gamma",
    "SR-ARE", "SR-ATAD5", "SR-HSE", "SR-MMP", "SR-p53",
)
BUDGET_FRACTIONS: tuple[float, ...] = (0.25, 0.5, 0.8)
SEEDS: tuple[int, ...] = (0, 1)
HELD_OUT_FRACTION = 0.2
SPLIT_SEED = CREDIT_SEED
BUDGET_SEED = 20261130


def _rdkit_chem() -> Any:
    chem = optional_import("rdkit.Chem", "chem")
    optional_import("rdkit.RDLogger", "chem").DisableLog("rdApp.*")
    return chem


def shipped_data_path() -> Path:
    """The package's copy of ``tox21.csv.gz``."""
    return Path(str(resources.files("foreseen") / "data" / "tox21" / "tox21.csv.gz"))


@dataclass(frozen=True)
class Tox21Data:
    """The parsed data set: SMILES, RDKit molecules (None if unparseable), labels (NaN = blank)."""

    smiles: tuple[str, ...]
    molecules: tuple[Any, ...]
    labels: FloatArray  # shape (n_molecules, 12); 0, 1 or NaN
    sha256: str

    @property
    def parseable(self) -> npt.NDArray[np.bool_]:
        return np.array([m is not None for m in self.molecules], dtype=bool)

    def endpoint_index(self, endpoint: str) -> int:
        if endpoint not in ENDPOINTS:
            raise UserInputError(f"unknown Tox21 endpoint {endpoint!r}; choose from "
                                 f"{', '.join(ENDPOINTS)}")
        return ENDPOINTS.index(endpoint)

    def parse_report(self) -> ParseReport:
        """Unparseable SMILES: total, their row numbers, and per endpoint how many were labelled."""
        bad = [i for i, m in enumerate(self.molecules) if m is None]
        per_endpoint = {
            e: int(np.sum(~np.isnan(self.labels[bad, k]))) for k, e in enumerate(ENDPOINTS)}
        return ParseReport(len(self.smiles), tuple(bad), tuple(self.smiles[i] for i in bad),
                           per_endpoint)


#: what happens to a molecule RDKit cannot parse (written with every parse report)
UNPARSEABLE_POLICY = ("unparseable molecules are excluded from training and held-out sets "
                      "of every endpoint and counted here")


@dataclass(frozen=True, slots=True)
class ParseReport:
    """The SMILES RDKit could not parse: how many molecules, which rows, and per endpoint how
    many of them carried a label (:data:`UNPARSEABLE_POLICY` says what happens to them)."""

    molecules: int
    unparseable_rows: tuple[int, ...]
    unparseable_smiles: tuple[str, ...]
    labelled_but_unparseable_per_endpoint: Mapping[str, int]

    @property
    def unparseable(self) -> int:
        return len(self.unparseable_rows)

    def to_json(self) -> dict[str, Any]:
        """The ``smiles`` object of ``build.json`` (and of the build's cache file)."""
        return {"molecules": self.molecules, "unparseable": self.unparseable,
                "unparseable_rows": list(self.unparseable_rows),
                "unparseable_smiles": list(self.unparseable_smiles),
                "labelled_but_unparseable_per_endpoint":
                    dict(self.labelled_but_unparseable_per_endpoint),
                "policy": UNPARSEABLE_POLICY}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> ParseReport:
        return cls(int(obj["molecules"]), tuple(int(i) for i in obj["unparseable_rows"]),
                   tuple(str(s) for s in obj["unparseable_smiles"]),
                   {str(e): int(n) for e, n in
                    obj["labelled_but_unparseable_per_endpoint"].items()})


def _parse_csv(raw: bytes) -> tuple[list[str], FloatArray]:
    try:
        text = gzip.decompress(raw).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        raise UserInputError("Tox21 data file is not a UTF-8 gzip") from None
    rows = list(csv.reader(io.StringIO(text)))
    header = rows[0] if rows else []
    if header != ["smiles", *ENDPOINTS]:
        raise UserInputError("Tox21 data file: header is not 'smiles' + the 12 endpoints")
    smiles: list[str] = []
    labels = np.full((len(rows) - 1, len(ENDPOINTS)), np.nan)
    for r, row in enumerate(rows[1:]):
        if len(row) != len(header):
            raise UserInputError(f"Tox21 data file: row {r + 2} has {len(row)} fields")
        smiles.append(row[0])
        for k, cell in enumerate(row[1:]):
            if cell == "":
                continue
            if cell not in ("0", "1"):
                raise UserInputError(f"Tox21 data file: row {r + 2} has label {cell!r}")
            labels[r, k] = float(cell)
    return smiles, labels


@lru_cache(maxsize=4)
def load_tox21(path: str | None = None) -> Tox21Data:
    """Load, verify (SHA-256) and parse Tox21; ``None`` → the shipped copy."""
    file = Path(path) if path is not None else shipped_data_path()
    if not file.is_file():
        raise UserInputError(f"Tox21 data file {file} does not exist")
    raw = file.read_bytes()
    digest = sha256_bytes(raw)
    if digest != TOX21_SHA256:
        raise UserInputError(f"Tox21 data file {file.name} has SHA-256 {digest[:16]}…, "
                             f"expected {TOX21_SHA256[:16]}… (see PROVENANCE.md)")
    smiles, labels = _parse_csv(raw)
    chem = _rdkit_chem()
    molecules = tuple(chem.MolFromSmiles(s) for s in smiles)
    return Tox21Data(tuple(smiles), molecules, labels, digest)


@dataclass(frozen=True)
class EndpointSplit:
    """Row indices (into the data set) of an endpoint's training and held-out molecules."""

    endpoint: str
    train: IntArray
    held_out: IntArray
    y_train: IntArray
    y_held_out: IntArray

    def summary(self) -> dict[str, Any]:
        """The split's sizes as the study's ``splits`` notes show them (JSON)."""
        return {"train": int(self.train.size), "train_positives": int(self.y_train.sum()),
                "held_out": int(self.held_out.size),
                "held_out_positives": int(self.y_held_out.sum())}


def _stratified_take(rows: IntArray, y: IntArray, rng: np.random.Generator,
                     fraction: float) -> tuple[IntArray, IntArray]:
    taken: list[IntArray] = []
    kept: list[IntArray] = []
    for label in (0, 1):
        members = rows[y == label]
        shuffled = members[rng.permutation(members.size)]
        count = round(fraction * members.size)
        taken.append(shuffled[:count])
        kept.append(shuffled[count:])
    return np.sort(np.concatenate(kept)), np.sort(np.concatenate(taken))


def endpoint_split(data: Tox21Data, endpoint: str) -> EndpointSplit:
    """The fixed held-out split of one endpoint (module docstring)."""
    k = data.endpoint_index(endpoint)
    column = data.labels[:, k]
    rows = np.flatnonzero(~np.isnan(column) & data.parseable).astype(np.int64)
    y = column[rows].astype(np.int64)
    rng = np.random.default_rng([SPLIT_SEED, k])
    train, held = _stratified_take(rows, y, rng, HELD_OUT_FRACTION)
    return EndpointSplit(endpoint, train, held, column[train].astype(np.int64),
                         column[held].astype(np.int64))


def budget_rows(split: EndpointSplit, endpoint_index: int, seed: int,
                fraction: float) -> tuple[IntArray, IntArray]:
    """Rows and labels of the budgeted training labels (nested across fractions)."""
    if not 0.0 < fraction <= 1.0:
        raise UserInputError(f"budget fraction must be in (0, 1], got {fraction}")
    rng = np.random.default_rng([BUDGET_SEED, endpoint_index, seed])
    chosen: list[IntArray] = []
    for label in (0, 1):
        members = split.train[split.y_train == label]
        order = members[rng.permutation(members.size)]
        chosen.append(order[: math.ceil(fraction * members.size)])
    rows = np.concatenate(chosen)
    labels = np.concatenate([np.zeros(chosen[0].size, np.int64), np.ones(chosen[1].size, np.int64)])
    order = np.argsort(rows, kind="stable")
    return rows[order], labels[order]
