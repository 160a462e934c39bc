"""Outcome matrices from parquet files, wide or long (needs the ``parquet`` extra: pyarrow).

* **wide** — the first column holds the agent names (strings); every other column
  is one task, named by its column name, holding booleans, the numbers 0/1 or the
  strings ``0``/``1``/``true``/``false``. A missing value (null) is refused.
  Boolean and numeric columns are read column at a time (vectorised); text
  columns and columns with a bad value value by value (same results, and the
  first bad value named).
* **long** — columns agent, task and solved (names configurable), with the rules
  of :mod:`foreseen.teams.sources.long_table`.

Provenance as for a CSV matrix: ``file_sha256 = {"m/<file name>": SHA-256 of the
bytes}``, commit ``None``, ``files_read`` = number of agents.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from foreseen.core.digest import sha256_bytes
from foreseen.core.errors import ConfigError, SourceError
from foreseen.core.extras import optional_import
from foreseen.teams.matrix import OutcomeMatrix
from foreseen.teams.sources.files import first_duplicate, matrix_file_provenance
from foreseen.teams.sources.long_table import (
    DEFAULT_COLUMNS,
    LongColumns,
    Missing,
    matrix_from_long,
    parse_solved,
)

__all__ = ["load_parquet", "parquet_column_names", "read_parquet"]


def read_parquet(path: Path) -> tuple[Any, str]:
    """The pyarrow table of a parquet file and the SHA-256 of its bytes.

    Read in this thread (``use_threads=False``: no Arrow worker thread is
    started for a file that may be refused), and a refusal keeps no Arrow
    object alive (the message is copied, the Arrow exception is not chained),
    so nothing of Arrow's is left for interpreter teardown to destroy on the
    error path (a thread destroyed while joinable aborts the process, exit -6).
    """
    pq = optional_import("pyarrow.parquet", "parquet")
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror or exc}") from exc
    reason = None
    try:
        table = pq.read_table(io.BytesIO(data), use_threads=False)
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        reason = str(exc)
    if reason is not None:
        raise SourceError(f"{path} is not a readable parquet file: {reason}")
    return table, sha256_bytes(data)


def parquet_column_names(table: Any) -> list[str]:
    return [str(name) for name in table.column_names]


def _vectorised_flags(values: Any) -> npt.NDArray[np.bool_] | None:
    """A boolean or numeric column without nulls as flags, in one step; None otherwise.

    None (nulls, text, a value other than 0/1) sends the column through the
    value-by-value rules of :func:`~foreseen.teams.sources.long_table.parse_solved`,
    which accept text and name the first bad value — the same result and message.
    """
    pa = optional_import("pyarrow", "parquet")

    kind = values.type
    if values.null_count or not (pa.types.is_boolean(kind) or pa.types.is_integer(kind)
                                 or pa.types.is_floating(kind)):
        return None
    array = np.asarray(values.to_numpy())
    if array.dtype == np.bool_:
        flags: npt.NDArray[np.bool_] = array
        return flags
    ones: npt.NDArray[np.bool_] = array == 1
    if not bool(np.all(ones | (array == 0))):
        return None
    return ones


def _wide(path: Path, table: Any, digest: str, split: str | None,
          source: str | None) -> OutcomeMatrix:
    names = parquet_column_names(table)
    if len(names) < 2:
        raise SourceError(f"{path}: a wide table needs an agent column and task columns")
    if table.num_rows == 0:
        raise SourceError(f"{path}: the matrix has no agents (no rows)")
    agents = []
    for row, value in enumerate(table.column(0).to_pylist(), start=1):
        if not isinstance(value, str) or not value.strip():
            raise SourceError(f"{path}: row {row} has an empty or non-text agent name")
        agents.append(value.strip())
    tasks = [name.strip() for name in names[1:]]
    for column, task in enumerate(tasks, start=2):
        if not task:
            raise SourceError(f"{path}: column {column} has an empty task name")
    outcomes = np.empty((len(agents), len(tasks)), dtype=np.bool_)
    for column, task in enumerate(tasks):
        values = table.column(column + 1)
        fast = _vectorised_flags(values)
        if fast is not None:
            outcomes[:, column] = fast
            continue
        for row, value in enumerate(values.to_pylist()):
            flag = parse_solved(value)
            if flag is None:
                raise SourceError(
                    f"{path}: agent {agents[row]!r}, task {task!r} has value {value!r}, "
                    "expected 0, 1, true or false"
                )
            outcomes[row, column] = flag
    for what, values in (("agent", agents), ("task", tasks)):
        duplicate = first_duplicate(values)
        if duplicate is not None:
            raise SourceError(f"{path}: duplicate {what} name {duplicate!r}")
    provenance = matrix_file_provenance(path, digest, len(agents), split, source)
    return OutcomeMatrix.from_rows(dict(zip(agents, outcomes, strict=True)), tasks, provenance)


def load_parquet(
    path: Path,
    split: str | None = None,
    *,
    layout: str | None = None,
    columns: LongColumns = DEFAULT_COLUMNS,
    missing: Missing = "unsolved",
    source: str | None = None,
) -> OutcomeMatrix:
    """Outcome matrix of a parquet file; ``layout`` ``"wide"``/``"long"``/None (sniffed:
    long when the agent, task and solved columns are all present and the first column
    has a name; an unnamed first column is a wide matrix's corner, as in a wide CSV)."""
    path = Path(path)
    table, digest = read_parquet(path)
    names = parquet_column_names(table)
    if layout is None:
        long = bool(names) and names[0].strip() != "" and columns.present_in(names)
        layout = "long" if long else "wide"
    if layout == "wide":
        if columns.threshold is not None:
            raise ConfigError(f"{path}: a score threshold applies to a long table only")
        return _wide(path, table, digest, split, source)
    if layout != "long":
        raise ConfigError(f"unknown format {layout!r} (wide, long)")
    if not columns.present_in(names):
        raise SourceError(
            f"{path}: a long table needs columns {', '.join(columns.names())}; "
            f"it has {', '.join(names) or 'none'}"
        )
    agents, tasks, solved = (table.column(name).to_pylist() for name in columns.names())
    return matrix_from_long(
        path, agents, tasks, solved, split=split, digest=digest, source=source,
        missing=missing, first_line=1, threshold=columns.threshold,
    )
