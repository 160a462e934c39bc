"""Scrubbing secrets out of everything a backend hands back to be stored.

A key can come back inside an answer in more than its plain form: a proxy
echoing it in a JSON error body writes it JSON-escaped (``\\u0073\\u006b-…``
for every character, or only some), a URL-encoded query string percent-encodes
it. :func:`scrub` replaces, for each secret, the plain text, its JSON string
form (:func:`json.dumps`), every-character ``\\uXXXX`` escapes (lower- and
upper-case hex) and its percent-encoding with :data:`REDACTED`. Every string a
backend returns (answer text, error text, the returned model id) passes
through it before the runner stores anything.
"""

from __future__ import annotations

import json
import urllib.parse

REDACTED = "[REDACTED]"
MIN_SECRET_LENGTH = 4


def _forms(secret: str) -> list[str]:
    escaped = "".join(f"\\u{ord(c):04x}" for c in secret)
    forms = {secret, json.dumps(secret, ensure_ascii=True)[1:-1],
             json.dumps(secret, ensure_ascii=False)[1:-1], escaped, escaped.upper().replace(
                 "\\U", "\\u"), urllib.parse.quote(secret, safe="")}
    return sorted((f for f in forms if f), key=len, reverse=True)


def scrub(text: str, secrets: tuple[str, ...] | list[str]) -> str:
    """``text`` with every form of every secret (module docstring) replaced by ``[REDACTED]``."""
    for secret in secrets:
        if len(secret) < MIN_SECRET_LENGTH:
            continue
        for form in _forms(secret):
            text = text.replace(form, REDACTED)
    return text


def scrub_optional(text: str | None, secrets: tuple[str, ...] | list[str]) -> str | None:
    """:func:`scrub` for a value that may be absent."""
    return None if text is None else scrub(text, secrets)
