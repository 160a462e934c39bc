"""Typed results at the edge: dataclasses → JSON values, and their JSON Schema.

Results are frozen dataclasses in memory; they become JSON only where they are
written. Two functions do that for every artefact:

* :func:`to_json` — a dataclass instance (recursively: dataclasses, mappings,
  lists and tuples, numpy scalars) → plain JSON values. Keys come out in field
  order, so a dataclass fixes the layout of what it writes. Field metadata:
  ``{"json": False}`` — never written; ``{"json_name": "x"}`` — written under
  ``x``; :data:`OPTIONAL` — written only when not None (a ``reason`` beside a
  null); :func:`written_with` ``("other")`` — written (possibly as null)
  exactly when field ``other`` is not None. Such fields are not ``required``
  in the schema, and :func:`from_json` reads a missing one as None.
  :func:`renamed_from` ``("old")`` — files written before the field was renamed
  hold it under ``old``: the schema accepts either name, never both.
* :func:`json_schema` — the JSON Schema (draft 2020-12) of a dataclass, read
  from its type hints: ``int`` → integer, ``float`` → number (integers are
  numbers too), ``str``, ``bool``, ``None`` → null, ``X | None`` → either,
  ``list[X]`` / ``tuple[X, ...]`` / ``Sequence[X]`` → array of X,
  ``tuple[X, Y]`` → an array of exactly those items, ``dict[str, X]`` /
  ``Mapping[str, X]`` → object with X values, ``Literal[...]`` → enum, a
  nested dataclass → a ``$defs`` entry referenced by name, ``Any`` → anything.
  Every field is required and no other property is allowed, except where a
  dataclass sets ``__schema_open__ = True``. Field metadata ``"doc"`` becomes
  the property's description; the class docstring's first paragraph becomes
  the schema's.

* :func:`from_json` — the way back: plain JSON values → a dataclass, checked
  against the same type hints, with one clear line naming the key path of the
  first value that does not fit (used for run configuration files and for
  reading artefacts back).

A schema generated here is what ``docs/schemas/`` ships and what the tests
validate the written artefacts against, so the published format cannot drift
from the types. ``json_schema(cls, for_input=True)`` describes a file a user
writes: only fields without a default are required.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import types
import typing
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeVar

from foreseen.core.errors import UserInputError

T = TypeVar("T")

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
OPTIONAL: Mapping[str, Any] = MappingProxyType({"optional": True})
"""Field metadata: written only when the value is not None."""


def written_with(anchor: str) -> Mapping[str, Any]:
    """Field metadata: written (possibly as null) exactly when field ``anchor`` is not None."""
    return MappingProxyType({"written_with": anchor})


def renamed_from(old: str) -> Mapping[str, Any]:
    """Field metadata: the field's older JSON name, still read (never both names at once)."""
    return MappingProxyType({"renamed_from": old})


def json_key(field: dataclasses.Field[Any]) -> str:
    """The key a field is written under."""
    return str(field.metadata.get("json_name", field.name))


def may_be_absent(field: dataclasses.Field[Any]) -> bool:
    """True for :data:`OPTIONAL` and :func:`written_with` fields."""
    return bool(field.metadata.get("optional")) or "written_with" in field.metadata


def is_written(obj: object, field: dataclasses.Field[Any]) -> bool:
    """Whether ``field`` of ``obj`` appears in its JSON object."""
    if field.metadata.get("json", True) is False:
        return False
    if field.metadata.get("optional"):
        return getattr(obj, field.name) is not None
    anchor = field.metadata.get("written_with")
    return anchor is None or getattr(obj, anchor) is not None



