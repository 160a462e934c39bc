"""Token usage as a model server reports it, read into one typed record.

Servers report usage as a JSON object under their own field names (OpenAI and
llama.cpp ``prompt_tokens`` / ``completion_tokens``; Anthropic ``input_tokens``
/ ``output_tokens`` and its prompt-cache fields). :func:`usage_count` reads one
count from such an object; each backend builds a :class:`TokenUsage` from the
counts its provider reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """The tokens one call used (None: the server did not report the count, or not usably).

    ``input_tokens`` counts every input token, those written to or read from a
    prompt cache included; ``cache_write_tokens`` and ``cache_read_tokens`` are
    the cached parts of it.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_write_tokens: int | None = None
    cache_read_tokens: int | None = None


def usage_count(usage: Any, key: str) -> int | None:
    """``usage[key]`` when ``usage`` is a JSON object and the value a non-negative integer.

    None otherwise: an absent field, a bool, a float, a negative number, or a
    ``usage`` that is not an object.
    """
    if not isinstance(usage, Mapping):
        return None
    value = usage.get(key)
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return value if ok else None
