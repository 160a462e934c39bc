"""Scored (agent, task) records from evaluation logs, turned into a pass/fail matrix.

The log readers (:mod:`foreseen.teams.sources.inspect_logs`,
:mod:`foreseen.teams.sources.lm_eval_samples`) reduce every file to
:class:`ScoredRecord` values — agent, task, one numeric score, and where the
record came from — and :func:`records_to_matrix` applies the rules of the long
tables (:mod:`foreseen.teams.sources.long_table`, spec ``teams.md`` §2) to them:

* without a threshold every score must be binary (0 or 1; 1 is solved); any
  other score is refused, naming its origin and asking for ``--threshold``;
* with a threshold ``t`` a pair is solved when score ≥ t;
* an (agent, task) pair given twice is refused, naming both origins;
* an absent pair is not solved (as a task missing from a submission);
* provenance: commit ``None``, ``files_read`` = number of files read,
  ``file_sha256 = {"<kind>/<file path relative to the source>": SHA-256}``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from foreseen.core.errors import SourceError
from foreseen.teams.matrix import OutcomeMatrix, Provenance
from foreseen.teams.sources.experiments import files_sha256_of

__all__ = ["ScoredRecord", "choose_score_name", "records_to_matrix", "relative_name"]


@dataclass(frozen=True)
class ScoredRecord:
    """One agent's score on one task, and where it was read (``origin``, for messages)."""

    agent: str
    task: str
    score: float
    origin: str


def choose_score_name(available: Iterable[str], wanted: str | None, where: str,
                      what: str) -> str:
    """The score to read: ``wanted`` if given (it must be present), else the only one.

    ``what`` names the kind (``scorer``, ``metric``) and ``--score-column`` chooses it.
    """
    names = sorted(set(available))
    if wanted is not None:
        if wanted not in names:
            raise SourceError(f"{where} has no {what} {wanted!r} (it has "
                              f"{', '.join(names) or 'none'})")
        return wanted
    if len(names) != 1:
        raise SourceError(f"{where} has {len(names)} {what}s ({', '.join(names) or 'none'}):"
                          f" choose one with --score-column")
    return names[0]


def _solved(record: ScoredRecord, threshold: float | None) -> bool:
    """score ≥ threshold; without a threshold the score must be 0 or 1."""
    if not math.isfinite(record.score):
        raise SourceError(f"{record.origin} has score {record.score!r}, expected a finite number")
    if threshold is not None:
        return record.score >= threshold
    if record.score not in (0.0, 1.0):
        raise SourceError(f"{record.origin} has score {record.score:g}, not 0 or 1: give "
                          "--threshold T to count a score of at least T as solved")
    return record.score == 1.0


def records_to_matrix(records: Iterable[ScoredRecord], threshold: float | None, *,
                      split: str, source: str, file_sha256: Mapping[str, str]) -> OutcomeMatrix:
    """Outcome matrix of scored records (rules of the module docstring)."""
    seen: dict[tuple[str, str], ScoredRecord] = {}
    for record in records:
        key = (record.agent, record.task)
        earlier = seen.get(key)
        if earlier is not None:
            raise SourceError(f"agent {record.agent!r}, task {record.task!r} appears twice: "
                              f"{earlier.origin} and {record.origin}")
        seen[key] = record
    if not seen:
        raise SourceError(f"{source} holds no scored samples")
    agents = sorted({agent for agent, _ in seen})
    tasks = sorted({task for _, task in seen})
    row = {agent: index for index, agent in enumerate(agents)}
    column = {task: index for index, task in enumerate(tasks)}
    solved = np.zeros((len(agents), len(tasks)), dtype=np.bool_)
    for (agent, task), record in seen.items():
        solved[row[agent], column[task]] = _solved(record, threshold)
    provenance = Provenance(split=split, commit=None, files_read=len(file_sha256),
                            files_sha256=files_sha256_of(file_sha256),
                            file_sha256=dict(file_sha256), source=source)
    return OutcomeMatrix(tuple(agents), tuple(tasks), solved, provenance)


def relative_name(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` in POSIX form (the file's own name when it is the root)."""
    if path == root:
        return path.name
    return path.relative_to(root).as_posix()
