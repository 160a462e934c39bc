"""One registry of forecaster backends, by name (spec credit.md §10).

``make_backend({"backend": name, "options": {...}})`` builds a backend; the
plan's forecaster block (``{"factory": name, "options": {...}}``) is accepted
as is. Names:

* offline — ``card_reader``, ``zero``, ``catalog_prior``
  (:mod:`foreseen.credit.backends.offline`);
* HTTP (extra ``[llm]``) — ``anthropic`` (:class:`~.anthropic.AnthropicBackend`),
  ``openai_compatible`` (:class:`~.openai_compatible.OpenAICompatibleBackend`).

Other backends register with one line in :data:`BACKENDS` (``module:class``
path, imported only when used, so the core never imports an optional extra).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from foreseen.core.errors import UserInputError
from foreseen.credit.backends.base import Backend

#: registry name → ``module:callable`` building the backend from keyword options
BACKENDS: dict[str, str] = {
    "card_reader": "foreseen.credit.backends.offline:CardReadingForecaster",
    "zero": "foreseen.credit.backends.offline:ConstantForecaster",
    "catalog_prior": "foreseen.credit.backends.offline:_catalog_prior_forecaster",
    "anthropic": "foreseen.credit.backends.http.anthropic:AnthropicBackend",
    "openai_compatible": "foreseen.credit.backends.http.openai_compatible:OpenAICompatibleBackend",
    "command": "foreseen.credit.backends.command:CommandBackend",
    "local": "foreseen.credit.backends.local:LocalLlamaBackend",
}


def backend_names() -> list[str]:
    """The registered names, sorted."""
    return sorted(BACKENDS)


def build_named_backend(name: str, options: Mapping[str, Any]) -> Backend:
    """Build the backend registered as ``name`` with ``options``; one-line errors."""
    if name not in BACKENDS:
        raise UserInputError(
            f"unknown forecaster backend {name!r}; choose one of {', '.join(backend_names())}")
    module_name, _, attr = BACKENDS[name].partition(":")
    maker = getattr(importlib.import_module(module_name), attr)
    try:
        backend: Backend = maker(**dict(options))
    except TypeError as error:
        raise UserInputError(f"backend {name!r}: bad options ({error})") from None
    return backend


def make_backend(config: Mapping[str, Any]) -> Backend:
    """Build a backend from ``{"backend" (or "factory"): name, "options": {...}}``."""
    name = config.get("backend", config.get("factory"))
    if not isinstance(name, str):
        raise UserInputError("backend configuration needs a 'backend' name")
    options = config.get("options", {})
    if not isinstance(options, Mapping):
        raise UserInputError(f"backend {name!r}: options must be an object")
    return build_named_backend(name, options)
