"""The functions a notebook needs, in one place (re-exported by ``import foreseen``).

teams:

* :func:`load_matrix` — an agents × tasks outcome matrix from a file (CSV or
  parquet, wide or long), an experiments tree, a split directory, or the name
  of a built-in split (``"lite"``, ``"verified"``);
* :func:`population_curve` — the exact mean coverage C(m) of m-agent teams of a
  matrix's competent agents (teams §3), on a grid of sizes;
* :data:`FORECASTERS` / :func:`forecaster` — the coverage forecasters, each
  tagged ``family`` (preregistered or exploratory): ``forecaster(name).fit(pilot)
  .curve(sizes)``;
* :func:`run_e046` — the preregistered protocol on matrices, as a typed record.

credit:

* :func:`read_credit_report` — a written ``report.json`` as the typed
  :class:`~foreseen.credit.analysis.report.CreditReport`.

both:

* :func:`read_report` — the tidy tables of any artefact foreseen writes, as
  pandas DataFrames by table name (:mod:`foreseen.report.tables`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from foreseen.core.errors import SourceError

if TYPE_CHECKING:
    from foreseen.credit.analysis.report import CreditReport
    from foreseen.teams.e046.results import E046Record
    from foreseen.teams.forecasters.base import Forecaster
    from foreseen.teams.matrix import OutcomeMatrix

BUILTIN = ("lite", "verified", "multimodal")


def load_matrix(source: str | os.PathLike[str], split: str | None = None, *,
                file_format: str | None = None) -> OutcomeMatrix:
    """The outcome matrix at ``source`` (a path), or the built-in split of that name."""
    from foreseen.teams.sources.dispatch import builtin_splits, load_source

    path = Path(source)
    if not path.exists() and str(source) in BUILTIN:
        return builtin_splits([str(source)])[0]
    if not path.exists():
        raise SourceError(f"{source} is neither a file or folder nor a built-in split"
                          f" ({', '.join(BUILTIN)})")
    return load_source(path, split, file_format=file_format)


def population_curve(matrix: OutcomeMatrix, sizes: Sequence[int] | None = None,
                     *, competent_only: bool = True) -> dict[int, float]:
    """Size → exact C(size) over the matrix's (competent) agents; the spec's grid by default."""
    from foreseen.teams import curves

    chosen = matrix.competent() if competent_only else matrix
    grid = list(sizes) if sizes is not None else curves.coverage_grid(len(chosen.agents))
    values = curves.population_curve(chosen.solved, grid)
    return {int(m): float(v) for m, v in zip(grid, values, strict=True)}


def forecaster(name: str) -> Forecaster:
    """The registered coverage forecaster ``name`` (see :data:`FORECASTERS`)."""
    from foreseen.teams.forecasters.registry import get

    return get(name)


def forecast_curve(name: str, pilot: npt.ArrayLike, sizes: Sequence[int]) -> dict[int, float]:
    """Size → the forecaster's C(size) from a pilot's boolean k × N outcomes."""
    values = forecaster(name).fit(np.asarray(pilot, dtype=bool)).curve(list(sizes))
    return {int(m): float(v) for m, v in zip(sizes, np.asarray(values), strict=True)}


def run_e046(matrices: Sequence[OutcomeMatrix] | None = None, seed: int | None = None
             ) -> E046Record:
    """The preregistered E046 protocol on ``matrices`` (default: lite and verified)."""
    from foreseen.teams.e046.protocol import SEED
    from foreseen.teams.e046.record import build_record
    from foreseen.teams.sources.dispatch import builtin_splits

    chosen = list(matrices) if matrices is not None else builtin_splits()
    return build_record(chosen, SEED if seed is None else seed)


def read_credit_report(path: str | os.PathLike[str]) -> CreditReport:
    """A credit ``report.json`` (or its run folder) as a typed report."""
    from foreseen.credit.analysis.report import read_report

    file = Path(path)
    return read_report(file / "report.json" if file.is_dir() else file)


def read_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The tidy tables of any artefact, as pandas DataFrames by table name (needs pandas;
    the values are untyped third-party objects, the names the artefact's tables)."""
    from foreseen.report.tables import read_report as read_tables

    return dict(read_tables(str(path)))
