"""The one registry and builder of model backends, by name (credit §10).

Every backend a plan, a study or a run configuration names is built here and
nowhere else: :func:`make_backend` looks the name up in :data:`BACKENDS` and
calls its factory with the options. A name is never a path to code — nothing
read from a file can make foreseen import or run code of its choosing.

Built in:

==================  =======  =================================================
name                kind     what it is
==================  =======  =================================================
``card_reader``     offline  stand-in that reads the card's numbers (no model)
``catalog_prior``   offline  stand-in that answers the catalog prior only
``zero``            offline  constant forecast 0 in [0, 0] (a baseline)
``synthetic_truth`` offline  stand-in oracle with declared effects (tests recovery)
``anthropic``       http     Anthropic Messages API (extra ``[llm]``)
``openai_compatible`` http   any OpenAI-compatible chat completions server
``command``         command  a program: prompt on stdin, answer on stdout
``local``           local    a GGUF model in-process through llama.cpp
==================  =======  =================================================

Factories import their optional packages when called (inspect-ai's provider
registry does the same), so listing the registry imports no extra.

Other backends join in two ways, both by code the user installed or runs, never
by a file: an installed distribution that declares an entry point in the group
:data:`ENTRY_POINT_GROUP` (``name = "package.module:factory"``), loaded the
first time an unknown name is asked for; or :func:`register_backend` called in
the user's own Python process (a notebook, a test).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Literal

from foreseen.core.errors import ConfigError
from foreseen.core.secrets import remember_secret_names
from foreseen.credit.backends.base import Backend

ENTRY_POINT_GROUP = "foreseen.backends"
Kind = Literal["offline", "http", "command", "local", "plugin"]
Factory = Callable[..., Backend]


@dataclass(frozen=True)
class BackendEntry:
    """A registered backend: its factory, kind, whether it is a stand-in, a one-line summary."""

    name: str
    factory: Factory
    kind: Kind
    stand_in: bool
    summary: str


def _card_reader(**options: Any) -> Backend:
    from foreseen.credit.backends.offline import CardReadingForecaster

    return CardReadingForecaster(**options)


def _catalog_prior(**options: Any) -> Backend:
    from foreseen.credit.backends.offline import CardReadingForecaster

    return CardReadingForecaster(read_explanations=False, name="catalog_prior", **options)


def _zero(**options: Any) -> Backend:
    from foreseen.credit.backends.offline import ConstantForecaster

    return ConstantForecaster(**options)


def _synthetic_truth(**options: Any) -> Backend:
    from foreseen.credit.backends.synthetic import SyntheticTruthForecaster

    return SyntheticTruthForecaster(**options)


def _anthropic(**options: Any) -> Backend:
    from foreseen.credit.backends.http.anthropic import AnthropicBackend

    return AnthropicBackend(**options)


def _openai_compatible(**options: Any) -> Backend:
    from foreseen.credit.backends.http.openai_compatible import OpenAICompatibleBackend

    return OpenAICompatibleBackend(**options)


def _command(**options: Any) -> Backend:
    from foreseen.credit.backends.command import CommandBackend

    return CommandBackend(**options)


def _local(**options: Any) -> Backend:
    from foreseen.credit.backends.local import LocalLlamaBackend

    return LocalLlamaBackend(**options)


BACKENDS: dict[str, BackendEntry] = {entry.name: entry for entry in (
    BackendEntry("card_reader", _card_reader, "offline", True,
                 "copies the number on the card it is shown (no model is called); its drift"
                 " between repeats is the same in every arm by construction"),
    BackendEntry("catalog_prior", _catalog_prior, "offline", True,
                 "answers the intervention's public catalog prior and ignores the explanation"
                 " (no model is called)"),
    BackendEntry("zero", _zero, "offline", True,
                 "answers 0 in [0, 0] for every slot (a constant baseline, no model)"),
    BackendEntry("synthetic_truth", _synthetic_truth, "offline", True,
                 "is given the outcomes and errs by declared amounts (its true effect on point"
                 " error and on drift is a parameter; no model is called)"),
    BackendEntry("anthropic", _anthropic, "http", False, "Anthropic Messages API"),
    BackendEntry("openai_compatible", _openai_compatible, "http", False,
                 "OpenAI-compatible chat completions (OpenAI, vLLM, llama.cpp server, …)"),
    BackendEntry("command", _command, "command", False,
                 "a command-line program: prompt on stdin, JSON on stdout"),
    BackendEntry("local", _local, "local", False, "a GGUF model in-process (llama.cpp)"),
)}
_entry_points_loaded = False


def register_backend(name: str, factory: Factory, *, kind: Kind = "plugin",
                     stand_in: bool = False, summary: str = "") -> None:
    """Add a backend to the registry from the caller's own code (not from a file)."""
    if not name or ":" in name or name in BACKENDS:
        raise ConfigError(f"backend name {name!r} is empty, has a colon or is taken")
    BACKENDS[name] = BackendEntry(name, factory, kind, stand_in, summary)


