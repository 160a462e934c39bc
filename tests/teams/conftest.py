"""Shared fixtures for the teams tests: the shipped Lite matrix and small synthetic matrices."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from foreseen.teams.matrix import OutcomeMatrix
from foreseen.teams.sources.dispatch import load_matrix_csv

from support.teams_matrices import LITE_CSV, synthetic_matrix


@pytest.fixture(scope="session")
def lite() -> OutcomeMatrix:
    """All 84 Lite submissions × 300 tasks (the package's shipped copy)."""
    return load_matrix_csv(LITE_CSV)


@pytest.fixture()
def small_matrix() -> OutcomeMatrix:
    return synthetic_matrix(25, 120, seed=7)


@pytest.fixture()
def make_matrix() -> Callable[..., OutcomeMatrix]:
    """The :func:`support.teams_matrices.synthetic_matrix` builder, for other shapes."""
    return synthetic_matrix
