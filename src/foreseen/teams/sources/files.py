"""Pieces shared by the readers of single matrix files (wide CSV, long CSV, parquet).

:func:`read_csv_rows` reads a UTF-8 CSV file, :func:`first_duplicate` finds a
repeated name, :func:`check_fits_in_memory` refuses (naming how much it would
need) a matrix that cannot be held, and :func:`matrix_file_provenance` is the provenance every
matrix file gets: commit ``None``, ``files_read`` = number of agents,
``file_sha256 = {"m/<file name>": SHA-256 of the bytes}``.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from foreseen.core.digest import sha256_bytes
from foreseen.core.errors import SourceError
from foreseen.teams.matrix import Provenance
from foreseen.teams.sources.experiments import files_sha256_of


def read_csv_rows(path: Path) -> tuple[list[list[str]], str]:
    """Non-blank rows of a UTF-8 CSV file and the SHA-256 of its bytes."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8-sig")
        rows = [row for row in csv.reader(io.StringIO(text, newline="")) if row]
    except UnicodeDecodeError as exc:
        raise SourceError(f"{path} is not UTF-8 text: {exc}") from exc
    except csv.Error as exc:
        raise SourceError(f"{path} is not a readable CSV file: {exc}") from exc
    return rows, sha256_bytes(data)


GIB = float(2**30)


def available_memory() -> int | None:
    """Bytes of memory available now (``MemAvailable`` of /proc/meminfo), None if unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def check_fits_in_memory(path: Path, needed: int, what: str) -> None:
    """Refuse in one line (the need, what is available) when ``needed`` bytes would not fit."""
    available = available_memory()
    if available is not None and needed > available:
        raise SourceError(
            f"{path}: {what} needs about {needed / GIB:.1f} GiB of memory; "
            f"{available / GIB:.1f} GiB is available")


def first_duplicate(names: list[str]) -> str | None:
    """The first name that occurs a second time, or None."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    return None


def matrix_file_provenance(path: Path, digest: str, n_agents: int, split: str | None,
                           source: str | None) -> Provenance:
    """Provenance of a matrix read from the one file ``path`` (bytes' SHA-256 ``digest``).

    ``split`` defaults to the file stem, ``source`` to the path as given.
    """
    file_sha256 = {f"m/{path.name}": digest}
    return Provenance(
        split=split if split is not None else path.stem,
        commit=None,
        files_read=n_agents,
        files_sha256=files_sha256_of(file_sha256),
        file_sha256=file_sha256,
        source=source if source is not None else str(path),
    )
