"""How a backend constrains an answer to the JSON it asks for: the output modes.

Servers that speak the same API constrain answers in different ways, and each
accepts a different subset (design notes, "Talking to real servers"). A backend
is configured with one **output mode**, frozen in the plan (the configuration's
``structured_output``) and recorded with every call:

================  ==============================================================
``json_schema``   OpenAI ``response_format = {"type": "json_schema", "json_schema":
                  {"name", "schema", "strict": true}}`` (OpenAI, vLLM, Ollama ≥ 0.5,
                  llama.cpp's C++ server, LM Studio)
``json_object``   ``response_format = {"type": "json_object", "schema": …}`` — JSON
                  mode; llama.cpp (C++ and llama-cpp-python) also constrain the answer
                  by the ``schema`` field, other servers only to *some* JSON object
``tools``         a forced tool call whose parameters are the schema (Anthropic tool
                  use; OpenAI ``tools`` + ``tool_choice``)
``grammar``       a llama.cpp GBNF grammar of the schema (the ``grammar`` field of
                  llama.cpp's servers; the in-process local backend)
``text``          no constraint: the prompt asks for the JSON, the answer text is
                  searched for it (:mod:`foreseen.credit.run.answers`)
================  ==============================================================

``auto`` is not a mode but a request: the probe (:mod:`foreseen.credit.run.probe`)
tries the backend's modes in its documented order (:data:`AUTO_ORDER`) and the
first one that works is what the plan freezes; a backend left at ``auto`` makes
no call.
"""

from __future__ import annotations

from typing import Literal

from foreseen.core.errors import ConfigError

OutputMode = Literal["json_schema", "json_object", "tools", "grammar", "text"]
OUTPUT_MODES: tuple[OutputMode, ...] = ("json_schema", "json_object", "tools", "grammar",
                                        "text")
AUTO = "auto"
#: the order ``auto`` tries, per backend: the strictest constraint first, prose last
AUTO_ORDER: dict[str, tuple[OutputMode, ...]] = {
    "openai_compatible": ("json_schema", "json_object", "tools", "grammar", "text"),
    "anthropic": ("tools", "text"),
    "local": ("grammar", "text"),
}


def parse_output_mode(value: object, backend: str, default: OutputMode) -> str:
    """A mode this backend supports, or ``auto``; one-line :class:`ConfigError` otherwise."""
    if value is None:
        return default
    supported = AUTO_ORDER[backend]
    if value == AUTO or value in supported:
        return str(value)
    raise ConfigError(f"backend {backend!r}: output_mode {value!r} is not one of"
                      f" {', '.join(supported)} or auto")


def unresolved(backend: str) -> ConfigError:
    """The error for a call made while the mode is still ``auto``."""
    return ConfigError(f"backend {backend!r}: output_mode auto must be resolved by the probe"
                       " before the plan is frozen ('foreseen credit probe --config FILE'"
                       " shows what the server accepts)")
