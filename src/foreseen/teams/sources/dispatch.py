"""Where outcome matrices come from: one entry point over every supported source.

* a ``.csv`` file — the wide 0/1 matrix layout (:func:`load_matrix_csv`) or a
  long table with agent, task and solved columns (:mod:`foreseen.teams.sources.long_table`);
* a ``.parquet`` / ``.pq`` file — wide or long (:mod:`foreseen.teams.sources.parquet`);
* the layout of a file is sniffed — long when the header names the agent, task
  and solved columns, else wide — or declared with ``file_format="wide"|"long"``;
* an experiments tree (a directory holding ``evaluation/``) — needs a split name
  and reads ``evaluation/<split>`` (:func:`load_experiments_split`);
* a directory of submissions — a split directory or a fetch cache written by
  :func:`foreseen.teams.sources.fetch.fetch_split`; the split name is the one the cache
  recorded (else the directory name), the commit comes from the cache marker, and
  every cached file is checked against the SHA-256 the marker recorded;
* evaluation logs — an inspect-ai log (``.eval``, ``.json``) or a folder of them
  (:mod:`foreseen.teams.sources.inspect_logs`), an lm-evaluation-harness samples
  file (``samples_<task>_<date>.jsonl``) or a folder holding them
  (:mod:`foreseen.teams.sources.lm_eval_samples`); sniffed from the suffix or the
  folder's files, or declared with ``file_format="inspect"|"lm-eval"``;
* :func:`builtin_splits` — the shipped ``lite.csv``, ``verified.csv`` and
  ``multimodal.csv`` (by default the first two, the splits of the E046 record).

Parse rules are spec ``teams.md`` §2.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from foreseen.core.errors import ConfigError, SourceError
from foreseen.core.inputs import why_not_a_file
from foreseen.teams.matrix import OutcomeMatrix
from foreseen.teams.sources.experiments import load_experiments_split
from foreseen.teams.sources.fetch_cache import read_marker, verify_cache_files
from foreseen.teams.sources.files import read_csv_rows
from foreseen.teams.sources.long_table import LongColumns, Missing, long_rows_to_matrix
from foreseen.teams.sources.wide_csv import load_matrix_csv

__all__ = [
    "BUILTIN_SPLITS",
    "DEFAULT_SPLITS",
    "FILE_FORMATS",
    "builtin_splits",
    "load_experiments_split",
    "load_matrix_csv",
    "load_source",
]

BUILTIN_SPLITS = ("lite", "verified", "multimodal")
#: the splits a teams command reads when given no SOURCE (those of the E046 record)
DEFAULT_SPLITS = ("lite", "verified")
_BUILTIN_PACKAGE = "foreseen"
_BUILTIN_FOLDER = ("data", "swebench")
FILE_FORMATS = ("wide", "long", "inspect", "lm-eval")
LOG_FORMATS = ("inspect", "lm-eval")
INSPECT_SUFFIXES = (".eval", ".json")
LM_EVAL_SUFFIX = ".jsonl"
PARQUET_SUFFIXES = (".parquet", ".pq")


def _available_splits(evaluation: Path) -> list[str]:
    try:
        return sorted(entry.name for entry in evaluation.iterdir() if entry.is_dir())
    except OSError as exc:
        raise SourceError(f"cannot read directory {evaluation}: {exc.strerror or exc}") from exc


def _load_experiments_tree(root: Path, split: str | None) -> OutcomeMatrix:
    evaluation = root / "evaluation"
    available = _available_splits(evaluation)
    listed = ", ".join(available) if available else "none"
    if split is None:
        raise ConfigError(
            f"{root} is an experiments tree: choose a split (available: {listed})"
        )
    if split not in available:
        raise ConfigError(f"unknown split {split!r} in {root} (available: {listed})")
    return load_experiments_split(evaluation / split, split)


def _load_submissions_directory(directory: Path, split: str | None) -> OutcomeMatrix:
    marker = read_marker(directory)
    if marker is None:
        name = split if split is not None else directory.resolve().name
        return load_experiments_split(directory, name)
    if split is not None and split != marker.split:
        raise ConfigError(
            f"cache {directory} holds split {marker.split!r}, not {split!r}"
        )
    verify_cache_files(directory, marker)
    return load_experiments_split(directory, marker.split, commit=marker.commit)


def _first_row(path: Path) -> list[str] | None:
    """The first non-blank CSV row, read lazily; None if it cannot be read that way.

    (None sends the caller to the reader of the whole file, which reports the problem.)
    """
    try:
        with open(path, "rb") as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
            return next((row for row in csv.reader(text) if row), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return None


def _load_csv(
    path: Path, split: str | None, file_format: str | None, columns: LongColumns,
    missing: Missing,
) -> OutcomeMatrix:
    if file_format == "wide":
        _refuse_threshold(path, columns)
        return load_matrix_csv(path, split)
    if file_format is None:
        first = _first_row(path)
        if first is not None and not _long_header([cell.strip() for cell in first], columns):
            _refuse_threshold(path, columns)
            return load_matrix_csv(path, split)  # sniffed from the first row alone
    rows, digest = read_csv_rows(path)
    header = [cell.strip() for cell in rows[0]] if rows else []
    if file_format == "long":
        return long_rows_to_matrix(
            path, rows, digest, split=split, columns=columns, missing=missing
        )
    if file_format is None and _long_header(header, columns):
        try:
            return long_rows_to_matrix(
                path, rows, digest, split=split, columns=columns, missing=missing
            )
        except SourceError as error:
            raise SourceError(
                f"{error} (read as a long table because its header names the"
                f" {columns.agent}, {columns.task} and {columns.solved} columns; give"
                " --format wide if it is a wide matrix)") from None
    _refuse_threshold(path, columns)
    return load_matrix_csv(path, split)


def _refuse_threshold(path: Path, columns: LongColumns) -> None:
    """A score threshold given for a source that is not a long table is a user error."""
    if columns.threshold is not None:
        raise ConfigError(f"{path}: a score threshold applies to a long table only (columns "
                          f"{', '.join(columns.names())})")


def _long_header(header: Sequence[str], columns: LongColumns) -> bool:
    """A header that reads as a long table's: it names the three columns, and its first
    cell is not empty (a wide matrix's corner cell is empty; a long table names every
    column)."""
    return bool(header) and header[0] != "" and columns.present_in(list(header))


def load_source(
    path: Path,
    split: str | None = None,
    *,
    file_format: str | None = None,
    columns: LongColumns | None = None,
    missing: Missing = "unsolved",
) -> OutcomeMatrix:
    """Load an outcome matrix from a matrix file, an experiments tree or a split directory.

    For a file (``.csv``, ``.parquet``, ``.pq``) ``split`` overrides the name
    (default: the file stem), ``file_format`` declares ``"wide"`` or ``"long"``
    (default: sniffed), ``columns`` names the long table's columns and
    ``missing`` says what an absent (agent, task) pair is. An experiments tree
    requires ``split``; for a directory of submissions it names the split
    (default: the cache's recorded split, else the directory name) and must agree
    with a fetch cache's recorded split.
    """
    path = Path(path)
    if file_format is not None and file_format not in FILE_FORMATS:
        raise ConfigError(f"unknown format {file_format!r} ({', '.join(FILE_FORMATS)})")
    long_columns = columns if columns is not None else LongColumns()
    if not path.exists():
        raise SourceError(f"source {path} {why_not_a_file(path)}")
    if not path.is_file() and not path.is_dir():
        raise SourceError(f"source {path} is not a regular file or a folder (a device, pipe"
                          " or socket)")
    try:
        return _load_existing(path, split, file_format, long_columns, missing)
    except SourceError as error:
        if path.name in str(error):
            raise
        raise SourceError(f"{path.name}: {error}") from None  # every refusal names its file


def _log_format(path: Path, file_format: str | None) -> str | None:
    """``inspect`` / ``lm-eval`` when ``path`` is (or is declared) an evaluation log source."""
    if file_format is not None:
        return file_format if file_format in LOG_FORMATS else None
    if path.is_file():
        suffix = path.suffix.lower()
        if suffix in INSPECT_SUFFIXES:
            return "inspect"
        return "lm-eval" if suffix == LM_EVAL_SUFFIX else None
    if (path / "evaluation").is_dir():
        return None
    from foreseen.teams.sources.inspect_logs import looks_like_inspect_folder

    if looks_like_inspect_folder(path):
        return "inspect"
    return "lm-eval" if next(path.rglob("samples_*.jsonl"), None) is not None else None


def _load_logs(path: Path, split: str | None, log_format: str,
               columns: LongColumns) -> OutcomeMatrix:
    if log_format == "inspect":
        from foreseen.teams.sources.inspect_logs import load_inspect_logs

        return load_inspect_logs(path, split, columns.log_score, columns.threshold)
    from foreseen.teams.sources.lm_eval_samples import load_lm_eval_samples

    return load_lm_eval_samples(path, split, columns.log_score, columns.threshold)


def _load_existing(path: Path, split: str | None, file_format: str | None,
                   long_columns: LongColumns, missing: Missing) -> OutcomeMatrix:
    """:func:`load_source` once ``path`` is known to be a file or a folder."""
    log_format = _log_format(path, file_format)
    if log_format is not None:
        return _load_logs(path, split, log_format, long_columns)
    if path.is_file():
        suffix = path.suffix.lower()
        if suffix in PARQUET_SUFFIXES:
            from foreseen.teams.sources.parquet import load_parquet

            return load_parquet(
                path, split, layout=file_format, columns=long_columns, missing=missing
            )
        if suffix != ".csv":
            raise SourceError(
                f"source {path} is neither a .csv or .parquet matrix, an evaluation log "
                "(.eval, .json, samples_*.jsonl) nor a directory of submissions"
            )
        return _load_csv(path, split, file_format, long_columns, missing)
    if file_format is not None:
        raise ConfigError(f"--format applies to a matrix file, not to the directory {path}")
    _refuse_threshold(path, long_columns)
    if (path / "evaluation").is_dir():
        return _load_experiments_tree(path, split)
    return _load_submissions_directory(path, split)


def builtin_splits(splits: Sequence[str] = DEFAULT_SPLITS) -> list[OutcomeMatrix]:
    """The shipped SWE-bench matrices named in ``splits``, in that order.

    Shipped: ``lite`` (84 × 300), ``verified`` (134 × 500) and ``multimodal``
    (12 × 510); the default is lite and verified. Their ``source`` is the
    package-relative name (``foreseen/data/swebench/lite.csv``) so that records do
    not depend on where the package is installed.
    """
    unknown = [split for split in splits if split not in BUILTIN_SPLITS]
    if unknown:
        raise ConfigError(f"unknown built-in split {unknown[0]!r} (known: "
                          f"{', '.join(BUILTIN_SPLITS)})")
    folder = resources.files(_BUILTIN_PACKAGE).joinpath(*_BUILTIN_FOLDER)
    matrices = []
    for split in splits:
        resource = folder.joinpath(f"{split}.csv")
        label = "/".join((_BUILTIN_PACKAGE, *_BUILTIN_FOLDER, f"{split}.csv"))
        with resources.as_file(resource) as file:
            matrices.append(load_matrix_csv(file, split, source=label))
    return matrices
