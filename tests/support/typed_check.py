"""A strict check of a JSON value against an SDK's ``TypedDict`` request types (test oracle).

pydantic validates ``Iterable[...]`` fields lazily, so nested messages and
tools would go unchecked; this walks the type hints instead: a ``TypedDict``
takes only its own keys, has every required key, and each value fits its
annotation (unions: some member fits; ``Iterable``/``Sequence``/``list``: every
item fits; ``Literal``: one of the values; ``Dict[str, X]``: every value fits;
``object``/``Any``: anything JSON).
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any

from typing_extensions import is_typeddict


class TypeMismatch(Exception):
    """The value does not fit the type (the message names the path)."""


def _required(typed: Any, hints: dict[str, Any]) -> set[str]:
    """Required keys, read from the annotations (``__required_keys__`` is unreliable when the
    SDK module uses postponed annotations)."""
    total = getattr(typed, "__total__", True)
    required = set()
    for key, annotation in hints.items():
        name = getattr(typing.get_origin(annotation), "__name__", "") or getattr(
            typing.get_origin(annotation), "_name", "")
        if name == "Required" or (total and name != "NotRequired"):
            required.add(key)
    return required


def _is_wrapper(origin: Any) -> bool:
    """``Required[X]``, ``NotRequired[X]``, ``Annotated[X, ...]``: checked as X."""
    return origin in (typing.Required, typing.NotRequired, typing.Annotated) or (
        origin is not None and getattr(origin, "__name__", "") in (
            "Required", "NotRequired", "Annotated"))


def _check_typeddict(value: Any, hint: Any, where: str) -> None:
    if not isinstance(value, dict):
        raise TypeMismatch(f"{where}: expected an object ({hint.__name__})")
    hints = typing.get_type_hints(hint, include_extras=True)
    extra = sorted(set(value) - set(hints))
    if extra:
        raise TypeMismatch(f"{where}: {hint.__name__} has no key {extra[0]!r}")
    missing = sorted(_required(hint, hints) - set(value))
    if missing:
        raise TypeMismatch(f"{where}: {hint.__name__} needs key {missing[0]!r}")
    for key, item in value.items():
        check(item, hints[key], f"{where}.{key}")


def _check_union(value: Any, members: tuple[Any, ...], where: str) -> None:
    errors = []
    for member in members:
        try:
            check(value, member, where)
            return
        except TypeMismatch as error:
            errors.append(str(error))
    raise TypeMismatch(f"{where}: fits no member of the union ({'; '.join(errors[:3])})")


def _scalar_fits(value: Any, hint: Any) -> bool | None:
    """Whether ``value`` fits a scalar ``hint`` (None: the hint is not a scalar)."""
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    return None


SCALAR_NAMES = {type(None): "null", bool: "a boolean", int: "int", float: "float",
                str: "a string"}


def _check_container(value: Any, origin: Any, args: tuple[Any, ...], where: str) -> bool:
    """Check an object or list ``value``; False when ``origin`` is neither."""
    if origin in (dict, collections.abc.Mapping):
        if not isinstance(value, dict):
            raise TypeMismatch(f"{where}: expected an object")
        for key, item in value.items():
            check(item, args[1] if len(args) == 2 else Any, f"{where}.{key}")
        return True
    if origin in (list, tuple, collections.abc.Iterable, collections.abc.Sequence):
        if not isinstance(value, list):
            raise TypeMismatch(f"{where}: expected a list")
        for index, item in enumerate(value):
            check(item, args[0] if args else Any, f"{where}[{index}]")
        return True
    return False


def check(value: Any, hint: Any, where: str = "$") -> None:
    """Raise :class:`TypeMismatch` when ``value`` does not fit ``hint``."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint in (Any, object):
        return
    if _is_wrapper(origin):
        check(value, args[0], where)
    elif is_typeddict(hint):
        _check_typeddict(value, hint, where)
    elif origin is typing.Union or origin is types.UnionType:
        _check_union(value, args, where)
    elif origin is typing.Literal:
        if value not in args:
            raise TypeMismatch(f"{where}: {value!r} is not one of {args}")
    elif (fits := _scalar_fits(value, hint)) is not None:
        if not fits:
            raise TypeMismatch(f"{where}: expected {SCALAR_NAMES[hint]}")
    elif _check_container(value, dict if hint is dict else origin, args, where):
        return
    elif not (isinstance(hint, type) and isinstance(value, hint)):
        raise TypeMismatch(f"{where}: cannot check {hint!r} against {type(value).__name__}")
