"""Turning the teams commands' SOURCE arguments into outcome matrices (shared by the commands).

A SOURCE is anything :func:`foreseen.teams.sources.dispatch.load_source` reads
(a wide or long CSV or parquet matrix, an experiments tree with ``--split``, a
split directory or fetch cache); with no SOURCE the built-in ``lite`` and
``verified`` matrices are used (``teams calibrate`` adds ``multimodal``), and
``--split`` / ``--format`` are refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from foreseen.core.errors import ConfigError
from foreseen.teams.matrix import OutcomeMatrix
from foreseen.teams.sources.dispatch import (
    BUILTIN_SPLITS,
    DEFAULT_SPLITS,
    builtin_splits,
    load_source,
)
from foreseen.teams.sources.long_table import LongColumns

if TYPE_CHECKING:  # the history machinery is imported by the commands that use it
    from foreseen.teams.exploratory.history import HistorySource

DEFAULT_SCORE_COLUMN = "score"


def score_columns(threshold: float | None, score_column: str | None) -> LongColumns | None:
    """The long-table columns for ``--threshold`` / ``--score-column`` (None: neither given).

    ``--score-column NAME`` names a long table's outcome column (scores with
    ``--threshold``, else 0/1 flags) and an evaluation log's scorer or metric;
    ``--threshold`` alone reads the column ``score``.
    """
    if threshold is None and score_column is None:
        return None
    default = DEFAULT_SCORE_COLUMN if threshold is not None else "solved"
    return LongColumns(solved=score_column or default, threshold=threshold,
                       log_score=score_column)


def _refuse_repeated_names(matrices: Sequence[OutcomeMatrix]) -> None:
    names = [matrix.provenance.split for matrix in matrices]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ConfigError(f"two sources give the same split name {repeated[0]!r}")


def load_matrices(
    sources: Sequence[Path], split: str | None, file_format: str | None,
    columns: LongColumns | None = None, defaults: Sequence[str] = DEFAULT_SPLITS,
) -> list[OutcomeMatrix]:
    """One matrix per SOURCE (or the built-in splits ``defaults``); split names must be distinct.

    ``columns``: a long table's columns (with a score threshold), for every SOURCE.
    """
    if not sources:
        if split is not None or file_format is not None or columns is not None:
            raise ConfigError(
                "--split, --format, --threshold and --score-column need a SOURCE (the built-in"
                f" data are {', '.join(defaults)})"
            )
        return builtin_splits(defaults)
    matrices = [load_source(path, split, file_format=file_format, columns=columns)
                for path in sources]
    _refuse_repeated_names(matrices)
    return matrices


def metadata_directory(source: Path, split: str) -> Path | None:
    """Where the submissions' ``metadata.yaml`` files would be, for a directory source."""
    if not source.is_dir():
        return None
    if (source / "evaluation").is_dir():
        return source / "evaluation" / split
    return source


def load_with_metadata(
    sources: Sequence[Path], split: str | None, file_format: str | None
) -> list[HistorySource]:
    """:func:`load_matrices`, each matrix with the folder of its ``metadata.yaml`` files."""
    from foreseen.teams.exploratory.history import HistorySource

    if not sources:
        return [HistorySource(matrix, None) for matrix in load_matrices([], split, file_format)]
    loaded = [
        HistorySource(matrix, metadata_directory(Path(source), matrix.provenance.split))
        for source, matrix in zip(sources, load_matrices(sources, split, file_format),
                                  strict=True)
    ]
    return loaded


def load_one(source: Path, split: str | None, file_format: str | None) -> HistorySource:
    """One SOURCE; the words ``lite``, ``verified`` and ``multimodal`` name a built-in matrix
    when no such path exists."""
    from foreseen.teams.exploratory.history import HistorySource

    if not source.exists() and str(source) in BUILTIN_SPLITS:
        if file_format is not None:
            raise ConfigError("--format applies to a matrix file, not to a built-in split")
        return HistorySource(builtin_splits([str(source)])[0], None)
    return load_with_metadata([source], split, file_format)[0]
