"""Canonical JSON, SHA-256 digests and strict, atomic JSON writing.

* :func:`canonical_json` / :func:`canonical_json_bytes` — the canonical form
  below. Its SHA-256 identifies plans, ledger lines and other frozen artefacts.
* :func:`parse_strict_json` — JSON text to Python values, refusing ``NaN``,
  ``Infinity`` and ``-Infinity`` while parsing (so parsed values never need a
  second finiteness walk).
* :func:`sha256_file`, :func:`sha256_bytes`, :func:`sha256_text` — hex digests.
* :func:`stable_int` — a 64-bit integer from SHA-256 of text parts joined by ``|``
  (a seed that is stable across runs, platforms and Python's hash seed).
* :func:`code_digest` — one digest over the source of a set of modules, in a
  fixed order, so a report can say exactly which analysis code produced it.
* :func:`write_json_atomic` / :func:`write_text_atomic` — write to a temporary
  file in the target folder, fsync, then ``os.replace``: a reader never sees a
  half-written file and a failure leaves nothing behind. Symbolic links are
  written through, devices and pipes written directly, other non-regular files
  refused (:mod:`foreseen.core.outputs`). The file gets the mode
  any file the user writes gets, ``0o666 & ~umask`` (``tempfile.mkstemp``
  alone would leave it ``0o600``).

The canonical JSON form (what every hash in foreseen is computed over)
--------------------------------------------------------------------------
It is exactly Python's ``json.dumps(obj, sort_keys=True, separators=(",", ":"),
ensure_ascii=False, allow_nan=False)`` encoded as UTF-8, i.e.:

* objects with their keys sorted by Unicode code point, no whitespace anywhere,
  ``,`` between members and ``:`` between key and value; arrays likewise;
* strings as UTF-8 characters, escaping only ``"`` → ``\\"``, ``\\`` → ``\\\\``,
  ``\\b \\f \\n \\r \\t`` and every other character below U+0020 as ``\\u00xx``
  (lower-case hex); nothing else is escaped (not even U+2028 or U+007F);
* integers in plain decimal, any size; ``true``/``false``/``null``;
* floats as Python's ``repr``: the shortest text that reads back to the same
  double, with ``.0`` on integral values below 1e16 (``1.0``, ``-0.0``), plain
  decimals from 1e-4 up to 1e16 (``0.0001``, ``0.1``), and an exponent
  ``e±XX`` (sign and at least two digits) below 1e-4 or from 1e16 on
  (``1e-07``, ``2.5e-05``, ``1e+16``);
* NaN and infinities are refused (:class:`NonFiniteNumberError`).

Anyone can recompute a hash from that text with any SHA-256. The encoder uses
``orjson`` (a core dependency) when it gives the same bytes — everything but
floats with 0 < |x| < 1e-4 (orjson writes ``1e-7`` and ``0.00001`` where the
canonical form has ``1e-07`` and ``1e-05``), integers beyond 64 bits, lone
surrogates and non-string keys, which take the standard library's path — and
the standard library's encoder otherwise or when orjson is not installed. The
two are tested to agree byte for byte on a corpus (tests/core/test_digest.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from foreseen.core.outputs import output_error, output_target, write_stream
from foreseen.core.secrets import scrub_bytes

try:  # the fast encoder/decoder; the standard library's gives identical bytes without it
    import orjson as _orjson
except ImportError:  # the fallback path is exercised in tests by setting _orjson to None
    _orjson = None  # type: ignore[assignment]


class NonFiniteNumberError(ValueError):
    """A NaN or infinity was about to be written to strict JSON."""


def _check_finite(obj: Any, path: str = "$") -> None:
    if isinstance(obj, float):
        if not math.isfinite(obj):
            raise NonFiniteNumberError(f"non-finite number {obj!r} at {path}")
    elif isinstance(obj, dict):
        for key, value in obj.items():
            _check_finite(value, f"{path}.{key}")
    elif isinstance(obj, (list, tuple)):
        for index, value in enumerate(obj):
            _check_finite(value, f"{path}[{index}]")


#: floats below this magnitude (and not 0) are written by orjson in another form
_ORJSON_FLOAT_FLOOR = 1e-4


def _orjson_agrees(obj: Any) -> bool:
    """True if orjson writes ``obj`` exactly in canonical form; raises on NaN/infinity.

    One walk over every value: a non-finite float raises (naming its path, via
    :func:`_check_finite`); False (use the standard library) for a float with
    0 < |x| < 1e-4, an integer beyond 64 bits, a non-string key, or any value
    that is not exactly a dict, list, tuple, str, int, float, bool or None
    (subclasses, enums, dataclasses: the standard library decides what they
    become, or refuses them, as it always did).
    """
    stack = [obj]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str or item is None or kind is bool:
            continue
        if kind is dict:
            for key in item:
                if type(key) is not str:
                    return False
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            stack.extend(item)
        elif kind is float:
            if not math.isfinite(item):
                _check_finite(obj)
            if item != 0.0 and -_ORJSON_FLOAT_FLOOR < item < _ORJSON_FLOAT_FLOOR:
                return False
        elif kind is int:
            if not -(1 << 63) <= item < (1 << 64):
                return False
        else:
            return False
    return True


def canonical_json_stdlib(obj: Any) -> str:
    """The canonical form (module docstring) by the standard library's encoder alone."""
    try:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False)
    except ValueError:
        _check_finite(obj)  # raises NonFiniteNumberError naming the path
        raise


