"""The registry of context renderers a plan may name (credit §3).

A plan records the *name* of the renderer that turns (study, state, context
id, explanations, donor maps) into a prompt (its ``contexts_module`` field);
the runner re-renders every slot with it and refuses a prompt whose digest
changed. A name is looked up here and never imported: nothing read from a
plan can make foreseen load code.

Built in: :data:`STANDARD` — :mod:`foreseen.credit.plan.contexts` (the
versioned forecast prompt of :mod:`foreseen.credit.plan.prompts`, version 1),
and :data:`CACHE_FIRST` — the same contexts laid out for prompt caching
(version 2: instructions, state, then what the context adds), which new plans
name. Plans frozen
before the package was split into sub-packages recorded the module path
``foreseen.credit.contexts``; that name is read as the same renderer.
A test or a notebook may add its own renderer with :func:`register_renderer`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from foreseen.core.errors import ConfigError
from foreseen.credit.model import State, Study
from foreseen.credit.plan import contexts

STANDARD = "standard"
#: the standard contexts with the prompt laid out for caching (``credit-prompt/2``)
CACHE_FIRST = "cache_first"
#: names older plans recorded for the standard renderer
LEGACY_NAMES: tuple[str, ...] = ("foreseen.credit.contexts",)


class Rendered(Protocol):
    """What a renderer returns for one slot (see :class:`contexts.RenderedContext`)."""

    @property
    def prompt(self) -> str: ...

    @property
    def payload(self) -> Mapping[str, Any]: ...

    @property
    def delivered(self) -> bool | None: ...

    @property
    def donor_state_id(self) -> str | None: ...

    @property
    def cache_prefix(self) -> int: ...


class ContextRenderer(Protocol):
    """Renders a slot's prompt; gives donor maps, parses context ids, digests its template."""

    PROMPT_TEMPLATE_VERSION: str

    def render_context(self, study: Study, state: State, cid: str, explainer: str | None,
                       explanations: Mapping[str, Any],
                       donors: Mapping[str, Mapping[str, str]],
                       signal: float | None = None) -> Rendered: ...

    def donor_map(self, name: str, study: Study, seed: int) -> Mapping[str, str]: ...

    def parse_context_id(self, cid: str) -> tuple[str, str | None]: ...

    def prompt_template_digest(self) -> str: ...


_RENDERERS: dict[str, ContextRenderer] = {STANDARD: contexts, CACHE_FIRST: contexts.CACHE_FIRST}


def register_renderer(name: str, renderer: ContextRenderer) -> None:
    """Add a renderer under ``name`` from the caller's own code (tests, notebooks)."""
    if not name or name in (STANDARD, CACHE_FIRST) or name in LEGACY_NAMES:
        raise ConfigError(f"renderer name {name!r} is reserved")
    _RENDERERS[name] = renderer


def renderer(name: str) -> ContextRenderer:
    """The renderer registered as ``name`` (legacy names map to the standard one)."""
    key = STANDARD if name in LEGACY_NAMES else name
    found = _RENDERERS.get(key)
    if found is None:
        raise ConfigError(
            f"unknown context renderer {name!r}; registered: {', '.join(sorted(_RENDERERS))}")
    return found
