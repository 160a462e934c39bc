"""Outcome matrices for the teams tests: latent-model synthetic matrices and CSV writers.

The shipped Lite matrix is read from the package data (``src/foreseen/data/swebench``),
never from a shared folder outside the clone.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from foreseen.teams.matrix import OutcomeMatrix, Provenance

from support.paths import PACKAGE_DATA

LITE_CSV = PACKAGE_DATA / "swebench" / "lite.csv"
VERIFIED_CSV = PACKAGE_DATA / "swebench" / "verified.csv"
LEADERBOARD_CSV = PACKAGE_DATA / "swebench" / "leaderboard.csv"


def synthetic_matrix(
    n_agents: int, n_tasks: int, seed: int, split: str = "synthetic"
) -> OutcomeMatrix:
    """Latent-model outcomes: P(solve) = σ(skill_a − difficulty_t + noise_at), seeded.

    skill ~ N(0, 1), difficulty ~ N(0.8, 1.5²), noise ~ N(0, 0.7²); agents
    ``agent-000`` …, tasks ``repo__task-00000`` … (both already sorted).
    """
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


def write_wide_csv(matrix: OutcomeMatrix, path: Path) -> Path:
    """Write ``matrix`` in the wide 0/1 layout of the shipped ``lite.csv``."""
    lines = [",".join(["", *matrix.tasks])]
    lines += [",".join([agent, *("1" if v else "0" for v in row)])
              for agent, row in zip(matrix.agents, matrix.solved, strict=True)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
