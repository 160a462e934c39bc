"""Tox21 data, splits, budgets, features and the catalog (no study build; seconds)."""

from __future__ import annotations

import gzip
import hashlib
import math
import re
from pathlib import Path

import numpy as np
import pytest
from rdkit import Chem
from rdkit.Chem import rdFingerprintGenerator

from foreseen.core.errors import UserInputError
from foreseen.credit.studies.tox21.catalog import (
    CATALOG,
    PARENT,
    assigned_change,
    fit_and_score,
)
from foreseen.credit.studies.tox21.data import (
    BUDGET_FRACTIONS,
    ENDPOINTS,
    SEEDS,
    TOX21_SHA256,
    ParseReport,
    budget_rows,
    endpoint_split,
    load_tox21,
    shipped_data_path,
)
from foreseen.credit.studies.tox21.features import design_matrix, feature_blocks

from support.paths import PACKAGE_DATA


def test_shipped_copy_has_the_provenance_digest_and_is_verified(tmp_path: Path) -> None:
    shipped = shipped_data_path()
    assert shipped == PACKAGE_DATA / "tox21" / "tox21.csv.gz"
    provenance = (PACKAGE_DATA / "tox21" / "PROVENANCE.md").read_text(encoding="utf-8")
    stated = re.search(r"sha256 of the gzip file: `([0-9a-f]{64})`", provenance)
    assert stated is not None
    assert hashlib.sha256(shipped.read_bytes()).hexdigest() == stated.group(1) == TOX21_SHA256
    data = load_tox21()
    assert data.sha256 == TOX21_SHA256
    assert len(data.smiles) == 7831 and data.labels.shape == (7831, 12)
    tampered = tmp_path / "tox21.csv.gz"
    text = gzip.decompress(shipped.read_bytes()).decode().replace(",1,", ",0,", 1)
    tampered.write_bytes(gzip.compress(text.encode(), mtime=0))
    with pytest.raises(UserInputError, match="SHA-256"):
        load_tox21(str(tampered))
    with pytest.raises(UserInputError, match="does not exist"):
        load_tox21(str(tmp_path / "missing.csv.gz"))


def test_unparseable_smiles_are_counted_not_dropped() -> None:
    data = load_tox21()
    report = data.parse_report()
    brute = [i for i, s in enumerate(data.smiles) if Chem.MolFromSmiles(s) is None]
    assert report.unparseable == len(brute) == 8
    assert list(report.unparseable_rows) == brute
    for k, endpoint in enumerate(ENDPOINTS):
        labelled_bad = sum(1 for i in brute if not math.isnan(data.labels[i, k]))
        assert report.labelled_but_unparseable_per_endpoint[endpoint] == labelled_bad
    assert ParseReport.from_json(report.to_json()) == report
    assert report.to_json()["unparseable_rows"] == brute


@pytest.mark.parametrize("endpoint", ["NR-PPAR-gamma", "SR-MMP"])
def test_split_is_fixed_disjoint_stratified_and_complete(endpoint: str) -> None:
    data = load_tox21()
    k = ENDPOINTS.index(endpoint)
    split = endpoint_split(data, endpoint)
    again = endpoint_split(data, endpoint)
    assert np.array_equal(split.held_out, again.held_out)
    assert not set(split.train) & set(split.held_out)
    labelled = {i for i in range(len(data.smiles))
                if not math.isnan(data.labels[i, k]) and data.molecules[i] is not None}
    assert set(split.train) | set(split.held_out) == labelled
    positives = int(np.nansum(data.labels[sorted(labelled), k]))
    assert split.y_train.sum() + split.y_held_out.sum() == positives
    assert split.y_held_out.sum() == round(0.2 * positives)
    assert np.array_equal(split.y_held_out, data.labels[split.held_out, k].astype(int))
    if endpoint == "NR-PPAR-gamma":
        assert positives < 200  # the scarce endpoint of the issue


def test_budgets_are_nested_stratified_and_seeded() -> None:
    data = load_tox21()
    split = endpoint_split(data, "NR-AR")
    by_seed = []
    for seed in SEEDS:
        previous: set[int] = set()
        for fraction in BUDGET_FRACTIONS:
            rows, y = budget_rows(split, 0, seed, fraction)
            assert previous <= set(rows)
            assert not set(rows) & set(split.held_out)
            assert y.sum() == math.ceil(fraction * split.y_train.sum())
            assert np.array_equal(y, data.labels[rows, 0].astype(int))
            previous = set(rows)
        by_seed.append(previous)
    assert by_seed[0] != by_seed[1]  # the largest budget differs between seeds
    with pytest.raises(UserInputError):
        budget_rows(split, 0, 0, 0.0)


def test_catalog_is_assigned_cyclically_over_cells() -> None:
    assert len(CATALOG) >= 6 and len({c.id for c in CATALOG}) == len(CATALOG)
    cells = [assigned_change(e, b).id for e in range(len(ENDPOINTS))
             for b in range(len(BUDGET_FRACTIONS))]
    assert len(cells) == 36
    assert cells == [CATALOG[i % len(CATALOG)].id for i in range(36)]
    assert {c.id for c in CATALOG} == set(cells)
    assert all(c.recipe != PARENT for c in CATALOG)


def test_morgan_features_match_rdkit_directly() -> None:
    data = load_tox21()
    blocks = feature_blocks()
    generator = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
    for i in (0, 17, 4000):
        expected = np.array(generator.GetFingerprintAsNumPy(data.molecules[i]), dtype=float)
        assert np.array_equal(blocks["morgan2_2048"][i].toarray().ravel(), expected)
        counts = np.log1p(generator.GetCountFingerprintAsNumPy(data.molecules[i]))
        assert np.allclose(blocks["morgan2_count_2048"][i].toarray().ravel(), counts)
    bad = data.parse_report().unparseable_rows[0]
    assert blocks["morgan2_2048"][bad].nnz == 0


def test_descriptors_are_standardised_on_training_rows_only() -> None:
    blocks = feature_blocks()
    train = np.arange(0, 400)
    x = design_matrix(blocks, ("descriptors",), train, train).toarray()
    assert np.allclose(x.mean(axis=0)[x.std(axis=0) > 0], 0.0, atol=1e-9)
    eval_a = design_matrix(blocks, ("descriptors",), train, np.arange(400, 450)).toarray()
    eval_b = design_matrix(blocks, ("descriptors",), train, np.arange(400, 500)).toarray()
    assert np.allclose(eval_a, eval_b[:50])  # eval rows never shape the scaling


def _pairwise_auc(y: np.ndarray, scores: np.ndarray) -> float:
    pos, neg = scores[y == 1], scores[y == 0]
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return float((greater + 0.5 * ties) / (pos.size * neg.size))


def test_fit_reports_auc_and_convergence_against_a_reference() -> None:
    from sklearn.linear_model import LogisticRegression

    data = load_tox21()
    blocks = feature_blocks()
    split = endpoint_split(data, "SR-MMP")
    rows, y = budget_rows(split, ENDPOINTS.index("SR-MMP"), 0, 0.25)
    result = fit_and_score(blocks, PARENT, rows, y, split.held_out, split.y_held_out)
    model = LogisticRegression(C=1.0, max_iter=10_000, tol=1e-4)
    model.fit(blocks["morgan2_2048"][rows], y)
    scores = model.predict_proba(blocks["morgan2_2048"][split.held_out])[:, 1]
    assert result.auc == pytest.approx(_pairwise_auc(split.y_held_out, scores), abs=1e-9)
    assert result.converged and 0 < result.n_iter < 10_000
    assert result.n_iter == int(model.n_iter_[0])
