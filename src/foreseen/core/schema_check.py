"""Every place a JSON value does not fit a generated JSON Schema, not only the first.

:func:`schema_problems` walks a value against a schema of the subset
:mod:`foreseen.core.schema` generates (draft 2020-12: ``type``, ``properties``,
``required``, ``additionalProperties``, ``items``, ``prefixItems``,
``minItems``/``maxItems``, ``enum``, ``anyOf``, local ``$ref`` to ``$defs``)
and returns one :class:`SchemaProblem` per misfit: the JSON path of the value
(``$.states[3].seed``) and what was expected there. It goes on after a
problem (a missing key does not hide a wrong type beside it), so a user sees
every mistake of a file at once; inside an ``anyOf`` whose options all fail it
reports the one line "expected A or B". A keyword outside the subset raises
``ValueError`` (a schema this checker cannot judge is never taken as passed).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: keywords that describe a schema without constraining the value
_ANNOTATIONS = frozenset({"$schema", "$id", "title", "description", "$defs"})
_CHECKED = frozenset({"type", "properties", "required", "additionalProperties", "items",
                      "prefixItems", "minItems", "maxItems", "enum", "anyOf", "$ref"})


@dataclass(frozen=True)
class SchemaProblem:
    """One value that does not fit: its JSON path and what the schema expects there."""

    path: str
    expected: str


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value} (a number out of range: JSON has no infinity or NaN)"
    return {dict: "an object", list: "a list", str: "a string", int: "an integer",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


_TYPE_WORDS = {"object": "an object", "array": "a list", "string": "a string",
               "integer": "an integer", "number": "a number", "boolean": "true or false",
               "null": "null"}


def _fits_type(name: str, value: Any) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return (isinstance(value, (int, float)) and not isinstance(value, bool)
                and math.isfinite(value))
    return isinstance(value, {"object": dict, "array": list, "string": str,
                              "boolean": bool, "null": type(None)}[name])


class _Checker:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.defs: Mapping[str, Any] = root.get("$defs", {})
        self.problems: list[SchemaProblem] = []

    def resolve(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        """The JSON Schema object ``schema`` refers to, following ``$ref`` links."""
        while "$ref" in schema:
            ref = str(schema["$ref"])
            if not ref.startswith("#/$defs/"):
                raise ValueError(f"schema reference {ref!r} is not local")
            schema = self.defs[ref.removeprefix("#/$defs/")]
        return schema

    def describe(self, schema: Mapping[str, Any]) -> str:
        """A short phrase for what ``schema`` admits ("an object (Task)", "one of …")."""
        if "$ref" in schema:
            return f"an object ({str(schema['$ref']).rsplit('/', 1)[-1]})"
        if "enum" in schema:
            return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
        if "anyOf" in schema:
            return " or ".join(self.describe(option) for option in schema["anyOf"])
        if "type" in schema:
            return _TYPE_WORDS[str(schema["type"])]
        return "any value"

    def check(self, schema: Mapping[str, Any], value: Any, path: str) -> None:
        schema = self.resolve(schema)
        unknown = set(schema) - _CHECKED - _ANNOTATIONS
        if unknown:
            raise ValueError(f"schema keyword {sorted(unknown)[0]!r} is not checked here")
        if "anyOf" in schema:
            self.check_any(schema, value, path)
        elif "enum" in schema:
            if not any(v == value and isinstance(v, bool) == isinstance(value, bool)
                       for v in schema["enum"]):
                self.add(path, f"{self.describe(schema)}, got {json.dumps(value)[:60]}")
        elif "type" in schema and not _fits_type(str(schema["type"]), value):
            self.add(path, f"{_TYPE_WORDS[str(schema['type'])]}, got {_kind(value)}")
        elif isinstance(value, dict):
            self.check_object(schema, value, path)
        elif isinstance(value, list):
            self.check_array(schema, value, path)

    def check_any(self, schema: Mapping[str, Any], value: Any, path: str) -> None:
        for option in schema["anyOf"]:
            trial = _Checker({"$defs": self.defs})
            trial.check(option, value, path)
            if not trial.problems:
                return
        fitting = [o for o in schema["anyOf"] if "type" not in self.resolve(o)
                   or _fits_type(str(self.resolve(o)["type"]), value)]
        if len(fitting) == 1:  # the value has the type of one option: say what is wrong inside
            self.check(fitting[0], value, path)
            return
        self.add(path, f"{self.describe(schema)}, got {_kind(value)}")

    def check_object(self, schema: Mapping[str, Any], value: dict[str, Any],
                     path: str) -> None:
        properties: Mapping[str, Any] = schema.get("properties", {})
        for key in schema.get("required", ()):
            if key not in value:
                self.add(path, f"the required field {key!r}"
                         f" ({self.describe(properties.get(key, {}))})")
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            where = f"{path}.{key}"
            if key in properties:
                self.check(properties[key], item, where)
            elif extra is False:
                known = ", ".join(sorted(properties))
                self.add(where, f"no such field (known: {known})")
            elif isinstance(extra, Mapping):
                self.check(extra, item, where)

    def check_array(self, schema: Mapping[str, Any], value: list[Any], path: str) -> None:
        low, high = schema.get("minItems"), schema.get("maxItems")
        if (low is not None and len(value) < low) or (high is not None and len(value) > high):
            count = low if low == high else f"{low} to {high}"
            self.add(path, f"a list of {count} items, got {len(value)}")
            return
        prefix = schema.get("prefixItems", [])
        items = schema.get("items", True)
        for index, item in enumerate(value):
            where = f"{path}[{index}]"
            if index < len(prefix):
                self.check(prefix[index], item, where)
            elif isinstance(items, Mapping):
                self.check(items, item, where)

    def add(self, path: str, expected: str) -> None:
        self.problems.append(SchemaProblem(path, f"expected {expected}"))


def schema_problems(schema: Mapping[str, Any], value: Any) -> list[SchemaProblem]:
    """Every misfit of ``value`` against ``schema`` (module docstring), in document order."""
    checker = _Checker(schema)
    checker.check(schema, value, "$")
    return checker.problems
