"""llama.cpp GBNF grammars for the JSON schemas backends answer with (a bounded subset).

:func:`gbnf_grammar` turns a schema of objects, numbers, enumerated strings
and length-capped strings into a grammar that admits exactly the compact JSON
of that schema (keys in schema order), so a small local model cannot produce
anything else; :func:`max_output_chars` is the longest text the grammar
admits (the token budget a call needs). Numbers: an optional minus, up to
four integer digits, up to six decimals. Grammar format: llama.cpp's GBNF
(``grammars/README.md`` of ggml-org/llama.cpp).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

GRAMMAR_VERSION = "foreseen-gbnf/1"

_GBNF_NUMBER = '"-"? ("0" | [1-9] [0-9]{0,3}) ("." [0-9]{1,6})?'
_GBNF_CHAR = r'[ !#-\[\]-~]'
_NUMBER_CHARS = 1 + 4 + 1 + 6


def _literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _gbnf_value(schema: Mapping[str, Any], rules: dict[str, str], name: str) -> str:
    kind = schema.get("type")
    if kind == "object":
        parts = []
        for index, (key, sub) in enumerate(schema["properties"].items()):
            prefix = "{" if index == 0 else ", "
            parts.append(_literal(f'{prefix}"{key}": '))
            parts.append(_gbnf_value(sub, rules, f"{name}-{key}".replace("_", "-")))
        parts.append(_literal("}"))
        rules[name] = " ".join(parts)
        return name
    if kind == "number":
        return "number"
    if kind == "string" and "enum" in schema:
        rules[name] = " | ".join(_literal(f'"{value}"') for value in schema["enum"])
        return name
    if kind == "string":
        rules[name] = f'"\\"" char{{0,{int(schema["maxLength"])}}} "\\""'
        return name
    raise ValueError(f"schema type {kind!r} is outside the supported subset")


def gbnf_grammar(schema: Mapping[str, Any]) -> str:
    """A bounded llama.cpp GBNF grammar admitting exactly the compact JSON of ``schema``."""
    rules: dict[str, str] = {}
    root = _gbnf_value(schema, rules, "value")
    lines = [f"root ::= {root}"]
    lines += [f"{name} ::= {body}" for name, body in rules.items()]
    lines += [f"number ::= {_GBNF_NUMBER}", f"char ::= {_GBNF_CHAR}"]
    return "\n".join(lines) + "\n"


def max_output_chars(schema: Mapping[str, Any]) -> int:
    """The longest text (in characters) the grammar of ``schema`` admits."""
    kind = schema.get("type")
    if kind == "object":
        total = 2  # "{" and "}"
        for index, (key, sub) in enumerate(schema["properties"].items()):
            total += (0 if index == 0 else 2) + len(key) + 4 + max_output_chars(sub)
        return total
    if kind == "number":
        return _NUMBER_CHARS
    if kind == "string" and "enum" in schema:
        return 2 + max(len(str(v)) for v in schema["enum"])
    if kind == "string":
        return 2 + int(schema["maxLength"])
    raise ValueError(f"schema type {kind!r} is outside the supported subset")
