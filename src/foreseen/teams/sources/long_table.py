"""Long-format outcome tables: one row per (agent, task) with a solved flag.

Any benchmark can be analysed from a table with three columns — agent, task,
solved (names configurable with :class:`LongColumns`) — in CSV (here) or parquet
(:mod:`foreseen.teams.sources.parquet`). Rules:

* ``solved`` is ``1``/``0``/``true``/``false`` (any case, surrounding spaces
  allowed); in parquet also booleans and the numbers 0 and 1. Anything else,
  including an empty cell, is refused with the row named.
* An (agent, task) pair given twice is refused, even with equal values.
* The agents are the distinct agent values, the tasks the distinct task values.
  A pair that is absent is, by default (``missing="unsolved"``), not solved —
  the same rule as a task missing from a submission's files (spec ``teams.md``
  §2 rule 3); ``missing="refuse"`` refuses a table with any absent pair.
* Agent and task names are trimmed; an empty name is refused. Names are free
  text: nothing assumes SWE-bench instance ids.
* **Scores with a threshold** (``LongColumns(solved="score", threshold=t)``):
  the third column holds a score — a finite number, or text that reads as one
  (an evaluation log's accuracy, pass rate, reward) — and the pair is solved
  when score ≥ t. Booleans, empty cells, NaN and infinities are refused with the
  row named. A threshold applies to a long table only.

Provenance as for a wide matrix file: commit ``None``, ``files_read`` = number of
agents, ``file_sha256 = {"m/<file name>": SHA-256 of the bytes}``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from foreseen.core.errors import ConfigError, SourceError
from foreseen.teams.matrix import OutcomeMatrix
from foreseen.teams.sources.files import matrix_file_provenance, read_csv_rows

__all__ = [
    "DEFAULT_COLUMNS",
    "LongColumns",
    "Missing",
    "load_long_csv",
    "matrix_from_long",
    "parse_score",
    "parse_solved",
]

Missing = Literal["unsolved", "refuse"]
_TRUE = frozenset({"1", "true"})
_FALSE = frozenset({"0", "false"})


@dataclass(frozen=True)
class LongColumns:
    """Names of the agent, task and solved columns of a long table."""

    agent: str = "agent"
    task: str = "task"
    solved: str = "solved"
    threshold: float | None = None
    #: the scorer (inspect-ai) or metric (lm-eval) of an evaluation log, if chosen
    log_score: str | None = None

    def names(self) -> tuple[str, str, str]:
        return (self.agent, self.task, self.solved)

    def present_in(self, header: Sequence[str]) -> bool:
        stripped = {name.strip() for name in header}
        return all(name in stripped for name in self.names())


DEFAULT_COLUMNS = LongColumns()


def parse_solved(value: object) -> bool | None:
    """True/False for an accepted solved value (module docstring), else ``None``."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | float | np.integer | np.floating):
        if value == 1:
            return True
        if value == 0:
            return False
        return None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    return None


def parse_score(value: object) -> float | None:
    """A finite score (a number, not a boolean, or text that reads as one), else ``None``."""
    if isinstance(value, bool | np.bool_) or value is None:
        return None
    if isinstance(value, int | float | np.integer | np.floating):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def _scores_at_least(values: Sequence[object], threshold: float, path: Path,
                     first_line: int) -> npt.NDArray[np.bool_]:
    """score ≥ threshold for each value; a value that is no finite score is refused."""
    flags = np.empty(len(values), dtype=np.bool_)
    for offset, value in enumerate(values):
        score = parse_score(value)
        if score is None:
            raise SourceError(
                f"{path}: row {first_line + offset} has score {value!r}, expected a finite "
                "number"
            )
        flags[offset] = score >= threshold
    return flags


def _names(values: Sequence[object], path: Path, what: str, first_line: int) -> list[str]:
    names = [value.strip() if isinstance(value, str) else "" for value in values]
    if not all(names):
        offset = names.index("")
        raise SourceError(
            f"{path}: row {first_line + offset} has an empty or missing {what} name"
        )
    return names


def _factorize(names: list[str]) -> tuple[list[str], npt.NDArray[np.int64]]:
    """Sorted distinct names and each name's position among them (one pass + one sort)."""
    first_seen: dict[str, int] = {}
    codes = np.fromiter(
        (first_seen.setdefault(name, len(first_seen)) for name in names),
        dtype=np.int64, count=len(names),
    )
    distinct = sorted(first_seen)
    rank = np.empty(len(distinct), dtype=np.int64)
    rank[[first_seen[name] for name in distinct]] = np.arange(len(distinct), dtype=np.int64)
    return distinct, rank[codes]


