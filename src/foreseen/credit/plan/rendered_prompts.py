"""The rendered prompts of a plan, as the freeze checks read them (blinding, outcome leak).

The freeze renders every slot's prompt once per (explainer, state, context);
:class:`RenderedPrompt` keeps what the checks need: the slot it belongs to (its
first repeat), the receiving state, the donor whose explanation it shows (if
any), the whole prompt and the block the context *added* to it (the
explanation, note or card; ``None`` for a description). A renderer that does
not report its added block is checked on its whole prompt.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from foreseen.credit.model import State


@dataclass(frozen=True)
class RenderedPrompt:
    """One rendered prompt of a plan (see the module docstring)."""

    slot: str
    explainer: str | None
    state_id: str
    donor_state_id: str | None
    prompt: str
    added: str | None

    def added_span(self) -> tuple[int, int] | None:
        """(start, end) of the added block in the prompt (None without one)."""
        if not self.added:
            return None
        start = self.prompt.rfind(self.added)
        return None if start < 0 else (start, start + len(self.added))

    def scanned_text(self) -> str:
        """The text a blinding scan reads: the added block, else the whole prompt."""
        return self.added if self.added is not None else self.prompt


def public_leaves(public: Mapping[str, Any] | Sequence[Any], prefix: str = ""
                  ) -> dict[str, float]:
    """Dotted key → value of every finite numeric leaf of a public state (lists by index).

    Booleans are not quantities; strings are skipped.
    """
    items = ([(str(k), v) for k, v in public.items()] if isinstance(public, Mapping)
             else [(str(i), v) for i, v in enumerate(public)])
    leaves: dict[str, float] = {}
    for key, value in items:
        name = f"{prefix}.{key}" if prefix else key
        if isinstance(value, (bool, str)):
            continue
        if isinstance(value, (int, float)):
            if math.isfinite(value):
                leaves[name] = float(value)
        elif isinstance(value, (Mapping, list, tuple)):
            leaves.update(public_leaves(value, name))
    return dict(sorted(leaves.items()))


def state_leaves(state: State) -> dict[str, float]:
    """:func:`public_leaves` of a state's public state."""
    return public_leaves(state.public)
