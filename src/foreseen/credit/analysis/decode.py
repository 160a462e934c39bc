"""Reading records back from JSON, driven by their type hints.

:func:`from_json` is the inverse of core ``to_json`` for the report's records
(:mod:`foreseen.credit.analysis.record`): ``from_json(cls, to_json(x)) == x``
when ``x`` holds JSON-like values (tuples for arrays, dicts for objects).
Type hints map as in core ``json_schema``: ``int``, ``float`` (an integer is a
number too, and stays an integer), ``str``, ``bool``, ``None``, ``X | Y`` (the
first alternative that reads), ``Literal``, ``tuple[X, ...]`` and
``tuple[X, Y]`` (→ tuple), ``Mapping[str, X]`` (→ dict), ``Any`` (as is), and
dataclasses — by their own ``from_json`` classmethod when they have one and are
not records, else field by field: unknown keys are refused, a missing key is
None only for a field that may be absent. Every failure is a
:class:`~foreseen.core.errors.SourceError` naming the JSON path.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from foreseen.core.errors import SourceError, UserInputError
from foreseen.credit.analysis.record import Record, json_key, may_be_absent

T = TypeVar("T")


def from_json(cls: type[T], data: Any, *, where: str = "$") -> T:
    """The ``cls`` instance written as ``data`` (see the module docstring)."""
    return typing.cast(T, _read(cls, data, where))


def _fail(where: str, what: str) -> SourceError:
    return SourceError(f"{where}: {what}")


def _read(hint: Any, value: Any, where: str) -> Any:
    if hint is Any or hint is object:
        return value
    if hint is type(None) or hint is None:
        if value is not None:
            raise _fail(where, "expected null")
        return None
    if hint is bool:
        if not isinstance(value, bool):
            raise _fail(where, "expected true or false")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(where, "expected an integer")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _fail(where, "expected a number")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise _fail(where, "expected a string")
        return value
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _read_dataclass(hint, value, where)
    return _read_generic(hint, value, where)


def _read_generic(hint: Any, value: Any, where: str) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        if value is None and type(None) in args:
            return None
        failures = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _read(arg, value, where)
            except SourceError as error:
                failures.append(str(error))
        raise _fail(where, "matches none of the alternatives (" + "; ".join(failures) + ")")
    if origin is typing.Literal:
        if value not in args:
            raise _fail(where, f"expected one of {list(args)}")
        return value
    if origin is tuple:
        if not isinstance(value, list):
            raise _fail(where, "expected an array")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_read(args[0], item, f"{where}[{i}]") for i, item in enumerate(value))
        if len(value) != len(args):
            raise _fail(where, f"expected an array of {len(args)} items")
        return tuple(_read(a, item, f"{where}[{i}]")
                     for i, (a, item) in enumerate(zip(args, value, strict=True)))
    if origin in (dict, Mapping):
        if not isinstance(value, dict):
            raise _fail(where, "expected an object")
        item = args[1] if len(args) == 2 else Any
        return {str(k): _read(item, v, f"{where}.{k}") for k, v in value.items()}
    raise TypeError(f"cannot read type {hint!r} from JSON")


def _read_dataclass(cls: type, value: Any, where: str) -> Any:
    own = getattr(cls, "from_json", None)
    if callable(own) and not issubclass(cls, Record):
        try:
            return own(value)
        except UserInputError as error:
            raise _fail(where, str(error)) from None
    if not isinstance(value, dict):
        raise _fail(where, f"expected an object ({cls.__name__})")
    hints = typing.get_type_hints(cls)
    fields = {json_key(f): f for f in dataclasses.fields(cls)}
    unknown = sorted(set(value) - set(fields))
    if unknown:
        raise _fail(where, f"unknown key {unknown[0]!r} for {cls.__name__}")
    kwargs: dict[str, Any] = {}
    for key, field in fields.items():
        if key in value:
            kwargs[field.name] = _read(hints[field.name], value[key], f"{where}.{key}")
        elif may_be_absent(field):
            kwargs[field.name] = None
        else:
            raise _fail(where, f"missing key {key!r} for {cls.__name__}")
    return cls(**kwargs)
