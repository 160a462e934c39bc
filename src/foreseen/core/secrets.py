"""Secrets: the one environment rule for every child process and the one scrubbing rule.

**Which values are secret.** The value of every environment variable whose
name a configuration names as holding a key (``api_key_env``, ``secret_env``;
:func:`remember_secret_names`) and of every provider key variable present in
the environment, listed or not — a name ending in one of
:data:`SECRET_NAME_SUFFIXES` (``ANTHROPIC_API_KEY``, ``HF_TOKEN`` …) whose
value has at least :data:`MIN_DISCOVERED_SECRET_LENGTH` characters (a short
value such as ``1`` or ``true`` is a flag, not a key, and scrubbing it would
corrupt every text).

**Scrubbing.** A key can come back inside an answer in more than its plain
form: a proxy echoing it in a JSON error body writes it JSON-escaped
(``\\u0073\\u006b-…`` for every character, or only some), a URL-encoded
query string percent-encodes it. :func:`scrub` replaces, for each secret, the
plain text, its JSON string form (:func:`json.dumps`), every-character
``\\uXXXX`` escapes (lower- and upper-case hex) and its percent-encoding with
:data:`REDACTED`. :func:`scrub_secrets` applies it with every secret value
present; the ledger scrubs every event it appends (:mod:`foreseen.core.ledger`),
every file foreseen writes is scrubbed (:func:`foreseen.core.digest.write_bytes_atomic`)
and so is every error line the command line prints.

**Child processes.** :func:`child_environment` is the environment a program
foreseen starts gets: :data:`BASE_ENVIRONMENT` (what a program needs to find
itself and its locale) plus the variables its configuration names, nothing
else — a key the plan does not hand to the program is never in its reach.
"""

from __future__ import annotations

import json
import os
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[REDACTED]"
#: a configured secret shorter than this is not scrubbed (it would match everywhere)
MIN_SECRET_LENGTH = 4
#: name endings of provider key variables, scrubbed whether or not a configuration names them
SECRET_NAME_SUFFIXES = ("_API_KEY", "_TOKEN")
#: a variable found by its name ending is a key only from this many characters on
MIN_DISCOVERED_SECRET_LENGTH = 12
#: the variables every child process gets (besides the ones its configuration names)
BASE_ENVIRONMENT = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE",
                    "LC_MESSAGES", "LC_NUMERIC", "TZ", "TMPDIR", "TEMP", "TMP", "SHELL", "TERM",
                    "SYSTEMROOT")

_CONFIGURED: set[str] = set()


def remember_secret_names(options: Mapping[str, Any]) -> None:
    """Note the key variables a backend's options name (``api_key_env``, ``secret_env``)."""
    named = options.get("api_key_env")
    if isinstance(named, str) and named:
        _CONFIGURED.add(named)
    listed = options.get("secret_env")
    if isinstance(listed, list | tuple):
        _CONFIGURED.update(name for name in listed if isinstance(name, str) and name)


def secret_values(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Every secret value present (module docstring), longest first."""
    env = os.environ if environ is None else environ
    found = {value for name, value in env.items()
             if (name in _CONFIGURED and len(value) >= MIN_SECRET_LENGTH)
             or (name.upper().endswith(SECRET_NAME_SUFFIXES)
             and len(value) >= MIN_DISCOVERED_SECRET_LENGTH)}
    return tuple(sorted(found, key=len, reverse=True))


def _forms(secret: str) -> list[str]:
    escaped = "".join(f"\\u{ord(c):04x}" for c in secret)
    forms = {secret, json.dumps(secret, ensure_ascii=True)[1:-1],
             json.dumps(secret, ensure_ascii=False)[1:-1], escaped, escaped.upper().replace(
                 "\\U", "\\u"), urllib.parse.quote(secret, safe="")}
    return sorted((f for f in forms if f), key=len, reverse=True)


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every form of every secret (module docstring) replaced by ``[REDACTED]``."""
    for secret in secrets:
        if len(secret) < MIN_SECRET_LENGTH:
            continue
        for form in _forms(secret):
            text = text.replace(form, REDACTED)
    return text


def scrub_optional(text: str | None, secrets: Iterable[str]) -> str | None:
    """:func:`scrub` for a value that may be absent."""
    return None if text is None else scrub(text, secrets)


def scrub_secrets(text: str) -> str:
    """``text`` scrubbed of every secret value present in the environment."""
    return scrub(text, secret_values())


def scrub_tree(value: Any, secrets: tuple[str, ...] | None = None) -> Any:
    """A JSON-like value with every string in it (keys too) scrubbed of every secret present."""
    found = secret_values() if secrets is None else secrets
    if not found:
        return value
    if isinstance(value, str):
        return scrub(value, found)
    if isinstance(value, Mapping):
        return {scrub_tree(k, found): scrub_tree(v, found) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_tree(item, found) for item in value]
    return value


def scrub_bytes(data: bytes) -> bytes:
    """UTF-8 ``data`` scrubbed of every secret present (bytes that are not UTF-8 as given)."""
    found = secret_values()
    if not found:
        return data
    forms = [form.encode("utf-8") for secret in found if len(secret) >= MIN_SECRET_LENGTH
             for form in _forms(secret)]
    if not any(form in data for form in forms):
        return data
    for form in forms:
        data = data.replace(form, REDACTED.encode("ascii"))
    return data


def child_environment(named: Iterable[str], extra: Mapping[str, str]) -> dict[str, str]:
    """The environment of a child process: the base variables, the ``named`` ones, ``extra``."""
    wanted = (*BASE_ENVIRONMENT, *named)
    env = {name: os.environ[name] for name in wanted if name in os.environ}
    env.update(extra)
    return env
