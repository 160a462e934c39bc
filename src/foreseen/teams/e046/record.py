"""The E046 results record (spec teams.md §5.1): assembly, rounding, writing.

Numbers are rounded with Python's ``round`` to 4 decimals, ``mcnemar_p`` to 6;
size keys are strings. Beside the published keys the record carries an
``implementation`` block: package, version, ``analysis_sha256`` (the
:func:`foreseen.core.digest.code_digest` of :data:`ANALYSIS_MODULES`), the
preregistration's frozen digest, and ``amendment: true`` with its reason —
this code is an independent implementation, not the frozen script.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from foreseen import __version__
from foreseen.core.digest import code_digest, write_json_atomic
from foreseen.core.errors import UserInputError
from foreseen.teams.e046.protocol import EXPERIMENT, SEED, Report, analyze_split, decide
from foreseen.teams.matrix import OutcomeMatrix

FROZEN_ANALYSIS_SHA256 = "67aa3068b52cf67baa6c3862f03fee8ae93a6ad0568de3d26f7b5a1848f28f7d"
AMENDMENT_REASON = (
    "independent implementation: the protocol of the preregistration (spec teams.md §3-§5) "
    "re-implemented in the foreseen package; the frozen script "
    "experiments/agent_value_forecast.py did not run"
)
ANALYSIS_MODULES = (
    "foreseen.core.stats",
    "foreseen.teams.curves",
    "foreseen.teams.sources.experiments",
    "foreseen.teams.forecasters.models",
    "foreseen.teams.matrix",
    "foreseen.teams.sources.wide_csv",
    "foreseen.teams.e046.protocol",
    "foreseen.teams.e046.record",
    "foreseen.teams.e046.selection",
    "foreseen.teams.sources.dispatch",
)
DECIMALS = 4
P_VALUE_DECIMALS = 6
P_VALUE_KEYS = frozenset({"mcnemar_p"})


def analysis_sha256() -> str:
    """Digest of the analysis modules that produce the record."""
    return code_digest(ANALYSIS_MODULES)


def round_numbers(value: Any, decimals: int = DECIMALS) -> Any:
    """Round every float (4 decimals; ``mcnemar_p`` 6); ints, bools, strings unchanged."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return round(value, decimals)
    if isinstance(value, dict):
        return {
            key: round_numbers(item, P_VALUE_DECIMALS if key in P_VALUE_KEYS else decimals)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [round_numbers(item, decimals) for item in value]
    raise TypeError(f"unexpected value in record: {type(value).__name__}")


def implementation_block() -> Report:
    digest = analysis_sha256()
    return {
        "package": "foreseen",
        "version": __version__,
        "analysis_sha256": digest,
        "analysis_modules": list(ANALYSIS_MODULES),
        "frozen_analysis_sha256": FROZEN_ANALYSIS_SHA256,
        "amendment": digest != FROZEN_ANALYSIS_SHA256,
        "amendment_reason": AMENDMENT_REASON,
    }


def build_record(matrices: Sequence[OutcomeMatrix], seed: int = SEED) -> Report:
    """Run the protocol on every split (in the given order) and assemble the rounded record."""
    names = [matrix.provenance.split for matrix in matrices]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise UserInputError(f"split {duplicates[0]!r} is given more than once")
    reports = {matrix.provenance.split: analyze_split(matrix, seed) for matrix in matrices}
    implementation = implementation_block()
    record: Report = {
        "experiment": EXPERIMENT,
        "analysis_sha256": implementation["analysis_sha256"],
        "seed": seed,
        "splits": reports,
        "decision": decide(reports),
        "implementation": implementation,
    }
    rounded: Report = round_numbers(record)
    return rounded


def write_record(path: str | os.PathLike[str], record: Report) -> None:
    """Write the record as strict JSON, atomically."""
    write_json_atomic(path, record)
