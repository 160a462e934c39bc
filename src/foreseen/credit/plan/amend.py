"""Amendment settings from ``KEY.PATH=JSON`` strings (``foreseen credit amend --set``).

``analysis.replicates=2000`` sets one field inside the plan's ``analysis``
block; ``execution={"concurrency": 2, …}`` replaces a whole block. The value
is JSON. Setting a field under its current name on a plan frozen before the
field was renamed replaces the old name (``analysis.replicates`` replaces a
parent's ``bootstrap_b``); setting the old name on a plan that has the new one
leaves both, which the analysis configuration refuses. Which blocks may change at all is decided by
:func:`foreseen.credit.plan.child_plans.amend_plan`.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from foreseen.core.digest import NonFiniteNumberError, parse_strict_json
from foreseen.core.errors import ConfigError
from foreseen.credit.analysis.config import RENAMED_KEYS
from foreseen.credit.plan.freeze import FrozenPlan


def parse_settings(parent: FrozenPlan, items: Sequence[str]) -> dict[str, Any]:
    """The changed top-level blocks, each a deep copy of the parent's with the settings applied."""
    changes: dict[str, Any] = {}
    for item in items:
        path, sep, raw = item.partition("=")
        keys = path.split(".")
        if not sep or not all(keys):
            raise ConfigError(f"--set {item!r}: expected KEY.PATH=JSON")
        try:
            value = parse_strict_json(raw)
        except NonFiniteNumberError:
            raise ConfigError(f"--set {item!r}: NaN and infinities are not allowed") from None
        except ValueError:
            raise ConfigError(f"--set {item!r}: the value is not JSON") from None
        top = keys[0]
        if len(keys) == 1:
            changes[top] = value
            continue
        tree = changes.setdefault(top, copy.deepcopy(parent.body.get(top)))
        node = tree
        for key in keys[1:-1]:
            if not isinstance(node, dict) or key not in node:
                raise ConfigError(f"--set {item!r}: {key!r} is not in the plan")
            node = node[key]
        if not isinstance(node, dict):
            raise ConfigError(f"--set {item!r}: cannot set a field inside a non-object")
        node[keys[-1]] = value
        if keys[:-1] == ["analysis"]:
            _drop_old_name(node, keys[-1])
    return changes


def _drop_old_name(analysis: dict[str, Any], key: str) -> None:
    """Remove the older name of ``key`` (:data:`RENAMED_KEYS`) from an analysis block."""
    for old, new in RENAMED_KEYS.items():
        if new == key:
            analysis.pop(old, None)
