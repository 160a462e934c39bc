"""Canonical JSON, SHA-256 digests and strict, atomic JSON writing.

* :func:`canonical_json` — sorted keys, ``(",", ":")`` separators, UTF-8 (no
  ASCII escaping), NaN and infinities refused. Its SHA-256 identifies plans
  and other frozen artefacts.
* :func:`sha256_file`, :func:`sha256_bytes`, :func:`sha256_text` — hex digests.
* :func:`stable_int` — a 64-bit integer from SHA-256 of text parts joined by ``|``
  (a seed that is stable across runs, platforms and Python's hash seed).
* :func:`code_digest` — one digest over the source of a set of modules, in a
  fixed order, so a report can say exactly which analysis code produced it.
* :func:`write_json_atomic` / :func:`write_text_atomic` — write to a temporary
  file in the target folder, fsync, then ``os.replace``: a reader never sees a
  half-written file and a failure leaves nothing behind. The file gets the mode
  any file the user writes gets, ``0o666 & ~umask`` (``tempfile.mkstemp``
  alone would leave it ``0o600``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any


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


def canonical_json(obj: Any) -> str:
    """Return the canonical JSON text of ``obj`` (sorted keys, compact, UTF-8, no NaN)."""
    _check_finite(obj)
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


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
    """The source file of one of foreseen's own modules, found without importing it."""
    parts = module_name.split(".")
    if parts[0] != "foreseen" or not all(part.isidentifier() for part in parts):
        raise ValueError(f"{module_name!r} is not a module of the foreseen package")
    base = PACKAGE_ROOT.joinpath(*parts[1:])
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
    """Write ``data`` to ``path`` atomically, with mode ``0o666 & ~umask``."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically (temporary file in the same folder, then rename)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def dumps_strict(obj: Any, *, indent: int | None = 2, sort_keys: bool = False) -> str:
    """JSON text that refuses NaN and infinities (raises :class:`NonFiniteNumberError`)."""
    _check_finite(obj)
    return json.dumps(obj, indent=indent, sort_keys=sort_keys, ensure_ascii=False,
                      allow_nan=False)


def write_json_atomic(path: str | os.PathLike[str], obj: Any, *, indent: int | None = 2,
                      sort_keys: bool = False) -> None:
    """Write strict JSON (no NaN) atomically, with a final newline."""
    write_text_atomic(path, dumps_strict(obj, indent=indent, sort_keys=sort_keys) + "\n")
