"""Read a wide agents × tasks 0/1 matrix file (the layout of the shipped ``lite.csv``).

Layout: the first row is a corner cell (empty in the shipped files; its content
is ignored) followed by the task ids; every further row is an agent name
followed by one ``0`` or ``1`` per task (surrounding spaces allowed). Blank
lines are ignored. A 0 means "not solved" (spec ``teams.md`` §2 rule 3).

Provenance (spec §5.1 ``upstream`` block): commit ``None``; ``files_read`` = the
number of agent rows; ``file_sha256`` = ``{"m/<file name>": SHA-256 of the file
bytes}``; ``files_sha256`` by rule 4 over that map.

Every problem a user can cause — unreadable file, a cell that is not 0/1, a row
of the wrong length, a duplicate or empty name, no agents or no tasks — is a
:class:`~foreseen.core.errors.SourceError` naming the file, and the row / column where relevant.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from foreseen.core.errors import SourceError
from foreseen.teams.matrix import OutcomeMatrix
from foreseen.teams.sources.files import first_duplicate, matrix_file_provenance, read_csv_rows


def _check_names(path: Path, names: list[str], what: str) -> None:
    for position, name in enumerate(names):
        if not name:
            raise SourceError(f"{path}: {what} {position + 1} has an empty name")
    duplicate = first_duplicate(names)
    if duplicate is not None:
        raise SourceError(f"{path}: duplicate {what} name {duplicate!r}")


def parse_matrix_rows(
    path: Path, rows: list[list[str]]
) -> tuple[list[str], list[str], np.ndarray[tuple[int, int], np.dtype[np.bool_]]]:
    """Validate parsed CSV rows; return ``(agents, tasks, outcomes)`` in file order."""
    if not rows:
        raise SourceError(f"{path}: the matrix is empty (no header row)")
    tasks = [cell.strip() for cell in rows[0][1:]]
    if not tasks:
        raise SourceError(f"{path}: the matrix has no tasks (header row has no task ids)")
    body = rows[1:]
    if not body:
        raise SourceError(f"{path}: the matrix has no agents (no rows after the header)")
    _check_names(path, tasks, "task")
    width = len(tasks) + 1
    for line, row in enumerate(body, start=2):
        if len(row) != width:
            raise SourceError(
                f"{path}: row {line} ({row[0].strip()!r}) has {len(row)} cells, expected {width}"
            )
    agents = [row[0].strip() for row in body]
    _check_names(path, agents, "agent")
    cells = np.char.strip(np.array([row[1:] for row in body], dtype=np.str_))
    ones = cells == "1"
    bad = ~(ones | (cells == "0"))
    if bad.any():
        row_index, column_index = (int(i) for i in np.argwhere(bad)[0])
        raise SourceError(
            f"{path}: cell in row {row_index + 2} (agent {agents[row_index]!r}), column "
            f"{column_index + 2} (task {tasks[column_index]!r}) is "
            f"{str(cells[row_index, column_index])!r}, expected 0 or 1"
        )
    return agents, tasks, ones


def load_matrix_csv(path: Path, split: str | None = None, *, source: str | None = None
                    ) -> OutcomeMatrix:
    """Outcome matrix of a wide 0/1 CSV file; ``split`` defaults to the file stem.

    ``source`` (default: the path as given) labels where the matrix came from.
    """
    path = Path(path)
    rows, digest = read_csv_rows(path)
    agents, tasks, outcomes = parse_matrix_rows(path, rows)
    provenance = matrix_file_provenance(path, digest, len(agents), split, source)
    return OutcomeMatrix.from_rows(dict(zip(agents, outcomes, strict=True)), tasks, provenance)