def to_json(obj: Any) -> Any:
    """Plain JSON values (dict, list, str, int, float, bool, None) of a typed result."""
    if obj is None or isinstance(obj, (str, bool, int, float)):
        return obj
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        custom = getattr(obj, "to_json", None)
        if custom is not None and getattr(type(obj), "__custom_json__", False):
            return custom()
        out: dict[str, Any] = {}
        for field in dataclasses.fields(obj):
            value = getattr(obj, field.name)
            if not is_written(obj, field):
                if value is not None and "written_with" in field.metadata:
                    raise ValueError(f"{type(obj).__name__}.{field.name} is set but "
                                     f"{field.metadata['written_with']} is None")
                continue
            out[json_key(field)] = to_json(value)
        return out
    if isinstance(obj, enum.Enum):
        return to_json(obj.value)
    if isinstance(obj, Mapping):
        return {str(key): to_json(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_json(value) for value in obj]
    item = getattr(obj, "item", None)  # numpy scalars
    if callable(item):
        return to_json(item())
    tolist = getattr(obj, "tolist", None)  # numpy arrays
    if callable(tolist):
        return to_json(tolist())
    raise TypeError(f"cannot write {type(obj).__name__} as JSON")


def _describe(cls: type) -> str | None:
    doc = inspect.getdoc(cls)
    if not doc or doc.startswith(f"{cls.__name__}("):
        return None
    return " ".join(doc.split("\n\n", 1)[0].split())


#: the JSON Schema of each scalar type
SCALAR_SCHEMAS: dict[Any, dict[str, str]] = {
    type(None): {"type": "null"}, bool: {"type": "boolean"}, int: {"type": "integer"},
    float: {"type": "number"}, str: {"type": "string"},
}


class _SchemaBuilder:
    def __init__(self, for_input: bool = False) -> None:
        self.defs: dict[str, dict[str, Any]] = {}
        self.for_input = for_input

    def of_type(self, hint: Any) -> dict[str, Any]:
        if hint is Any or hint is object:
            return {}
        if hint is None or hint in SCALAR_SCHEMAS:
            return dict(SCALAR_SCHEMAS[type(None) if hint is None else hint])
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            return self.of_dataclass(hint)
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            return {"enum": [member.value for member in hint]}
        origin = typing.get_origin(hint)
        args = typing.get_args(hint)
        if origin is typing.Union or origin is types.UnionType:
            return {"anyOf": [self.of_type(arg) for arg in args]}
        if origin is typing.Literal:
            return {"enum": list(args)}
        if origin is tuple:
            return self._of_tuple(args)
        if origin in (list, Sequence, typing.Sequence) or (
                isinstance(origin, type) and issubclass(origin, Sequence)
                and not issubclass(origin, (str, bytes))):
            return {"type": "array", "items": self.of_type(args[0]) if args else {}}
        if origin in (dict, Mapping, typing.Mapping) or (
                isinstance(origin, type) and issubclass(origin, Mapping)):
            values = self.of_type(args[1]) if len(args) == 2 else {}
            return {"type": "object", "additionalProperties": values}
        if hint in (dict, Mapping):
            return {"type": "object"}
        if hint in (list, tuple, Sequence):
            return {"type": "array"}
        raise TypeError(f"no JSON Schema for type {hint!r}")

    def _of_tuple(self, args: tuple[Any, ...]) -> dict[str, Any]:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": self.of_type(args[0])}
        if not args:
            return {"type": "array"}
        return {"type": "array", "prefixItems": [self.of_type(a) for a in args],
                "items": False, "minItems": len(args), "maxItems": len(args)}

    def of_dataclass(self, cls: type) -> dict[str, Any]:
        name = cls.__name__
        ref = {"$ref": f"#/$defs/{name}"}
        if name in self.defs:
            return ref
        self.defs[name] = {}  # placeholder: recursive types refer to it
        hints = typing.get_type_hints(cls)
        properties: dict[str, Any] = {}
        for field in dataclasses.fields(cls):
            if field.metadata.get("json", True) is False:
                continue
            schema = dict(self.of_type(hints[field.name]))
            if "doc" in field.metadata:
                schema["description"] = field.metadata["doc"]
            properties[field.metadata.get("json_name", field.name)] = schema
        written = [field for field in dataclasses.fields(cls)
                   if field.metadata.get("json", True) is not False]
        if self.for_input:
            required = [json_key(field) for field in written
                        if field.default is dataclasses.MISSING
                        and field.default_factory is dataclasses.MISSING]
        else:
            required = [json_key(field) for field in written if not may_be_absent(field)]
        body: dict[str, Any] = {"type": "object", "properties": properties,
                                "required": required}
        _accept_old_names(body, written)
        if not getattr(cls, "__schema_open__", False):
            body["additionalProperties"] = False
        description = _describe(cls)
        if description:
            body["description"] = description
        self.defs[name] = body
        return ref


def _accept_old_names(body: dict[str, Any], written: Sequence[dataclasses.Field[Any]]) -> None:
    """Each :func:`renamed_from` field may appear under its old name instead: the old name
    gets the field's schema, and the object holds one of the two names, never both."""
    rules: list[dict[str, Any]] = []
    for field in written:
        old = field.metadata.get("renamed_from")
        if old is None:
            continue
        new = json_key(field)
        body["properties"][old] = {**body["properties"][new],
                                   "description": f"the older name of {new}"}
        rules.append({"not": {"required": [new, old]}})
        if new in body["required"]:
            body["required"].remove(new)
            rules.append({"anyOf": [{"required": [new]}, {"required": [old]}]})
    if rules:
        body["allOf"] = rules


def json_schema(cls: type, *, title: str | None = None, schema_id: str | None = None,
                for_input: bool = False) -> dict[str, Any]:
    """The JSON Schema of the dataclass ``cls`` (see the module docstring)."""
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise TypeError(f"{cls!r} is not a dataclass")
    builder = _SchemaBuilder(for_input)
    builder.of_dataclass(cls)
    root = builder.defs.pop(cls.__name__)
    schema: dict[str, Any] = {"$schema": JSON_SCHEMA_DIALECT}
    if schema_id is not None:
        schema["$id"] = schema_id
    schema["title"] = title or cls.__name__
    schema.update(root)
    if builder.defs:
        schema["$defs"] = dict(sorted(builder.defs.items()))
    return schema


def type_schema(hint: Any, *, title: str, schema_id: str | None = None,
                description: str | None = None, for_input: bool = False) -> dict[str, Any]:
    """The JSON Schema of any type :func:`json_schema` knows (a mapping of dataclasses, say).

    For a file whose top level is not a dataclass, e.g. ``dict[str, dict[str, X]]``.
    """
    builder = _SchemaBuilder(for_input)
    body = builder.of_type(hint)
    schema: dict[str, Any] = {"$schema": JSON_SCHEMA_DIALECT}
    if schema_id is not None:
        schema["$id"] = schema_id
    schema["title"] = title
    if description:
        schema["description"] = description
    schema.update(body)
    if builder.defs:
        schema["$defs"] = dict(sorted(builder.defs.items()))
    return schema


class SchemaError(ValueError):
    """A JSON value does not fit the type it is read as; the message names the key path."""


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false",
            int: "an integer", float: "a number", type(None): "null"}.get(
        type(value), type(value).__name__)


