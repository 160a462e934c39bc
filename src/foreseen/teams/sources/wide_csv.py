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

Memory: a file without quote characters and without lone carriage returns is
read **byte by byte** (:func:`read_wide_bytes`): the file's bytes (about 2 B a
cell) and the final boolean matrix (1 B a cell) are the only things of matrix
size in memory — each agent row is checked and written straight into its
sorted place, in O(row) temporaries. A row in the plain form ``name,0,1,…``
is checked with one vectorised test; any other row (spaces around cells, bad
cells) goes through the text rules, so results and error messages are those of
the general reader, which handles every other file (quoted fields) through
Python's ``csv`` module.
"""

from __future__ import annotations

import codecs
from pathlib import Path

import numpy as np
import numpy.typing as npt

from foreseen.core.digest import sha256_bytes
from foreseen.core.errors import SourceError
from foreseen.teams.matrix import OutcomeMatrix, Provenance
from foreseen.teams.sources.files import (
    check_fits_in_memory,
    first_duplicate,
    matrix_file_provenance,
    read_csv_rows,
)

BoolMatrix = npt.NDArray[np.bool_]
_COMMA, _ZERO, _ONE = ord(","), ord("0"), ord("1")
_BOM = codecs.BOM_UTF8
_VALIDATE_CHUNK = 1 << 22


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


def _check_utf8(path: Path, data: bytes) -> None:
    """Refuse non-UTF-8 bytes without decoding the whole file at once (same message)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for start in range(0, len(data), _VALIDATE_CHUNK):
            decoder.decode(data[start:start + _VALIDATE_CHUNK])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        try:
            data.decode("utf-8-sig")  # the whole-file error names the absolute position
        except UnicodeDecodeError as exc:
            raise SourceError(f"{path} is not UTF-8 text: {exc}") from exc


def _plain(data: bytes) -> bool:
    """True if the byte reader applies: no quote, no NUL byte, every CR part of a CRLF."""
    return (b'"' not in data and b"\x00" not in data
            and data.count(b"\r") == data.count(b"\r\n"))


def _lines(data: bytes, start: int) -> list[tuple[int, int]]:
    """(start, end) of every non-blank line from ``start`` on, without its terminator."""
    spans = []
    length = len(data)
    while start < length:
        end = data.find(b"\n", start)
        stop = length if end < 0 else end
        line_end = stop - 1 if stop > start and data[stop - 1] == 0x0D else stop
        if line_end > start:
            spans.append((start, line_end))
        start = stop + 1
    return spans


def _row_text(data: bytes, span: tuple[int, int]) -> list[str]:
    return data[span[0]:span[1]].decode("utf-8").split(",")


def _cell_error(path: Path, line: int, agent: str, tasks: list[str], cells: list[str]
                ) -> SourceError | None:
    for column, cell in enumerate(cells):
        value = cell.strip()
        if value not in ("0", "1"):
            return SourceError(
                f"{path}: cell in row {line} (agent {agent!r}), column {column + 2} (task "
                f"{tasks[column]!r}) is {value!r}, expected 0 or 1"
            )
    return None


def read_wide_bytes(path: Path, data: bytes, digest: str, split: str | None,
                    source: str | None) -> OutcomeMatrix:
    """The byte reader (module docstring) of a file that :func:`_plain` accepts."""
    _check_utf8(path, data)
    offset = len(_BOM) if data.startswith(_BOM) else 0
    spans = _lines(data, offset)
    if not spans:
        raise SourceError(f"{path}: the matrix is empty (no header row)")
    tasks = [cell.strip() for cell in _row_text(data, spans[0])[1:]]
    if not tasks:
        raise SourceError(f"{path}: the matrix has no tasks (header row has no task ids)")
    body = spans[1:]
    if not body:
        raise SourceError(f"{path}: the matrix has no agents (no rows after the header)")
    _check_names(path, tasks, "task")
    width = len(tasks) + 1
    agents: list[str] = []
    for line, (start, end) in enumerate(body, start=2):
        first = data.find(b",", start, end)
        name = data[start:end if first < 0 else first].decode("utf-8")
        cells = data.count(b",", start, end) + 1
        if cells != width:
            raise SourceError(
                f"{path}: row {line} ({name.strip()!r}) has {cells} cells, expected {width}")
        agents.append(name.strip())
    _check_names(path, agents, "agent")
    task_order = np.argsort(np.array(tasks, dtype=object), kind="stable")
    agent_rank = np.empty(len(agents), dtype=np.int64)
    agent_rank[np.argsort(np.array(agents, dtype=object), kind="stable")] = np.arange(
        len(agents))
    solved = np.empty((len(agents), len(tasks)), dtype=np.bool_)
    plain_length = 2 * len(tasks) - 1
    for row, (line, (start, end)) in enumerate(zip(range(2, len(body) + 2), body, strict=True)):
        first = data.find(b",", start, end) + 1
        values = np.frombuffer(data, dtype=np.uint8, count=end - first, offset=first)
        digits = values[::2]
        if not (values.size == plain_length and bool(np.all(values[1::2] == _COMMA))
                and bool(np.all((digits | 1) == _ONE))):
            error = _cell_error(path, line, agents[row], tasks, _row_text(data, (first, end)))
            if error is not None:
                raise error
            digits = np.array([_ONE if c.strip() == "1" else _ZERO
                               for c in _row_text(data, (first, end))], dtype=np.uint8)
        solved[agent_rank[row]] = (digits == _ONE)[task_order]
    provenance = matrix_file_provenance(path, digest, len(agents), split, source)
    return _sorted_matrix(agents, tasks, task_order, solved, provenance)


def _sorted_matrix(agents: list[str], tasks: list[str], task_order: npt.NDArray[np.intp],
                   solved: BoolMatrix, provenance: Provenance) -> OutcomeMatrix:
    return OutcomeMatrix(tuple(sorted(agents)), tuple(tasks[i] for i in task_order), solved,
                         provenance)


def load_matrix_csv(path: Path, split: str | None = None, *, source: str | None = None
                    ) -> OutcomeMatrix:
    """Outcome matrix of a wide 0/1 CSV file; ``split`` defaults to the file stem.

    ``source`` (default: the path as given) labels where the matrix came from.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror or exc}") from exc
    # the file's bytes (about 2 a cell) and the boolean matrix (1 a cell) are held together
    check_fits_in_memory(path, size + size // 2,
                         "reading this wide matrix (its bytes plus one byte a cell)")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if _plain(data):
        return read_wide_bytes(path, data, sha256_bytes(data), split, source)
    del data
    rows, digest = read_csv_rows(path)
    agents, tasks, outcomes = parse_matrix_rows(path, rows)
    provenance = matrix_file_provenance(path, digest, len(agents), split, source)
    return OutcomeMatrix.from_rows(dict(zip(agents, outcomes, strict=True)), tasks, provenance)
