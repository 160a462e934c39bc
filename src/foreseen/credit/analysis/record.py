"""Report records: frozen dataclasses written as JSON objects, keys in field order.

Every result of the credit analysis is a :class:`Record`. Core
:func:`~foreseen.core.schema.to_json` writes it through :meth:`Record.to_json`:
one key per field, in field order (``json_name`` metadata renames a key), values
written by core ``to_json``. Two kinds of field may be absent from the object,
because the report format (spec credit.md §11) writes some keys only when they
apply:

* :data:`OPTIONAL` — written only when the value is not None (a ``reason``
  beside a null, the sensitivities that were declared);
* :func:`written_with` — written only when another field is not None; the value
  itself may then be null (the intervals of a contrast are written when a
  bootstrap ran, as null when its replicates were not finite).

:func:`schema` is core :func:`~foreseen.core.schema.json_schema` with exactly
those fields taken out of ``required``.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from foreseen.core.schema import json_schema, to_json

Interval = tuple[float, float]
"""A closed interval ``[low, high]`` (written as a two-item array)."""

OPTIONAL: Mapping[str, Any] = MappingProxyType({"optional": True})
"""Field metadata: written only when not None (``field(default=None, metadata=OPTIONAL)``)."""


def written_with(anchor: str) -> Mapping[str, Any]:
    """Field metadata: written (possibly as null) exactly when field ``anchor`` is not None."""
    return MappingProxyType({"written_with": anchor})


def json_key(field: dataclasses.Field[Any]) -> str:
    """The key a field is written under."""
    return str(field.metadata.get("json_name", field.name))


def may_be_absent(field: dataclasses.Field[Any]) -> bool:
    """True for :data:`OPTIONAL` and :func:`written_with` fields."""
    return bool(field.metadata.get("optional")) or "written_with" in field.metadata


def is_written(record: object, field: dataclasses.Field[Any]) -> bool:
    """Whether ``field`` of ``record`` appears in its JSON object."""
    if field.metadata.get("optional"):
        return getattr(record, field.name) is not None
    anchor = field.metadata.get("written_with")
    return anchor is None or getattr(record, anchor) is not None


class Record:
    """Base of the report's frozen dataclasses (see the module docstring)."""

    __custom_json__: ClassVar[bool] = True

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for field in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, field.name)
            if not is_written(self, field):
                if value is not None:
                    anchor = field.metadata["written_with"]
                    raise ValueError(f"{type(self).__name__}.{field.name} is set but "
                                     f"{anchor} is None, so it would not be written")
                continue
            out[json_key(field)] = to_json(value)
        return out


def _dataclasses_in(hint: Any) -> Iterator[type]:
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        yield hint
        return
    for arg in typing.get_args(hint):
        yield from _dataclasses_in(arg)


def reachable_dataclasses(root: type) -> list[type]:
    """``root`` and every dataclass its fields' type hints name, recursively."""
    seen: dict[str, type] = {}
    stack = [root]
    while stack:
        cls = stack.pop()
        if cls.__name__ in seen:
            if seen[cls.__name__] is not cls:
                raise TypeError(f"two dataclasses named {cls.__name__} in one schema")
            continue
        seen[cls.__name__] = cls
        hints = typing.get_type_hints(cls)
        for field in dataclasses.fields(cls):
            stack.extend(_dataclasses_in(hints[field.name]))
    return list(seen.values())


def schema(root: type, *, title: str | None = None,
           schema_id: str | None = None) -> dict[str, Any]:
    """Core ``json_schema(root)`` with every field that may be absent left out of ``required``."""
    result = json_schema(root, title=title, schema_id=schema_id)
    definitions = result.get("$defs", {})
    for cls in reachable_dataclasses(root):
        absent = {json_key(f) for f in dataclasses.fields(cls) if may_be_absent(f)}
        if not absent:
            continue
        target = result if cls is root else definitions[cls.__name__]
        target["required"] = [key for key in target["required"] if key not in absent]
    return result