def _read_union(args: tuple[Any, ...], value: Any, where: str, strict: bool) -> Any:
    if value is None and type(None) in args:
        return None
    errors = []
    for option in (a for a in args if a is not type(None)):
        try:
            return _read(option, value, where, strict)
        except SchemaError as error:
            errors.append(str(error))
    raise SchemaError(errors[0] if len(errors) == 1 else
                      f"{where}: {_kind(value)} is not allowed here")


def _scalar_problem(hint: Any, value: Any) -> str | None:
    """Why ``value`` is not a ``hint`` scalar (None when it is one)."""
    if hint is type(None):
        return None if value is None else f"expected null, got {_kind(value)}"
    if hint is bool:
        return None if isinstance(value, bool) else (
            f"expected true or false, got {_kind(value)}")
    if hint is int:
        return None if isinstance(value, int) and not isinstance(value, bool) else (
            f"expected an integer, got {_kind(value)}")
    if hint is str:
        return None if isinstance(value, str) else f"expected a string, got {_kind(value)}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):  # hint is float
        return f"expected a number, got {_kind(value)}"
    if value != value or value in (float("inf"), float("-inf")):
        return "expected a finite number"
    return None  # an integer stays an integer, so writing it back gives the same text


SCALARS = (type(None), bool, int, float, str)


