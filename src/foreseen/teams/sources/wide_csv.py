"""Read a wide agents × tasks 0/1 matrix file (the layout of the shipped ``lite.csv``).

Layout: the first row is a corner cell (empty in the shipped files; its content
is ignored) followed by the task ids; every further row is an agent name
followed by one ``0`` or ``1`` per task (surrounding spaces allowed). Blank
lines are ignored. A 0 means "not solved" (spec ``teams.md`` §2 rule 3).

Provenance (teams §5.1 ``upstream`` block): commit ``None``; ``files_read`` = the
number of agent rows; ``file_sha256`` = ``{"m/<file name>": SHA-256 of the file
bytes}``; ``files_sha256`` by rule 4 over that map.

Every problem a user can cause — unreadable file, a cell that is not 0/1, a row
of the wrong length, a duplicate or empty name, no agents or no tasks — is a
:class:`~foreseen.core.errors.SourceError` naming the file, and the row / column where relevant.

Memory: a file without quote characters, NUL bytes and lone carriage returns
is read **as bytes, a line at a time** (:func:`scan_lines`, then
:func:`read_wide_rows`): a first pass hashes the file, checks UTF-8 and notes
where each line is, its agent name and its cell count; a second pass reads
each agent row again and writes it straight into its sorted place in the
boolean matrix. The matrix (1 B a cell) is the only thing of matrix size in
memory; everything else is O(one row). A row in the plain form ``name,0,1,…``
is checked with one vectorised test; any other row (spaces around cells, bad
cells) goes through the text rules, so results and error messages are those
of the general reader, which handles every other file (quoted fields) through
Python's ``csv`` module.
"""

from __future__ import annotations

import codecs
import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from foreseen.core.errors import SourceError
from foreseen.teams.matrix import OutcomeMatrix
from foreseen.teams.sources.files import (
    check_fits_in_memory,
    first_duplicate,
    matrix_file_provenance,
    read_csv_rows,
)

BoolMatrix = npt.NDArray[np.bool_]
_COMMA, _ZERO, _ONE = ord(","), ord("0"), ord("1")
_BOM = codecs.BOM_UTF8


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


@dataclass(frozen=True)
class LineScan:
    """One pass over a wide file: SHA-256, and where each non-blank line's content lies."""

    digest: str
    plain: bool
    utf8: bool
    spans: list[tuple[int, int]]  # (offset of the content, length without the terminator)
    names: list[str]  # the first cell of each non-blank line, as written
    cells: list[int]  # cells of each non-blank line


def scan_lines(path: Path) -> LineScan:
    """Hash the file, check UTF-8 and plainness, note every non-blank line (a line at a time).

    Plain: no quote, no NUL byte, and no carriage return except in a CRLF.
    """
    hasher = hashlib.sha256()
    decoder = codecs.getincrementaldecoder("utf-8")()
    plain = utf8 = True
    spans: list[tuple[int, int]] = []
    names: list[str] = []
    cells: list[int] = []
    offset = 0
    with open(path, "rb") as handle:
        for line in handle:
            hasher.update(line)
            if utf8:
                try:
                    decoder.decode(line)
                except UnicodeDecodeError:
                    utf8 = False
            body = line[:-1] if line.endswith(b"\n") else line
            if body.endswith(b"\r"):
                body = body[:-1]
            start = offset + (len(_BOM) if offset == 0 and body.startswith(_BOM) else 0)
            content = body[start - offset:]
            if plain and (b'"' in line or b"\x00" in line or b"\r" in content):
                plain = False
            if content and utf8 and plain:
                spans.append((start, len(content)))
                comma = content.find(b",")
                names.append(content[:None if comma < 0 else comma].decode("utf-8"))
                cells.append(content.count(b",") + 1)
            offset += len(line)
    if utf8:
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            utf8 = False
    return LineScan(hasher.hexdigest(), plain, utf8, spans, names, cells)


def _cells_text(raw: bytes) -> list[str]:
    return raw.decode("utf-8").split(",")


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


def read_wide_rows(path: Path, scan: LineScan, split: str | None,
                   source: str | None) -> OutcomeMatrix:
    """The second pass of the byte reader (module docstring) over a plain, UTF-8 file."""
    spans = scan.spans
    if not spans:
        raise SourceError(f"{path}: the matrix is empty (no header row)")
    with open(path, "rb") as handle:
        handle.seek(spans[0][0])
        tasks = [cell.strip() for cell in _cells_text(handle.read(spans[0][1]))[1:]]
        if not tasks:
            raise SourceError(f"{path}: the matrix has no tasks (header row has no task ids)")
        if len(spans) == 1:
            raise SourceError(f"{path}: the matrix has no agents (no rows after the header)")
        _check_names(path, tasks, "task")
        width = len(tasks) + 1
        for line, (name, count) in enumerate(zip(scan.names[1:], scan.cells[1:],
                                                 strict=True), start=2):
            if count != width:
                raise SourceError(
                    f"{path}: row {line} ({name.strip()!r}) has {count} cells, expected {width}")
        agents = [name.strip() for name in scan.names[1:]]
        _check_names(path, agents, "agent")
        task_order = np.argsort(np.array(tasks, dtype=object), kind="stable")
        agent_rank = np.empty(len(agents), dtype=np.int64)
        agent_rank[np.argsort(np.array(agents, dtype=object), kind="stable")] = np.arange(
            len(agents))
        solved = np.empty((len(agents), len(tasks)), dtype=np.bool_)
        plain_length = 2 * len(tasks) - 1
        for row, (start, length) in enumerate(spans[1:]):
            handle.seek(start)
            raw = handle.read(length)
            cells = raw[raw.find(b",") + 1:]
            values = np.frombuffer(cells, dtype=np.uint8)
            digits = values[::2]
            if not (values.size == plain_length and bool(np.all(values[1::2] == _COMMA))
                    and bool(np.all((digits | 1) == _ONE))):
                texts = _cells_text(cells)
                error = _cell_error(path, row + 2, agents[row], tasks, texts)
                if error is not None:
                    raise error
                digits = np.array([_ONE if c.strip() == "1" else _ZERO for c in texts],
                                  dtype=np.uint8)
            solved[agent_rank[row]] = (digits == _ONE)[task_order]
    provenance = matrix_file_provenance(path, scan.digest, len(agents), split, source)
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
        scan = scan_lines(path)
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if not scan.utf8:
        try:
            path.read_bytes().decode("utf-8-sig")  # the whole-file error names the position
        except UnicodeDecodeError as exc:
            raise SourceError(f"{path} is not UTF-8 text: {exc}") from exc
    if scan.plain:
        # the boolean matrix (one byte a cell, about half the file's bytes) and one row
        check_fits_in_memory(path, size // 2, "this wide matrix (one byte a cell)")
        return read_wide_rows(path, scan, split, source)
    check_fits_in_memory(path, 30 * size, "reading this quoted CSV file with the csv module")
    rows, digest = read_csv_rows(path)
    agents, tasks, outcomes = parse_matrix_rows(path, rows)
    provenance = matrix_file_provenance(path, digest, len(agents), split, source)
    return OutcomeMatrix.from_rows(dict(zip(agents, outcomes, strict=True)), tasks, provenance)