def _flags(values: Sequence[object], path: Path, first_line: int) -> npt.NDArray[np.bool_]:
    parsed: dict[object, bool | None] = {}
    flags = np.empty(len(values), dtype=np.bool_)
    for offset, value in enumerate(values):
        try:
            flag = parsed[value]
        except KeyError:
            flag = parsed[value] = parse_solved(value)
        except TypeError:  # an unhashable cell
            flag = None
        if flag is None:
            raise SourceError(
                f"{path}: row {first_line + offset} has solved value {value!r}, "
                "expected 0, 1, true or false (a column of scores needs --threshold)"
            )
        flags[offset] = flag
    return flags


def matrix_from_long(
    path: Path,
    agents: Sequence[object],
    tasks: Sequence[object],
    solved: Sequence[object],
    *,
    split: str | None,
    digest: str,
    source: str | None = None,
    missing: Missing = "unsolved",
    first_line: int = 2,
    threshold: float | None = None,
) -> OutcomeMatrix:
    """Outcome matrix of parallel agent / task / solved columns (rules of the module docstring).

    ``first_line`` is the file line (or row number) of the first record, for messages;
    with ``threshold`` the third column holds scores, solved when score ≥ threshold.
    """
    if missing not in ("unsolved", "refuse"):
        raise ConfigError(f"unknown missing-pair rule {missing!r} (unsolved, refuse)")
    if not len(agents):
        raise SourceError(f"{path}: the table has no rows")
    agent_names = _names(agents, path, "agent", first_line)
    task_names = _names(tasks, path, "task", first_line)
    flags = (_flags(solved, path, first_line) if threshold is None
             else _scores_at_least(solved, threshold, path, first_line))
    agent_list, agent_index = _factorize(agent_names)
    task_list, task_index = _factorize(task_names)
    codes = agent_index * len(task_list) + task_index
    order = np.argsort(codes, kind="stable")
    repeated = np.flatnonzero(np.diff(codes[order]) == 0)
    if repeated.size:
        row = int(order[repeated[0] + 1])
        raise SourceError(
            f"{path}: row {first_line + row} repeats the pair agent {agent_names[row]!r}, "
            f"task {task_names[row]!r}"
        )
    n_agents, n_tasks = len(agent_list), len(task_list)
    if missing == "refuse" and codes.size != n_agents * n_tasks:
        present = np.zeros(n_agents * n_tasks, dtype=np.bool_)
        present[codes] = True
        gap = int(np.flatnonzero(~present)[0])
        raise SourceError(
            f"{path}: {n_agents * n_tasks - codes.size} (agent, task) pairs are absent, e.g. "
            f"agent {agent_list[gap // n_tasks]!r}, task {task_list[gap % n_tasks]!r}"
        )
    outcomes = np.zeros(n_agents * n_tasks, dtype=np.bool_)
    outcomes[codes] = flags
    grid = outcomes.reshape(n_agents, n_tasks)
    provenance = matrix_file_provenance(path, digest, n_agents, split, source)
    return OutcomeMatrix(tuple(agent_list), tuple(task_list), grid, provenance)


def long_rows_to_matrix(
    path: Path,
    rows: list[list[str]],
    digest: str,
    *,
    split: str | None = None,
    columns: LongColumns = DEFAULT_COLUMNS,
    missing: Missing = "unsolved",
    source: str | None = None,
) -> OutcomeMatrix:
    """Matrix of parsed long CSV rows (header first)."""
    if not rows:
        raise SourceError(f"{path}: the table is empty (no header row)")
    header = [cell.strip() for cell in rows[0]]
    if not columns.present_in(header):
        raise SourceError(
            f"{path}: a long table needs columns {', '.join(columns.names())}; "
            f"the header has {', '.join(header) or 'none'}"
        )
    positions = [header.index(name) for name in columns.names()]
    body = rows[1:]
    for line, row in enumerate(body, start=2):
        if len(row) != len(header):
            raise SourceError(
                f"{path}: row {line} has {len(row)} cells, expected {len(header)}"
            )
        if [cell.strip() for cell in row] == header:
            raise SourceError(f"{path}: row {line} repeats the header row (two tables joined?)")
    agents, tasks, solved = ([row[p] for row in body] for p in positions)
    return matrix_from_long(
        path, agents, tasks, solved, split=split, digest=digest, source=source, missing=missing,
        threshold=columns.threshold,
    )


def load_long_csv(
    path: Path,
    split: str | None = None,
    *,
    columns: LongColumns = DEFAULT_COLUMNS,
    missing: Missing = "unsolved",
    source: str | None = None,
) -> OutcomeMatrix:
    """Outcome matrix of a long CSV table; ``split`` defaults to the file stem."""
    path = Path(path)
    rows, digest = read_csv_rows(path)
    return long_rows_to_matrix(
        path, rows, digest, split=split, columns=columns, missing=missing, source=source
    )
