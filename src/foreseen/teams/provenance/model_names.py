"""Canonical model names: one spelling per model, so that aliases of one model are merged.

Submissions name their models in many spellings (``claude-3-5-sonnet-20241022``,
``claude-3.5-sonnet-latest``, ``https://huggingface.co/zai-org/GLM-4.5`` …). The
rules below turn a raw name into a canonical one; they are applied in this order
and each is deliberately narrow:

1. **case and spaces** — trimmed and lower-cased (``Kimi-K2-Instruct`` =
   ``kimi-k2-instruct``).
2. **hub and provider prefixes** — everything up to the last ``/`` is dropped
   (``https://huggingface.co/Qwen/Qwen3-Coder-30B-A3B-Instruct``,
   ``openai/gpt-5-2025-08-07``, ``moonshot/kimi-k2-0711-preview``).
3. **snapshot suffixes** — a trailing full calendar date (``-YYYYMMDD`` or
   ``-YYYY-MM-DD``, year 2020–2039, valid month and day) or ``-latest`` names a
   snapshot of the model before it, and all snapshots count as that model
   (``gpt-4o-2024-05-13`` and ``gpt-4o-2024-08-06`` → ``gpt-4o``). Shorter
   vendor version codes (``-0613``, ``-1106-preview``, ``-2507``, ``-0324``) are
   kept: they name distinct releases, not dates of one release.
4. **Claude word order** — ``claude-<version>-<tier>`` and
   ``claude-<tier>-<version>`` (tier opus, sonnet or haiku; version digits joined
   by ``.`` or ``-``) become ``claude-<tier>-<version with dots>``
   (``claude-3-5-sonnet`` = ``claude-3.5-sonnet`` → ``claude-sonnet-3.5``;
   ``claude-4-sonnet`` = ``claude-sonnet-4``).

Merging snapshots is the conservative choice for dependence: two snapshots of
one named model share most of their training, so they are clustered together.
Every merge is listed by :func:`alias_merges` and in the reports.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["alias_merges", "canonical_model", "canonical_models"]

_DATE_SUFFIX = re.compile(r"-(20[23]\d)-?(0[1-9]|1[0-2])-?(0[1-9]|[12]\d|3[01])$")
_LATEST_SUFFIX = "-latest"
_CLAUDE_VERSION_FIRST = re.compile(r"^claude-(\d+(?:[.-]\d)?)-(opus|sonnet|haiku)$")
_CLAUDE_TIER_FIRST = re.compile(r"^claude-(opus|sonnet|haiku)-(\d+(?:[.-]\d)?)$")


def _strip_snapshot(name: str) -> str:
    """Rule 3: drop trailing ``-latest`` and full-date suffixes, repeatedly."""
    while True:
        if name.endswith(_LATEST_SUFFIX) and len(name) > len(_LATEST_SUFFIX):
            name = name[: -len(_LATEST_SUFFIX)]
            continue
        match = _DATE_SUFFIX.search(name)
        if match is None or match.start() == 0:
            return name
        name = name[: match.start()]


def _claude_order(name: str) -> str:
    """Rule 4: ``claude-<tier>-<version with dots>``."""
    match = _CLAUDE_VERSION_FIRST.match(name)
    if match is not None:
        version, tier = match.group(1), match.group(2)
    else:
        match = _CLAUDE_TIER_FIRST.match(name)
        if match is None:
            return name
        tier, version = match.group(1), match.group(2)
    return f"claude-{tier}-{version.replace('-', '.')}"


def canonical_model(name: str) -> str:
    """The canonical name of a model (rules 1–4 of the module docstring); '' stays ''."""
    text = name.strip().lower()
    text = text.rsplit("/", 1)[-1].strip()
    text = _strip_snapshot(text)
    return _claude_order(text)


def canonical_models(names: Iterable[str]) -> tuple[str, ...]:
    """Sorted distinct canonical names of the non-empty raw names."""
    return tuple(sorted({canonical_model(n) for n in names if n.strip()}))


def merges_among(names: Iterable[str]) -> list[tuple[str, str]]:
    """``(raw, canonical)`` for every distinct raw name that a rule changed, sorted."""
    pairs = {(raw, canonical_model(raw)) for raw in names if raw.strip()}
    return sorted((raw, canonical) for raw, canonical in pairs if raw != canonical)


def alias_merges(names: Iterable[str] | None = None) -> list[tuple[str, str]]:
    """``(alias, canonical)`` pairs: every raw model name whose spelling a rule changed.

    ``names`` defaults to every model name in the shipped leaderboard copy.
    """
    if names is None:
        from foreseen.teams.provenance.leaderboard import shipped_leaderboard_models

        names = shipped_leaderboard_models()
    return merges_among(names)
