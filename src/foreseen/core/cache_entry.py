"""Build-cache entries that carry the digest of their own content.

A study's build cache holds executed states and their **sealed outcomes**: an
entry edited by hand (one ``y`` changed) would flow straight into
``outcomes.sealed.json``, and a truncated one would stop the build. Each entry
is therefore written as ``{"format", "sha256", "content"}`` where ``sha256`` is
the SHA-256 of the canonical JSON of ``content``
(:func:`foreseen.core.digest.sha256_json`). :func:`read_cache_entry` returns
the content only when the file parses and the digest matches; anything else (a
missing digest, a changed value, a truncated or unreadable file, an entry in an
older layout) is a miss: the caller rebuilds that entry and overwrites it, and
one line on standard error says which entry was rebuilt and why.

The digest guards against accidents and hand edits, not against someone who
recomputes it (it is unkeyed, like the ledger's chain): the outcome commitment
in the plan and ``--verify-outcomes`` (re-executing a seeded share of states)
are what tie the sealed outcomes to the computation.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from foreseen.core.digest import sha256_json, write_json_atomic

CACHE_FORMAT = "foreseen.cache-entry/1"


def write_cache_entry(path: str | os.PathLike[str], content: Any) -> None:
    """Write ``content`` with its digest, atomically (compact, sorted keys)."""
    write_json_atomic(path, {"format": CACHE_FORMAT, "sha256": sha256_json(content),
                             "content": content}, indent=None, sort_keys=True)


def _problem(path: Path) -> tuple[Any, str | None]:
    """(content, None) for a sound entry, else (None, why it is not used)."""
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        return None, f"unreadable ({error.strerror})"
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None, "not valid JSON (truncated?)"
    if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT \
            or "content" not in entry or not isinstance(entry.get("sha256"), str):
        return None, "not a cache entry of this version"
    try:
        actual = sha256_json(entry["content"])
    except (TypeError, ValueError):
        return None, "holds a value JSON cannot digest"
    if actual != entry["sha256"]:
        return None, "content does not match its digest (edited?)"
    return entry["content"], None


def read_cache_entry(path: str | os.PathLike[str]) -> Any | None:
    """The content of the entry at ``path``; None if absent or unsound (then say so)."""
    file = Path(path)
    if not file.exists() and not file.is_symlink():
        return None
    content, why = _problem(file)
    if why is not None:
        sys.stderr.write(f"foreseen: note: cache entry {file.name}: {why}; rebuilding it\n")
        return None
    return content
