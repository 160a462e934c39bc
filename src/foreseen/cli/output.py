"""Writing a teams command's JSON report (``--out``), shared by the ``teams`` sub-commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from foreseen.core.digest import write_json_atomic
from foreseen.core.errors import UserInputError


def write_report(out: Path, report: Any) -> None:
    """Write ``report`` as JSON to ``out`` atomically; a failure is a :class:`UserInputError`."""
    try:
        write_json_atomic(out, report)
    except OSError as error:
        raise UserInputError(f"cannot write the report to {out}: {error.strerror}") from None
