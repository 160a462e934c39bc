"""Shared fixtures for the teams tests: the real Lite matrix and small synthetic matrices."""

from __future__ import annotations

import numpy as np
import pytest

from foreseen.teams.matrix import OutcomeMatrix, Provenance
from foreseen.teams.sources.dispatch import load_matrix_csv

from support.paths import PACKAGE_DATA, SHARED

LITE_CSV = SHARED / "data/swebench/lite.csv"
if not LITE_CSV.exists():  # the package ships the same file
    LITE_CSV = PACKAGE_DATA / "swebench/lite.csv"


@pytest.fixture(scope="session")
def lite() -> OutcomeMatrix:
    """All 84 Lite submissions × 300 tasks."""
    return load_matrix_csv(LITE_CSV)


def synthetic_matrix(
    n_agents: int, n_tasks: int, seed: int, split: str = "synthetic"
) -> OutcomeMatrix:
    """Correlated agents × tasks outcomes: task difficulty plus agent skill plus noise."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(0.0, 1.0, n_agents)
    difficulty = rng.normal(0.8, 1.5, n_tasks)
    logits = skill[:, None] - difficulty[None, :] + rng.normal(0.0, 0.7, (n_agents, n_tasks))
    solved = rng.random((n_agents, n_tasks)) < 1.0 / (1.0 + np.exp(-logits))
    agents = tuple(f"agent-{i:03d}" for i in range(n_agents))
    tasks = tuple(f"repo__task-{j:05d}" for j in range(n_tasks))
    provenance = Provenance(
        split=split, commit=None, files_read=n_agents, files_sha256="0" * 64, source="synthetic"
    )
    return OutcomeMatrix(agents, tasks, solved, provenance)


@pytest.fixture()
def small_matrix() -> OutcomeMatrix:
    return synthetic_matrix(25, 120, seed=7)


@pytest.fixture()
def make_matrix() -> object:
    """The :func:`synthetic_matrix` builder, for tests that need other shapes."""
    return synthetic_matrix