def unregister_backend(name: str) -> None:
    """Remove a backend added with :func:`register_backend` (tests)."""
    entry = BACKENDS.get(name)
    if entry is not None and entry.kind == "plugin":
        del BACKENDS[name]


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if point.name in BACKENDS:
            continue

        def factory(_point: metadata.EntryPoint = point, **options: Any) -> Backend:
            made: Backend = _point.load()(**options)
            return made

        BACKENDS[point.name] = BackendEntry(point.name, factory, "plugin", False,
                                            f"installed plugin {point.value}")


def backend_entry(name: str) -> BackendEntry:
    """The registry entry for ``name``; a one-line :class:`ConfigError` when unknown."""
    if name not in BACKENDS:
        _load_entry_points()
    if name not in BACKENDS:
        raise ConfigError(
            f"unknown backend {name!r}; choose one of {', '.join(backend_names())}")
    return BACKENDS[name]


def backend_names() -> list[str]:
    """The registered names, sorted."""
    return sorted(BACKENDS)


def build_backend(name: str, options: Mapping[str, Any]) -> Backend:
    """Build the backend registered as ``name`` with ``options``; one-line errors."""
    entry = backend_entry(name)
    if not isinstance(options, Mapping):
        raise ConfigError(f"backend {name!r}: options must be an object")
    remember_secret_names(options)  # their values are scrubbed from everything recorded
    try:
        return entry.factory(**dict(options))
    except TypeError as error:
        raise ConfigError(_options_mismatch(name, options, error)) from None


def _constructor_of(error: TypeError) -> type | None:
    """The backend class whose constructor refused the options (the raising frame's own name).

    A refused call raises in the frame that made it (the factory), where the
    class is a name; None when the error came from elsewhere.
    """
    trace = error.__traceback__
    while trace is not None and trace.tb_next is not None:
        trace = trace.tb_next
    if trace is None:
        return None
    frame = trace.tb_frame
    found = [value for value in (*frame.f_locals.values(), *frame.f_globals.values())
             if isinstance(value, type) and issubclass(value, Backend) and value is not Backend]
    named = [cls for cls in found if str(error).startswith(f"{cls.__name__}.")]
    return named[0] if named else None


def _options_mismatch(name: str, options: Mapping[str, Any], error: TypeError) -> str:
    """One line: which given options the backend does not know, which it needs, what it accepts.

    Computed from the constructor's signature (never Python's own wording); the
    accepted names listed are its keyword parameters.
    """
    cls = _constructor_of(error)
    if cls is None:
        given = ", ".join(sorted(options)) or "none"
        return f"backend {name!r}: its options do not fit ({given} given)"
    parameters = [p for p in inspect.signature(cls).parameters.values()
                  if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    accepted = [p.name for p in parameters]
    unknown = sorted(set(options) - set(accepted))
    missing = [p.name for p in parameters if p.default is p.empty and p.name not in options]
    parts = ([f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}"]
             if unknown else [])
    if missing:
        parts.append(f"missing option{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    return (f"backend {name!r}: {'; '.join(parts) or 'options do not fit'};"
            f" it accepts {', '.join(accepted) or 'no options'}")


def make_backend(config: Mapping[str, Any]) -> Backend:
    """Build a backend from ``{"backend" (or a plan's "factory"): name, "options": {...}}``."""
    name = config.get("backend", config.get("factory"))
    if not isinstance(name, str):
        raise ConfigError("backend configuration needs a 'backend' name")
    options = config.get("options", {})
    if not isinstance(options, Mapping):
        raise ConfigError(f"backend {name!r}: options must be an object")
    return build_backend(name, options)