def _read_dataclass(hint: Any, value: Any, where: str, strict: bool) -> Any:
    own = getattr(hint, "from_json", None)
    if getattr(hint, "__custom_json__", False) and callable(own):
        try:  # a dataclass with its own JSON form reads itself
            return own(value)
        except (ValueError, UserInputError) as error:
            raise SchemaError(f"{where}: {error}") from None
    return from_json(hint, value, where, strict=strict)


def _read_sequence(origin: Any, args: tuple[Any, ...], value: Any, where: str,
                   strict: bool) -> Any:
    if not isinstance(value, list):
        raise SchemaError(f"{where}: expected a list, got {_kind(value)}")
    if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        if len(value) != len(args):
            raise SchemaError(f"{where}: expected {len(args)} items, got {len(value)}")
        return tuple(_read(a, v, f"{where}[{i}]", strict)
                     for i, (a, v) in enumerate(zip(args, value, strict=True)))
    item = args[0] if args else Any
    items = [_read(item, v, f"{where}[{i}]", strict) for i, v in enumerate(value)]
    return tuple(items) if origin is tuple else items


def _read(hint: Any, value: Any, where: str, strict: bool = False) -> Any:
    if hint is Any or hint is object:
        return value
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        return _read_union(args, value, where, strict)
    if hint in SCALARS:
        problem = _scalar_problem(hint, value)
        if problem is not None:
            raise SchemaError(f"{where}: {problem}")
        return value
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _read_dataclass(hint, value, where, strict)
    if origin is typing.Literal:
        if value not in args:
            raise SchemaError(f"{where}: expected one of {', '.join(map(repr, args))},"
                              f" got {value!r}")
        return value
    if origin is tuple or origin in (list, Sequence, typing.Sequence):
        return _read_sequence(origin, args, value, where, strict)
    if origin in (dict, Mapping, typing.Mapping):
        if not isinstance(value, dict):
            raise SchemaError(f"{where}: expected an object, got {_kind(value)}")
        item = args[1] if len(args) == 2 else Any
        return {str(k): _read(item, v, f"{where}.{k}", strict) for k, v in value.items()}
    raise TypeError(f"cannot read type {hint!r}")


def current_names(data: Mapping[str, Any], renamed: Mapping[str, str], where: str
                  ) -> dict[str, Any]:
    """``data`` with each old key of ``renamed`` (old → new name) read under its new name.

    A file holding both names is refused: which value counts would be a guess.
    """
    both = sorted(old for old, new in renamed.items() if old in data and new in data)
    if both:
        raise SchemaError(f"{where}: {renamed[both[0]]!r} and its older name {both[0]!r} are"
                          f" both given; keep only {renamed[both[0]]!r}")
    return {renamed.get(key, key): value for key, value in data.items()}


def from_json(cls: type[T], data: Any, where: str = "$", *, strict: bool = False) -> T:
    """A ``cls`` instance from JSON values, checked against its type hints (one-line errors).

    A missing key takes the field's default; with ``strict`` (reading back an
    artefact foreseen wrote) only keys that may be absent may be missing.
    """
    if not isinstance(data, dict):
        raise SchemaError(f"{where}: expected an object, got {_kind(data)}")
    hints = typing.get_type_hints(cls)
    fields = {json_key(field): field
              for field in dataclasses.fields(cls)  # type: ignore[arg-type]
              if field.metadata.get("json", True) is not False}
    data = current_names(data, {str(field.metadata["renamed_from"]): key
                                for key, field in fields.items()
                                if "renamed_from" in field.metadata}, where)
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise SchemaError(f"{where}: unknown key {unknown[0]!r}"
                          f" (known: {', '.join(sorted(fields))})")
    values: dict[str, Any] = {}
    for key, field in fields.items():
        if key not in data:
            if may_be_absent(field):
                values[field.name] = None
            elif strict or (field.default is dataclasses.MISSING
                            and field.default_factory is dataclasses.MISSING):
                raise SchemaError(f"{where}: missing key {key!r}")
            continue
        values[field.name] = _read(hints[field.name], data[key], f"{where}.{key}", strict)
    return cls(**values)
