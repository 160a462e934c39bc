"""Command-line values of plain types converted without pydantic (typer's fallback kept).

typer converts every parameter value through a pydantic ``TypeAdapter``;
importing pydantic and building the adapters costs a teams command about a
tenth of a second. :func:`install` makes typer build, for the annotations
``bool``, ``str``, ``int``, ``float``, ``Path`` and ``list[Path]`` without a
custom parser, path type or ``allow_dash``, a :class:`PlainRuntimeParam` that converts the
values whose conversion is unambiguous itself:

* ``str`` — a string, as it is; ``bool`` — a boolean, as it is;
* ``int`` — an ``int`` or a string of ASCII digits with an optional sign;
* ``float`` — an ``int``/``float`` or a decimal string (optional sign, digits,
  one point, an exponent);
* ``Path`` — through typer's own path checks (``coerce_cli_path``), as a ``Path``;
  ``list[Path]`` — each item so;

and only when the number lies within the parameter's ``min``/``max``. Any
other value — a bad number, an out-of-range one, ``nan``, whitespace — goes to
typer's own pydantic conversion, so every error message is typer's, word for
word (``tests/cli/test_plain_params.py`` compares the two on a table of values).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer.core
from typer import _coercion, _param_types

__all__ = ["PlainRuntimeParam", "install"]

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_UNCONVERTED = object()
_PLAIN = (bool, str, int, float, Path, list[Path])
_original_build = _coercion.build_runtime_param


def _in_range(number: float, info: Any) -> bool:
    return ((info.min is None or number >= info.min)
            and (info.max is None or number <= info.max))


def _number(annotation: Any, value: object, info: Any) -> object:
    """An int or float value converted, or ``_UNCONVERTED``."""
    if isinstance(value, bool) or info.clamp:
        return _UNCONVERTED
    pattern = _INTEGER if annotation is int else _DECIMAL
    numeric = (int,) if annotation is int else (int, float)
    if isinstance(value, str) and pattern.fullmatch(value):
        number: float | int = annotation(value)
    elif isinstance(value, numeric):
        number = annotation(value)
    else:
        return _UNCONVERTED
    return number if _in_range(number, info) else _UNCONVERTED


def _path(value: object, info: Any, param: Any, ctx: Any) -> object:
    if not isinstance(value, str | Path):
        return _UNCONVERTED
    checked = _param_types.coerce_cli_path(value, info, path_type=None, param=param, ctx=ctx)
    return Path(checked) if isinstance(checked, str | Path) else _UNCONVERTED


@dataclass(frozen=True)
class PlainRuntimeParam(_coercion.RuntimeParam):
    """A plain-typed parameter: converted here when unambiguous, else by typer (pydantic)."""

    descriptor: Any

    def _convert(self, value: object, param: Any, ctx: Any) -> object:
        annotation, info = self.annotation, self.parameter_info
        if annotation in (int, float):
            return _number(annotation, value, info)
        if annotation is str or annotation is bool:
            return value if isinstance(value, annotation) else _UNCONVERTED
        if annotation is Path:
            return _path(value, info, param, ctx)
        if not isinstance(value, list | tuple):
            return _UNCONVERTED
        items = [_path(item, info, param, ctx) for item in value]
        return _UNCONVERTED if _UNCONVERTED in items else items

    def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
        converted = self._convert(value, param, ctx)
        if converted is not _UNCONVERTED:
            return converted
        return _original_build(self.descriptor)._coerce_value(value, param=param, ctx=ctx)


def _build(descriptor: Any) -> Any:
    """The click parameter typer builds for ``descriptor`` (typer internals: untyped)."""
    info = descriptor.parameter_info
    plain = (descriptor.file_annotation is None and info.parser is None
             and getattr(info, "click_type", None) is None and info.path_type is None
             and not info.allow_dash
             and any(descriptor.annotation == kind for kind in _PLAIN))
    if not plain:
        return _original_build(descriptor)
    return PlainRuntimeParam(parameter_info=info, annotation=descriptor.annotation,
                             descriptor=descriptor)


def install() -> None:
    """Make typer build :class:`PlainRuntimeParam` for plain-typed parameters (idempotent)."""
    typer.core.build_runtime_param = _build  # type: ignore[attr-defined]