def _orjson_bytes(obj: Any) -> bytes | None:
    if _orjson is not None and _orjson_agrees(obj):
        try:
            return _orjson.dumps(obj, option=_orjson.OPT_SORT_KEYS)
        except TypeError:
            return None
    return None


def canonical_json_bytes(obj: Any) -> bytes:
    """The canonical JSON of ``obj`` as UTF-8 bytes (module docstring; orjson when it agrees)."""
    fast = _orjson_bytes(obj)
    return fast if fast is not None else canonical_json_stdlib(obj).encode("utf-8")


def canonical_json(obj: Any) -> str:
    """Return the canonical JSON text of ``obj`` (sorted keys, compact, UTF-8, no NaN)."""
    fast = _orjson_bytes(obj)
    return fast.decode("utf-8") if fast is not None else canonical_json_stdlib(obj)


#: every digit → "0" and "E" → "e", so plain substring tests find number shapes quickly
_SHAPES = bytes.maketrans(b"123456789E", b"000000000e")
#: orjson reads integers beyond 64 bits as floats: 19+ digits in a row go to the standard
#: library (a conservative test: such runs inside strings only cost speed)
_LONG_DIGITS = b"0" * 19
#: the text of a float with 0 < |x| < 1e-4: an exponent "<digit>e-…" (in the shapes) or
#: a plain "0.0000…" (in the text itself)
_SMALL_EXPONENT = b"0e-"
_SMALL_DECIMAL = b"0.0000"


def _shapes(raw: bytes) -> bytes:
    return raw.translate(_SHAPES)


def canonical_json_bytes_of_parsed(obj: Any, raw: bytes) -> bytes:
    """:func:`canonical_json_bytes` of ``obj = parse_strict_json(raw)``, faster.

    When ``raw`` shows no number that orjson would read or write differently
    (no run of 19 digits, no float text below 1e-4 — an exponent ``e-`` after
    a digit or a ``0.0000`` prefix), every value parsed from it is one that
    orjson writes in canonical form, so the walk over the values is skipped.
    Otherwise (and for text orjson refuses) this is :func:`canonical_json_bytes`.
    """
    if _orjson is not None:
        shapes = _shapes(raw)
        if (_LONG_DIGITS not in shapes and _SMALL_EXPONENT not in shapes
                and _SMALL_DECIMAL not in raw):
            try:
                return _orjson.dumps(obj, option=_orjson.OPT_SORT_KEYS)
            except TypeError:
                pass
    return canonical_json_bytes(obj)


def _refuse_constant(name: str) -> Any:
    """The ``parse_constant`` hook of :func:`json.loads`: never returns (JSON parser boundary)."""
    raise NonFiniteNumberError(f"non-finite number {name} in JSON text")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NonFiniteNumberError(f"number {text} is not finite as a double")
    return value


