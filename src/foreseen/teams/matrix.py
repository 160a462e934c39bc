"""The boolean agents × tasks outcome matrix of one split, with its provenance.

An :class:`OutcomeMatrix` holds every agent with a usable result (rows) and the
task universe (columns), both sorted by Python's default string order, and a
``numpy`` boolean array ``solved[a, t]``. :meth:`OutcomeMatrix.competent`
applies the E046 competence screen (solved / N ≥ 0.05, teams §2).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from foreseen.core.errors import SourceError

COMPETENCE_THRESHOLD = 0.05


@dataclass(frozen=True)
class Provenance:
    """Where a matrix came from: the `upstream` block of the E046 record.

    ``file_sha256`` maps ``r/<submission>.json`` / ``p/<submission>.json`` to the
    SHA-256 of the file that supplied that agent's row (empty for matrix files).
    ``files_read`` counts the files that supplied an agent's row; for a matrix
    file, the number of agents with a row. ``files_sha256`` is teams §2 rule 4.
    """

    split: str
    commit: str | None
    files_read: int
    files_sha256: str
    file_sha256: Mapping[str, str] = field(default_factory=dict)
    source: str = ""


@dataclass(frozen=True)
class OutcomeMatrix:
    """Agents × tasks pass/fail outcomes of one split (rows and columns sorted)."""

    agents: tuple[str, ...]
    tasks: tuple[str, ...]
    solved: npt.NDArray[np.bool_]
    provenance: Provenance

    def __post_init__(self) -> None:
        if self.solved.dtype != np.bool_:
            raise TypeError("solved must be a boolean array")
        if self.solved.shape != (len(self.agents), len(self.tasks)):
            raise ValueError(
                f"solved has shape {self.solved.shape}, expected "
                f"({len(self.agents)}, {len(self.tasks)})"
            )
        if list(self.agents) != sorted(self.agents):
            raise ValueError("agents must be sorted")
        if list(self.tasks) != sorted(self.tasks):
            raise ValueError("tasks must be sorted")
        _refuse_duplicates(self.agents, "agent")
        _refuse_duplicates(self.tasks, "task")

    @classmethod
    def from_rows(
        cls,
        rows: Mapping[str, Sequence[bool] | npt.NDArray[np.bool_]],
        tasks: Sequence[str],
        provenance: Provenance,
    ) -> OutcomeMatrix:
        """Build from {agent: outcomes in ``tasks`` order}; sorts agents and tasks."""
        if not rows or not tasks:
            raise SourceError(f"split {provenance.split!r}: the matrix is empty")
        _refuse_duplicates(tuple(tasks), "task")
        task_order = np.argsort(np.array(tasks, dtype=object), kind="stable")
        agents = tuple(sorted(rows))
        solved = np.array([np.asarray(rows[a], dtype=np.bool_) for a in agents], dtype=np.bool_)
        solved = solved[:, task_order]
        sorted_tasks = tuple(tasks[i] for i in task_order)
        return cls(agents, sorted_tasks, np.ascontiguousarray(solved), provenance)

    @property
    def n_tasks(self) -> int:
        return len(self.tasks)

    @property
    def n_agents(self) -> int:
        return len(self.agents)

    def solve_counts(self) -> npt.NDArray[np.int64]:
        """Number of tasks each agent solves."""
        counts: npt.NDArray[np.int64] = self.solved.sum(axis=1, dtype=np.int64)
        return counts

    def competent(self, threshold: float = COMPETENCE_THRESHOLD) -> OutcomeMatrix:
        """Agents whose solve rate solved/N (float division) is ≥ ``threshold``."""
        rates = self.solve_counts() / self.n_tasks
        keep = rates >= threshold
        agents = tuple(a for a, k in zip(self.agents, keep, strict=True) if k)
        return OutcomeMatrix(agents, self.tasks, self.solved[keep], self.provenance)


def _refuse_duplicates(names: Sequence[str], what: str) -> None:
    """Refuse a name given twice, or two names that are one name in Unicode NFC.

    ``'café'`` composed (NFC) and decomposed (NFD) print alike and are the
    same task or agent; counting them as two would be a silent wrong result.
    Only non-ASCII names can differ so (an ASCII name is its own NFC form).
    """
    if len(set(names)) != len(names):
        seen: set[str] = set()
        for name in names:
            if name in seen:
                raise SourceError(f"duplicate {what} name {name!r}")
            seen.add(name)
    present = set(names)
    composed: dict[str, str] = {}
    for name in (n for n in names if not n.isascii()):
        form = unicodedata.normalize("NFC", name)
        other = form if form != name and form in present else composed.get(form)
        if other is not None and other != name:
            raise SourceError(f"{what} names {other!a} and {name!a} differ only in"
                              " Unicode normalisation (NFC vs NFD): the same name written two"
                              " ways; write it one way")
        composed[form] = name
