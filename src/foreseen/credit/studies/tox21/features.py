"""Molecular feature blocks of the Tox21 study, computed once per data set with RDKit.

Blocks (rows = all molecules of the data set; rows of unparseable molecules
stay empty and are never used):

* ``morgan2_2048`` — Morgan bits, radius 2, 2048 bits (the parent's features);
* ``morgan3_2048`` — Morgan bits, radius 3, 2048 bits;
* ``morgan2_count_2048`` — Morgan counts, radius 2, 2048 bins, as log(1 + count);
* ``morgan2_1024`` — Morgan bits, radius 2, folded to 1024 bits;
* ``maccs`` — the 167 MACCS structural keys;
* ``descriptors`` — a fixed list of RDKit 2D descriptors (:data:`DESCRIPTORS`),
  raw values (standardised per fit on the fit's own training rows only).

Fingerprints use RDKit's current generator API
(``rdFingerprintGenerator.GetMorganGenerator``) and are stored as sparse
CSR matrices.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np
import scipy.sparse as sp

from foreseen.core.extras import optional_import
from foreseen.credit.studies.tox21.data import FloatArray, Tox21Data, load_tox21

BLOCKS: tuple[str, ...] = ("morgan2_2048", "morgan3_2048", "morgan2_count_2048", "morgan2_1024",
                           "maccs", "descriptors")
DESCRIPTORS: tuple[str, ...] = ("MolWt", "MolLogP", "TPSA", "NumHDonors", "NumHAcceptors",
                                "NumRotatableBonds", "RingCount", "NumAromaticRings",
                                "FractionCSP3", "HeavyAtomCount", "NumHeteroatoms")


def _rdkit() -> tuple[Any, Any]:
    return (optional_import("rdkit.Chem.Descriptors", "chem"),
            optional_import("rdkit.Chem.rdFingerprintGenerator", "chem"))


def _sparse(rows: list[Any], width: int) -> sp.csr_matrix:
    dense = np.zeros((len(rows), width), dtype=np.float64)
    for i, row in enumerate(rows):
        if row is not None:
            dense[i] = row
    return sp.csr_matrix(dense)


def _morgan(data: Tox21Data, radius: int, size: int, counts: bool) -> sp.csr_matrix:
    _, generators = _rdkit()
    generator = generators.GetMorganGenerator(radius=radius, fpSize=size)
    rows: list[Any] = []
    for molecule in data.molecules:
        if molecule is None:
            rows.append(None)
        elif counts:
            rows.append(np.log1p(generator.GetCountFingerprintAsNumPy(molecule).astype(float)))
        else:
            rows.append(generator.GetFingerprintAsNumPy(molecule).astype(float))
    return _sparse(rows, size)


def _maccs(data: Tox21Data) -> sp.csr_matrix:
    keys: Any = optional_import("rdkit.Chem.MACCSkeys", "chem").GenMACCSKeys
    rows: list[Any] = []
    for molecule in data.molecules:
        if molecule is None:
            rows.append(None)
        else:
            bits = keys(molecule).ToBitString()
            rows.append(np.frombuffer(bits.encode("ascii"), dtype=np.uint8) - ord("0"))
    return _sparse(rows, 167)


def _descriptors(data: Tox21Data) -> FloatArray:
    module, _ = _rdkit()
    functions: list[Callable[[Any], float]] = [getattr(module, name) for name in DESCRIPTORS]
    values = np.zeros((len(data.molecules), len(DESCRIPTORS)))
    for i, molecule in enumerate(data.molecules):
        if molecule is not None:
            values[i] = [float(f(molecule)) for f in functions]
    values[~np.isfinite(values)] = 0.0
    return values


@lru_cache(maxsize=2)
def feature_blocks(data_path: str | None = None) -> dict[str, Any]:
    """All blocks of the data set at ``data_path`` (cached per process): block name → its
    matrix (sparse fingerprints, dense descriptors); a recipe names the blocks it stacks."""
    data = load_tox21(data_path)
    return {
        "morgan2_2048": _morgan(data, 2, 2048, counts=False),
        "morgan3_2048": _morgan(data, 3, 2048, counts=False),
        "morgan2_count_2048": _morgan(data, 2, 2048, counts=True),
        "morgan2_1024": _morgan(data, 2, 1024, counts=False),
        "maccs": _maccs(data),
        "descriptors": _descriptors(data),
    }


def design_matrix(blocks: dict[str, Any], names: tuple[str, ...], train_rows: np.ndarray,
                  rows: np.ndarray) -> sp.csr_matrix:
    """Horizontal stack of the named blocks at ``rows``.

    A dense block (descriptors) is standardised with the mean and standard
    deviation of ``train_rows`` only (SD 0 → 1), so nothing outside the fit's
    training rows shapes its features.
    """
    parts = []
    for name in names:
        block = blocks[name]
        if sp.issparse(block):
            parts.append(block[rows])
        else:
            reference = block[train_rows]
            mean = reference.mean(axis=0)
            sd = reference.std(axis=0)
            sd[sd == 0] = 1.0
            parts.append(sp.csr_matrix((block[rows] - mean) / sd))
    return sp.csr_matrix(sp.hstack(parts, format="csr"))
