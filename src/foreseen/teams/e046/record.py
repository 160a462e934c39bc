"""The E046 results record (teams §5.1): assembly, rounding, writing.

Numbers are rounded with Python's ``round`` to 4 decimals, ``mcnemar_p`` to 6;
size keys are strings. Beside the published keys the record carries an
``implementation`` block: package, version, ``analysis_sha256`` (the
:func:`foreseen.core.digest.code_digest` of :data:`ANALYSIS_MODULES`), the
preregistration's frozen digest, and ``amendment: true`` with its reason —
this code is an independent implementation, not the frozen script.

The record is an :class:`~foreseen.teams.e046.results.E046Record`; it becomes
JSON only in :func:`write_record` (:func:`foreseen.core.schema.to_json`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import Any, TypeVar

from foreseen.core.digest import code_digest, write_json_atomic
from foreseen.core.errors import ConfigError
from foreseen.core.schema import to_json
from foreseen.teams.e046.protocol import EXPERIMENT, SEED, analyze_split
from foreseen.teams.e046.results import E046Record, Implementation
from foreseen.teams.e046.verdicts import decide
from foreseen.teams.matrix import OutcomeMatrix
from foreseen.version import __version__

FROZEN_ANALYSIS_SHA256 = "67aa3068b52cf67baa6c3862f03fee8ae93a6ad0568de3d26f7b5a1848f28f7d"
AMENDMENT_REASON = (
    "independent implementation: the protocol of the preregistration (teams §3-§5 in docs/spec.md) "
    "re-implemented in the foreseen package; the frozen script "
    "experiments/agent_value_forecast.py did not run"
)
ANALYSIS_MODULES = (
    "foreseen.core.seeds",
    "foreseen.core.stats",
    "foreseen.teams.curves",
    "foreseen.teams.sources.experiments",
    "foreseen.teams.forecasters.base",
    "foreseen.teams.forecasters.indexed_pilots",
    "foreseen.teams.forecasters.closed_form",
    "foreseen.teams.forecasters.rasch",
    "foreseen.teams.forecasters.registry",
    "foreseen.teams.matrix",
    "foreseen.teams.sources.wide_csv",
    "foreseen.teams.e046.draws",
    "foreseen.teams.e046.protocol",
    "foreseen.teams.e046.record",
    "foreseen.teams.e046.results",
    "foreseen.teams.e046.selection",
    "foreseen.teams.e046.verdicts",
    "foreseen.teams.sources.dispatch",
)
DECIMALS = 4
P_VALUE_DECIMALS = 6
P_VALUE_FIELDS = frozenset({"mcnemar_p"})

T = TypeVar("T")


def analysis_sha256() -> str:
    """Digest of the analysis modules that produce the record."""
    return code_digest(ANALYSIS_MODULES)


def _round(value: Any, decimals: int) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return round(value, decimals)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            field.name: _round(
                getattr(value, field.name),
                P_VALUE_DECIMALS if field.name in P_VALUE_FIELDS else decimals,
            )
            for field in dataclasses.fields(value)
        }
        return dataclasses.replace(value, **changes)
    if isinstance(value, dict):
        return {key: _round(item, decimals) for key, item in value.items()}
    if isinstance(value, tuple):
        return tuple(_round(item, decimals) for item in value)
    if isinstance(value, list):
        return [_round(item, decimals) for item in value]
    raise TypeError(f"unexpected value in record: {type(value).__name__}")


def round_numbers(value: T, decimals: int = DECIMALS) -> T:
    """Every float rounded (4 decimals; fields named ``mcnemar_p`` 6); the rest unchanged."""
    rounded: T = _round(value, decimals)
    return rounded


def implementation_block() -> Implementation:
    """The record's ``implementation`` block (module docstring)."""
    digest = analysis_sha256()
    return Implementation(
        package="foreseen",
        version=__version__,
        analysis_sha256=digest,
        analysis_modules=ANALYSIS_MODULES,
        frozen_analysis_sha256=FROZEN_ANALYSIS_SHA256,
        amendment=digest != FROZEN_ANALYSIS_SHA256,
        amendment_reason=AMENDMENT_REASON,
    )


def build_record(matrices: Sequence[OutcomeMatrix], seed: int = SEED) -> E046Record:
    """Run the protocol on every split (in the given order) and assemble the rounded record."""
    names = [matrix.provenance.split for matrix in matrices]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ConfigError(f"split {duplicates[0]!r} is given more than once")
    reports = {matrix.provenance.split: analyze_split(matrix, seed) for matrix in matrices}
    implementation = implementation_block()
    record = E046Record(
        experiment=EXPERIMENT,
        analysis_sha256=implementation.analysis_sha256,
        seed=seed,
        splits=reports,
        decision=decide(reports),
        implementation=implementation,
    )
    return round_numbers(record)


def write_record(path: str | os.PathLike[str], record: E046Record) -> None:
    """Write the record as strict JSON, atomically."""
    write_json_atomic(path, to_json(record))
