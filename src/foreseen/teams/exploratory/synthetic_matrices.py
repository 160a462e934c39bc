"""Seeded synthetic agent × task matrices with a known structure (for ``teams calibrate``).

Each structure is fixed here, before any calibration run; a matrix is drawn
from ``numpy.random.default_rng([seed, index of the structure])``:

* ``rasch`` — M = 80 agents, N = 300 tasks; ability a_j ~ N(0, 1), difficulty
  b_t ~ N(1, 1.5²); agent j solves task t with probability σ(a_j − b_t),
  independently;
* ``rasch_floor`` — the same, and 15 % of the tasks (chosen at random) are
  solved by nobody (a true blind-spot floor);
* ``families`` — 8 model families of 10 agents; a family shares a task effect
  u_ft ~ N(0, 1) (P = σ(a_j − b_t + u_ft)), so agents of one family succeed
  and fail together (correlated agents).

The competence screen of teams §2 (solve rate ≥ 0.05) is applied.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from foreseen.teams.matrix import COMPETENCE_THRESHOLD

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]

STRUCTURES = ("rasch", "rasch_floor", "families")
AGENTS = 80
TASKS = 300
FLOOR_SHARE = 0.15
FAMILIES = 8


def check_structure(structure: str) -> None:
    """A ValueError naming the known structures for an unknown one."""
    if structure not in STRUCTURES:
        raise ValueError(f"unknown structure {structure!r} (known: {', '.join(STRUCTURES)})")


def _sigmoid(x: FloatArray) -> FloatArray:
    result: FloatArray = 1.0 / (1.0 + np.exp(-x))
    return result


def solve_probabilities(structure: str, rng: np.random.Generator) -> FloatArray:
    """The M × N solve probabilities of one structure (module docstring)."""
    check_structure(structure)
    ability = rng.normal(0.0, 1.0, size=AGENTS)
    difficulty = rng.normal(1.0, 1.5, size=TASKS)
    logits = ability[:, None] - difficulty[None, :]
    if structure == "families":
        family = np.repeat(np.arange(FAMILIES), AGENTS // FAMILIES)
        logits = logits + rng.normal(0.0, 1.0, size=(FAMILIES, TASKS))[family]
    probabilities = _sigmoid(logits)
    if structure == "rasch_floor":
        impossible = rng.choice(TASKS, size=round(FLOOR_SHARE * TASKS), replace=False)
        probabilities[:, impossible] = 0.0
    return probabilities


def synthetic_matrix(structure: str, seed: int) -> BoolArray:
    """A seeded draw of one structure, competent agents only (solve rate ≥ 0.05)."""
    check_structure(structure)
    rng = np.random.default_rng([seed, STRUCTURES.index(structure)])
    probabilities = solve_probabilities(structure, rng)
    solved: BoolArray = rng.random(probabilities.shape) < probabilities
    competent: BoolArray = solved[solved.mean(axis=1) >= COMPETENCE_THRESHOLD]
    return competent
