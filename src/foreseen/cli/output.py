"""Writing a teams command's artefact (``--out``): typed result → strict JSON, atomically.

The result is a frozen dataclass (:mod:`foreseen.teams.artefacts` lists them);
it becomes JSON here, at the edge, through :func:`foreseen.core.schema.to_json`.
"""

from __future__ import annotations

from pathlib import Path

from foreseen.core.digest import write_json_atomic
from foreseen.core.errors import UserInputError
from foreseen.core.schema import to_json


def write_report(out: Path, artefact: object) -> None:
    """Write ``artefact`` as JSON to ``out`` atomically; a failure is a :class:`UserInputError`."""
    try:
        write_json_atomic(out, to_json(artefact))
    except OSError as error:
        raise UserInputError(f"cannot write the report to {out}: {error.strerror}") from None