def parse_strict_json(data: bytes | str) -> Any:
    """Parse JSON text; ``NaN``/``Infinity``/``-Infinity`` raise :class:`NonFiniteNumberError`.

    So does a number that overflows a double (``1e400``). Invalid text raises
    ``ValueError`` (``json.JSONDecodeError`` or ``UnicodeDecodeError``).
    orjson parses when installed (it refuses the constants itself) unless the
    text has 19 or more digits in a row (orjson would read an integer beyond
    64 bits as a float); text orjson refuses (e.g. escaped lone surrogates) is
    parsed again by the standard library, so the accepted language and the
    values are the standard library's, minus the non-finite numbers. Text
    nested deeper than the interpreter's recursion limit raises ``ValueError``.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if _orjson is not None and _LONG_DIGITS not in _shapes(raw):
        try:
            return _orjson.loads(raw)
        except _orjson.JSONDecodeError:
            pass
    text = data if isinstance(data, str) else raw.decode("utf-8")
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise ValueError("JSON text nested too deeply") from None


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    """Hex SHA-256 of the UTF-8 encoding of ``text``."""
    return sha256_bytes(text.encode("utf-8"))


def sha256_json(obj: Any) -> str:
    """Hex SHA-256 of :func:`canonical_json` of ``obj``."""
    return sha256_text(canonical_json(obj))


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file's bytes, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def stable_int(*parts: object) -> int:
    """First 8 bytes (big-endian) of SHA-256 of ``"|".join(str(p) for p in parts)``."""
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


PACKAGE_ROOT = Path(__file__).resolve().parents[1]


def module_source_path(module_name: str) -> Path:
    """The source file of a module, found without importing it.

    foreseen's own modules are looked up in this package; another distribution's
    (a study plugin's outcome code) in the ``sys.path`` entries, first match wins,
    as the import system would for a plain or editable (src-path) install.
    """
    parts = module_name.split(".")
    if not parts or not all(part.isidentifier() for part in parts):
        raise ValueError(f"{module_name!r} is not a module name")
    roots = ([PACKAGE_ROOT] if parts[0] == "foreseen"
             else [Path(entry or ".").joinpath(parts[0]) for entry in sys.path])
    for root in roots:
        base = root.joinpath(*parts[1:])
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    raise ValueError(f"module {module_name} has no source file")


def code_digest(module_names: Iterable[str]) -> str:
    """SHA-256 over the named modules' source files.

    The digest covers, for each module in sorted name order, the line
    ``<module name>\\n<sha256 of its source bytes>\\n``; so renaming or editing
    any module changes it, and the order the caller lists them in does not.
    """
    lines = []
    for name in sorted(set(module_names)):
        lines.append(f"{name}\n{sha256_file(module_source_path(name))}\n")
    return sha256_text("".join(lines))


def current_umask() -> int:
    """The process's file-creation mask.

    Read from ``/proc/self/status`` where Linux provides it (no race with other
    threads); elsewhere by setting the mask and setting it straight back.
    """
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, with mode ``0o666 & ~umask``.

    Through :func:`foreseen.core.outputs.output_target`: a symbolic link is
    written through to its target, a device or pipe is written directly, a
    folder or other non-regular file is refused; a failure of the operating
    system (a full disk, a read-only folder) is one line
    (:class:`~foreseen.core.errors.UserInputError`) and leaves nothing behind.
    """
    where = output_target(path)
    data = scrub_bytes(data)  # no key value reaches a file (foreseen.core.secrets)
    if where.stream:
        write_stream(where.target, data)
        return
    target = where.target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                        dir=target.parent)
    except OSError as error:
        raise output_error(path, error) from None
    try:
        os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException as error:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        if isinstance(error, OSError):
            raise output_error(path, error) from None
        raise


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` as UTF-8 to ``path`` atomically (:func:`write_bytes_atomic`), as given."""
    write_bytes_atomic(path, text.encode("utf-8"))


def dumps_strict(obj: Any, *, indent: int | None = 2, sort_keys: bool = False) -> str:
    """JSON text that refuses NaN and infinities (raises :class:`NonFiniteNumberError`)."""
    _check_finite(obj)
    return json.dumps(obj, indent=indent, sort_keys=sort_keys, ensure_ascii=False,
                      allow_nan=False)


def write_json_atomic(path: str | os.PathLike[str], obj: Any, *, indent: int | None = 2,
                      sort_keys: bool = False) -> None:
    """Write strict JSON (no NaN) atomically, with a final newline."""
    write_text_atomic(path, dumps_strict(obj, indent=indent, sort_keys=sort_keys) + "\n")
