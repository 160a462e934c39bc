"""Report records: frozen dataclasses written as JSON objects, keys in field order.

Every result of the credit analysis is a :class:`Record`, written by core
:func:`~foreseen.core.schema.to_json` (one key per field, in field order) and
read back by core :func:`~foreseen.core.schema.from_json`. Keys that the report
format (credit §11) writes only when they apply use the core field
metadata :data:`~foreseen.core.schema.OPTIONAL` (written when not None) and
:func:`~foreseen.core.schema.written_with` (written when another field is set).
"""

from __future__ import annotations

from foreseen.core.schema import OPTIONAL, written_with

Interval = tuple[float, float]
"""A closed interval ``[low, high]`` (written as a two-item array)."""


class Record:
    """Base of the report's frozen dataclasses (a marker: they are written by core ``to_json``)."""


__all__ = ["OPTIONAL", "Interval", "Record", "written_with"]
